"""Every bound formula of the interval methods, in one module: percentile, basic, BC/BCa with the acceleration,
expanded percentile (with its levels), normal, studentized, Student-t, order statistic and Wilson; and the sides an
interval bounds (``tail=``: two-sided, or one-sided ``less``/``greater``, scipy.stats.bootstrap's ``alternative``).

A method's bounds are one function ``bounds(dist, point, ci, tail, accel) -> (low, high)`` of the bootstrap
replicates ``dist`` (B, ...) and the estimate ``point`` (...); ``tail`` is the expanded tail probability (scalar or
one per statistic) for a method that ``needs_tail``, ``accel`` the acceleration for one that ``needs_jackknife``
(:mod:`.methods` declares which). The other formulas compute those inputs (:func:`expanded_level`,
:func:`improvement_level`, :func:`task_levels`, :func:`acceleration`) or an interval from something else than
replicates (:func:`studentized_interval` from the replicates of a statistic and its standard error,
:func:`student_t_task_intervals` and :func:`median_order_statistic_interval` from the runs, :func:`wilson` from a
proportion). The rliable drop-in (``rliable/intervals.py``) computes arch's intervals from the same formulas.

numpy is imported by each formula when it computes: the registry that names them (:mod:`.methods`) is read by
``rl-reliable --help``, which loads no numpy.

Example (a one-sided upper bound is the upper end of the two-sided interval at level ``2 ci - 1``)::

    >>> import numpy as np
    >>> dist, point = np.arange(101.0)[:, None], np.array([50.0])
    >>> low, high = percentile_bounds(dist, point, sided_level(0.95, "less"), None, None)
    >>> [float(v[0]) for v in one_sided(low, high, "less")]
    [-inf, 95.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # numpy and the engine load when a formula computes (``--help`` reads the registry, no numpy)
    import numpy as np

    from ..bootstrap import Cells

    Tail = float | np.ndarray | None

# ---------------------------------------------------------------------------- the sides an interval bounds
#: What ``tail=`` takes (scipy.stats.bootstrap's ``alternative``): both ends, or one (``less``: ``(-inf, high]``, the
#: statistic is at most ``high``; ``greater``: ``[low, inf)``).
TAILS = ("two-sided", "less", "greater")


def check_tail(tail: str) -> str:
    """``tail`` if it is one of :data:`TAILS`, else a ValueError naming them."""
    if tail not in TAILS:
        raise ValueError(f"tail must be one of {', '.join(map(repr, TAILS))}, got {tail!r}")
    return tail


def tail_alpha(ci: float, tail: str = "two-sided") -> float:
    """The probability an interval at level ``ci`` leaves out beyond each end it bounds: ``(1 - ci) / 2`` for a
    two-sided interval, ``1 - ci`` for a one-sided one."""
    return (1.0 - ci) / 2 if tail == "two-sided" else 1.0 - ci


def sided_level(ci: float, tail: str = "two-sided") -> float:
    """The level of the two-sided interval whose ends are the bounds at level ``ci`` on the side(s) ``tail`` names:
    ``ci`` itself, or ``2 ci - 1`` for a one-sided bound (which needs ``ci`` above 0.5)."""
    check_tail(tail)
    if tail == "two-sided":
        return ci
    if not 0.5 < ci < 1:
        raise ValueError(f"a one-sided interval needs a level between 0.5 and 1, got {ci}")
    return 1.0 - 2.0 * tail_alpha(ci, tail)


def one_sided(low: Any, high: Any, tail: str = "two-sided") -> tuple[Any, Any]:
    """``(low, high)`` with the end ``tail`` leaves open set to infinity (``less``: ``low = -inf``; ``greater``:
    ``high = inf``); a two-sided interval as it is."""
    import numpy as np

    if tail == "less":
        low = np.full(np.shape(low), -np.inf)
    elif tail == "greater":
        high = np.full(np.shape(high), np.inf)
    return low, high


# ---------------------------------------------------------------------------- quantiles of the replicates
def quantile_pair(dist: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles ``low`` and ``high`` of every column (``np.quantile``, method ``linear``)."""
    import numpy as np

    both = np.quantile(dist, [low, high], axis=0)
    return both[0], both[1]


#: Up to this many distinct levels (or one per this many columns), :func:`column_quantiles` asks ``np.quantile`` once
#: per group of columns sharing a level (a partition, linear in the replicates) instead of sorting every column.
_SHARED_LEVELS = 16


