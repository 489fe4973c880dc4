"""Aggregate metrics, each computed on a whole batch of bootstrap replicates at once.

Every metric is a function ``f(resample) -> ndarray (R,)`` of a :class:`~.bootstrap.Resample`:
a batch of replicates, each a weighted empirical distribution over one algorithm's runs in which
every task carries mass 1/M and each run of task m mass 1/(M·N_m). On rectangular data (equal runs
per task) every run weighs the same and the metrics equal rliable's definitions:

* ``mean``: mean over tasks of per-task mean scores (= mean over all runs when rectangular);
* ``median``: median over tasks of per-task mean scores;
* ``iqm``: the 25% trimmed mean over all runs (``scipy.stats.trim_mean(x, 0.25, axis=None)``:
  ⌊0.25·K⌋ of the K runs are cut from each end); with unequal runs the same *mass* ⌊0.25·K⌋/K
  is trimmed from each end of the weighted distribution (a run on the boundary counts in part);
* ``optimality_gap``: γ − mean(min(score, γ)) over runs, γ = 1 by default;
* ``trimmed_mean(p)``: as IQM with proportion p cut from each end;
* ``dp25``: mean of the bottom 25% of runs (by mass, the boundary run counted in part) — the
  "deployment" view of how bad the worst quarter of training runs is;
* ``prob_above(t)``: fraction of runs scoring above t (e.g. t = 1: superhuman);
* probability of improvement lives in :func:`probability_of_improvement` (two algorithms).

Each is defined once, here, and named once, in :mod:`.registry` (which every code path resolves names
through). Custom metrics: register a batched function with :func:`.registry.register` (or wrap it with
:func:`batched`); a plain function of a ``(runs, tasks)`` array (NaN-padded when runs differ) is accepted
too and called once per replicate (slower; documented in the README).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import Resample

MetricFn = Callable[[Resample], np.ndarray]

#: A metric's hard range: the values its estimand can take whatever the data (``(low, high)``). A metric declares
#: its own next to its definition (``fn.hard_range``, read by :attr:`Metric.hard_range`); an interval bound outside
#: it is moved to its edge (:attr:`.intervals.Sample.hard_range`). Never the observed data's range (that is biased).
UNBOUNDED = (-math.inf, math.inf)
#: The hard range of a fraction: of runs above a threshold (:func:`prob_above`), or P(X > Y)
#: (:func:`probability_of_improvement`).
FRACTION_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class Metric:
    """A named batched metric (resolve names with :func:`.registry.get_metric`)."""

    name: str
    fn: MetricFn

    def __call__(self, resample: Resample) -> np.ndarray:
        return np.asarray(self.fn(resample), dtype=float).reshape(resample.n_reps)

    @property
    def hard_range(self) -> tuple[float, float]:
        """The values the metric can take whatever the data, as its function declares them (``fn.hard_range``):
        the optimality gap's ``[0, inf)`` (it exceeds γ where scores are negative), a fraction's ``[0, 1]``;
        unbounded for the others (mean, IQM, median, a custom metric).

        Example:
            >>> Metric("optimality_gap", optimality_gap(2.0)).hard_range, Metric("mean", mean).hard_range
            ((0.0, inf), (-inf, inf))
        """
        low, high = getattr(self.fn, "hard_range", UNBOUNDED)
        return float(low), float(high)


def hard_ranges(metrics: Sequence[Metric]) -> tuple[np.ndarray, np.ndarray]:
    """The metrics' hard ranges as ``(lows, highs)``, one per metric: :attr:`.intervals.Sample.hard_range` of a
    table of these metrics' statistics."""
    found = [m.hard_range for m in metrics]
    return np.array([lo for lo, _ in found], dtype=float), np.array([hi for _, hi in found], dtype=float)


