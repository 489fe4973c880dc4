"""A caveat per cell: where an interval may not hold, the row of its table says why (issue 52).

Every row of the ``aggregates``, ``differences``, ``improvement`` and ``per_task`` tables gets a ``caveat``: empty
where the interval is expected to hold, else one short reason, the same words for every cell it applies to (the
renderers say each reason once and name its cells, :func:`..notices.caveat_notes`). The reasons are read from what
the data, the design and the interval method show, never from the interval itself:

* **the mean** (and its differences), at :data:`TAIL_RUNS` runs per task or fewer: *heavy tails*, where one task
  makes up half of the mean or more, or fewer than 1.5 tasks carry its variance (Kish's effective count
  ``(Σ v)² / Σ v²`` of the tasks' variances of their means): the interval then rests on a few tasks' few runs,
  which miss the tail that carries the mean more often than not; or where the runs' means sit well above their
  medians (:data:`ABOVE_MEDIAN`: right skew in the bulk of every task, where few runs miss the tail of all of them
  at once);
* **the optimality gap**: fewer than 1.5 tasks carry its variance (on the runs clipped at γ);
* **the mean and the gap**: *runs all equal* on a quarter of the tasks or more (a capped or a failure score): those
  tasks add no width, and a rare run off the cap is unseen;
* **the median** (and its differences): under a bootstrap interval (``median_interval=method``), at
  :data:`MEDIAN_RUNS` runs per task or fewer, always (*depends on the tasks near the middle*: nothing the runs show
  told the data sets where it misses from those where it covers); under the order-statistic interval (the default
  there) none: where it fell short (Matrax, a middle task whose failure mode few runs miss) no feature of the runs
  told its misses from its covers either;
* **P(X > Y)** under a bootstrap interval, at 0.2 or below, 0.8 or above: *at the boundary*, where the runs of X
  and Y separate on most tasks (each such task's Mann-Whitney share is 0 or 1 in every replicate, so it adds no
  width); the default interval (``mann-whitney``) gives such a task a width of its own and carries none;
* **an algorithm of one run per task** (its aggregates, their differences and its P(X > Y)): *one run per task*,
  always: resampling runs within a task repeats its one run, so the interval shows no run-to-run spread at all
  (zero width under a bootstrap); read from the design, not the scores. A task of one run in an algorithm with
  others of two or more is covered by the run-count warning and the rules above;
* **a task's mean**: *one run*, no interval (NaN low and high: a Student-t interval needs two runs, ``t`` has
  ``N - 1 = 0`` degrees of freedom, and a bootstrap of one run repeats it); *runs all equal*, when the runs of a task have no spread: its Student-t interval borrows the
  median spread of its algorithm's tasks (:data:`..stats.intervals.bounds.TASK_SPREAD_FLOOR`), and a rare run off
  that value went unseen (such cells covered 0.73-0.94 at 3 runs per task on the real data sets of the coverage
  study). Tasks whose runs are merely close are covered by the same floor (0.75-0.99 at 3 runs, 0.84-1.0 at 10) and
  carry none.

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
from ..stats.pairwise import improvement_points

#: The algorithm features the rules read (one float each).
ALGORITHM_FEATURES = (
    "runs",
    "tasks",
    "mean_tasks",
    "gap_tasks",
    "top_share",
    "tied_share",
    "above_median",
)
#: The pair features (P(X > Y)).
PAIR_FEATURES = ("separated_share", "point")
#: The per-task features.
TASK_FEATURES = ("runs", "no_spread")


def _per_task(cells: bs.Cells) -> list[np.ndarray]:
    return [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]


def effective_tasks(variances: np.ndarray) -> float:
    """Kish's effective number of tasks carrying a sum of variances ``(Σ v)² / Σ v²``: M when every task carries
    the same, 1 when one task carries it all (inf when none carries any). Scale-free: computed on the variances
    divided by the largest, so any finite variances give a finite count (a variance of 1e300 as well as 1e-300).

    Example:
        >>> effective_tasks(np.array([1.0, 1.0, 1.0, 1.0])), effective_tasks(np.array([9.0, 0.0, 0.0, 1.0]))
        (4.0, 1.22)
    """
    v = np.asarray(variances, dtype=float)
    v = v[np.isfinite(v)]
    largest = float(v.max()) if v.size else 0.0
    if largest <= 0:
        return float("inf")
    # in units of the largest variance: the count is the same at any scale, and no sum or square of the shares (each
    # at most 1, the largest exactly 1) overflows or vanishes, for any finite variances
    share = v / largest
    total = float(share.sum())
    if total <= 0:
        return float("inf")
    return round(total**2 / float((share**2).sum()), 2)


def _mean_variances(runs: list[np.ndarray]) -> np.ndarray:
    """Each task's variance of its mean, ``s² / N`` (tasks of one run: 0)."""
    return np.array([float(np.var(r, ddof=1)) / r.size if r.size > 1 else 0.0 for r in runs])


