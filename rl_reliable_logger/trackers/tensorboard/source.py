"""TensorBoard log folders as a Source: one run folder per run, its fields named by a layout pattern.

Every folder under the log folder that holds event files is a run folder; its path relative to the log
folder is matched against the layout (:mod:`.layout`), which gives algorithm, task, seed and any
hyperparameters. The score tag's points are read from its event files one file at a time (:mod:`.events`)
and the runs go through the same grouping and score rules as every tracker
(:func:`~rl_reliable_logger.trackers.base.records.records_to_table`): ``last`` (default), ``mean-last-N``,
``at-budget:STEP``, ``max``; with ``curves`` every logged point of the tag is a learning-curve row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...data.counts import plural
from ...data.scores import ScoreTable
from ...errors import InputError
from ..base.drops import drop_summary
from ..base.messages import DROP_INVALID, kw
from ..base.records import FINISHED, RunRecord, records_to_table
from .events import is_event_file, read_scalars
from .layout import DEFAULT_LAYOUT, Layout, parse_layout

_SHOWN = 10


def run_folders(logdir: Path) -> Iterator[tuple[str, list[str]]]:
    """(relative POSIX path, event file names) of every folder holding event files, in sorted order.

    Symbolic links to folders are not followed (a link loop or a link out of the log folder is not read).
    """
    for root, dirs, files in os.walk(logdir):
        dirs.sort()
        events = sorted(name for name in files if is_event_file(name))
        if events:
            yield Path(root).relative_to(logdir).as_posix(), events


def _merged(points: Sequence[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """One tag's points over a run's files in name (creation) order: a step logged twice keeps the value
    written last (a resumed run rewrites the steps after its checkpoint); sorted by step."""
    by_step: dict[float, float] = {}
    for part in points:
        for step, value in part:
            by_step[step] = value
    return sorted(by_step.items())


class TensorBoardSource:
    """The run folders of a TensorBoard log folder, read with a layout pattern.

    Example:
        >>> src = TensorBoardSource("runs", layout="{algorithm}/{task}/seed_{seed}")   # doctest: +SKIP
        >>> table = src.table(score_key="eval/return", score_rule="mean-last-5")      # doctest: +SKIP
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
            found = [s["run_id"] for s in skipped]
            raise InputError(
                f"no run folder in {str(self.logdir)!r} fits the layout {self.layout.pattern!r}"
                + (
                    f" (folders with event files: {', '.join(map(repr, found[:_SHOWN]))}"
                    + (" ..." if len(found) > _SHOWN else "")
                    + ")"
                    if found
                    else " (no event files found)"
                )
                + "; pass the layout of the run folders' paths relative to the log folder."
            )
        return runs, skipped

    def records(self, tags: Sequence[str]) -> tuple[list[RunRecord], list[dict[str, Any]], list[dict[str, str]]]:
        """(records, damaged, skipped): one record per run folder with the points of ``tags``; runs with a
        damaged event file are not records but entries of ``damaged`` naming the file."""
        runs, skipped = self._matched()
        records: list[RunRecord] = []
        damaged: list[dict[str, Any]] = []
        for relative, fields, files in runs:
            parts: dict[str, list[list[tuple[float, float]]]] = {tag: [] for tag in tags}
            problem = None
            for name in files:
                path = self.logdir / relative / name
                got = read_scalars(str(path), tags)
                if got.damage is not None:
                    problem = f"event file {str(path)!r} is {got.damage}"
                    break
                for tag, points in got.points.items():
                    parts[tag].append(points)
            if problem is not None:
                damaged.append({"run_id": relative, **fields, "reason": problem})
                continue
            history = {tag: _merged(p) for tag, p in parts.items() if any(p)}
            records.append(
                RunRecord(
                    run_id=relative,
                    name=relative,
                    state=FINISHED,
                    config=dict(fields),
                    summary={tag: points[-1][1] for tag, points in history.items()},
                    history=history,
                    source="tensorboard",
                )
            )
        return records, damaged, skipped

    def table(
        self,
        *,
        score_key: str,
        score_rule: str | None = None,
        curves: bool = False,
        curve_key: str | None = None,
        on_invalid: str = "raise",
        names: str = "strict",
    ) -> ScoreTable:
        """See :func:`tensorboard_table`."""
        if not score_key or not str(score_key).strip():
            raise InputError(f"{kw('score_key=')} is empty: name the scalar tag with the score (e.g. eval/return).")
        history_key = (curve_key or score_key) if curves else None
        tags = list(dict.fromkeys([score_key, *([history_key] if history_key else [])]))
        records, damaged, skipped = self.records(tags)
        if damaged and on_invalid != "drop":
            raise InputError(
                f"{plural(len(damaged), 'run')} cannot be read: "
                + "; ".join(d["reason"] for d in damaged[:_SHOWN])
                + (" ..." if len(damaged) > _SHOWN else "")
                + f". Pass {kw(DROP_INVALID)} to leave these runs out (they are listed in provenance).",
                [d["reason"] for d in damaged],
            )
        info = {
            "tracker": "tensorboard",
            "logdir": str(self.logdir),
            "layout": self.layout.pattern,
            "location": self.location(),
            "n_runs_found": len(records) + len(damaged),
            "skipped": skipped,
        }
        table = records_to_table(
            records,
            algorithm="config.algorithm",
            task="config.task",
            seed="config.seed",
            score=f"summary.{score_key}",
            on_invalid=on_invalid,
            history_key=history_key,
            source=info,
            extra_fields={name: f"config.{name}" for name in self.layout.hyperparameters},
            score_rule=score_rule,
            names=names,
        )
        if skipped:
            table.warnings.append(
                f"skipped {plural(len(skipped), 'folder')} with event files that are not runs of the layout: "
                + ", ".join(f"{s['run_id']!r} ({s['reason']})" for s in skipped[:_SHOWN])
                + (" ..." if len(skipped) > _SHOWN else "")
            )
        if damaged:
            _record_damaged(table, damaged, n_runs=len(records) + len(damaged))
        return table