def diag_quantile(dist: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q[i] of column i (each statistic its own level): :func:`column_quantiles` of one level."""
    return column_quantiles(dist, [q])[0]


def column_quantiles(dist: np.ndarray, levels: Sequence[Any]) -> list[np.ndarray]:
    """For each of ``levels`` (each a level per column of ``dist`` (B, ...), or one for all), every column's quantile
    at its own level: ``np.quantile(dist[:, i], level[i])`` (method ``linear``) bit for bit, NaN where the level is
    not finite or the column holds a NaN. Each column is sorted once for all the levels and every column's two
    neighbouring order statistics are read and interpolated at once, with numpy's own formula (its index
    ``(B - 1) q``, its ends, and its interpolation from the nearer neighbour), instead of one ``np.quantile`` call
    per column (profiles under ``expanded`` asked 37,005 of them at 57 algorithms). Columns that share their levels
    (up to :data:`_SHARED_LEVELS` distinct ones or one per :data:`_SHARED_LEVELS` columns, as a stacked table's,
    one per algorithm) are read by one
    ``np.quantile`` per group instead. Memory: one sorted (or partitioned) copy of ``dist``.

    Example:
        >>> import numpy as np
        >>> dist = np.arange(12.0).reshape(4, 3)
        >>> low, high = column_quantiles(dist, [np.array([0.0, 0.5, 0.25]), 1.0])
        >>> low.tolist(), high.tolist()
        ([0.0, 5.5, 4.25], [9.0, 10.0, 11.0])
    """
    import numpy as np

    shape = dist.shape[1:]
    n, width = dist.shape[0], math.prod(shape)
    asked = np.stack([np.broadcast_to(np.asarray(q, dtype=float), shape).reshape(-1) for q in levels])
    shared, group_of = np.unique(asked, axis=1, return_inverse=True)
    if shared.shape[1] <= max(_SHARED_LEVELS, width // _SHARED_LEVELS) and np.isfinite(shared).all():
        # few distinct levels (e.g. one per algorithm of a stacked table): np.quantile of each group of columns, taken
        # straight from ``dist`` (one copy, partitioned in place: linear in the replicates; the same numbers as one
        # call per column)
        grouped = np.empty((len(levels), width))
        for g, q in enumerate(shared.T):
            columns = np.flatnonzero(group_of.reshape(-1) == g)
            index = (slice(None),) + tuple(np.unravel_index(columns, shape))
            picked = dist[index] if shape else dist[:, None]
            grouped[:, columns] = np.quantile(picked, q, axis=0, overwrite_input=True)
        return [row.reshape(shape) for row in grouped]
    ordered = np.sort(dist.reshape(n, width), axis=0)  # NaN sorts last, as np.quantile's partition puts it
    holds_nan = np.isnan(ordered[-1]) if n else np.zeros(width, dtype=bool)
    found = []
    for q in asked:
        finite = np.isfinite(q)
        if ((q[finite] < 0) | (q[finite] > 1)).any():
            raise ValueError("Quantiles must be in the range [0, 1]")
        read = sorted_quantile(ordered, np.full(width, n), np.where(finite, q, 0.0))
        read[holds_nan | ~finite] = np.nan
        found.append(read.reshape(shape))
    return found


def sorted_quantile(ordered: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Column i's quantile ``q[i]`` of its first ``counts[i]`` values, ``ordered`` (B, C) holding each column's values
    ascending first: ``np.quantile`` of them (method ``linear``) with numpy's own formula, its index ``(n - 1) q``,
    its ends (the largest value at or beyond the last index, the smallest below the first) and its interpolation
    from the nearer neighbour, so the numbers are the same bit for bit."""
    import numpy as np

    columns = np.arange(ordered.shape[1])
    virtual = (counts - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above, below = virtual >= counts - 1, virtual < 0
    previous[above], following[above] = -1, -1  # numpy's ends: index -1 (the largest value), index 0
    previous[below], following[below] = 0, 0
    gamma = virtual - previous
    last = np.maximum(counts - 1, 0)
    low = ordered[np.where(previous < 0, last, previous).astype(np.intp), columns]
    high = ordered[np.where(following < 0, last, following).astype(np.intp), columns]
    step = high - low
    out = low + step * gamma
    np.subtract(high, step * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def quantile_positions(counts: np.ndarray, levels: Sequence[np.ndarray]) -> np.ndarray:
    """The positions :func:`sorted_quantile` reads of columns holding ``counts`` values each (their values first, any
    others after them) at each of ``levels``: partitioning the columns at these positions (``np.partition``, which
    puts NaN last as ``np.sort`` does) places there the values a full sort would, in linear time.

    Example:
        >>> import numpy as np
        >>> quantile_positions(np.array([1001]), [np.array([0.975]), np.array([0.025])]).tolist()
        [0, 25, 26, 975, 976, 1000]
    """
    import numpy as np

    counts = np.asarray(counts, dtype=np.int64)
    last = np.maximum(counts - 1, 0)
    found = [np.zeros(1, dtype=np.int64), last]
    for q in levels:
        previous = np.floor(np.clip((counts - 1) * np.asarray(q, dtype=float), 0, None)).astype(np.int64)
        found += [np.minimum(previous, last), np.minimum(previous + 1, last)]
    return np.unique(np.concatenate(found))


def tie_tolerance(dist: np.ndarray, point: np.ndarray) -> np.ndarray:
    """How far a replicate may lie from the estimate and still count as equal to it: 1e-9 of the statistic's
    scale (its largest finite |replicate| or |estimate|). Far above the rounding of sums in another order
    (~1e-16 relative), far below any real difference between replicates of a statistic of ≤ 10⁶ runs."""
    import numpy as np

    finite = np.where(np.isfinite(dist), np.abs(dist), 0.0)
    scale = np.maximum(finite.max(axis=0, initial=0.0), np.where(np.isfinite(point), np.abs(point), 0.0))
    return 1e-9 * scale


def percentile_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """The ``(1 - ci) / 2`` and ``(1 + ci) / 2`` quantiles of the replicates."""
    alpha = 1.0 - ci
    return quantile_pair(dist, alpha / 2, 1 - alpha / 2)


def basic_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """The percentile interval reflected about the estimate."""
    lo, hi = percentile_bounds(dist, point, ci, tail, accel)
    return reflect(point, lo, hi)


def reflect(point: Any, low: Any, high: Any) -> tuple[Any, Any]:
    """The interval ``[low, high]`` reflected about the estimate: ``(2 point - high, 2 point - low)`` (the basic
    bootstrap interval from the percentile one)."""
    return 2 * point - high, 2 * point - low


def bca_levels(z0: Any, z: Any, accel: Any) -> Any:
    """The levels at which BC (``accel`` 0) or BCa takes its quantiles: ``Φ(z0 + (z0 + z) / (1 - a (z0 + z)))``
    for the bias ``z0``, the normal quantile ``z`` of each nominal level and the acceleration ``a`` (Efron 1987)."""
    from .. import distributions

    return distributions.norm_cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))


def bias_corrected_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """BC (``accel`` None) or BCa: quantiles shifted by ``z0 = Φ⁻¹(fraction of replicates below the estimate)``,
    ties (within :func:`tie_tolerance`) counting half, and stretched by the acceleration."""
    import numpy as np

    from .. import distributions

    alpha = 1.0 - ci
    tol = tie_tolerance(dist, point)
    below = (dist < point - tol).mean(axis=0) + 0.5 * (np.abs(dist - point) <= tol).mean(axis=0)
    z0 = distributions.norm_ppf(np.clip(below, 1e-12, 1 - 1e-12))
    a = np.zeros_like(z0) if accel is None else accel
    ends = distributions.norm_ppf(np.array([alpha / 2, 1 - alpha / 2]))
    low, high = column_quantiles(dist, [bca_levels(z0, z, a) for z in ends])
    return low, high


