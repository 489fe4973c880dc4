"""A tracker's command-line wiring: its flags, their checks and the words of its commands' help.

The one part of a :class:`~.plugin.TrackerPlugin` that knows argparse. ``cli/trackers.py`` builds
``rl-reliable <name>`` (and the tracker's ``plan``, ``watch``, ``race`` and ``pending`` flags) from it; the parsed flags are
then the ``settings`` the tracker's roles (:mod:`.roles`) receive, so a flag's ``dest`` is the attribute its role
reads. The hooks raise :class:`~rl_reliable_logger.errors.InputError` worded with flags.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

#: A parsed command line (the flags of one plugin's command, plus the shared ones).
Args = argparse.Namespace


class CliWiring:
    """The flags and help of one tracker's commands. Subclasses set the words and override the hooks."""

    #: One line of ``rl-reliable --help`` and the subcommand's description and examples.
    summary: str = ""
    description: str = ""
    epilog: str = ""
    #: One command line for ``rl-reliable --help``.
    example: str = ""
    #: What ``rl-reliable plan <name>`` / ``watch <name>`` / ``race <name>`` reads, in a phrase.
    pilot_help: str = ""
    #: Command lines of ``rl-reliable plan --help``, ``watch --help`` and ``race --help`` for this tracker (a race's
    #: may end with its launcher loop).
    plan_examples: tuple[str, ...] = ()
    watch_examples: tuple[str, ...] = ()
    race_examples: tuple[str, ...] = ()
    #: What ``rl-reliable pending --help`` says about pushing this tracker's scores ("" for nothing).
    pending_note: str = ""
    #: The forms a field reference takes on this tracker, for ``--help``.
    refs_help: str = ""
    #: Keyword-to-flag words of this tracker's own options, for messages (``"x=True": "--x"``).
    keyword_flags: Mapping[str, str] = {}
    #: True: the command adds the shared field flags (``--algorithm-key REF``, ...) and ``--retry-for``; False: the
    #: tracker's :meth:`add_source_flags` declares its field flags (logs read from disk: ``--score-key`` too) and the
    #: command adds ``--score-rule`` and the name flags only.
    shared_fields: bool = True

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        """The tracker's own source flags (where runs are, which ones); ``curves`` adds ``--curve-key``."""

    def add_command_flags(self, parser: argparse.ArgumentParser) -> None:
        """Groups of flags only the analysing command has (e.g. waiting for a sweep), after the source."""

    def add_publish_flags(self, group: Any) -> None:
        """The flags that say where the report is published (``--force-publish`` is added after them)."""

    def add_pending_flags(self, group: Any) -> None:
        """Flags of ``rl-reliable pending`` for pushing this tracker's scores."""

    def check_source(self, args: Args) -> None:
        """Source flags checked before anything runs."""

    def check_command(self, args: Args, options: Any) -> None:
        """The command's other flags checked against the analysis options, before the tracker is asked anything."""
