"""The two roles a tracker plays, as Protocols: a Source of runs and a Sink for reports.

Each tracker (``trackers/<name>/``) and the results folder implement them; the CLI and users
talk to these shapes only, so every tracker is selected, evaluated and published the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .messages import Hints

if TYPE_CHECKING:  # pragma: no cover
    import os

    from ...analysis.report import Report
    from .records import RunRecord
    from .request import SourceRequest


@dataclass(frozen=True)
class PublishResult:
    """What a Sink did with a report: where it is, and whether this call created it.

    ``created`` is False when the same content (``report_hash``) was already there and nothing
    new was written, or when the tracker is switched off (``skipped`` says why). ``str(result)`` is the target (a run id, an artifact or a folder);
    ``label`` names the tracker in messages (its plugin's label); ``replaced`` names what this publish made
    no longer current (an earlier analysis run, or an earlier report on the same run), so the console says so.

    Example:
        >>> r = PublishResult("folder", "results", None, False, "f" * 64, label="the results folder")
        >>> r.message()
        'already published to the results folder with the same content (report ffffffff); nothing new written: results'
        >>> PublishResult("mlflow", "b2", None, True, "e" * 64, label="MLflow", replaced=("analysis run a1",)).message()
        'published to MLflow (report eeeeeeee): b2; it replaces analysis run a1 (no longer current)'
    """

    tracker: str
    target: str
    url: str | None
    created: bool
    report_hash: str
    skipped: str | None = None
    label: str = ""
    replaced: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.target

    def message(self) -> str:
        """The one sentence every sink prints, in the same words for every tracker."""
        where = self.label or self.tracker
        if self.skipped:
            return f"not published to {where}: {self.skipped}"
        at = self.target + (f" ({self.url})" if self.url and self.url != self.target else "")
        replaces = f"; it replaces {', '.join(self.replaced)} (no longer current)" if self.replaced else ""
        if self.created:
            return f"published to {where} (report {self.report_hash[:8]}): {at}{replaces}"
        return (
            f"already published to {where} with the same content (report {self.report_hash[:8]}); nothing new "
            f"written: {at}{replaces}"
        )


def _never(record: RunRecord) -> bool:
    return False


@dataclass
class SourceRuns:
    """What a Source read, before any rule is applied.

    ``records``: every run found (all states; nothing dropped). ``label``: the tracker in sentences ("MLflow").
    ``info``: where the runs came from, for provenance (``location`` is its phrase in messages). ``request``: the
    request in the references of these records (unset fields given the tracker's defaults, a bare tag read as
    ``summary.<tag>``; None: as asked); only its field references may differ from what was asked, never a rule
    (state, drops, selection, names), which the shared step checks. ``is_analysis``: a run written
    by our own sink (skipped, listed). ``fill_history(runs, key)``: reads a history for the runs that are used
    only (None: the records already hold them). ``skipped``: things the source found that are no runs (a folder
    that does not fit the layout), each ``{"run_id", "reason"}``; ``unreadable``: runs whose files are damaged,
    each ``{"run_id", "reason"}`` naming the file (an error, or with ``on_invalid="drop"`` a recorded drop).
    ``notes``: what the source read around (a datum only in a pickle), said once each. ``hints``: the words of
    the source's own options, so messages name only what its command has.
    """

    records: Sequence[RunRecord]
    label: str
    info: Mapping[str, Any]
    request: SourceRequest | None = None
    is_analysis: Callable[[RunRecord], bool] = _never
    fill_history: Callable[[list[RunRecord], str], None] | None = None
    skipped: Sequence[Mapping[str, Any]] = ()
    unreadable: Sequence[Mapping[str, Any]] = ()
    notes: Sequence[str] = ()
    hints: Hints = field(default_factory=Hints)


@runtime_checkable
class Source(Protocol):
    """Runs of one tracker, selected at construction (experiments, a project, a sweep, a folder).

    A Source only reads: ``runs(request)`` returns what it found (``request`` says which fields and histories
    are wanted, so a reader may read only those). It never builds a table: :func:`.intake.read_table` does, the
    same way for every Source.
    """

    tracker: str

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """Every run found, tracker-neutral (all states, nothing dropped), with what could not be read."""
        ...


@runtime_checkable
class Sink(Protocol):
    """Where a report is published; the target is fixed at construction.

    Contract (the same for every sink; see each tracker's page under docs/): content hash
    over tables + options; publishing the same content again creates nothing; never writes onto a
    source run; a changed report replaces the previous one; a failed publish never looks
    complete; only the bundle's manifest files are uploaded.
    """

    tracker: str

    def publish(self, report: Report, *, bundle: str | os.PathLike | None = None) -> PublishResult:
        """Publish ``report`` (and the verified files of ``bundle``, a folder written by save_report)."""
        ...
