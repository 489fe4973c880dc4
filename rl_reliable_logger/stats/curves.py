"""Sample-efficiency curves: align ragged histories on a common step grid, then bootstrap whole runs.

Alignment rule (documented in the README): a run's value at grid step t is its **last logged
value at or before t** (no interpolation, no look-ahead).

Where the curves end. The *target* is the explicit ``budget`` when one is given, otherwise the last
step of the longest run overall. Each (algorithm, task) cell has a *tolerance*: the largest logging
interval of any of its runs. A cell reaches the target when one of its runs last logged within the
tolerance of it (a run that last logged at 199M frames of 200M, logging every 1M, has finished);
otherwise it reaches only its longest run's last step. The grid starts at the latest first-logged
step over all runs and ends at the earliest step every cell reaches; it never extrapolates beyond
that, and there is no curve when that range is empty or a single step (:class:`NoCommonRange`). A run
**reaches the end** when its last step is within its cell's tolerance of the grid's end: it is carried
to the end by its last value. Runs that stop earlier are **not** removed from the curve: they count at
every grid step they reach, so a cell's run count can fall along the curve (reported per step, see
:func:`run_counts`).

Resampling (in ``analysis``): each bootstrap replicate draws whole runs once and follows the same runs
across all steps where the set of runs does not change (rliable draws a fresh run for every step,
which breaks any statistic across time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Cell = tuple[str, str]
RunKey = tuple[str, str, str]


@dataclass(frozen=True)
class RunHistory:
    """One run's logged (step, score) pairs, steps ascending."""

    key: RunKey  # (algorithm, task, run_id)
    steps: np.ndarray
    scores: np.ndarray


def logging_interval(history: RunHistory) -> float:
    """The largest gap between consecutive logged steps of one run (0 for a single step; inf for a gap wider
    than the float range, between steps of opposite sign near the float limit)."""
    if history.steps.size < 2:
        return 0.0
    with np.errstate(over="ignore"):
        return float(np.max(np.diff(history.steps)))


@dataclass(frozen=True)
class RunEnds:
    """Where each cell ends and which runs fall short of it (shared by curves and final scores)."""

    ends: dict[Cell, float]  # the budget, or the cell's longest run's last step
    tolerances: dict[Cell, float]  # largest logging interval in the cell
    last: dict[RunKey, float]  # each run's last logged step

    def short(self, end: dict[Cell, float] | None = None) -> dict[RunKey, float]:
        """Runs whose last step is more than the cell's tolerance before ``end`` (default: the cell's end)."""
        end = self.ends if end is None else end
        return {
            k: s for k, s in sorted(self.last.items()) if s < end[k[:2]] - self.tolerances[k[:2]]
        }  # sorted: the report names runs in the same order whatever the input's row order


def run_ends(histories: Sequence[RunHistory], budget: float | None = None) -> RunEnds:
    """Each cell's end and tolerance (see the module docstring) and each run's last step."""
    ends: dict[Cell, float] = {}
    tolerances: dict[Cell, float] = {}
    last: dict[RunKey, float] = {}
    for h in histories:
        cell = h.key[:2]
        last[h.key] = float(h.steps[-1])
        ends[cell] = max(ends.get(cell, -np.inf), last[h.key])
        tolerances[cell] = max(tolerances.get(cell, 0.0), logging_interval(h))
    if budget is not None:
        ends = {c: float(budget) for c in ends}
    return RunEnds(ends, tolerances, last)


@dataclass(frozen=True)
class CurveGrid:
    """The common step grid and, per run, the last grid step it counts for."""

    grid: np.ndarray
    reach: dict[RunKey, float]  # a run counts at grid steps <= reach (the grid's end when it reaches the end)
    short: dict[RunKey, float]  # runs that stop before the grid's end (beyond tolerance): key -> last step
    tolerances: dict[Cell, float]
    stopped_before_budget: list[Cell]  # with a budget: cells with no run reaching it (the grid ends earlier)

    @property
    def end(self) -> float:
        return float(self.grid[-1])


class NoCommonRange(ValueError):
    """The runs share no range of steps: the latest first step ``start`` is at or after ``end``, the earliest step
    every cell reaches. ``late``: runs whose first step is at or after ``end`` (key -> first step); ``early``: cells
    that end before ``start`` (cell -> the step they reach)."""

    def __init__(self, start: float, end: float, late: dict[RunKey, float], early: dict[Cell, float]) -> None:
        super().__init__(f"the runs share no range of steps (latest first step {start:g}, earliest cell end {end:g})")
        self.start, self.end, self.late, self.early = start, end, late, early


