"""The small-sample level of a race's intervals: Welch-Satterthwaite, the tasks' spreads pooled over configurations.

A race's repeated intervals are normal intervals on the bootstrap standard deviation of a stratified statistic
(each configuration's runs resampled within tasks), from 2 runs per (configuration, task) cell at its first look.
The bootstrap variance of a stratified mean is ``(n - 1) / n`` of the unbiased one, cell by cell, and its standard
deviation is itself an estimate: the expanded percentile interval (:func:`.intervals.bounds.expanded_level`) corrects both
with the factor ``c`` and a ``t`` quantile on ``Σ (n_m - 1)`` degrees of freedom. Those degrees of freedom hold when
every task's runs spread alike; when they do not (normalised scores of different games, tasks of unequal noise) the
variance of the stratified statistic has the Welch-Satterthwaite degrees of freedom

    ν = (Σ_m v_m)² / Σ_m v_m² / (n_m - 1),   v_m = σ_m² / n_m,

far fewer at 2 runs per cell, and the ``Σ (n_m - 1)`` intervals are too short (their one-sided error at a nominal
0.005 was 0.0095 on normal tasks of unequal spread and 0.017 on Atari 100k games, ``docs/race.md``). With one degree
of freedom per cell, each cell's own variance in ν would bias it low; the configurations of a race run the same
tasks, so each task's spread σ_m² is estimated from every configuration still racing, pooled within tasks
(:func:`pooled_variances`). Only ``c`` and ν use the pooled spreads: each statistic's standard deviation is its own
bootstrap's, so a configuration with a larger spread still gets its own, larger standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import bootstrap as bs
from . import distributions, metrics, registry


def pooled_variances(cells: Sequence[bs.Cells], trim: float = 0.0) -> np.ndarray:
    """(M,) each task's unbiased variance of runs, pooled within the task over ``cells`` (one per configuration, the
    same M tasks; weights ``n - 1``), in units of the largest |score| squared (the factors below are scale-free);
    0 where no cell of the task has 2 runs. With ``trim`` (a trimmed mean's share cut from each end: 0.25 for the
    IQM), each configuration's runs are first winsorized where its trimmed mean cuts them (its ⌊trim K⌋-th
    smallest and largest of its K runs): a trimmed mean's variance is made of the winsorized runs' (Tukey &
    McLaughlin 1963), so a task's outliers, which it trims, do not count as that task's spread.

    >>> import numpy as np
    >>> a = bs.Cells.from_list([np.array([0.0, 2.0]), np.array([1.0, 1.0, 4.0])])
    >>> b = bs.Cells.from_list([np.array([4.0, 6.0]), np.array([5.0])])
    >>> (pooled_variances([a, b]) * 6.0**2).round(3).tolist()  # task 1: (2 + 2) / 2; task 2: 3 / 2 (b has one run)
    [2.0, 3.0]
    """
    if not cells:
        raise ValueError("pooling needs the cells of at least one configuration")
    tasks = cells[0].n_tasks
    unit = bs.magnitude(np.concatenate([c.values for c in cells]))
    squares, df = np.zeros(tasks), np.zeros(tasks)
    for c in cells:
        x = c.values / unit
        if trim > 0:
            cut = int(math.floor(trim * x.size))
            ordered = np.sort(x)
            x = np.clip(x, ordered[cut], ordered[x.size - 1 - cut])
        means = np.bincount(c.task_of, weights=x, minlength=tasks) / c.sizes
        squares += np.bincount(c.task_of, weights=(x - means[c.task_of]) ** 2, minlength=tasks)
        df += c.sizes - 1
    return np.where(df > 0, squares / np.maximum(df, 1), 0.0)


def trimmed_share(metric: str) -> float:
    """The share of runs a registered trimmed-mean metric cuts from each end (``iqm``: 0.25,
    ``trimmed_mean_0.1``: 0.1); 0 for every other metric (its tasks' spreads are the runs' own).

    >>> trimmed_share("iqm"), trimmed_share("trimmed_mean_0.1"), trimmed_share("mean"), trimmed_share("median")
    (0.25, 0.1, 0.0, 0.0)
    """
    found = registry.lookup(metric)
    return float(found[1]) if found is not None and found[0].make is metrics.trimmed_mean else 0.0


def welch_factors(sizes: Sequence[np.ndarray], variances: np.ndarray) -> tuple[float, float]:
    """``(c, ν)`` of a statistic made of configurations with ``sizes[k]`` (M,) runs per task, the tasks' spreads
    ``variances`` (M,): ``c² = Σ v / Σ v (n - 1) / n`` (the unbiased over the bootstrap variance) and the
    Welch-Satterthwaite ν, over the cells with at least 2 runs (equal spreads where every one is 0; ``(1, inf)``
    when no cell has 2 runs).

    >>> c, nu = welch_factors([np.full(10, 2)], np.ones(10))  # 10 alike tasks, 2 runs each: √2 and 10
    >>> round(c, 4), round(nu, 4)
    (1.4142, 10.0)
    >>> round(welch_factors([np.full(10, 2)], np.array([1.0] + [0.01] * 9))[1], 2)  # one task dominates: about 1
    1.19
    """
    n = np.concatenate([np.asarray(s, dtype=float) for s in sizes])
    var = np.tile(np.asarray(variances, dtype=float), len(sizes))
    keep = n >= 2
    if not keep.any():
        return 1.0, math.inf
    n, var = n[keep], var[keep]
    if not var.sum() > 0:
        var = np.ones_like(n)
    v = var / n
    c = math.sqrt(float(v.sum() / (var * (n - 1) / n**2).sum()))
    nu = float(v.sum() ** 2 / (v**2 / (n - 1)).sum())
    return c, nu


def multiplier(bound: float, c: float, nu: float) -> float:
    """The widened critical value ``c · t_ν(Φ(bound))`` that multiplies the bootstrap standard deviation.

    >>> round(multiplier(2.0, 1.0, math.inf), 6), round(multiplier(2.0, 1.0, 5.0), 4)
    (2.0, 2.6486)
    """
    return c * t_quantile(bound, nu)


def t_quantile(bound: float, nu: float) -> float:
    """``t_ν(Φ(bound))``: the normal critical value ``bound`` at the same level on ν degrees of freedom."""
    level = float(distributions.norm_cdf(bound))
    return float(bound) if not math.isfinite(nu) else float(distributions.t_ppf(level, nu))