def batched(fn: MetricFn, name: str | None = None) -> Metric:
    """Mark ``fn(resample) -> (R,)`` as a batched metric (the fast path; :func:`.registry.register` also
    makes its name usable everywhere a built-in name is).

    Example:
        >>> import numpy as np
        >>> top = batched(lambda r: r.task_means().max(axis=1), name="best_task")
    """
    return Metric(str(name or getattr(fn, "__name__", "custom")), fn)


def per_replicate(fn: Callable[[np.ndarray], float], name: str | None = None) -> Metric:
    """Adapt an rliable-style ``fn(scores[runs, tasks]) -> float`` (called once per replicate)."""

    def run(resample: Resample) -> np.ndarray:
        samples = resample.padded_samples()
        return np.array([float(fn(s)) for s in samples])

    return Metric(str(name or getattr(fn, "__name__", "custom")), run)


# --------------------------------------------------------------------------- helpers
# Weighted sums are row sums (or running sums) along each replicate's row, never ``weights @ values``: a BLAS
# product's summation order depends on how many replicates (rows) it is given, so results would depend on the
# chunk size.
def _mass_between(weights_sorted: np.ndarray, lo: float | np.ndarray, hi: float | np.ndarray) -> np.ndarray:
    """Part of each run's mass lying in the cumulative-mass window [lo, hi]."""
    upper = np.cumsum(weights_sorted, axis=1)
    lower = upper - weights_sorted
    return np.clip(np.minimum(upper, hi) - np.maximum(lower, lo), 0.0, None)


def _window_mean(resample: Resample, lo: float | np.ndarray, hi: float | np.ndarray) -> np.ndarray:
    """(R,) mean of each replicate's distribution between cumulative masses ``lo`` and ``hi`` (boundary runs in part)."""
    values, weights = resample.sorted_weights()
    kept = _mass_between(weights, lo, hi)
    return (kept * values).sum(axis=1) / kept.sum(axis=1)


# --------------------------------------------------------------------------- metrics
def mean(resample: Resample) -> np.ndarray:
    """Mean over tasks of per-task mean scores."""
    return resample.task_means().mean(axis=1)


def mean_se(resample: Resample) -> np.ndarray:
    """(R, 2): the mean over tasks and its stratified standard error ``sqrt(Σ_m s_m² / N_m) / M``
    (:func:`standard_errors`).

    The input of the bootstrap-t interval (:func:`.intervals.bounds.studentized_interval`).
    """
    return np.stack([mean(resample), standard_errors(resample, [("mean", 0.0)])[:, 0]], axis=1)


#: A statistic whose standard error :func:`standard_errors` gives: ``("mean", 0)``, ``("trimmed_mean", p)`` (the
#: IQM at p = 0.25) or ``("optimality_gap", γ)``.
ErrorKind = tuple[str, float]


