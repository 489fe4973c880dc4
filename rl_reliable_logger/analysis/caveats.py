"""A caveat per cell: where an interval may not hold, the row of its table says why (issue 52).

Every row of the ``aggregates``, ``differences``, ``improvement`` and ``per_task`` tables gets a ``caveat``: empty
where the interval is expected to hold, else one short reason. The reasons are read from what the data and the
design show, never from the interval itself:

* **the mean** (and its differences), at 10 runs per task or fewer: *heavy tails*, where one task makes up half of
  the mean or more, or fewer than 1.5 tasks carry its variance (Kish's effective count ``(Σ v)² / Σ v²`` of the
  tasks' variances of their means): the interval then rests on a few tasks' few runs, which miss the tail that
  carries the mean more often than not (the task's share of the mean shows even where its tail was not drawn);
* **the optimality gap**: fewer than 1.5 tasks carry its variance (on the runs clipped at γ);
* **the mean and the gap**: *runs all equal* on a quarter of the tasks or more (a capped or a failure score): those
  tasks add no width, and a rare run off the cap is unseen;
* **the median** (and its differences), at 10 runs per task or fewer, always: *depends on the tasks near the
  middle*; few runs leave the task means near the middle uncertain against their spacing and skewed, and nothing
  the runs show told the data sets where its interval misses from those where it covers;
* **P(X > Y)** at 0.2 or below, 0.8 or above: *at the boundary*, where the runs of X and Y separate on most tasks
  (each such task's Mann-Whitney share is 0 or 1 in every replicate, so it adds no width);
* **a task's mean**: *runs all equal*, when the runs of a task have no spread (the interval has no width).

The IQM carries none: no rule from the runs told its few shortfalls from its covers.

The measured coverage behind each rule, on every real data set, at 3, 5 and 10 runs per task, and how often each
caveat fires where the interval covers and where it misses: ``docs/validation.md`` (``benchmarks/coverage/
caveat_study.py``). The features are computed here (:func:`algorithm_features`, :func:`pair_features`,
:func:`task_features`) and the rules read only them, so the study rates the very rules the tables apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..stats import bootstrap as bs
from ..stats import metrics as mt

#: The algorithm features the rules read (one float each).
ALGORITHM_FEATURES = ("runs", "tasks", "mean_tasks", "gap_tasks", "top_share", "tied_share")
#: The pair features (P(X > Y)).
PAIR_FEATURES = ("separated_share", "point")
#: The per-task features.
TASK_FEATURES = ("runs", "no_spread")


def _per_task(cells: bs.Cells) -> list[np.ndarray]:
    return [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]


def effective_tasks(variances: np.ndarray) -> float:
    """Kish's effective number of tasks carrying a sum of variances ``(Σ v)² / Σ v²``: M when every task carries
    the same, 1 when one task carries it all (inf when none carries any).

    Example:
        >>> effective_tasks(np.array([1.0, 1.0, 1.0, 1.0])), effective_tasks(np.array([9.0, 0.0, 0.0, 1.0]))
        (4.0, 1.22)
    """
    v = np.asarray(variances, dtype=float)
    v = v[np.isfinite(v)]
    total = float(v.sum())
    if total <= 0:
        return float("inf")
    return round(total**2 / float((v**2).sum()), 2)


def _mean_variances(runs: list[np.ndarray]) -> np.ndarray:
    """Each task's variance of its mean, ``s² / N`` (tasks of one run: 0)."""
    return np.array([float(np.var(r, ddof=1)) / r.size if r.size > 1 else 0.0 for r in runs])


def algorithm_features(cells: bs.Cells, gamma: float = 1.0) -> dict[str, float]:
    """What the caveats read of one algorithm's runs (:data:`ALGORITHM_FEATURES`)."""
    runs = _per_task(cells)
    means = np.array([float(r.mean()) for r in runs])
    clipped = [np.minimum(r, gamma) for r in runs]
    varied = [r for r in runs if r.size > 1]
    total = float(np.abs(means).sum())
    return {
        "runs": float(cells.sizes.min()),
        "tasks": float(cells.n_tasks),
        "mean_tasks": effective_tasks(_mean_variances(runs)),
        "gap_tasks": effective_tasks(_mean_variances(clipped)),
        "top_share": float(np.abs(means).max()) / total if total > 0 else 0.0,
        "tied_share": float(np.mean([np.ptp(r) == 0 for r in varied])) if varied else 0.0,
    }


def gamma_of(metric_objs: Sequence[Any]) -> float:
    """The optimality gap's γ among ``metric_objs`` (1 without a gap: then it is read by no rule)."""
    for m in metric_objs:
        gamma = getattr(m.fn, "gamma", None)
        if getattr(m.fn, "__name__", None) == "optimality_gap" and gamma is not None:
            return float(gamma)
    return 1.0


