"""What a tracker contributes to the package, declared once in its own subpackage (``trackers/<name>/plugin.py``).

A :class:`TrackerPlugin` says everything the rest of the package needs to know about one tracker: its name
and label, its Source (and the source flags of its command), its Sink (and publishing flags), its final-score
writer, how a pending score is pushed, and the secrets its messages must never show. The registry
(``trackers/registry.py``) lists the plugins; the command line builds one subcommand per plugin, ``plan`` reads
pilots through them, ``log_final_score`` and ``rl-reliable pending`` dispatch on them, and redaction applies
their rules. Nothing outside ``trackers/<name>/`` and the registry names a tracker.

This module imports nothing heavy (no tracker client, no pandas): ``rl-reliable --help`` loads every plugin.
A plugin imports its own Source, Sink and client inside its methods.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable
    from ...render.launch_formats import LaunchFormat
    from .pending import PendingScore
    from .protocols import Sink, Source
    from .retry import RetryPolicy

#: A parsed command line (the flags of one plugin's command, plus the shared ones).
Args = argparse.Namespace


def recorded_fields(run: Mapping[str, Any]) -> str:
    """A pending file's run part in words (``key=value, ...`` without the run id): its place when no plugin
    describes it better."""
    return ", ".join(f"{k}={v}" for k, v in run.items() if k != "run_id") or "(no place recorded)"


class TrackerPlugin:
    """One tracker, as the package sees it. Subclasses set the class attributes and override the hooks.

    The attributes are plain data (read by ``--help`` without importing the tracker); the hooks receive the
    parsed flags and raise :class:`~rl_reliable_logger.errors.InputError` (worded with flags) for bad ones.
    """

    #: The tracker's name: its subcommand, ``source["tracker"]`` in provenance, the tracker of a pending file.
    name: str = ""
    #: How messages name it (``PublishResult.message``, warnings, errors).
    label: str = ""
    #: Field references read when no field flag is given (what ``log_final_score`` writes).
    default_refs: Mapping[str, str] = {}
    #: Where the tracker keeps hyperparameters: ``--hyperparameter-keys lr`` reads ``<config_kind>.lr``.
    config_kind: str = "config"
    #: The forms a field reference takes on this tracker, for ``--help``.
    refs_help: str = ""
    #: One line of ``rl-reliable --help`` and the subcommand's description and examples.
    summary: str = ""
    description: str = ""
    epilog: str = ""
    #: What ``rl-reliable plan <name>`` reads, in a phrase; one command line for ``rl-reliable --help``.
    pilot_help: str = ""
    example: str = ""
    #: Command lines of ``rl-reliable plan --help`` that read a pilot from this tracker.
    plan_examples: tuple[str, ...] = ()
    #: Command lines of ``rl-reliable watch --help`` that watch this tracker's runs.
    watch_examples: tuple[str, ...] = ()
    #: The files a watch writes for this tracker's launcher (None: none).
    launch: LaunchFormat | None = None
    #: What ``rl-reliable pending --help`` says about pushing this tracker's scores ("" for nothing).
    pending_note: str = ""
    #: Environment variables holding this tracker's secrets, and patterns of its keys (``redaction``).
    secret_variables: tuple[str, ...] = ()
    secret_patterns: tuple[str, ...] = ()
    #: Top-level modules whose exceptions are this tracker failing (exit 2, not a bug of ours).
    client_modules: tuple[str, ...] = ()
    #: ``log_final_score`` asks the plugins in this order (lowest first) whose run it was given or is active.
    detect_order: int = 0
    #: How the "no active run" message names the call that starts a run, and a run passed as ``run=``.
    start_hint: str = ""
    run_hint: str = ""
    #: Keyword-to-flag words of this tracker's own options, for messages (``"x=True": "--x"``).
    keyword_flags: Mapping[str, str] = {}
    #: False for a Source-only plugin (logs read from disk, e.g. event files): its command has no
    #: publishing, retry or shared field flags (:meth:`add_source_flags` declares its own, ``--score-key`` too;
    #: the command adds ``--score-rule`` and the name flags), results go to ``--out`` as with ``evaluate``, and
    #: it writes no final scores and has no pending ones.
    publishes: bool = True

    # ---------------------------------------------------------------- command line
    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        """The tracker's own source flags (where runs are, which ones); ``curves`` adds ``--curve-key``."""

    def add_command_flags(self, parser: argparse.ArgumentParser) -> None:
        """Groups of flags only the analysing command has (e.g. waiting for a sweep), after the source."""

    def add_publish_flags(self, group: Any) -> None:
        """The flags that say where the report is published (``--force-publish`` is added after them)."""

    def check_source(self, args: Args) -> None:
        """Source flags checked before anything runs."""

    def check_command(self, args: Args, options: Any) -> None:
        """The command's other flags checked against the analysis options, before the tracker is asked anything."""

    def table_options(self, options: Any) -> Any:
        """The analysis options for this tracker's tables (e.g. hyperparameter keys named as their columns)."""
        return options

    def inputs(self, args: Args) -> list[str]:
        """Files or folders the source reads, which ``--out`` must not replace."""
        return []

    def open_source(self, args: Args, retry: RetryPolicy) -> Source:
        """The Source the flags select."""
        raise NotImplementedError

    def prepare(self, args: Args, source: Source, say: Callable[[str], None]) -> None:
        """Before the runs are read (e.g. wait for a sweep to finish); ``say`` prints a progress line."""

    def source_warnings(self, source: Source) -> list[str]:
        """What the source could not read (``skipped <it>`` on the console; ``--strict`` refuses to go on)."""
        return []

    def open_sink(self, args: Args, source: Source, table: ScoreTable, retry: RetryPolicy) -> Sink | None:
        """The Sink the publishing flags name (None: publish nothing); checked before the analysis runs."""
        return None

    def unpublished(self, args: Args) -> str | None:
        """What to print when :meth:`open_sink` gave None (None: nothing)."""
        return None

    def launch_name(self, key: str) -> str:
        """The launch parameter a field key gives a watch's launch files (``params.algo`` -> ``algo``): the key
        without its kind."""
        from .request import KINDS

        kind, _, rest = str(key).partition(".")
        return rest if kind in KINDS and rest else str(key)

    def describe_source(self, source: Mapping[str, Any]) -> str:
        """Where a table's runs came from, in one phrase (from ``table.source``)."""
        return f"{self.label} runs in {source.get('location')}"

    # ---------------------------------------------------------------- final scores
    def owns_run(self, run: Any) -> bool:
        """Whether ``run`` (given to ``log_final_score``) is one of this tracker's runs."""
        return False

    def has_active_run(self) -> bool:
        """Whether a run of this tracker is active in this process (its client imported by the user)."""
        return False

    def write_final_score(self, score: Any, algorithm: Any, task: Any, seed: Any, **kwargs: Any) -> None:
        """Write a checked final score to ``kwargs["run"]`` (or the active run) by the log_final_score convention."""
        raise NotImplementedError

    def add_pending_flags(self, group: Any) -> None:
        """Flags of ``rl-reliable pending`` for pushing this tracker's scores."""

    def push_pending(self, item: PendingScore, args: Args, retry: RetryPolicy) -> str:
        """Send one pending score to its run: ``"written"`` or ``"already"``."""
        raise NotImplementedError

    def pending_location(self, run: Mapping[str, Any]) -> str:
        """Where a pending score's run lives, in a phrase (from the run part of the pending file; by default its
        fields other than the run id)."""
        return recorded_fields(run)