def standard_errors(resample: Resample, kinds: Sequence[ErrorKind]) -> np.ndarray:
    """(R, len(kinds)): the stratified standard error of each statistic of ``kinds`` (:data:`ErrorKind`) in each
    replicate, all from one pass over the drawn scores. Every one is ``sqrt(Σ_m v_m / N_m) / M`` (M slots, N_m draws
    in slot m) of the unbiased variance ``v_m`` of a function of each slot's draws: the scores themselves for the
    mean; the scores winsorized at the ends of each replicate's trimmed mass, divided by ``1 - 2c`` (c the trimmed
    mass), for a trimmed mean (Tukey & McLaughlin's; the limits read from the ranks the trimmed mean sorted); the
    scores capped at γ, ``min(x, γ)``, for the optimality gap (γ minus their mean).

    The draws are gathered once per chunk (the task means' gather) and taken less their slot's mean once, run-major
    (:meth:`~.bootstrap.Resample.deviations`: the n-th draws of every slot in one plane); each standard error then
    sums its function of them and its square per slot (``v = (Σ y² - (Σ y)² / N) / (N - 1)`` of ``y`` = the capped
    or winsorized deviations: each slot shifted by its own mean, so nothing cancels), plane after plane in the order
    of the draws, in a buffer the chunks of one bootstrap reuse. The winsorized and capped values are exactly those of
    the scores (shifting is monotone), and no statistic's standard error is its own gather. Each slot's sums depend on
    its own draws alone: the same numbers whatever the chunk size.

        >>> from rl_reliable_logger.stats import bootstrap as bs
        >>> cells = bs.Cells.from_list([np.array([0.0, 1.0, 2.0, 10.0]), np.array([1.0, 2.0, 3.0, 4.0])])
        >>> found = standard_errors(bs.original(cells), [("mean", 0), ("trimmed_mean", 0.25), ("optimality_gap", 1)])
        >>> [round(float(v), 4) for v in found[0]]
        [1.188, 0.677, 0.125]
    """
    means, unit = resample.task_means(), resample.unit
    sizes, n_slots = resample.slot_sizes, resample.n_slots
    dof = np.maximum(sizes - 1.0, 1.0)
    mask = resample.drawn_mask()
    dev = resample.deviations()
    held = resample.buffer("limited", dev.shape, np.float64)  # the capped, then the winsorized, deviations
    variances: dict[ErrorKind, np.ndarray] = {}
    # the scores' own spread first (the mean's, and the gap's where no run lies above γ), then the gap's capped draws,
    # then the winsorized draws
    if any(kind in ("mean", "optimality_gap") for kind, _ in kinds):
        variances[("mean", 0.0)] = _plane_sum(dev, dev) / dof  # from each slot's own mean: two-pass
    for kind, parameter in kinds:
        if kind == "optimality_gap":
            variances[(kind, parameter)] = _capped_variances(resample, parameter, variances[("mean", 0.0)], (dev, held))
        elif kind not in ("mean", "trimmed_mean"):
            raise ValueError(f"no standard error of {kind!r}: one of mean, trimmed_mean, optimality_gap")
    for proportion in sorted({p for kind, p in kinds if kind == "trimmed_mean"}):
        low, high, cut = _winsor_limits(resample, proportion)
        np.maximum(dev, _as_deviation(low[:, None], means, unit), out=held)
        np.minimum(held, _as_deviation(high[:, None], means, unit), out=held)
        variances[("trimmed_mean", proportion)] = (
            _slot_variances(held, sizes, dof, mask) / (1.0 - 2.0 * cut[:, None]) ** 2
        )
    out = np.empty((resample.n_reps, len(kinds)))
    for j, (kind, parameter) in enumerate(kinds):
        var = variances[("mean", 0.0) if kind == "mean" else (kind, float(parameter))]
        out[:, j] = unit * np.sqrt((var / sizes).sum(axis=1)) / n_slots
    return out