def expanded_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """Hesterberg's expanded percentile interval: the quantiles at ``tail`` and ``1 - tail``."""
    import numpy as np

    if tail is None:
        raise ValueError("the expanded percentile interval needs its tail probability")
    if np.ndim(tail) == 0:
        return quantile_pair(dist, float(tail), 1 - float(tail))
    low, high = column_quantiles(dist, [np.asarray(tail), 1 - np.asarray(tail)])
    return low, high


def normal_interval(dist: np.ndarray, point: np.ndarray, tail: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``point ± c · t · sd*`` for each column: the bootstrap standard deviation ``sd*`` of the replicates (ddof 1)
    with the expanded level's multiplier ``c · t = -Φ⁻¹(tail)`` (``tail`` from :func:`expanded_level`).

    Used for the median over tasks under ``bootstrap-t``: the bootstrap distribution of a median of 10-26 task
    means is lumpy, its far quantiles sit on the few task means near the middle, and the expanded percentile
    interval over-covers with 26 tasks (0.96-0.98); its standard deviation is smooth
    (``benchmarks/coverage/median_candidates.py``)."""
    import numpy as np

    from .. import distributions

    # sd in units of each column's largest |replicate|: squares of scores near 1e200 (or 1e-200) stay in range
    unit = np.abs(dist).max(axis=0, initial=0.0)
    unit = np.where((unit > 0) & np.isfinite(unit), unit, 1.0)
    sd = unit * np.std(dist / unit, axis=0, ddof=1)
    half = -distributions.norm_ppf(np.asarray(tail, dtype=float)) * sd
    return point - half, point + half


def normal_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """:func:`normal_interval` at the expanded level ``tail``."""
    if tail is None:
        raise ValueError("the normal interval needs the expanded tail probability")
    return normal_interval(dist, point, tail)


# ---------------------------------------------------------------------------- from the runs
def student_t_runs(cells: Any, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Each task's mean ± t·s/√N, ``s`` at least the median of its algorithm's tasks' (:data:`TASK_SPREAD_FLOOR`,
    :func:`student_t_task_intervals`): the ``student-t`` method of the per-task table."""
    return student_t_task_intervals(cells, ci, TASK_SPREAD_FLOOR)


def order_statistic_median(low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    """``[median of the per-task lower bounds, median of the upper bounds]``: the median over tasks does not
    decrease when any task's mean grows, so this interval covers the median of the true task means whenever every
    per-task interval covers its task's mean (conservative: wide, and it needs no resampling)."""
    import numpy as np

    return float(np.median(np.asarray(low, dtype=float))), float(np.median(np.asarray(high, dtype=float)))


def median_order_statistic_interval(cells: Any, ci: float = 0.95) -> tuple[float, float]:
    """The order-statistic interval of the median over tasks from each task's own Student-t interval at level ``ci``
    (:func:`student_t_task_intervals`, no floor on a task's spread; a task of one run contributes its score twice)."""
    return order_statistic_median(*student_t_task_intervals(cells, ci))


# ---------------------------------------------------------------------------- the levels an interval widens to
def expanded_level(cells: Cells | Sequence[Cells], ci: float = 0.95) -> float:
    r"""Tail probability of Hesterberg's (2015) expanded percentile interval, stratified by cell.

    The percentile bootstrap of a mean of ``n`` runs is too narrow for two reasons: the bootstrap
    variance is ``(n-1)/n`` of the unbiased one, and it uses normal rather than ``t`` tails. Hesterberg
    widens it by taking the percentiles at ``Φ(-sqrt(n/(n-1)) t_{α/2, n-1})`` instead of ``α/2``. With
    stratified cells the shrinkage differs per cell; for the mean over tasks of task means it is

    .. math:: c^2 = \frac{\sum_m s_m^2 / N_m}{\sum_m s_m^2 (N_m - 1) / N_m^2}

    (``s_m^2`` the unbiased variance of task m's runs; tasks with one run are left out, and equal
    weights are used when every ``s_m`` is 0), and the ``t`` degrees of freedom are ``Σ_m (N_m - 1)``.
    The tail is ``Φ(-c · t_{1-α/2, df})``. The same level is used for every statistic of these cells.

    Several algorithms' cells (a sequence): the level of the difference of their means over tasks, every
    cell of every algorithm pooled in ``c`` and ``df`` (the same tasks, so the ``1/M²`` weights cancel); used for
    differences and P(X > Y), whose bootstrap variances shrink by the same ``(N-1)/N`` in each sample.
    """
    import math

    import numpy as np

    from .. import distributions
    from ..bootstrap import Cells, magnitude

    groups = [cells] if isinstance(cells, Cells) else list(cells)
    sizes = np.concatenate([g.sizes for g in groups]).astype(float)
    keep = sizes >= 2
    if not keep.any():
        return (1.0 - ci) / 2.0
    # c is scale-free; unit scores keep the squares in range
    unit_size = magnitude(np.concatenate([g.values for g in groups]))
    var = np.concatenate([_task_variances(g, unit_size) for g in groups])
    var = var[keep] if var[keep].sum() > 0 else np.ones(int(keep.sum()))
    n = sizes[keep]
    c = math.sqrt(float((var / n).sum() / (var * (n - 1) / n**2).sum()))
    df = float((n - 1).sum())
    return float(distributions.norm_cdf(-c * distributions.t_ppf(1.0 - (1.0 - ci) / 2.0, df)))


def improvement_level(x: Cells, y: Cells, ci: float = 0.95) -> float:
    r"""Expanded tail probability for P(X > Y) (:func:`..metrics.probability_of_improvement`, the mean over tasks
    of the Mann–Whitney statistic ``U_m = mean_{a,b} h(x_a, y_b)``, ``h = [x > y] + ½[x = y]``).

    :func:`expanded_level` widens the percentile interval of a *mean* by ``c``, the square root of the unbiased
    variance over the bootstrap's own variance (``n/(n-1)`` for one sample). P(X > Y) is a two-sample U-statistic,
    whose bootstrap variance shrinks much less (for two equal normal populations the ratio averages 1.21 / 1.07 /
    1.02 at 3 / 5 / 10 runs); the mean's ``c`` over-widens it (coverage 0.95-0.98 in
    ``benchmarks/coverage/coverage_study.py``). Here ``c`` is that same ratio for U, both in
    closed form per task (Hoeffding's decomposition, ``n`` runs of X and ``k`` of Y):

    .. math:: \operatorname{Var} U = \frac{ξ_{11} + (k-1) ξ_{10} + (n-1) ξ_{01}}{n k}

    with ``ξ₁₁ = A - T``, ``ξ₁₀ = B₁₀ - T``, ``ξ₀₁ = B₀₁ - T`` (``A = E h²``, ``B₁₀ = E h(X,Y) h(X,Y')``,
    ``B₀₁ = E h(X,Y) h(X',Y)``, ``T = θ²``). The unbiased estimate takes each moment's U-statistic (distinct runs
    only), the bootstrap variance (exact, the distribution of the resamples) their plug-in V-statistics;
    ``c² = Σ_m Var_unbiased / Σ_m Var_bootstrap`` over the tasks with two or more runs of each algorithm, at least
    1 (never narrower than the percentile interval). The ``t`` degrees of freedom are Welch–Satterthwaite's over
    DeLong's variance components (each task's ``S₁₀/n`` with ``n - 1`` df and ``S₀₁/k`` with ``k - 1``): tasks
    whose U is near 0 or 1 add little variance and few effective df. Ranks only: invariant to the scale and
    order of the runs.
    """
    import math

    import numpy as np

    from .. import distributions

    unbiased, plugin, parts, dfs = 0.0, 0.0, [], []
    for m in range(x.n_tasks):
        xs = x.values[x.offsets[m] : x.offsets[m] + x.sizes[m]]
        ys = y.values[y.offsets[m] : y.offsets[m] + y.sizes[m]]
        if xs.size >= 2 and ys.size >= 2:
            u, p, part_x, part_y = improvement_variances(xs, ys)
            unbiased, plugin = unbiased + u, plugin + p
            parts += [part_x, part_y]
            dfs += [xs.size - 1.0, ys.size - 1.0]
    if not plugin > 0:
        return (1.0 - ci) / 2.0
    c = math.sqrt(max(1.0, unbiased / plugin))
    comp, dof = np.array(parts), np.array(dfs)
    df = float(comp.sum() ** 2 / (comp**2 / dof).sum()) if comp.sum() > 0 else float(dof.sum())
    return float(distributions.norm_cdf(-c * distributions.t_ppf(1.0 - (1.0 - ci) / 2.0, max(df, 1.0))))


def improvement_variances(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float, float]:
    """For one task's runs (``n, k >= 2``; see :func:`improvement_level`): the unbiased estimate and the
    bootstrap's exact value of Var U, and DeLong's two components ``S₁₀/n`` and ``S₀₁/k`` (the variances of X's
    and Y's placements, for the degrees of freedom). Sums of ranks from sorted runs, no ``n x k`` pair matrix
    (:func:`mann_whitney_sums`, :func:`mann_whitney_terms`)."""
    import numpy as np

    terms = mann_whitney_terms(np.array(float(xs.size)), np.array(float(ys.size)), *mann_whitney_sums(xs, ys))
    return float(terms.unbiased), float(terms.plugin), float(terms.part_x), float(terms.part_y)


def _task_variances(cells: Cells, unit: float) -> np.ndarray:
    """(M,) unbiased variance of each task's runs in units of ``unit`` (0 for a task of one run)."""
    import numpy as np

    scaled = cells.values / unit
    if cells.rectangular and cells.n_runs >= 2 * cells.n_tasks:  # one call: each task's row reduced as its own array
        return np.var(scaled.reshape(cells.n_tasks, -1), axis=1, ddof=1)
    return np.array(
        [np.var(scaled[cells.task_of == m], ddof=1) if cells.sizes[m] >= 2 else 0.0 for m in range(cells.n_tasks)]
    )


def task_levels(cells: Cells, ci: float = 0.95) -> np.ndarray:
    """(M,) expanded tail probability of each task's mean (Hesterberg's one-sample level, ``N_m`` runs; the
    plain ``α/2`` for a task of one run): the per-task table's intervals under ``expanded``."""
    import numpy as np

    from .. import distributions

    n = cells.sizes.astype(float)
    crit = distributions.t_ppf(1.0 - (1.0 - ci) / 2.0, np.maximum(n - 1, 1.0))
    expanded = distributions.norm_cdf(-np.sqrt(n / np.maximum(n - 1, 1.0)) * crit)
    return np.where(n >= 2, expanded, (1.0 - ci) / 2.0)


#: The per-task table's floor on a task's spread, as a share of the median spread of its algorithm's tasks (tasks of
#: two runs or more). A task whose few runs happen to agree (or miss a rare failure) has ``s`` far below its true
#: spread, and ``mean ± t s/√N`` misses: on held-out real data the plain interval covered 0.83 / 0.88 / 0.92 at
#: 3 / 5 / 10 runs, floored at the median 0.94 / 0.95 / 0.96 (issue 52;
#: ``benchmarks/results/caveat_study/task_mean_candidates.md``). A variance-stabilising constant of the same kind
#: as SAM's ``s0`` (Tusher, Tibshirani & Chu 2001).
TASK_SPREAD_FLOOR = 1.0


def student_t_task_intervals(
    cells: Cells, ci: float = 0.95, spread_floor: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(M,) low and high of each task's mean: ``mean ± t_{N-1} s / sqrt(N)``, the interval the bootstrap-t
    approximates. Used for per-task means under ``bootstrap-t``: a bootstrap of 3 runs cannot reach beyond their
    range (the truth lies outside it for 25% of normal samples), whatever its level. A task of one run gets
    ``(mean, mean)``, as every bootstrap interval gives it.

    ``spread_floor``: each task's ``s`` is at least this share of the median ``s`` of the tasks of two runs or more
    (0: each task's own ``s``; the per-task table uses :data:`TASK_SPREAD_FLOOR`).

    >>> import numpy as np
    >>> from rl_reliable_logger.stats.bootstrap import Cells
    >>> cells = Cells.from_array(np.array([[1.0, 0.0, 5.0], [1.0, 2.0, 6.0], [1.0, 4.0, 7.0]]))  # runs x tasks
    >>> [round(float(v), 2) for v in student_t_task_intervals(cells)[1]]
    [1.0, 6.97, 8.48]
    >>> [round(float(v), 2) for v in student_t_task_intervals(cells, spread_floor=1.0)[1]]  # s of task 0: 0 -> 1
    [3.48, 6.97, 8.48]
    """
    import numpy as np

    from .. import distributions
    from ..bootstrap import magnitude

    if cells.rectangular:  # one call: each task's row reduced as its own array (the same numbers)
        means = cells.values.reshape(cells.n_tasks, -1).mean(axis=1)
    else:
        means = np.array([cells.values[o : o + n].mean() for o, n in zip(cells.offsets, cells.sizes)])
    unit = magnitude(cells.values)
    var = _task_variances(cells, unit)
    several = cells.sizes >= 2
    if spread_floor > 0 and several.any():
        var = np.maximum(var, spread_floor**2 * float(np.median(var[several])))
    se = unit * np.sqrt(var / cells.sizes)
    crit = distributions.t_ppf(1.0 - (1.0 - ci) / 2.0, np.maximum(cells.sizes - 1.0, 1.0))
    half = np.where(several, crit * se, 0.0)
    return means - half, means + half


# ---------------------------------------------------------------------------- studentized
#: Largest share of degenerate bootstrap-t replicates (:data:`DEGENERATE_SE`) that may be dropped; beyond it the
#: studentized distribution is conditioned on too much, and the interval falls back.
DEGENERATE_SHARE = 0.01


#: A replicate whose standard error is below this share of the data's is degenerate: it drew (nearly) copies of
#: one run in every task, and its ``t*`` would be the replicate's shift over almost nothing. Relative to the data's
#: own standard error, so the rule is the same at every scale (an exact-zero test let standard errors that are
#: zero up to rounding through: 2 tasks x 3 runs gave ``0.427 [-3.568, 5.97e13]``). It also bounds every
#: interval: ``|t*| se <= |stat* - stat| / DEGENERATE_SE``, at most 20 times the range of the runs.
DEGENERATE_SE = 0.05


def studentized_interval(dist: np.ndarray, point: np.ndarray, ci: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap-t interval from replicates of ``(statistic, se)`` (``metrics.mean_se``, ``metrics.trimmed_mean_se``).

    ``t* = (stat* - stat) / se*``; the interval is ``(stat - t*_{1-α/2} se, stat - t*_{α/2} se)``. Second-order
    accurate: it follows the skew of the data and, for the IQM, the small-sample bias of the estimate, where the
    percentile interval does neither. Replicates with ``se* <= DEGENERATE_SE · se`` (:data:`DEGENERATE_SE`) are
    dropped.

    Returns None where the studentized distribution is degenerate and the caller must fall back (to the
    expanded interval) and say so: ``se`` zero up to rounding (1e-9 of the statistic's scale, as
    :func:`..intervals.tie_tolerance`), more than :data:`DEGENERATE_SHARE` of the replicates degenerate, or every ``t*`` equal (one task of
    two runs: each replicate either copies one run or is the data itself, ``t* = 0``; the interval would have
    zero width). :func:`studentized_intervals` computes many at once.
    """
    import numpy as np

    low, high = studentized_intervals(dist[:, :1], dist[:, 1:], np.asarray(point[:1]), np.asarray(point[1:2]), ci)
    if np.isnan(low[0]):
        return None
    return float(low[0]), float(high[0])


def studentized_intervals(
    stats: np.ndarray, errors: np.ndarray, stat: np.ndarray, se: np.ndarray, ci: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`studentized_interval` of every column at once: the replicates ``stats`` and ``errors`` (B, C) of C
    statistics and their standard errors, their estimates ``stat`` and ``se`` (C,). NaN where that gives None (the
    caller falls back). The ``t*`` of all columns are sorted together (the dropped replicates after the others) and
    each column's two quantiles read from its kept ones: the numbers of one call per column, bit for bit."""
    import numpy as np

    alpha = 1.0 - ci
    stats, errors = np.asarray(stats, dtype=float), np.asarray(errors, dtype=float)
    stat, se = np.asarray(stat, dtype=float), np.asarray(se, dtype=float)
    scale = np.maximum(np.where(np.isfinite(stats), np.abs(stats), 0.0).max(axis=0, initial=0.0), 0.0)
    rounding = 1e-9 * np.maximum(scale, np.where(np.isfinite(stat), np.abs(stat), 0.0))
    usable = np.isfinite(se) & (se > rounding)
    ok = errors > DEGENERATE_SE * se
    kept = ok.sum(axis=0)
    usable &= (kept > 0) & ~(1.0 - kept / stats.shape[0] > DEGENERATE_SHARE)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(ok, (stats - stat) / errors, np.nan)  # the dropped replicates: NaN, sorted last
    usable &= ~np.isnan(np.where(ok, t, 0.0)).any(axis=0)  # a NaN t*: np.quantile gives NaN, so no interval
    levels = (np.full(t.shape[1], 1 - alpha / 2), np.full(t.shape[1], alpha / 2))
    # only the ranks read are put in place (as a sort would put them): linear in the replicates
    ordered = np.partition(t, quantile_positions(kept, levels), axis=0) if len(t) else t
    with np.errstate(invalid="ignore"):
        hi_t = sorted_quantile(ordered, kept, levels[0])
        lo_t = sorted_quantile(ordered, kept, levels[1])
    usable &= hi_t > lo_t
    low, high = studentized_bounds(stat, se, lo_t, hi_t)
    return np.where(usable, low, np.nan), np.where(usable, high, np.nan)


def degenerate_share(dist: np.ndarray, point: np.ndarray) -> float:
    """The share of the ``(statistic, se)`` replicates :func:`studentized_interval` drops as degenerate (their
    standard error at most :data:`DEGENERATE_SE` of the estimate's): the reason it falls back when above
    :data:`DEGENERATE_SHARE`. 1 where the estimate's own standard error is 0 (the runs it uses have no spread).

    Example:
        >>> import numpy as np
        >>> degenerate_share(np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0], [4.0, 0.01]]), np.array([2.5, 1.0]))
        0.5
    """
    import numpy as np

    ok = _kept(dist, point)
    return 1.0 if ok is None else float(np.mean(~ok))


def _kept(dist: np.ndarray, point: np.ndarray) -> np.ndarray | None:
    """Which ``(statistic, se)`` replicates a studentized interval keeps (``se* > DEGENERATE_SE · se``); None where
    the estimate's own ``se`` is 0 up to rounding (1e-9 of the statistic's scale, as :func:`tie_tolerance`)."""
    import numpy as np

    stat, se = float(point[0]), float(point[1])
    values = dist[:, 0][np.isfinite(dist[:, 0])]
    rounding = 1e-9 * max(float(np.abs(values).max(initial=0.0)), abs(stat) if np.isfinite(stat) else 0.0)
    if not (np.isfinite(se) and se > rounding):
        return None
    return np.asarray(dist[:, 1] > DEGENERATE_SE * se)


def studentized_bounds(point: Any, se: Any, t_low: Any, t_high: Any) -> tuple[Any, Any]:
    """The bootstrap-t interval from the estimate, its standard error and the quantiles of the studentized replicates
    ``t* = (stat* - stat) / se*``: ``(point - t*_high se, point - t*_low se)`` (the ends swap: a replicate far above
    the estimate says the estimate may be far below the truth)."""
    return point - t_high * se, point - t_low * se


#: The mean's bootstrap-t interval (the first statistic studentized; the same rule as every other).
studentized_mean_interval = studentized_interval


def acceleration(jackknife: np.ndarray, strata: np.ndarray | None = None) -> np.ndarray:
    r"""BCa acceleration of each statistic from its leave-one-run-out values ``(J, ...)``.

    With ``strata`` (the task of each value, :func:`jackknife_tasks`) the multi-sample formula of the
    stratified bootstrap (Efron & Tibshirani 1993, §14.3; Davison & Hinkley 1997, §3.2) is used: with
    jackknife influence values :math:`l_{mj} = (n_m - 1)(\bar\theta_{m\cdot} - \theta_{(mj)})` of run j
    of task m (``n_m`` runs, :math:`\bar\theta_{m\cdot}` the mean of that task's leave-one-out values),

    .. math:: a = \frac{\sum_m n_m^{-3} \sum_j l_{mj}^3}{6 \, (\sum_m n_m^{-2} \sum_j l_{mj}^2)^{3/2}}.

    With one task (or ``strata=None``) it is the usual one-sample :math:`\sum c^3 / (6 (\sum c^2)^{3/2})`,
    :math:`c_j = \bar\theta - \theta_{(j)}`. Tasks with one run cannot be left out and contribute nothing.
    """
    import numpy as np

    jack = np.asarray(jackknife, dtype=float)
    if strata is None:
        strata = np.zeros(jack.shape[0], dtype=np.int64)
    strata = np.asarray(strata)
    if strata.shape != (jack.shape[0],):
        raise ValueError("strata needs one task per jackknife value")
    num = np.zeros(jack.shape[1:])
    den = np.zeros(jack.shape[1:])
    # a is scale-free (cubes over squares^1.5): centre each task's values and divide by the largest |deviation|
    # of each statistic, so that cubes of huge (1e200) or tiny (1e-200) scores neither overflow nor underflow
    centred = np.empty_like(jack)
    for task in np.unique(strata):
        part = jack[strata == task]
        centred[strata == task] = part.mean(axis=0) - part
    unit = np.abs(centred).max(axis=0, initial=0.0)
    centred = centred / np.where(unit > 0, unit, 1.0)
    for task in np.unique(strata):
        part = centred[strata == task]
        n = part.shape[0]
        influence = (n - 1) * part
        num += (influence**3).sum(axis=0) / n**3
        den += (influence**2).sum(axis=0) / n**2
    return acceleration_ratio(num, den)


def acceleration_ratio(cubes: Any, squares: Any) -> Any:
    """The acceleration from the sums of cubed and of squared influence values: ``Σ l³ / (6 (Σ l²)^{3/2})``
    (Efron & Tibshirani 1993, eq. 14.15), 0 where every influence value is 0."""
    import numpy as np

    den = 6.0 * np.asarray(squares) ** 1.5
    return np.divide(cubes, den, out=np.zeros_like(np.asarray(cubes, dtype=float)), where=den > 0)


# ---------------------------------------------------------------------------- proportions
def wilson(point: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for a proportion ``point`` from ``n`` (possibly fractional) trials.

    Example:
        >>> import numpy as np
        >>> [round(float(v), 4) for v in wilson(np.array(0.0), np.array(20.0), 1.959964)]
        [0.0, 0.1611]
    """
    import numpy as np

    p = np.clip(np.asarray(point, dtype=float), 0.0, 1.0)
    n = np.asarray(n, dtype=float)
    shrink = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # the score interval holds p exactly; rounding must not move an end past it or outside [0, 1]
    return np.clip(np.minimum(centre - half, p), 0.0, 1.0), np.clip(np.maximum(centre + half, p), 0.0, 1.0)


# ---------------------------------------------------------------------------- P(X > Y) at the boundary (issue 52)
#: Pseudo-trials a task whose runs separate adds, on each side, to its effective count (:func:`separated_floor`):
#: ``θ̃ = (c + a) / (c + 2a)``. Chosen on simulated task sets whose truth lies at 0.96-0.996 and on the training
#: sets (``benchmarks/coverage/improvement_candidates.py``, ``docs/validation.md``).
SEPARATED_PSEUDO = 0.1


class MannWhitneyTerms(NamedTuple):
    """Per task (last axis; any leading axes, e.g. pairs of algorithms): ``n`` runs of X and ``k`` of Y, the
    Mann-Whitney proportion ``point`` (U / nk, ties counting 1/2), the unbiased (Hoeffding) estimate of its variance
    and the bootstrap's exact (plug-in) one, and DeLong's components ``S₁₀/n`` and ``S₀₁/k`` (for the degrees of
    freedom). A task with one run of X or of Y has no unbiased estimate: there it is the plug-in one."""

    n: np.ndarray
    k: np.ndarray
    point: np.ndarray
    unbiased: np.ndarray
    plugin: np.ndarray
    part_x: np.ndarray
    part_y: np.ndarray


def mann_whitney_sums(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float, float]:
    """One task's sums over the pairs of runs, ``h = [x > y] + ½[x = y]``: ``Σ h``, ``Σ h²``, ``Σ_a (Σ_b h)²`` and
    ``Σ_b (Σ_a h)²``, from sorted runs (binary search, no ``n x k`` matrix): what :func:`mann_whitney_terms` needs.

    Example:
        >>> import numpy as np
        >>> [float(v) for v in mann_whitney_sums(np.array([2.0, 3.0]), np.array([1.0, 3.0]))]
        [2.5, 2.25, 3.25, 4.25]
    """
    import numpy as np

    n = xs.size
    ys, xs_sorted = np.sort(ys), np.sort(xs)
    below, upto = np.searchsorted(ys, xs, side="left"), np.searchsorted(ys, xs, side="right")
    row = below + 0.5 * (upto - below)  # Σ_b h(x_a, y_b)
    row_sq = below + 0.25 * (upto - below)  # Σ_b h(x_a, y_b)²
    under, over = np.searchsorted(xs_sorted, ys, side="left"), np.searchsorted(xs_sorted, ys, side="right")
    col = (n - over) + 0.5 * (over - under)  # Σ_a h(x_a, y_b)
    return float(row.sum()), float(row_sq.sum()), float((row**2).sum()), float((col**2).sum())


def mann_whitney_terms(
    n: np.ndarray, k: np.ndarray, total: Any, total_sq: Any, rows2: Any, cols2: Any
) -> MannWhitneyTerms:
    r"""The :class:`MannWhitneyTerms` of tasks from their run counts and :func:`mann_whitney_sums` (arrays of one
    shape: tasks last, any leading axes).

    With ``A = E h²``, ``B₁₀ = E h(X,Y) h(X,Y')``, ``B₀₁ = E h(X,Y) h(X',Y)`` and ``T = θ²``,
    ``Var U = (A + (k-1) B₁₀ + (n-1) B₀₁ - (n+k-1) T) / (nk)`` (Hoeffding): the unbiased estimate takes each
    moment's U-statistic (distinct runs only), the bootstrap's exact variance their plug-in V-statistics.

    Example:
        >>> import numpy as np
        >>> t = mann_whitney_terms(np.array([2.0]), np.array([2.0]), *(np.array([v]) for v in (2.5, 2.25, 3.25, 4.25)))
        >>> float(t.point[0]), round(float(t.plugin[0]), 6)
        (0.625, 0.082031)
    """
    import numpy as np

    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    total, total_sq, rows2, cols2 = (np.asarray(v, dtype=float) for v in (total, total_sq, rows2, cols2))
    nk = n * k
    a = total_sq / nk
    b10_hat, b01_hat, t_hat = rows2 / (nk * k), cols2 / (nk * n), (total / nk) ** 2
    plugin = (a + (k - 1) * b10_hat + (n - 1) * b01_hat - (n + k - 1) * t_hat) / nk
    both = (n >= 2) & (k >= 2)
    with np.errstate(divide="ignore", invalid="ignore"):  # one run of X or Y: no distinct pairs (masked below)
        b10 = (rows2 - total_sq) / (nk * (k - 1))
        b01 = (cols2 - total_sq) / (k * n * (n - 1))
        t = (total**2 - rows2 - cols2 + total_sq) / (n * (n - 1) * k * (k - 1))
        unbiased = (a + (k - 1) * b10 + (n - 1) * b01 - (n + k - 1) * t) / nk
        # DeLong: placements row / k and col / n, their unbiased variances over the runs
        part_x = (rows2 - total**2 / n) / (n - 1) / (k * k * n)
        part_y = (cols2 - total**2 / k) / (k - 1) / (n * n * k)
    return MannWhitneyTerms(
        n,
        k,
        total / nk,
        np.where(both, unbiased, plugin),
        plugin,
        np.where(n >= 2, np.maximum(part_x, 0.0), 0.0),
        np.where(k >= 2, np.maximum(part_y, 0.0), 0.0),
    )


def newcombe_count(theta: Any, n: Any, k: Any) -> Any:
    """The effective number of trials of a Mann-Whitney proportion at ``theta`` from ``n`` and ``k`` runs:
    ``θ(1-θ) / Var U`` under Hanley and McNeil's (1982) exponential model with both samples counted as
    ``N* = (n + k) / 2`` (Newcombe 2006): ``nk / (1 + (N* - 1)((1-θ)/(2-θ) + θ/(1+θ)))``, symmetric in θ and 1-θ.

    Example:
        >>> float(newcombe_count(1.0, 3.0, 3.0)), round(float(newcombe_count(0.5, 3.0, 3.0)), 3)
        (4.5, 3.857)
    """
    import numpy as np

    theta, n, k = (np.asarray(v, dtype=float) for v in (theta, n, k))
    star = (n + k) / 2
    return n * k / (1 + (star - 1) * ((1 - theta) / (2 - theta) + theta / (1 + theta)))


def separated_floor(terms: MannWhitneyTerms, pseudo: float = SEPARATED_PSEUDO) -> np.ndarray:
    """Per task, the variance a task whose runs separate (U = 0 or 1: its bootstrap and unbiased variances are 0)
    still has: a proportion's variance ``θ̃(1-θ̃)/c(θ̃)`` at Newcombe's effective count ``c``
    (:func:`newcombe_count`), with ``pseudo`` trials added on each side of the ``c(1)`` it shows,
    ``θ̃ = (c(1) + pseudo) / (c(1) + 2 pseudo)`` (towards 1/2 from the side it separates on, as Wilson's interval
    at 0 or N successes is); 0 for every other task."""
    import numpy as np

    seen = newcombe_count(1.0, terms.n, terms.k)
    near = (seen + pseudo) / (seen + 2 * pseudo)
    floor = near * (1 - near) / newcombe_count(near, terms.n, terms.k)
    return np.where((terms.point == 0) | (terms.point == 1), floor, 0.0)


def improvement_normal(
    terms: MannWhitneyTerms, ci: float = 0.95, *, tasks_resampled: bool = False, pseudo: float = SEPARATED_PSEUDO
) -> tuple[np.ndarray, np.ndarray]:
    r"""The interval of P(X > Y), the mean over the M tasks (last axis) of their Mann-Whitney proportions, that does
    not collapse where the runs separate: ``P ± t_df sqrt(V)`` within [0, 1], with

    .. math:: V = \frac{\max(\sum_m \hat v_m, \sum_m v^*_m) + \sum_m f_m}{M^2}

    (``v̂`` the unbiased variances, ``v*`` the stratified bootstrap's exact ones: never narrower than the bootstrap's
    spread; ``f`` the :func:`separated_floor` of the tasks whose runs separate) and Welch-Satterthwaite's degrees
    of freedom over DeLong's components (a floor is known, it adds none). With ``tasks_resampled`` the variance of
    the mean over resampled tasks, ``s²_U / M``, is used where larger (``M - 1`` degrees of freedom). Vectorised over
    any leading axes (pairs of algorithms).

    A percentile interval of the bootstrap misses near 1 on both sides: a task whose drawn runs separate gives 0 or 1
    in every replicate (no width where the truth is below 1), and the bootstrap distribution's skew (towards 1/2)
    is the reverse of the estimate's (``docs/validation.md``).

    Example (three tasks whose runs all separate: the interval does not collapse at 1):
        >>> import numpy as np
        >>> t = mann_whitney_terms(*(np.full(3, v) for v in (3.0, 3.0, 9.0, 9.0, 27.0, 27.0)))
        >>> low, high = improvement_normal(t)
        >>> float(t.point.mean()), 0.8 < float(low) < 1.0, float(high)
        (1.0, True, 1.0)
    """
    import numpy as np

    from .. import distributions

    m = terms.point.shape[-1]
    point = terms.point.mean(axis=-1)
    floor = separated_floor(terms, pseudo).sum(axis=-1)
    spread = np.maximum(terms.unbiased.sum(axis=-1), terms.plugin.sum(axis=-1))
    parts = np.concatenate([terms.part_x, terms.part_y], axis=-1)
    dof = np.concatenate([np.maximum(terms.n - 1, 1.0), np.maximum(terms.k - 1, 1.0)], axis=-1)
    parts_sq = (parts**2 / dof).sum(axis=-1)
    total = parts.sum(axis=-1) + floor
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(parts_sq > 0, total**2 / parts_sq, np.inf)
    var = (spread + floor) / m**2
    if tasks_resampled and m > 1:
        between = terms.point.var(axis=-1, ddof=1) / m + floor / m**2
        df = np.where(between > var, m - 1.0, df)
        var = np.maximum(var, between)
    crit = np.where(np.isfinite(df), distributions.t_ppf(1.0 - (1.0 - ci) / 2.0, np.maximum(df, 1.0)), 0.0)
    crit = np.where(np.isfinite(df), crit, distributions.norm_ppf(1.0 - (1.0 - ci) / 2.0))
    half = crit * np.sqrt(np.maximum(var, 0.0))
    return np.clip(point - half, 0.0, 1.0), np.clip(point + half, 0.0, 1.0)


class ImprovementPair(NamedTuple):
    """What P(X > Y)'s interval from the runs reads: both algorithms' cells (the same tasks) and whether the
    analysis resamples tasks."""

    x: Cells
    y: Cells
    tasks_resampled: bool = False


def pair_terms(x: Cells, y: Cells) -> MannWhitneyTerms:
    """The :class:`MannWhitneyTerms` of every task of two algorithms (one :func:`mann_whitney_sums` per task)."""
    import numpy as np

    sums = np.array(
        [
            mann_whitney_sums(x.values[ox : ox + nx], y.values[oy : oy + ny])
            for ox, nx, oy, ny in zip(x.offsets, x.sizes, y.offsets, y.sizes)
        ]
    ).reshape(-1, 4)
    return mann_whitney_terms(x.sizes.astype(float), y.sizes.astype(float), *sums.T)


def improvement_runs(pair: ImprovementPair, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`improvement_normal` of one pair of algorithms (the ``mann-whitney`` method, from the runs)."""
    import numpy as np

    low, high = improvement_normal(pair_terms(pair.x, pair.y), ci, tasks_resampled=pair.tasks_resampled)
    return np.atleast_1d(low), np.atleast_1d(high)


# ---------------------------------------------------------------------------- the median's difference (issue 52)
def mover_bounds(px: Any, lx: Any, ux: Any, py: Any, ly: Any, uy: Any) -> tuple[Any, Any]:
    """The interval of ``px - py`` from each estimate's own interval (Newcombe's method 10, MOVER):
    ``low = d - √((px - lx)² + (uy - py)²)``, ``high = d + √((ux - px)² + (py - ly)²)``.

    Example:
        >>> [round(float(v), 4) for v in mover_bounds(0.5, 0.2, 0.9, 0.1, 0.0, 0.3)]
        [0.0394, 0.8123]
    """
    import numpy as np

    px, lx, ux, py, ly, uy = (np.asarray(v, dtype=float) for v in (px, lx, ux, py, ly, uy))
    d = px - py
    return d - np.hypot(px - lx, uy - py), d + np.hypot(ux - px, py - ly)


def median_order_statistic_mover(pair: Sequence[Any], ci: float = 0.95) -> tuple[float, float]:
    """The interval of median(X) - median(Y) over tasks (``pair``: both algorithms' cells) from their
    order-statistic intervals (:func:`median_order_statistic_interval`) by :func:`mover_bounds`: it holds the
    difference of the medians, and covers where both intervals cover (conservative, as they are)."""
    import numpy as np

    ends = []
    for cells in pair[:2]:
        means = np.array([cells.values[o : o + n].mean() for o, n in zip(cells.offsets, cells.sizes)])
        ends.append((float(np.median(means)), *median_order_statistic_interval(cells, ci)))
    (px, lx, ux), (py, ly, uy) = ends
    low, high = mover_bounds(px, lx, ux, py, ly, uy)
    return float(low), float(high)
