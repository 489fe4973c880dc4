"""TensorBoard log folders as a Source: one run folder per run, its fields named by a layout pattern.

Every folder under the log folder that holds event files is a run folder; its path relative to the log
folder is matched against the layout (:mod:`.layout`), which gives algorithm, task, seed and any
hyperparameters. The score tag's points are read from its event files one file at a time (:mod:`.events`;
each file first checked by the one opener, :mod:`rl_reliable_logger.data.files`) and the runs go through the
one intake every Source shares (:func:`~rl_reliable_logger.trackers.base.intake.read_table`): ``last``
(default), ``mean-last-N``, ``at-budget:STEP``, ``max``; with ``curves`` every logged point of the tag is a
learning-curve row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...data.files import check_regular_file, walk
from ...data.scores import ScoreTable
from ...errors import InputError
from ...wording import kw, said
from ..base.intake import SourceRuns, read_table
from ..base.messages import DROP_INVALID, Hints
from ..base.reading import SEPARATE_KEYWORDS, ReadOptions, read_options
from ..base.records import FINISHED, RunRecord
from ..base.request import SourceRequest
from .events import is_event_file, read_scalars
from .layout import DEFAULT_LAYOUT, Layout, parse_layout


def run_folders(logdir: Path) -> Iterator[tuple[str, list[str]]]:
    """(relative POSIX path, event file names) of every folder holding event files, in sorted order.

    Symbolic links to folders are not followed (a link loop or a link out of the log folder is not read).
    """
    for relative, files in walk(logdir):
        events = [name for name in files if is_event_file(name)]
        if events:
            yield relative, events


def _merged(points: Sequence[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """One tag's points over a run's files in name (creation) order: a step logged twice keeps the value
    written last (a resumed run rewrites the steps after its checkpoint); sorted by step."""
    by_step: dict[float, float] = {}
    for part in points:
        for step, value in part:
            by_step[step] = value
    return sorted(by_step.items())


#: How the shared step's messages name this source's options (its command has no field flags and no run key).
HINTS = Hints(
    fields=said(
        "Check ",
        kw("layout="),
        " (the run folders' paths relative to the log folder) and ",
        kw("score_key="),
        " (the scalar tag with the score)",
    ),
    keywords=frozenset({DROP_INVALID, "curve_key="}),
    configuration="hyperparameter_keys=",
)
#: The record fields of a run folder: its layout fields in the record's config.
REFS = {"algorithm": "config.algorithm", "task": "config.task", "seed": "config.seed"}


class TensorBoardSource:
    """The run folders of a TensorBoard log folder, read with a layout pattern (a :class:`Source`).

    Example:
        >>> src = TensorBoardSource("runs", layout="{algorithm}/{task}/seed_{seed}")   # doctest: +SKIP
        >>> table = src.table(score_key="eval/return", read=ReadOptions(score_rule="mean-last-5"))  # doctest: +SKIP
    """

    tracker = "tensorboard"

    def __init__(self, logdir: str | os.PathLike, *, layout: str = DEFAULT_LAYOUT) -> None:
        self.logdir = Path(logdir)
        self.layout: Layout = parse_layout(layout)
        if not self.logdir.is_dir():
            raise InputError(f"TensorBoard log folder {str(self.logdir)!r} does not exist or is not a folder.")

    def location(self) -> str:
        return f"TensorBoard logs in {str(self.logdir)!r} (layout {self.layout.pattern!r})"

    def _matched(self) -> tuple[list[tuple[str, dict[str, Any], list[str]]], list[dict[str, str]]]:
        """(runs, skipped): run folders that fit the layout, and the others with the reason."""
        runs: list[tuple[str, dict[str, Any], list[str]]] = []
        skipped: list[dict[str, str]] = []
        for relative, files in run_folders(self.logdir):
            inside = next((r for r, _, _ in runs if relative.startswith(r + "/")), None)
            if inside is not None:  # e.g. tensorboardX's add_hparams writes a sub-folder of the run
                skipped.append({"run_id": relative, "reason": f"inside run folder {inside!r}"})
                continue
            fields = self.layout.match(relative)
            if fields is None:
                skipped.append({"run_id": relative, "reason": f"does not fit the layout {self.layout.pattern!r}"})
                continue
            runs.append((relative, fields, files))
        if not runs:
            raise self.layout.none_fits(self.logdir, [s["run_id"] for s in skipped], "event files")
        return runs, skipped

    def _read(
        self, relative: str, files: Sequence[str], tags: Sequence[str]
    ) -> tuple[dict[str, Any], float | None] | str:
        """A run folder's points of ``tags`` merged over its event files and the wall time of its first one, or why
        one of the files cannot be read."""
        parts: dict[str, list[list[tuple[float, float]]]] = {tag: [] for tag in tags}
        started: list[float] = []
        for name in files:
            path = self.logdir / relative / name
            try:
                check_regular_file(path, "event")  # a FIFO named like an event file would block the reader
            except InputError as err:
                return str(err)
            got = read_scalars(str(path), tags)
            if got.damage is not None:
                return f"event file {str(path)!r} is {got.damage}"
            for tag, points in got.points.items():
                parts[tag].append(points)
            started += [got.started] if got.started is not None else []
        return {tag: _merged(p) for tag, p in parts.items() if any(p)}, min(started, default=None)

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """One record per run folder that fits the layout (its fields in ``config``, the points of the score and
        curve tags as its history and their last points as its summary); a run with an unreadable event file is
        an ``unreadable`` entry naming the file."""
        scores = [request.score] if isinstance(request.score, str) else list(request.score or ())
        if len(scores) != 1 or not str(scores[0]).strip():
            raise InputError(
                said(kw("score_key="), f" names one scalar tag, got {', '.join(map(repr, scores)) or 'none'}.")
            )
        tag = str(scores[0]).strip()
        given = [name for name in REFS if getattr(request, name) is not None]
        if given:
            raise InputError(said(f"the {given[0]} comes from ", kw("layout="), ", not from a field reference."))
        tags = list(dict.fromkeys([tag, *([request.history_key] if request.history_key else [])]))
        matched, skipped = self._matched()
        records: list[RunRecord] = []
        unreadable: list[dict[str, Any]] = []
        for relative, fields, files in matched:
            got = self._read(relative, files, tags)
            if isinstance(got, str):
                unreadable.append({"run_id": relative, **fields, "reason": got})
                continue
            history, started = got
            records.append(
                RunRecord(
                    run_id=relative,
                    name=relative,
                    state=FINISHED,  # an event file has no run state
                    config=dict(fields),
                    summary={key: points[-1][1] for key, points in history.items()},
                    history=history,
                    source="tensorboard",
                    started=started,
                )
            )
        info = {
            "tracker": "tensorboard",
            "logdir": str(self.logdir),
            "layout": self.layout.pattern,
            "location": self.location(),
        }
        read = replace(
            request, algorithm=REFS["algorithm"], task=REFS["task"], seed=REFS["seed"], score=f"summary.{tag}"
        )
        return SourceRuns(
            records, "TensorBoard", info, request=read, skipped=skipped, unreadable=unreadable, hints=self._hints(read)
        )

    def _hints(self, read: SourceRequest) -> Hints:
        """:data:`HINTS` saying the records' references in TensorBoard's words: a scalar tag is ``tag eval/return``
        (not W&B's ``summary.eval/return``), a layout field ``layout {algorithm}`` (not ``config.algorithm``)."""
        score = str(read.score)
        refs = [(score, f"tag {score.removeprefix('summary.')}")]
        refs += [(f"config.{name}", f"layout {{{name}}}") for name in self.layout.fields]
        return replace(HINTS, refs=tuple(dict.fromkeys(refs)))

    def table(self, *, score_key: str, read: ReadOptions | None = None, **legacy: Any) -> ScoreTable:
        """See :func:`tensorboard_table` (``legacy``: the reading options as separate keywords, deprecated)."""
        return read_table(self, _request(score_key, read, legacy, where="TensorBoardSource.table()"))


def _request(score_key: str, read: ReadOptions | None, legacy: dict[str, Any], *, where: str) -> SourceRequest:
    """The request of a TensorBoard table: the score tag and the reading options."""
    if not score_key or not str(score_key).strip():
        raise InputError(said(kw("score_key="), " is empty: name the scalar tag with the score (e.g. eval/return)."))
    return read_options(read, legacy, where=where, accepted=(*SEPARATE_KEYWORDS, "curve_key")).request(score=score_key)


def tensorboard_table(
    logdir: str | os.PathLike,
    *,
    layout: str = DEFAULT_LAYOUT,
    score_key: str,
    read: ReadOptions | None = None,
    **legacy: Any,
) -> ScoreTable:
    """A ScoreTable from TensorBoard event files: one run folder per run, named by ``layout``.

    ``layout`` names the fields in each run folder's path relative to ``logdir``
    (``{algorithm}/{task}/seed_{seed}``; other ``{name}`` fields become hyperparameter columns, for
    ``evaluate(..., hyperparameter_keys=[name])``). ``score_key`` is the scalar tag holding the score; ``read``
    (:class:`ReadOptions`) says how runs are read: its ``score_rule`` how a run's points make its final score (``last``: the point at the largest step; or
    ``mean-last-N``, ``at-budget:STEP``, ``max``). ``curves=True`` adds every logged point of ``curve_key``
    (default: the score tag) as learning-curve rows. Folders with event files that do not fit the layout are
    skipped and said in ``table.warnings``; a run with a damaged or truncated event file is an InputError
    naming the file, or with ``on_invalid="drop"`` left out and listed in ``table.dropped``.

    TensorBoard stores scalars as 32-bit floats (``simple_value``) unless the writer logs 64-bit tensors:
    the scores are the values as stored.

    Example:
        >>> table = tensorboard_table("runs", layout="{algorithm}/{task}/seed_{seed}",
        ...                           score_key="eval/return",
        ...                           read=ReadOptions(score_rule="mean-last-5"))          # doctest: +SKIP
        >>> evaluate(table, seed=0).headline("iqm")                                        # doctest: +SKIP
    """
    request = _request(score_key, read, legacy, where="tensorboard_table()")
    return read_table(TensorBoardSource(logdir, layout=layout), request)