def _plane_sum(planes: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
    """(R, S) the sum over the first axis of ``planes`` (N, R, S) (of ``planes * other``, given ``other``): plane after
    plane, so each slot adds its own N values in their order, whatever R."""
    if other is None:
        return np.einsum("nrs->rs", planes)
    return np.einsum("nrs,nrs->rs", planes, other)


def _slot_variances(held: np.ndarray, sizes: np.ndarray, dof: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """(R, S) unbiased variance of each slot's values in ``held`` (N, R, S) from their sum and sum of squares (the
    positions ``mask`` leaves out set to 0 first; 0 for a slot of one value, never below 0 by rounding)."""
    if mask is not None:
        np.copyto(held, 0.0, where=~mask)
    total = _plane_sum(held)
    squares = _plane_sum(held, held)
    return np.maximum(squares - total * total / sizes, 0.0) / dof


def _as_deviation(limit: float | np.ndarray, means: np.ndarray, unit: float) -> np.ndarray:
    """(R, S) a limit on the scores as a limit on :meth:`~.bootstrap.Resample.deviations` (less each slot's mean, in
    its unit; it applies to each plane of them): a monotone map, so limiting the deviations limits the scores
    exactly."""
    shifted = limit - means
    return shifted if unit == 1.0 else shifted / unit


def _capped_variances(
    resample: Resample, gamma: float, spread: np.ndarray, buffers: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """(R, S) unbiased variance of each slot's draws capped at ``gamma``, from ``buffers``: the deviations and an array
    like them the capped ones are written into. Where slot s is task s and none of the task's runs lies above γ the
    draws stay as they are, and so does their variance (``spread``, the scores' own): only the other slots' variances
    are read from capped sums (of those slots alone when they are few)."""
    (dev, held), sizes = buffers, resample.slot_sizes
    above = None  # with resampled tasks every slot is capped
    if resample.slot_tasks is None:  # the tasks with runs above γ
        above = np.maximum.reduceat(resample.values, resample.cells.offsets) > gamma
        if not above.any():
            return spread
    limit, dof, mask = (
        _as_deviation(gamma, resample.task_means(), resample.unit),
        np.maximum(sizes - 1.0, 1.0),
        resample.drawn_mask(),
    )
    if above is None or 2 * np.count_nonzero(above) > above.size:  # most slots: cap them all
        np.minimum(dev, limit, out=held)
        var = _slot_variances(held, sizes, dof, mask)
        return var if above is None or above.all() else np.where(above, var, spread)
    slots = np.flatnonzero(above)  # a few slots: theirs alone (each slot's sums are its own draws')
    part = np.take(dev, slots, axis=2)
    np.minimum(part, np.take(limit, slots, axis=1), out=part)
    var = spread.copy()
    var[:, slots] = _slot_variances(
        part, np.take(sizes, slots, axis=1), np.take(dof, slots, axis=1), None if mask is None else mask[..., slots]
    )
    return var


def median(resample: Resample) -> np.ndarray:
    """Median over tasks of per-task mean scores."""
    return np.median(resample.task_means(), axis=1)


def trimmed_mean(proportion: float) -> MetricFn:
    """Trimmed mean cutting ``proportion`` of runs from each end (0.25 gives the IQM)."""
    if not 0 <= proportion < 0.5:
        raise ValueError(f"trim proportion must be in [0, 0.5), got {proportion}")

    def fn(resample: Resample) -> np.ndarray:
        if resample.equal_weights:  # scipy.stats.trim_mean on each replicate, exactly
            n = resample.sorted_ranks().shape[1]  # runs in each replicate's sample
            cut_n = math.floor(proportion * n)
            return resample.sorted_samples(cut_n, n - cut_n).mean(axis=1)
        k = resample.run_total  # runs in each replicate's data set (K, or K - 1 when one is left out)
        cut = (np.floor(proportion * k) / k)[:, None]
        return _window_mean(resample, cut, 1.0 - cut)

    fn.__name__ = "iqm" if proportion == 0.25 else f"trimmed_mean_{proportion:g}"
    fn.trim_proportion = proportion  # type: ignore[attr-defined]  # read by the interval rules (the IQM's kind)
    return fn


iqm = trimmed_mean(0.25)


def trimmed_mean_se(proportion: float = 0.25) -> Callable[[Resample], np.ndarray]:
    """``resample -> (R, 2)``: the trimmed mean and its stratified standard error (Tukey & McLaughlin's, from the
    winsorized runs; :func:`standard_errors`), the input of the studentized IQM interval
    (:func:`.intervals.bounds.studentized_interval`).

    Each replicate's runs are winsorized at the values where its trimmed mass ends (the first run past mass ``c``
    from below and from above, ``c = ⌊p·K⌋/K``); then ``se² = Σ_m s_m² / (M² N_m) / (1 - 2c)²`` with ``s_m²``
    the unbiased variance of task m's winsorized runs: the trimmed mean's influence function summed over strata.

        >>> from rl_reliable_logger.stats import bootstrap as bs
        >>> cells = bs.Cells.from_list([np.array([0.0, 1.0, 2.0, 10.0]), np.array([1.0, 2.0, 3.0, 4.0])])
        >>> [round(float(v), 4) for v in trimmed_mean_se(0.25)(bs.original(cells))[0]]
        [2.0, 0.677]
    """
    mean_fn = trimmed_mean(proportion)

    def fn(resample: Resample) -> np.ndarray:
        se = standard_errors(resample, [("trimmed_mean", proportion)])[:, 0]
        return np.stack([mean_fn(resample), se], axis=1)

    return fn


def _winsor_limits(resample: Resample, proportion: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R,) each replicate's winsorizing limits (the runs where its trimmed mass ends) and the trimmed mass."""
    if resample.equal_weights:
        ranks = resample.sorted_ranks()
        k = ranks.shape[1]
        g = math.floor(proportion * k)
        ordered = resample.sorted_values()
        cut = np.full(resample.n_reps, g / k)
        return ordered[ranks[:, g]], ordered[ranks[:, k - g - 1]], cut
    values, weights = resample.sorted_weights()
    k = resample.run_total
    cut = np.broadcast_to(np.floor(proportion * k) / k, (resample.n_reps,))
    upper = np.cumsum(weights, axis=1)
    lower = upper - weights
    tol = 1e-12
    first = np.argmax(upper > cut[:, None] + tol, axis=1)  # the first run whose mass reaches past the cut
    last = weights.shape[1] - 1 - np.argmax((lower < 1.0 - cut[:, None] - tol)[:, ::-1], axis=1)
    return values[first], values[last], cut


def optimality_gap(gamma: float = 1.0) -> MetricFn:
    """γ − mean(min(score, γ)): how far below the target γ the runs fall on average."""

    def fn(resample: Resample) -> np.ndarray:
        if resample.equal_weights:  # the sorted samples clipped at γ: one gather of the clipped sorted values
            return gamma - resample.by_rank(np.minimum(resample.sorted_values(), gamma), name="clipped").mean(axis=1)
        values, weights = resample.sorted_weights()
        return gamma - (weights * np.minimum(values, gamma)).sum(axis=1)

    fn.__name__ = "optimality_gap"
    fn.gamma = gamma  # type: ignore[attr-defined]  # read by the interval rules (the gap's kind) and its standard error
    # the mean of max(γ - x, 0): never below 0; above γ when scores are below 0 (no upper edge: the scores are not
    # bounded below)
    fn.hard_range = (0.0, math.inf)  # type: ignore[attr-defined]
    return fn


def optimality_gap_se(gamma: float = 1.0) -> Callable[[Resample], np.ndarray]:
    """``resample -> (R, 2)``: the optimality gap and its stratified standard error. The gap is γ minus the mean of
    the runs clipped at γ, so its standard error is the mean's (:func:`mean_se`) of ``min(score, γ)`` (:func:`standard_errors`):
    the input of the studentized gap interval (:func:`.intervals.bounds.studentized_interval`).

        >>> from rl_reliable_logger.stats import bootstrap as bs
        >>> cells = bs.Cells.from_list([np.array([0.2, 0.6, 3.0]), np.array([0.5, 1.5, 1.0])])
        >>> [round(float(v), 4) for v in optimality_gap_se(1.0)(bs.original(cells))[0]]
        [0.2833, 0.1424]
    """

    gap = optimality_gap(gamma)

    def fn(resample: Resample) -> np.ndarray:
        se = standard_errors(resample, [("optimality_gap", gamma)])[:, 0]
        return np.stack([gap(resample), se], axis=1)

    return fn


def lower_tail_mean(fraction: float = 0.25) -> MetricFn:
    """Mean of the bottom ``fraction`` of runs by mass (DP-25 for 0.25)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")

    def fn(resample: Resample) -> np.ndarray:
        return _window_mean(resample, 0.0, fraction)

    fn.__name__ = f"dp{round(fraction * 100)}"
    return fn


def prob_above(threshold: float) -> MetricFn:
    """Fraction of runs (each task weighted equally) scoring strictly above ``threshold``."""

    def fn(resample: Resample) -> np.ndarray:
        if resample.equal_weights:
            return (resample.sorted_samples() > threshold).mean(axis=1)
        values, weights = resample.sorted_weights()
        return (weights * (values > threshold)).sum(axis=1)

    fn.__name__ = f"p_above_{threshold:g}"
    fn.hard_range = FRACTION_RANGE  # type: ignore[attr-defined]
    return fn


# --------------------------------------------------------------------------- improvement
def probability_of_improvement(x_tasks: list[np.ndarray], y_tasks: list[np.ndarray]) -> float:
    """P(X > Y): per-task Mann–Whitney U / (n_x·n_y), ties counting 1/2, averaged over tasks.

    Example:
        >>> probability_of_improvement([np.array([2., 3.])], [np.array([1., 3.])])
        0.625
    """
    return float(
        np.mean([_pairwise_wins(np.asarray(x, float), np.asarray(y, float)) for x, y in zip(x_tasks, y_tasks)])
    )


#: P(X > Y)'s hard range (a fraction of pairs), for its intervals' :attr:`.intervals.Sample.hard_range`.
IMPROVEMENT_RANGE = FRACTION_RANGE


def _pairwise_wins(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over all pairs of [x_a > y_b] + ½[x_a = y_b], without the n_x x n_y matrix: O((n_x + n_y) log n_y)
    time and O(n_x + n_y) memory (the matrix took 4 GB at 20,000 runs per cell). The counts are exact
    integers and halves, so the value equals the matrix mean bit for bit."""
    ys = np.sort(y)
    below = np.searchsorted(ys, x, side="left")
    upto = np.searchsorted(ys, x, side="right")
    wins = float(below.sum()) + 0.5 * float((upto - below).sum())
    return wins / (x.size * y.size)


def improvement_replicates(cells_x, counts_x: np.ndarray, cells_y, counts_y: np.ndarray) -> np.ndarray:
    """Bootstrap values of P(X > Y) from independent replicates of X and Y: (R,).

    ``counts_*`` are (R, K) draw counts (:meth:`Resample.counts`). For each task,
    U = Σ_a c_x[a] (#y draws below x_a + ½ #y draws equal to x_a) / (n_x n_y): a cumulative sum over
    the sorted y runs, O(R·(n_x + n_y)) per task instead of the O(R·n_x·n_y) pairwise matrix.
    """
    if cells_x.rectangular and cells_y.rectangular:
        return _improvement_rectangular(cells_x, counts_x, cells_y, counts_y)
    total = np.zeros(counts_x.shape[0])
    for m in range(cells_x.n_tasks):
        sx = slice(cells_x.offsets[m], cells_x.offsets[m] + cells_x.sizes[m])
        sy = slice(cells_y.offsets[m], cells_y.offsets[m] + cells_y.sizes[m])
        x, y = cells_x.values[sx], cells_y.values[sy]
        order = np.argsort(y, kind="stable")
        cum = np.zeros((counts_y.shape[0], y.size + 1))
        np.cumsum(counts_y[:, sy][:, order], axis=1, out=cum[:, 1:], dtype=float)
        below = np.searchsorted(y[order], x, side="left")
        upto = np.searchsorted(y[order], x, side="right")
        lo = cum[:, below]
        wins = counts_x[:, sx] * (lo + 0.5 * (cum[:, upto] - lo))  # (R, n_x)
        total += wins.sum(axis=1) / (x.size * y.size)
    return total / cells_x.n_tasks


def _improvement_rectangular(cells_x, counts_x: np.ndarray, cells_y, counts_y: np.ndarray) -> np.ndarray:
    """:func:`improvement_replicates` for equal runs per task, vectorised over tasks too."""
    reps, n_tasks = counts_x.shape[0], cells_x.n_tasks
    nx, ny = int(cells_x.sizes[0]), int(cells_y.sizes[0])
    x = cells_x.values.reshape(n_tasks, nx)
    y = cells_y.values.reshape(n_tasks, ny)
    cy = counts_y.reshape(reps, n_tasks, ny)
    if not (np.diff(y, axis=1) >= 0).all():  # evaluate() sorts runs within tasks, so this is rare
        order = np.argsort(y, axis=1, kind="stable")
        y = np.take_along_axis(y, order, axis=1)
        cy = np.take_along_axis(cy, order[None], axis=2)
    cum = np.zeros((reps, n_tasks, ny + 1))
    np.cumsum(cy, axis=2, out=cum[:, :, 1:], dtype=float)
    cum = cum.reshape(reps, n_tasks * (ny + 1))
    base = (np.arange(n_tasks) * (ny + 1))[:, None]
    # y runs below / up to each x run, by binary search in each task's sorted runs (an n_x x n_y comparison
    # per task took runs-per-task squared bytes: 5 GB at 50,000 runs per cell)
    below = (base + np.stack([np.searchsorted(y[t], x[t], side="left") for t in range(n_tasks)])).ravel()
    upto = (base + np.stack([np.searchsorted(y[t], x[t], side="right") for t in range(n_tasks)])).ravel()
    wins = np.take(cum, below, axis=1)  # replicate by replicate (C order): the products below run along rows
    if not np.array_equal(below, upto):  # ties between an x run and a y run count 1/2 (without: lo + 0 = lo)
        wins += 0.5 * (np.take(cum, upto, axis=1) - wins)
    wins *= counts_x.reshape(reps, n_tasks * nx)  # (R, M·n_x)
    return task_mean(wins.reshape(reps, n_tasks, nx).sum(axis=2) / (nx * ny))


def task_mean(per_task: np.ndarray) -> np.ndarray:
    """(..., ) the mean over the last axis (tasks) of P(X > Y) per task, added task after task: the rounding of every
    P(X > Y) replicate (which was ``per_task.mean(axis=1)`` of a task-major gather, whose reduction adds the tasks in
    turn), kept bit for bit whatever the layout of ``per_task`` (a sum of 26 values in another order differs in the
    last bit).

    Example:
        >>> task_mean(np.array([[0.5, 0.25, 1.0]])).tolist()
        [0.5833333333333334]
    """
    total = per_task[..., 0].copy()
    for m in range(1, per_task.shape[-1]):
        total += per_task[..., m]
    return total / per_task.shape[-1]


def improvement_task_slots(x: Resample, y: Resample, block_bytes: int = 32 * 2**20) -> np.ndarray:
    """(R,) P(X > Y) of replicates that resampled tasks, X and Y sharing each replicate's task draw.

    ``x`` and ``y`` must have the same ``slot_tasks`` (drawn with one shared task stream, see
    :func:`..bootstrap.replicates`). Slot s of replicate r compares X's and Y's runs drawn for the task in
    that slot: U_rs = mean over drawn pairs of [x > y] + ½[x = y]; the value is the mean over slots (a task
    drawn twice counts twice, each time with its own run draws).
    """
    if x.slot_tasks is None or y.slot_tasks is None or not np.array_equal(x.slot_tasks, y.slot_tasks):
        raise ValueError("both algorithms need the same task draws (one shared task stream)")
    reps, slots = x.n_reps, x.n_slots
    xv = x.padded_samples()  # (R, Nx, S), NaN where not drawn
    yv = y.padded_samples()
    nx, ny = x.slot_sizes, y.slot_sizes  # (R, S)
    total = np.zeros(reps)
    step = max(1, int(block_bytes // (8 * xv.shape[1] * yv.shape[1] * slots + 1)))
    for start in range(0, reps, step):
        a = xv[start : start + step, :, None, :]
        b = yv[start : start + step, None, :, :]
        wins = (a > b).sum(axis=(1, 2)) + 0.5 * (a == b).sum(axis=(1, 2))  # NaN compares False
        total[start : start + step] = (wins / (nx[start : start + step] * ny[start : start + step])).mean(axis=1)
    return total