def above_median(runs: list[np.ndarray]) -> float:
    """The share of the mean carried above the runs' medians, ``(Σ_m mean_m - Σ_m median_m) / Σ_m |mean_m|``: 0 for
    runs symmetric within each task, larger the more each task's runs lean right (a lognormal task of log-spread
    σ gives ``1 - exp(-σ²/2)``); scale-free, and no single run or task decides it alone.

    Example:
        >>> above_median([np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 7.0])])  # means 2 + 3, medians 2 + 1
        0.4
    """
    means = np.array([float(r.mean()) for r in runs])
    medians = np.array([float(np.median(r)) for r in runs])
    scale = float(np.abs(means).sum())
    return round(float(means.sum() - medians.sum()) / scale, 12) if scale > 0 else 0.0


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
        "above_median": above_median(runs),
        # read with .get by the rules: not in ALGORITHM_FEATURES, whose order the coverage study records
        "one_run": float(bool((cells.sizes <= 1).all())),
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
    of one above every run of the other) and the estimate (:func:`~..stats.pairwise.improvement_points`: every task
    at once, :func:`~..stats.metrics.probability_of_improvement` bit for bit).

    Example:
        >>> x = bs.Cells.from_list([np.array([3.0, 4.0]), np.array([1.0, 2.0])])
        >>> y = bs.Cells.from_list([np.array([1.0, 2.0]), np.array([2.0, 5.0])])
        >>> {k: pair_features(x, y)[k] for k in PAIR_FEATURES}
        {'separated_share': 0.5, 'point': 0.5625}
    """
    if x.n_tasks != y.n_tasks:
        raise ValueError(f"pair_features needs the same tasks for both algorithms, got {x.n_tasks} and {y.n_tasks}")
    # each task's lowest and highest run (every task has one run or more: its first run's offset starts its segment)
    low_x, high_x = np.minimum.reduceat(x.values, x.offsets), np.maximum.reduceat(x.values, x.offsets)
    low_y, high_y = np.minimum.reduceat(y.values, y.offsets), np.maximum.reduceat(y.values, y.offsets)
    separated = ((low_x > high_y) | (high_x < low_y)).astype(float)
    return {
        "separated_share": float(np.mean(separated)),
        "point": float(improvement_points([x, y], [(0, 1)])[0]),
        # read with .get by the rule: not in PAIR_FEATURES, whose order the coverage study records
        "one_run": float(bool((x.sizes <= 1).all() or (y.sizes <= 1).all())),
    }


def task_features(cells: bs.Cells) -> list[dict[str, float]]:
    """What the caveat of each task's mean reads (:data:`TASK_FEATURES`), one mapping per task."""
    return [{"runs": float(r.size), "no_spread": float(r.size > 1 and np.ptp(r) == 0)} for r in _per_task(cells)]


def no_task_interval(runs: float) -> bool:
    """Whether a task of ``runs`` runs gets no interval of its mean (:func:`task_caveat` says why)."""
    return runs < 2


