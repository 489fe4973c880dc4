"""Whether the mean's interval can be trusted at this number of runs: a skew diagnostic (issue 23).

Every interval for the mean (percentile, expanded, bootstrap-t, double bootstrap) assumes the runs show the
tail that carries the mean. With a few runs of a strongly right-skewed task they rarely do, and no interval
reaches its level: the information is not in the data. What the data do show is the skewness of the
estimator itself, estimated from the cells:

.. math:: \\hat\\gamma = \\frac{\\sum_m \\pm k_{3,m} / N_m^2}{(\\sum_m s_m^2 / N_m)^{3/2}}

(``k_3`` the unbiased third cumulant of task m's runs, ``s²`` their variance, the sign ``-`` for the second
algorithm of a difference; tasks with fewer than 3 runs contribute no ``k_3``). It is scale-free and shrinks
as ``1 / sqrt(M N)``: the normal approximation every interval leans on improves with more runs and tasks.
Because a few runs *under*-state a heavy tail, a moderate estimated skewness already signals a large true
one. :data:`SKEW_LIMIT` is the threshold calibrated in ``benchmarks/coverage_study.py`` (README: the
diagnostic's rates).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .bootstrap import Cells, magnitude

#: |estimated skewness of the mean (difference)| above which its interval is flagged (calibrated by simulation).
SKEW_LIMIT = 0.5


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


def mean_untrusted(groups: Sequence[Cells], limit: float = SKEW_LIMIT) -> bool:
    """True when the mean's (one group) or the mean difference's (two groups) interval cannot be trusted."""
    return abs(estimator_skewness(groups)) > limit
