"""Whether the mean's interval can be trusted at this number of runs: a skew diagnostic (issue 23).

Every interval for the mean (percentile, expanded, bootstrap-t, double bootstrap) assumes the runs show the
tail that carries the mean. With a few runs of a strongly right-skewed task they rarely do, and no interval
reaches its level: the information is not in the data. What the data do show is the skewness of the
estimator itself, estimated from the cells:

.. math:: \\hat\\gamma = \\frac{\\sum_m \\pm k_{3,m} / N_m^2}{(\\sum_m s_m^2 / N_m)^{3/2}}

(``k_3`` the unbiased third cumulant of task m's runs, ``s²`` their variance, the sign ``-`` for the second
algorithm of a difference; tasks with fewer than 3 runs contribute no ``k_3``). It is scale-free and shrinks
as ``1 / sqrt(M N)``.

That shrinking is not what decides whether an interval covers: the intervals fail because the runs of every
task under-sample its tail, so each task's spread is under-estimated in the same direction, which more tasks do
not average away (at 26 tasks the mean of lognormal(σ 1.5) tasks covers no better than at 10). The diagnostic
therefore reads the *runs'* skewness, pooled over the tasks: :func:`tail_skewness`, ``γ̂ · sqrt(K)`` (K the runs
of the groups; with N runs in every task exactly ``mean_m k_3 / (mean_m s²)^{3/2}``). A few runs *under*-state
a heavy tail, so a moderate pooled skewness already signals a large true one. :data:`SKEW_LIMIT` is the
threshold calibrated in ``benchmarks/coverage_study.py`` (README: the diagnostic's rates).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .bootstrap import Cells, magnitude

#: |pooled skewness of the runs| (:func:`tail_skewness`) above which the mean's interval is flagged (calibrated
#: by simulation, ``benchmarks/coverage_study.py``).
SKEW_LIMIT = 2.9


def estimator_skewness(groups: Sequence[Cells]) -> float:
    """Estimated skewness of the mean over tasks (one group) or of the difference of two groups' means."""
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


def tail_skewness(groups: Sequence[Cells]) -> float:
    """The runs' skewness pooled over tasks (and over both algorithms of a difference, Y's sign flipped):
    :func:`estimator_skewness` times ``sqrt(K)``, K the runs of the groups."""
    return estimator_skewness(groups) * float(np.sqrt(sum(g.n_runs for g in groups)))


def mean_untrusted(groups: Sequence[Cells], limit: float = SKEW_LIMIT) -> bool:
    """True when the mean's (one group) or the mean difference's (two groups) interval cannot be trusted."""
    return abs(tail_skewness(groups)) > limit