# ----------------------------------------------------------------------------- the rules
#: The mean's caveat fires where one task makes up this share of the mean (its few runs decide the interval) ...
TOP_SHARE = 0.5
#: ... or where fewer tasks than this carry its variance (Kish's effective count; also the gap's caveat) ...
TAIL_TASKS = 1.5
#: ... or where :func:`above_median` reaches this (chosen on the real data sets, where it fires on at most 5% of
#: those whose mean covers, pooled; rated on the held-out simulation: ``docs/validation.md``) ...
ABOVE_MEDIAN = 0.15
#: ... at this many runs per task or fewer (more runs show the tail).
TAIL_RUNS = 10
#: The mean's and the gap's caveat fires where the runs of at least this share of the tasks are all equal (a capped
#: or a failure score): those tasks add no width, and a rare run off the cap is unseen.
TIED_SHARE = 0.25
#: The median's caveat, under its bootstrap interval, fires at this many runs per task or fewer: there the task means
#: near the middle are uncertain against their spacing and skewed (few runs miss a task's tail, so the middle leans),
#: and nothing the runs show tells the data sets where its interval misses from those where it covers
#: (``docs/validation.md``).
MEDIAN_RUNS = 10
#: P(X > Y)'s caveat, under a bootstrap interval, fires where the estimate lies this far from 1/2 or further (at or
#: beyond 0.2 and 0.8).
IMPROVEMENT_EDGE = 0.3

#: Every reason, in the words every cell it applies to carries (one mark and one line per reason in every format).
REASONS = {
    "top": f"heavy tails: one task makes up half of the mean or more, and {TAIL_RUNS} runs per task or fewer "
    "may miss its tail; may under-cover",
    "mean_tasks": f"heavy tails: fewer than {TAIL_TASKS:g} tasks carry the mean's variance, and {TAIL_RUNS} runs "
    "per task or fewer may miss their tails; may under-cover",
    "gap_tasks": f"heavy tails: fewer than {TAIL_TASKS:g} tasks carry the gap's variance at {TAIL_RUNS} runs per "
    "task or fewer; may under-cover",
    "above_median": f"heavy tails: the runs' means lie well above their medians ({ABOVE_MEDIAN:.0%} of the mean or "
    f"more), and {TAIL_RUNS} runs per task or fewer may miss the tail of every task at once; may under-cover",
    "tied": f"runs all equal on {TIED_SHARE:.0%} of the tasks or more (a capped or a failure score): those add no "
    "width, and a rare run off it is unseen; may under-cover",
    "median": f"a bootstrap interval of the median depends on the tasks near the middle; may under-cover at "
    f"{MEDIAN_RUNS} runs per task or fewer (median_interval=order-statistic is conservative)",
    "boundary": "near 0 or 1 (at the boundary) a task whose runs separate adds no width to a bootstrap interval; "
    "may under-cover (the default method, bootstrap-t, gives P(X>Y) an interval that does not collapse there)",
    "one_run": "one run per task: the interval cannot show run-to-run spread; may under-cover (run 2 or more seeds "
    "per task)",
    "single_task": "one run: no interval (a task's interval needs 2 runs or more to show their spread)",
    "no_spread": "runs all equal: the interval's width is the median spread of the algorithm's tasks, not the "
    "task's own, and a rare run off that value is unseen; may under-cover",
}


def _mean_caveat(kind: str, features: Mapping[str, float]) -> str:
    if features.get("one_run", 0.0):
        return REASONS["one_run"]
    few = features["runs"] <= TAIL_RUNS
    if kind == "mean" and few and features["top_share"] >= TOP_SHARE:
        return REASONS["top"]
    if kind == "mean" and few and features["mean_tasks"] < TAIL_TASKS:
        return REASONS["mean_tasks"]
    if kind == "mean" and few and features.get("above_median", 0.0) >= ABOVE_MEDIAN:
        return REASONS["above_median"]
    if kind == "optimality_gap" and few and features["gap_tasks"] < TAIL_TASKS:
        return REASONS["gap_tasks"]
    if kind in ("mean", "optimality_gap") and features["tied_share"] >= TIED_SHARE:
        return REASONS["tied"]
    return ""


