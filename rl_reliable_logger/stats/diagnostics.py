"""Whether the mean's interval may under-cover at this number of runs: a skew diagnostic (issues 23, 33).

Every interval for the mean (percentile, expanded, bootstrap-t, double bootstrap) assumes the runs show the
tail that carries the mean. With a few runs of strongly right-skewed tasks they rarely do, and the interval
misses above: the runs of every task under-sample its tail in the same direction, which more tasks do not
average away.

The rule reads each task on its own and counts: a task's runs are *skewed* when their sample skewness
(:func:`task_skewness`, the adjusted Fisher-Pearson ``G1``, scale-free) exceeds :func:`skew_threshold` of its
run count (the skewness of N runs is bounded, by about ``sqrt(N)``, so the bar rises with N); the mean's interval
is flagged when the skewed tasks are at least :data:`SKEWED_SHARE` of the tasks whose runs vary
(:func:`skewed_tasks`). A count is robust to one task: however extreme, one task is one vote, where a skewness
pooled over tasks lets the task with the largest spread decide. A difference of two means is judged on both
algorithms' tails (:func:`mean_untrusted` of both groups: either flagged flags the pair), never on the
difference of their skewnesses, which cancels when both are heavy-tailed.

The constants were chosen on one set of data (simulated task models and three Atari 100k algorithms) and rated
on another (other algorithms and DreamerV2, other task models): ``benchmarks/coverage/skew_calibration.py``, rates in
``docs/validation.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .bootstrap import Cells, magnitude

#: The per-task bar is ``SKEW_INTERCEPT + SKEW_SLOPE * ln(N)`` (fitted, ``benchmarks/coverage/skew_calibration.py``).
SKEW_INTERCEPT = 1.0
SKEW_SLOPE = 0.05
#: Share of the tasks (whose runs vary) that must be skewed for the mean's interval to be flagged (fitted).
SKEWED_SHARE = 0.6
#: Fewer runs than this give a task no skewness (its third cumulant needs three).
MIN_RUNS = 3


class SkewCount(NamedTuple):
    """How many tasks' runs are skewed (``skewed``) among those whose skewness could be read (``tasks``)."""

    skewed: int
    tasks: int

    @property
    def share(self) -> float:
        return self.skewed / self.tasks if self.tasks else 0.0


def skew_threshold(runs: np.ndarray | int, intercept: float = SKEW_INTERCEPT, slope: float = SKEW_SLOPE) -> np.ndarray:
    """The skewness above which N runs count as skewed: ``intercept + slope * ln(N)``."""
    return intercept + slope * np.log(np.asarray(runs, dtype=float))


def task_skewness(cells: Cells) -> np.ndarray:
    """(M,) adjusted sample skewness ``G1 = k3 / k2^1.5`` of each task's runs; NaN where a task has fewer than
    :data:`MIN_RUNS` runs or its runs do not vary (relative spread below 1e-12)."""
    out = np.full(cells.n_tasks, np.nan)
    unit = magnitude(cells.values)
    for m, (o, n) in enumerate(zip(cells.offsets, cells.sizes)):
        runs = cells.values[o : o + n] / unit
        if n < MIN_RUNS or not np.all(np.isfinite(runs)):
            continue
        dev = runs - runs.mean()
        if float(np.ptp(runs)) <= 1e-12 * float(np.abs(runs).max()):
            continue
        k2 = float((dev**2).sum()) / (n - 1)
        k3 = float(n * (dev**3).sum()) / ((n - 1) * (n - 2))
        out[m] = k3 / k2**1.5
    return out


def skewed_tasks(cells: Cells, intercept: float = SKEW_INTERCEPT, slope: float = SKEW_SLOPE) -> SkewCount:
    """How many tasks' runs are skewed to the right beyond :func:`skew_threshold` of their own run count."""
    g = task_skewness(cells)
    read = np.isfinite(g)
    bar = skew_threshold(cells.sizes[read], intercept, slope)
    return SkewCount(int(np.sum(g[read] > bar)), int(read.sum()))


def flagged(count: SkewCount, share: float = SKEWED_SHARE) -> bool:
    """True when at least ``share`` of the readable tasks (and at least two of them) are skewed."""
    return count.skewed >= 2 and count.skewed >= share * count.tasks


def mean_untrusted(groups: Sequence[Cells]) -> bool:
    """True when the mean's (one group) or the mean difference's (two groups) interval may under-cover: any
    group's runs are skewed on at least :data:`SKEWED_SHARE` of its tasks."""
    return any(flagged(skewed_tasks(g)) for g in groups)


def estimator_skewness(groups: Sequence[Cells]) -> float:
    """Estimated skewness of the mean over tasks (one group) or of the difference of two groups' means (the
    former diagnostic's statistic, kept for the coverage study's record; not the rule):

    .. math:: \\hat\\gamma = \\frac{\\sum_m \\pm k_{3,m} / N_m^2}{(\\sum_m s_m^2 / N_m)^{3/2}}
    """
    third, var = 0.0, 0.0
    unit = magnitude(np.concatenate([g.values for g in groups]))
    for sign, cells in zip((1.0, -1.0), groups):
        scaled = cells.values / unit
        for o, n in zip(cells.offsets, cells.sizes):
            runs = scaled[o : o + n]
            if n < 2:
                continue
            dev = runs - runs.mean()
            var += float((dev**2).sum() / (n - 1)) / n
            if n >= 3:
                third += sign * float(n * (dev**3).sum() / ((n - 1) * (n - 2))) / n**2
    if var <= 0:
        return 0.0
    return third / var**1.5