def common_grid(histories: Sequence[RunHistory], n_points: int = 25, *, budget: float | None = None) -> CurveGrid:
    """The step grid (see the module docstring) and how far each run counts along it; :class:`NoCommonRange`
    when the runs share no range of steps (a single shared step included).

    When every run logged the very same steps and there are at most ``n_points`` of them, the grid is
    exactly those steps (plus the grid's end); otherwise ``n_points`` evenly spaced steps: the grid never
    has more points than asked for (runs sharing 100 logged steps give 25 points by default, not 100).
    """
    if not histories:
        raise ValueError("no histories")
    start = max(float(h.steps[0]) for h in histories)
    ends = run_ends(histories)
    cell_max = dict(ends.ends)  # each cell's longest run
    target = float(budget) if budget is not None else max(cell_max.values())
    # a cell reaches the target when one of its runs is within the cell's tolerance of it; otherwise the
    # cell reaches only its longest run's last step, and the grid stops there (no extrapolation)
    reach_of_cell = {c: target if cell_max[c] >= target - ends.tolerances[c] else cell_max[c] for c in cell_max}
    end = min(reach_of_cell.values())
    if end <= start:  # no range, or a single step: a curve of one point repeated is no curve
        firsts = {h.key: float(h.steps[0]) for h in histories}
        raise NoCommonRange(
            start,
            end,
            {k: s for k, s in sorted(firsts.items()) if s >= end},
            {c: r for c, r in sorted(reach_of_cell.items()) if r < start},
        )
    stopped = sorted(c for c in cell_max if budget is not None and reach_of_cell[c] < target)
    grid_end = {c: end for c in ends.ends}
    short = ends.short(grid_end)
    reach = {k: (s if k in short else end) for k, s in ends.last.items()}

    first = histories[0].steps
    same = all(h.steps.shape == first.shape and np.array_equal(h.steps, first) for h in histories)
    if same and first.size <= n_points:
        grid = first[(first >= start) & (first <= end)].astype(float)
        if grid.size == 0 or grid[-1] < end:
            grid = np.append(grid, end)
    else:
        # np.unique: steps closer than the float spacing (a range of 1 at step 1e17) round to the same number;
        # the grid never repeats a step (a repeated step is the same numbers twice in curves.csv)
        grid = np.unique(even_steps(start, end, n_points))
    return CurveGrid(grid, reach, short, ends.tolerances, stopped)


def even_steps(start: float, end: float, n_points: int) -> np.ndarray:
    """``n_points`` evenly spaced steps from ``start`` to ``end`` (both included), finite for any finite ends.

    ``np.linspace`` computes ``end - start``, which overflows to inf for ends of opposite sign near the
    float limit (steps of -1.7e308 and 1.7e308): every step would be inf or NaN. A weighted mean of the
    two ends never leaves their range.
    """
    if n_points == 1:
        return np.array([float(start)])
    if np.isfinite(float(end) - float(start)):
        return np.linspace(start, end, n_points)
    w = np.arange(n_points, dtype=float) / (n_points - 1)
    grid = float(start) * (1.0 - w) + float(end) * w
    grid[0], grid[-1] = start, end
    return np.maximum.accumulate(grid)  # rounding never makes the grid step back


def align(history: RunHistory, grid: np.ndarray, reach: float | None = None) -> np.ndarray:
    """Values of one run at each grid step: last value at or before the step.

    NaN past ``reach`` (default: the run's last step); up to ``reach`` the last value is carried.
    """
    reach = float(history.steps[-1]) if reach is None else reach
    pos = np.searchsorted(history.steps, grid, side="right") - 1
    out = history.scores[np.clip(pos, 0, None)].astype(float)
    out[(pos < 0) | (grid > reach)] = np.nan
    return out


def distinct_columns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``values`` without repeats of the column before, and where each column went.

    Grid steps between two logged steps carry every run's last value, so a fine grid over sparse logs
    (``--curve-points 100000`` over a few logged steps) repeats the same column many times; a statistic of
    the same draws gives the same numbers on equal columns, so each run of equal columns is evaluated once.

    >>> v = np.array([[1.0, 1.0, 2.0, 2.0, 1.0], [3.0, 3.0, 3.0, 3.0, 3.0]])
    >>> cols, where = distinct_columns(v)
    >>> cols.tolist(), where.tolist()
    ([[1.0, 2.0, 1.0], [3.0, 3.0, 3.0]], [0, 0, 1, 1, 2])
    """
    if values.shape[1] == 0:
        return values, np.zeros(0, dtype=np.intp)
    same = np.all((values[:, 1:] == values[:, :-1]) | (np.isnan(values[:, 1:]) & np.isnan(values[:, :-1])), axis=0)
    new = np.concatenate([[True], ~same])
    return values[:, new], np.cumsum(new) - 1


def canonical_order(values: np.ndarray) -> np.ndarray:
    """An order of runs (rows of aligned values, NaN past their reach) that depends on the values only.

    Longest-counting runs first, then by value at the first grid step, the second, ...: the bootstrap
    then draws the same runs whatever the input's row order or run ids.
    """
    available = (~np.isnan(values)).sum(axis=1)
    filled = np.where(np.isnan(values), np.inf, values)
    keys = tuple(filled[:, g] for g in reversed(range(values.shape[1]))) + (-available,)
    return np.lexsort(keys)


def run_counts(available: np.ndarray) -> np.ndarray:
    """Runs counting at each grid step, from a (runs, steps) availability mask."""
    return available.sum(axis=0).astype(np.int64)


def segments(available: np.ndarray) -> list[tuple[int, int]]:
    """Half-open column ranges over which the set of available runs (rows) does not change."""
    n_steps = available.shape[1]
    if n_steps == 0:
        return []
    change = [g for g in range(1, n_steps) if not np.array_equal(available[:, g], available[:, g - 1])]
    bounds = [0, *change, n_steps]
    return list(zip(bounds[:-1], bounds[1:]))
