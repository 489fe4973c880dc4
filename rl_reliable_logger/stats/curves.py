"""Sample-efficiency curves: align ragged histories on a common step grid, then bootstrap whole runs.

Alignment rule (documented in the README): a run's value at grid step t is its **last logged
value at or before t** (no interpolation, no look-ahead). The grid never extrapolates: it starts
at the latest first-logged step over all runs and ends at the earliest step that every
(algorithm, task) cell reaches with at least one run. Runs that stop before the grid's end are
left out of the curves (they still count for final scores) and reported by the caller.

Resampling: each bootstrap replicate draws whole runs once and follows the same runs across all
steps (rliable draws a fresh run for every step, which breaks any statistic across time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RunHistory:
    """One run's logged (step, score) pairs, steps ascending."""

    key: tuple[str, str, str]  # (algorithm, task, run_id)
    steps: np.ndarray
    scores: np.ndarray


def common_grid(histories: Sequence[RunHistory], n_points: int = 25) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
    """The step grid and the runs left out because they stop before its end.

    When every run logged the very same steps (and there are at most ``4 * n_points``), the grid is
    exactly those steps; otherwise ``n_points`` evenly spaced steps.
    """
    if not histories:
        raise ValueError("no histories")
    start = max(float(h.steps[0]) for h in histories)
    cell_reach: dict[tuple[str, str], float] = {}
    for h in histories:
        cell = h.key[:2]
        cell_reach[cell] = max(cell_reach.get(cell, -np.inf), float(h.steps[-1]))
    end = min(cell_reach.values())
    if end < start:
        raise ValueError(
            f"the runs share no common step range (latest first step {start:g} is after the earliest cell end {end:g})"
        )
    first = histories[0].steps
    same = all(h.steps.shape == first.shape and np.array_equal(h.steps, first) for h in histories)
    if same and first.size <= 4 * n_points:
        grid = first[(first >= start) & (first <= end)].astype(float)
    else:
        grid = np.linspace(start, end, n_points)
    left_out = [h.key for h in histories if float(h.steps[-1]) < end]
    return grid, left_out


def align(history: RunHistory, grid: np.ndarray) -> np.ndarray:
    """Values of one run at each grid step: last value at or before the step (NaN past its end)."""
    pos = np.searchsorted(history.steps, grid, side="right") - 1
    out = history.scores[np.clip(pos, 0, None)].astype(float)
    out[(pos < 0) | (grid > history.steps[-1])] = np.nan
    return out