def _record_damaged(table: ScoreTable, damaged: list[dict[str, Any]], *, n_runs: int) -> None:
    """Runs left out for a damaged event file: in ``table.dropped`` (provenance) and one console line."""
    rows = [
        {"run_id": d["run_id"], "algorithm": d.get("algorithm"), "task": d.get("task"), "reason": d["reason"]}
        for d in damaged
    ]
    table.dropped = pd.concat([pd.DataFrame(rows), table.dropped], ignore_index=True)
    lines = drop_summary(
        [{**r, "reason": "damaged or truncated event file"} for r in rows],
        n_runs=n_runs,
        cells_before={},
        cells_after={},
    )
    table.warnings.extend(lines)
    table.source["damaged"] = [r["reason"] for r in rows]


def tensorboard_table(
    logdir: str | os.PathLike,
    *,
    layout: str = DEFAULT_LAYOUT,
    score_key: str,
    score_rule: str | None = None,
    curves: bool = False,
    curve_key: str | None = None,
    on_invalid: str = "raise",
    names: str = "strict",
) -> ScoreTable:
    """A ScoreTable from TensorBoard event files: one run folder per run, named by ``layout``.

    ``layout`` names the fields in each run folder's path relative to ``logdir``
    (``{algorithm}/{task}/seed_{seed}``; other ``{name}`` fields become hyperparameter columns, for
    ``evaluate(..., hyperparameter_keys=[name])``). ``score_key`` is the scalar tag holding the score and
    ``score_rule`` how a run's points make its final score (``last``: the point at the largest step; or
    ``mean-last-N``, ``at-budget:STEP``, ``max``). ``curves=True`` adds every logged point of ``curve_key``
    (default: the score tag) as learning-curve rows. Folders with event files that do not fit the layout are
    skipped and said in ``table.warnings``; a run with a damaged or truncated event file is an InputError
    naming the file, or with ``on_invalid="drop"`` left out and listed in ``table.dropped``.

    TensorBoard stores scalars as 32-bit floats (``simple_value``) unless the writer logs 64-bit tensors:
    the scores are the values as stored.

    Example:
        >>> table = tensorboard_table("runs", layout="{algorithm}/{task}/seed_{seed}",
        ...                           score_key="eval/return", score_rule="mean-last-5")   # doctest: +SKIP
        >>> evaluate(table, seed=0).headline("iqm")                                        # doctest: +SKIP
    """
    source = TensorBoardSource(logdir, layout=layout)
    return source.table(
        score_key=score_key,
        score_rule=score_rule,
        curves=curves,
        curve_key=curve_key,
        on_invalid=on_invalid,
        names=names,
    )
