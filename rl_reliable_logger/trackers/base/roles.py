"""The roles a tracker plays, each a small object that knows nothing of the command line.

A :class:`~.plugin.TrackerPlugin` composes them: its runs are read by a :class:`SourceRole`, reports go out through
a :class:`SinkRole`, ``log_final_score`` writes through a :class:`FinalScoreRole`, ``rl-reliable pending --push``
through a :class:`PendingRole`; a watch writes its :class:`LaunchFormat` files and every message is cleaned by its
:class:`Redaction`. A plugin leaves out the roles its tracker does not play (a Source-only plugin has no sink,
final-score writer or pending push; a tracker without a launcher has no launch format).

A role receives ``settings``: the values of the tracker's own options as attributes (the parsed flags of its
command, which :class:`~.wiring.CliWiring` declares, or any object with the same attributes), and raises
:class:`~rl_reliable_logger.errors.InputError` for a bad one. Like the plugin, this module is light: a role imports
its tracker's Source, Sink or client inside its methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...looks.launch_formats import LaunchFormat

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable
    from .pending import PendingScore
    from .protocols import Sink, Source
    from .retry import RetryPolicy

__all__ = ["FinalScoreRole", "LaunchFormat", "PendingRole", "Redaction", "SinkRole", "SourceRole", "recorded_fields"]

#: The values of a tracker's own options, as attributes (``settings.experiment``).
Settings = Any


def recorded_fields(run: Mapping[str, Any]) -> str:
    """A pending file's run part in words (``key=value, ...`` without the run id): its place when no plugin
    describes it better."""
    return ", ".join(f"{k}={v}" for k, v in run.items() if k != "run_id") or "(no place recorded)"


class SourceRole:
    """Where the tracker's runs are and how they are read: the tracker's Source, opened from its settings."""

    #: Field references read when no field option is given (what ``log_final_score`` writes).
    default_refs: Mapping[str, str] = {}
    #: Where the tracker keeps hyperparameters: ``hyperparameter_keys=["lr"]`` reads ``<config_kind>.lr``.
    config_kind: str = "config"

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        """The Source the settings select."""
        raise NotImplementedError

    def prepare(self, settings: Settings, source: Source, say: Callable[[str], None]) -> None:
        """Before the runs are read (e.g. wait for a sweep to finish); ``say`` prints a progress line."""

    def warnings(self, source: Source) -> list[str]:
        """What the source could not read (``skipped <it>`` on the console; ``strict`` refuses to go on)."""
        return []

    def inputs(self, settings: Settings) -> list[str]:
        """Files or folders the source reads, which an output folder must not replace."""
        return []

    def table_options(self, options: Any) -> Any:
        """The analysis options for this tracker's tables (e.g. hyperparameter keys named as their columns)."""
        return options

    def launch_name(self, key: str) -> str:
        """The launch parameter a field key gives a watch's launch files (``params.algo`` -> ``algo``): the key
        without its kind."""
        from .request import KINDS

        kind, _, rest = str(key).partition(".")
        return rest if kind in KINDS and rest else str(key)

    def describe(self, source: Mapping[str, Any]) -> str | None:
        """Where a table's runs came from, in one phrase (from ``table.source``); None: the plugin's default."""
        return None


class SinkRole:
    """Where the tracker takes a report: the Sink the settings name, opened before the analysis runs."""

    def open(self, settings: Settings, source: Source, table: ScoreTable, retry: RetryPolicy) -> Sink | None:
        """The Sink the settings name (None: publish nothing); a bad target is refused here."""
        raise NotImplementedError

    def unpublished(self, settings: Settings) -> str | None:
        """What to print when :meth:`open` gave None (None: nothing)."""
        return None


class FinalScoreRole:
    """How ``log_final_score`` finds this tracker's run and writes a checked score to it."""

    #: ``log_final_score`` asks the trackers in this order (lowest first) whose run it was given or is active.
    detect_order: int = 0
    #: How the "no active run" message names the call that starts a run, and a run passed as ``run=``.
    start_hint: str = ""
    run_hint: str = ""

    def owns_run(self, run: Any) -> bool:
        """Whether ``run`` (given to ``log_final_score``) is one of this tracker's runs."""
        return False

    def has_active_run(self) -> bool:
        """Whether a run of this tracker is active in this process (its client imported by the user)."""
        return False

    def write(self, score: Any, algorithm: Any, task: Any, seed: Any, **kwargs: Any) -> None:
        """Write a checked final score to ``kwargs["run"]`` (or the active run) by the log_final_score convention."""
        raise NotImplementedError


class PendingRole:
    """How a score saved to a pending file (the tracker did not take it) is sent to its run later."""

    def push(self, item: PendingScore, settings: Settings, retry: RetryPolicy) -> str:
        """Send one pending score to its run: ``"written"`` or ``"already"``."""
        raise NotImplementedError

    def location(self, run: Mapping[str, Any]) -> str:
        """Where a pending score's run lives, in a phrase (from the run part of the pending file)."""
        return recorded_fields(run)


@dataclass(frozen=True)
class Redaction:
    """The tracker's secrets (kept out of every message) and the modules whose exceptions are the tracker failing.

    ``secret_variables``: environment variables holding secrets; ``secret_patterns``: regular expressions of its
    keys (``redaction``); ``client_modules``: top-level modules whose exceptions are the tracker failing (exit 2, not
    a bug of ours; their log handlers are adopted by the console).
    """

    secret_variables: tuple[str, ...] = ()
    secret_patterns: tuple[str, ...] = ()
    client_modules: tuple[str, ...] = ()