def aggregate_caveat(kind: str, features: Mapping[str, float], resampled: bool = True) -> str:
    """The caveat of one algorithm's aggregate of ``kind`` (:data:`..stats.intervals.STATISTIC_KINDS`), its interval
    a bootstrap one (``resampled``) or computed from the runs (the order-statistic median): empty where its interval
    is expected to hold, else one reason (:data:`REASONS`)."""
    if kind != "median" or features.get("one_run", 0.0):
        return _mean_caveat(kind, features)
    return REASONS["median"] if resampled and features["runs"] <= MEDIAN_RUNS else ""


def difference_caveat(kind: str, x: Mapping[str, float], y: Mapping[str, float], resampled: bool = True) -> str:
    """The caveat of the difference of two algorithms' aggregates: either algorithm's (X's first)."""
    return aggregate_caveat(kind, x, resampled) or aggregate_caveat(kind, y, resampled)


def improvement_caveat(features: Mapping[str, float], resampled: bool = True) -> str:
    """The caveat of P(X > Y) from :func:`pair_features`, its interval a bootstrap one (``resampled``) or not: near 0
    or 1 most tasks' runs separate, and a separated task's share is 0 or 1 in every bootstrap replicate, so it adds no
    width to a bootstrap interval (the ``mann-whitney`` interval, from the runs, gives it its own); where either
    algorithm has one run per task, whatever the interval, no run-to-run spread shows."""
    if features.get("one_run", 0.0):
        return REASONS["one_run"]
    if resampled and abs(features["point"] - 0.5) >= IMPROVEMENT_EDGE:
        return REASONS["boundary"]
    return ""


def task_caveat(features: Mapping[str, float]) -> str:
    """The caveat of one task's mean from :func:`task_features`: a task of one run gets no interval, and says so."""
    if no_task_interval(features["runs"]):
        return REASONS["single_task"]
    return REASONS["no_spread"] if features["no_spread"] else ""


# ----------------------------------------------------------------------------- what the study measured
#: The coverage study's recorded results the sentences quote (written by ``benchmarks/coverage/caveat_study.py``,
#: shipped with the package): never a figure typed into a sentence.
MEASURED = "coverage_study.json"


def measured(interval: str) -> dict[str, Any] | None:
    """What the coverage study measured of ``interval`` (``median: order-statistic``, ``P(X>Y) near 1``, ...):
    ``{"coverage": [lowest, highest] (pooled over a set's rows, per set and run count), "worst": the lowest of one
    row, "rows": which rows where not all (optional), "sets": [...], "runs": [...], "trials": ...}``; None where it was not measured (or the file is absent).

    Example:
        >>> found = measured("median: order-statistic")
        >>> found is None or 0 <= found["coverage"][0] <= found["coverage"][1] <= 1
        True
    """
    import json
    from importlib import resources

    try:
        recorded = json.loads((resources.files(__package__) / MEASURED).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    row = recorded.get("intervals", {}).get(interval)
    if not isinstance(row, dict):
        return None
    return {**row, **{k: recorded[k] for k in ("sets", "runs", "trials", "study") if k in recorded}}


def study_words(interval: str) -> str:
    """The sentence that quotes what the study measured of ``interval`` ("" where it was not), saying on which data
    and at which run counts: a figure of that study, not a property of the interval on the scores at hand."""
    found = measured(interval)
    if found is None:
        return ""
    low, high = found["coverage"]
    runs = ", ".join(str(n) for n in found["runs"][:-1]) + f" and {found['runs'][-1]}"
    sets = ", ".join(found["sets"][:-1]) + f" and {found['sets'][-1]}"
    worst = f" (single rows down to {found['worst']:.0%})" if round(found.get("worst", low), 2) < round(low, 2) else ""
    span = f"{low:.0%}" if round(low, 2) == round(high, 2) else f"{low:.0%}-{high:.0%}"
    rows = f" {found['rows']}" if found.get("rows") else ""
    return (
        f" In this package's coverage study ({found['trials']} data sets drawn at each of {runs} runs per task from "
        f"the per-run results of {sets}; {found['study']}), it covered the truth (the statistic of all the runs)"
        f"{rows} in {span} of the data sets of a set and run count{worst}: what that study measured on those data, "
        "not a property of this interval on these scores."
    )