def pair_features(x: bs.Cells, y: bs.Cells) -> dict[str, float]:
    """What the caveat of P(X > Y) reads (:data:`PAIR_FEATURES`): the share of tasks whose runs separate (every run
    of one above every run of the other) and the estimate."""
    runs_x, runs_y = _per_task(x), _per_task(y)
    separated = [float(a.min() > b.max() or a.max() < b.min()) for a, b in zip(runs_x, runs_y, strict=True)]
    return {"separated_share": float(np.mean(separated)), "point": mt.probability_of_improvement(runs_x, runs_y)}


def task_features(cells: bs.Cells) -> list[dict[str, float]]:
    """What the caveat of each task's mean reads (:data:`TASK_FEATURES`), one mapping per task."""
    return [{"runs": float(r.size), "no_spread": float(r.size > 1 and np.ptp(r) == 0)} for r in _per_task(cells)]


# ----------------------------------------------------------------------------- the rules
#: The mean's caveat fires where one task makes up this share of the mean (its few runs decide the interval) ...
TOP_SHARE = 0.5
#: ... or where fewer tasks than this carry its variance (Kish's effective count; also the gap's caveat) ...
TAIL_TASKS = 1.5
#: ... at this many runs per task or fewer (more runs show the tail).
TAIL_RUNS = 10
#: The mean's and the gap's caveat fires where the runs of at least this share of the tasks are all equal (a capped
#: or a failure score): those tasks add no width, and a rare run off the cap is unseen.
TIED_SHARE = 0.25
#: The median's caveat fires at this many runs per task or fewer: there the task means near the middle are uncertain
#: against their spacing and skewed (few runs miss a task's tail, so the middle leans), and nothing the runs show
#: tells the data sets where its interval misses from those where it covers (``docs/validation.md``).
MEDIAN_RUNS = 10
#: P(X > Y)'s caveat fires where the estimate lies this far from 1/2 or further (at or beyond 0.2 and 0.8).
IMPROVEMENT_EDGE = 0.3


def _runs(features: Mapping[str, float]) -> str:
    n = int(features["runs"])
    return f"{n} run{'' if n == 1 else 's'}"


def _tail(what: str, carried: float, features: Mapping[str, float]) -> str:
    return (
        f"heavy tails at {_runs(features)}: about {carried:.1f} of {int(features['tasks'])} tasks carry {what} "
        "variance; may under-cover"
    )


def _ties(features: Mapping[str, float]) -> str:
    tied = round(features["tied_share"] * features["tasks"])
    return f"runs all equal on {tied} of {int(features['tasks'])} tasks: those add no width; may under-cover"


def aggregate_caveat(kind: str, features: Mapping[str, float]) -> str:
    """The caveat of one algorithm's aggregate of ``kind`` (:data:`..stats.intervals.STATISTIC_KINDS`): empty where
    its interval is expected to hold, else one short reason."""
    few = features["runs"] <= TAIL_RUNS
    if kind == "mean" and few and features["top_share"] >= TOP_SHARE:
        return (
            f"heavy tails at {_runs(features)}: one task makes up {features['top_share']:.0%} of the mean; "
            "may under-cover"
        )
    if kind == "mean" and few and features["mean_tasks"] < TAIL_TASKS:
        return _tail("the mean's", features["mean_tasks"], features)
    if kind == "optimality_gap" and few and features["gap_tasks"] < TAIL_TASKS:
        return _tail("the gap's", features["gap_tasks"], features)
    if kind in ("mean", "optimality_gap") and features["tied_share"] >= TIED_SHARE:
        return _ties(features)
    if kind == "median" and features["runs"] <= MEDIAN_RUNS:
        return f"median: depends on the tasks near the middle; may under-cover at {_runs(features)}"
    return ""


def difference_caveat(kind: str, x: Mapping[str, float], y: Mapping[str, float]) -> str:
    """The caveat of the difference of two algorithms' aggregates: either algorithm's (X's first)."""
    return aggregate_caveat(kind, x) or aggregate_caveat(kind, y)


def improvement_caveat(features: Mapping[str, float], tasks: int) -> str:
    """The caveat of P(X > Y) from :func:`pair_features` (``tasks``: how many): near 0 or 1 most tasks' runs
    separate, and a separated task's share is 0 or 1 in every replicate, so it adds no width."""
    if abs(features["point"] - 0.5) >= IMPROVEMENT_EDGE:
        separated = round(features["separated_share"] * tasks)
        return f"P(X>Y) at the boundary: the runs separate on {separated} of {tasks} tasks; may under-cover"
    return ""


def task_caveat(features: Mapping[str, float]) -> str:
    """The caveat of one task's mean from :func:`task_features`."""
    if features["no_spread"]:
        return f"runs all equal ({_runs(features)}): the interval has no width"
    return ""
