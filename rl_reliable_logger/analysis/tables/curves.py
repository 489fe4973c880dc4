"""The ``curves`` table: sample-efficiency curves (``curves=True``), an aggregate metric with its interval at every
step of a common grid. Runs that stop early count up to their last step; within each stretch of the grid where the
set of runs is fixed, every replicate follows the same whole runs."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...data.counts import agree, plural
from ...data.scores import ScoreTable
from ...errors import InputError
from ...stats import bootstrap as bs
from ...stats import curves as cv
from ...stats import intervals, registry
from ...stats.intervals import ResamplingRequest
from ...wording import Message, kw, said
from ..budgets import histories
from .base import Part, TableInputs

COLUMNS = ["algorithm", "metric", "step", "n_runs", "point", "low", "high"]
RULE = (
    "last value at or before each grid step; a run whose last step is within its cell's largest logging "
    "interval of the curve's end is carried to the end by its last value; runs stopping earlier count "
    "up to their last step; no extrapolation"
)


@dataclass(frozen=True)
class CurveChoices:
    """What the curves show: the ``metrics`` (names), at most ``points`` grid steps, up to ``budget`` (or the
    runs' end), the optimality gap's ``gamma``."""

    metrics: tuple[str, ...]
    points: int
    budget: float | None
    gamma: float


def build(inputs: TableInputs, request: ResamplingRequest, table: ScoreTable, choices: CurveChoices | None) -> Part:
    """The curves of ``table`` (every step, normalised; no curves without ``choices``): table, provenance,
    warnings."""
    if choices is None:
        return Part({"curves": pd.DataFrame(columns=COLUMNS)})
    frame, info, warnings = curves_table(table, request, inputs, choices)
    return Part({"curves": frame}, {"curves": request.record("curves")}, {"curves": info}, warnings)


def curves_table(
    table: ScoreTable, request: ResamplingRequest, inputs: TableInputs, choices: CurveChoices
) -> tuple[pd.DataFrame, dict[str, Any], list[str]]:
    """Curve table, provenance and warnings."""
    runs = histories(table)
    if choices.budget is not None:  # as in the final scores: a run first logged after the budget is left out
        runs = [h for h in runs if float(h.steps[0]) <= choices.budget]
    try:
        shape = cv.common_grid(runs, choices.points, budget=choices.budget)
    except cv.NoCommonRange as err:
        raise InputError(_no_range(err, runs, choices.budget)) from None
    grid = shape.grid
    by_cell: dict[tuple[str, str], list[np.ndarray]] = {}
    for h in runs:
        by_cell.setdefault(h.key[:2], []).append(cv.align(h, grid, shape.reach[h.key]))
    metric_objs = [registry.get_metric(m, gamma=choices.gamma) for m in choices.metrics]
    tasks = sorted(table.tasks)
    rows, counts = [], {}
    for alg in table.algorithms:
        per_task = []
        for t in tasks:
            block = np.stack(by_cell[(alg, t)])  # (N_m, G)
            per_task.append(block[cv.canonical_order(block)])  # independent of row order and run ids
            counts[(alg, t)] = cv.run_counts(~np.isnan(per_task[-1]))
        point, low, high = _algorithm_curves(
            per_task, metric_objs, request, inputs.streams.of("curves")[alg], grid.size
        )
        inputs.progress(request.reps("curves"))
        n_alg = np.sum([counts[(alg, t)] for t in tasks], axis=0)
        for j, m in enumerate(metric_objs):
            for g, step in enumerate(grid):
                rows.append(
                    {
                        "algorithm": alg,
                        "metric": m.name,
                        "step": step,
                        "n_runs": int(n_alg[g]),
                        "point": point[j, g],
                        "low": low[j, g],
                        "high": high[j, g],
                    }
                )
    info = {
        "grid": [float(s) for s in grid],
        "budget": choices.budget,
        "runs_per_cell": [
            {"algorithm": a, "task": t, "tolerance": shape.tolerances[(a, t)], "n_runs": [int(x) for x in n]}
            for (a, t), n in sorted(counts.items())
        ],
        "stop_early": [[*k, s] for k, s in shape.short.items()],
        "rule": RULE,
    }
    return pd.DataFrame(rows, columns=COLUMNS), info, _warnings(counts, grid, shape, choices.budget)


def _algorithm_curves(per_task, metric_objs, request: ResamplingRequest, rng, n_grid: int):
    """One algorithm's (point, low, high), each (metrics, grid steps): every stretch of the grid where its runs
    are fixed is resampled from the same stream state, so stretches with the same run counts draw the same runs."""
    values = np.concatenate(per_task, axis=0)  # (K, G), task-major
    task_of = np.concatenate([np.full(p.shape[0], m) for m, p in enumerate(per_task)])
    available = ~np.isnan(values)
    point = np.empty((len(metric_objs), n_grid))
    low, high = np.empty_like(point), np.empty_like(point)
    start_state = copy.deepcopy(rng)
    for a, b in cv.segments(available):
        keep = available[:, a]  # runs counting over this stretch of the grid
        # grid steps between two logged steps carry the same values: each distinct column is evaluated once
        sub, expand = cv.distinct_columns(values[keep][:, a:b])
        cells = bs.Cells.from_list([sub[task_of[keep] == m, 0] for m in range(len(per_task))])

        def stat(r: bs.Resample, sub: np.ndarray = sub) -> np.ndarray:
            # whole runs: the same draws evaluated at every step of the stretch, a group of steps at once
            out = np.empty((r.n_reps, len(metric_objs), sub.shape[1]))  # (R, n_metrics, b - a)
            for lo, hi in bs.column_groups(r, sub.shape[1], request.chunk_bytes):
                steps = r.with_columns(sub[:, lo:hi])
                for j, m in enumerate(metric_objs):
                    out[:, j, lo:hi] = np.stack([m(step.fresh()) for step in steps], axis=1)
            return out

        seg_point = stat(bs.original(cells))[0]
        dist = bs.replicates(
            cells, stat, request.reps("curves"), copy.deepcopy(start_state), chunk_bytes=request.chunk_bytes
        )
        result = intervals.estimate(request, "curves", dist, seg_point)
        point[:, a:b], low[:, a:b], high[:, a:b] = seg_point[:, expand], result.low[:, expand], result.high[:, expand]
    return point, low, high


def _warnings(counts, grid, shape, budget) -> list[str]:
    """Cells that lose runs along the curve, and curves that end before the budget."""
    warnings = []
    losses = {c: n for c, n in counts.items() if n[-1] < n[0]}
    if losses:
        parts = []
        for (a, t), n in sorted(losses.items()):
            drop = next(g for g in range(grid.size) if n[g] < n[0])
            parts.append(f"{a} / {t} {n[0]} → {n[-1]} runs from step {grid[drop]:g}")
        warnings.append(
            f"curves: {plural(len(losses), 'cell')} {agree(len(losses), 'lose')} runs along the curve (runs stopping more than one logging interval "
            "before the end count only up to their last step; the n_runs column of curves.csv has the counts): "
            + "; ".join(parts[:8])
            + (f"; ... ({len(parts) - 8} more)" if len(parts) > 8 else "")
        )
    if shape.stopped_before_budget:
        warnings.append(
            f"curves end at step {grid[-1]:g}, before the budget {budget:g}: no run of "
            + ", ".join(f"{a} / {t}" for a, t in shape.stopped_before_budget[:8])
            + " reaches it."
        )
    return warnings


def _no_range(err: cv.NoCommonRange, runs: list[cv.RunHistory], budget: float | None) -> Message:
    """One sentence: the cells (or runs) that start too late and the cells that end too early, and what to do."""
    per_cell: dict[cv.Cell, list[cv.RunKey]] = {}
    for h in runs:
        per_cell.setdefault(h.key[:2], []).append(h.key)
    late = []
    for cell, keys in sorted(per_cell.items()):
        mine = [k for k in keys if k in err.late]
        if mine and len(mine) == len(keys):
            late.append(f"{cell[0]} / {cell[1]} (first step {min(err.late[k] for k in mine):g})")
        else:
            late += [f"{a} / {t} run {r} (first step {err.late[(a, t, r)]:g})" for a, t, r in mine]
    starts = ", ".join(late[:8]) + (f", ... ({len(late) - 8} more)" if len(late) > 8 else "")
    if err.early:
        early = [f"{a} / {t} (last step {s:g})" for (a, t), s in err.early.items()]
        ends = ", ".join(early[:8]) + (f", ... ({len(early) - 8} more)" if len(early) > 8 else "")
        head = f"curves: the runs share no range of steps: {starts} start after {ends} end"
    else:
        head = (
            f"curves: the runs share only step {err.end:g}, no range of steps: {starts} first log where the curves end"
        )
    later = said(", or give a later ", kw("budget=")) if budget is not None and err.end >= budget else ""
    return said(
        head,
        "; log the same range of steps for every run, or leave those runs out of the scores (whole cells with ",
        kw("only_algorithms="),
        " or ",
        kw("only_tasks="),
        ")",
        later,
    )
