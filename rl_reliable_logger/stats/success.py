"""Success rates from a few episodes per seed: intervals that see the seeds and never collapse at 0% or 100%.

A task's success rate is observed as ``successes[t, j]`` out of ``episodes[t, j]`` episodes of seed ``j``. The
episodes of one seed share its policy, so they are not independent trials: seeds differ (seed-to-seed variation),
and treating all episodes as one binomial sample makes intervals too narrow. A bootstrap over seeds alone has the
opposite defect at the boundary: a task where every episode of every seed failed gives the interval [0, 0], a
false certainty. Pure arrays in, arrays out (rows are tasks, columns seeds; NaN pads tasks with fewer seeds):

* :func:`task_intervals`: per task, the mean of the seeds' rates and a **Wilson score interval at the task's
  effective number of episodes** (Korn & Graubard 1998's degrees-of-freedom-adjusted effective sample size): the
  design effect compares the seed-to-seed variance of the task's rate, widened by Student-t's quantile with
  s - 1 degrees of freedom, with the binomial variance of its episodes, and is never below 1. All failures give
  ``[0, z²/(N + z²)]`` (N episodes): above 0; all successes symmetrically below 1.
* :func:`difference_intervals`: per task, the difference of two algorithms' rates with **Newcombe's hybrid
  score interval** (MOVER, Newcombe 1998 method 10) over those Wilson limits: 0 of N against 0 of M gives an
  interval around 0 that is not a point.
* :func:`bootstrap_rates` / :func:`aggregate_interval`: aggregates over tasks from a **bootstrap over seeds with
  a binomial step within seeds**: each replicate draws every task's seeds with replacement and then each drawn
  seed's successes from a binomial at its (half-count smoothed, variance-matched) rate, so a task with no success
  still varies and the two stages together reproduce the task's estimated variance, not twice its episode noise.
  The mean of the tasks' rates gets Wilson's interval at the replicates' effective episode count (Satterthwaite
  degrees of freedom over the tasks' seeds); any other statistic the percentile interval of the replicates.
  :func:`aggregate_difference` gives differences (Newcombe's MOVER for the mean).
* :func:`coverage_warnings`: the situations in which the coverage study (``benchmarks/coverage/success_coverage.py``,
  ``docs/validation.md``) found these intervals short, said per task.

Example (3 seeds of 10 episodes: one task that never succeeded, one that always did, one in between):

    >>> import numpy as np
    >>> k = np.array([[0, 0, 0], [10, 10, 10], [3, 6, 4]])
    >>> n = np.full((3, 3), 10)
    >>> res = task_intervals(k, n)
    >>> res.point.round(3).tolist(), res.low.round(3).tolist(), res.high.round(3).tolist()
    ([0.0, 1.0, 0.433], [0.0, 0.886, 0.156], [0.114, 1.0, 0.76])
    >>> d = difference_intervals(k[:1], n[:1], k[:1], n[:1])
    >>> float(d.point[0]), round(float(d.low[0]), 3), round(float(d.high[0]), 3)
    (0.0, -0.114, 0.114)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import distributions
from .intervals.bounds import mover_bounds, wilson

#: Pseudo-episodes per task the bootstrap's binomial step adds (half a success and half a failure, spread over
#: the task's seeds): a task with no success still varies, by about the Wilson interval's width at 0.
HALF_COUNT = 0.5
#: Replicates drawn at once by :func:`bootstrap_rates` (fixed, so results do not depend on memory).
CHUNK_REPS = 1000
#: Rates this close to 0 or 1 (or closer) are warned: there the study's short cells lie (seeds that differ).
EDGE = 0.2


@dataclass(frozen=True)
class RateIntervals:
    """Per-row success rates with intervals.

    Attributes:
        point: the mean of the seeds' success rates (each seed weighs the same, as each run does elsewhere).
        low, high: the interval's ends, within [0, 1] and holding ``point``.
        n_eff: the effective number of episodes the Wilson interval used (NaN for differences).
        seeds: the number of seeds of each row (for differences the smaller of the two).
    """

    point: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_eff: np.ndarray
    seeds: np.ndarray


def check_counts(successes: np.ndarray, episodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(successes, episodes)`` as float (tasks, seeds) arrays, or ValueError naming what is wrong.

    NaN in both marks a missing seed (ragged tasks); every task needs one seed. Episodes are whole numbers
    above 0, successes whole numbers from 0 to the episodes.
    """
    k = np.atleast_2d(np.asarray(successes, dtype=float))
    n = np.atleast_2d(np.asarray(episodes, dtype=float))
    if k.shape != n.shape or k.ndim != 2:
        raise ValueError(
            f"successes and episodes must be (tasks, seeds) arrays of one shape, got {k.shape} and {n.shape}"
        )
    missing = np.isnan(n)
    if not np.array_equal(missing, np.isnan(k)):
        raise ValueError("successes and episodes must be missing (NaN) for the same seeds")
    if np.any(missing.all(axis=1)):
        raise ValueError("every task needs at least one seed with episodes")
    kv, nv = k[~missing], n[~missing]
    if not np.all(np.isfinite(nv)) or np.any(nv < 1) or np.any(nv != np.round(nv)):
        raise ValueError("episodes must be whole numbers of at least 1")
    if not np.all(np.isfinite(kv)) or np.any(kv < 0) or np.any(kv > nv) or np.any(kv != np.round(kv)):
        raise ValueError("successes must be whole numbers from 0 to the seed's episodes")
    return k, n


def _z(ci: float) -> float:
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1, got {ci}")
    return float(distributions.norm_ppf(0.5 + ci / 2))


def _seed_summary(k: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
    """Per task: seeds, mean rate, the seeds' sample variance and the binomial-equivalent episode count."""
    rates = k / n
    seeds = np.sum(~np.isnan(n), axis=1)
    point = np.nanmean(rates, axis=1)
    dev = np.where(np.isnan(rates), 0.0, rates - point[:, None])
    var = np.where(seeds > 1, np.sum(dev**2, axis=1) / np.maximum(seeds - 1, 1), 0.0)
    # the mean of s seed rates has binomial variance p(1-p)·Σ(1/n_j)/s²: that of one sample of s²/Σ(1/n_j) episodes
    episodes = seeds**2 / np.nansum(1.0 / n, axis=1)
    return {"seeds": seeds, "point": point, "var": var, "episodes": episodes}


def task_intervals(successes: np.ndarray, episodes: np.ndarray, ci: float = 0.95) -> RateIntervals:
    """Each task's success rate (mean over its seeds) with a Wilson interval at its effective episode count.

    Design effect ``deff = max(1, (t_{s-1}/z)² · (S²/s) / (p(1-p)/N))``: S² the seeds' sample variance of their
    rates, N the task's episodes (for unequal episodes per seed, ``s²/Σ 1/n_j``), t Student's quantile with s - 1
    degrees of freedom (the seed-to-seed variance is estimated from s seeds). The Wilson interval uses
    ``N / deff`` episodes. With one seed, or every seed at 0 or at 1, no seed-to-seed variance is seen and
    ``deff = 1``.
    """
    k, n = check_counts(successes, episodes)
    z = _z(ci)
    s = _seed_summary(k, n)
    seeds, point = s["seeds"], s["point"]
    binomial = point * (1 - point) / s["episodes"]
    t = np.where(seeds > 1, distributions.t_ppf(0.5 + ci / 2, np.maximum(seeds - 1, 1)), z)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(binomial > 0, (t / z) ** 2 * (s["var"] / seeds) / binomial, 1.0)
    n_eff = s["episodes"] / np.maximum(1.0, ratio)
    low, high = wilson(point, n_eff, z)
    return RateIntervals(point, low, high, n_eff, seeds)


def difference_intervals(
    x_successes: np.ndarray,
    x_episodes: np.ndarray,
    y_successes: np.ndarray,
    y_episodes: np.ndarray,
    ci: float = 0.95,
) -> RateIntervals:
    """Per task, rate(X) - rate(Y) with Newcombe's hybrid score interval over :func:`task_intervals`' limits.

    ``low = d - √((p_x - l_x)² + (u_y - p_y)²)``, ``high = d + √((u_x - p_x)² + (p_y - l_y)²)`` (MOVER): each
    algorithm's own boundary-respecting interval carries into the difference, so 0 of N against 0 of M gives
    ``[-u_y, u_x]``. X and Y must have the same tasks (rows); their seeds are independent.
    """
    x = task_intervals(x_successes, x_episodes, ci)
    y = task_intervals(y_successes, y_episodes, ci)
    if x.point.shape != y.point.shape:
        raise ValueError(f"X and Y must have the same tasks (rows), got {x.point.shape[0]} and {y.point.shape[0]}")
    d, low, high = mover(x.point, x.low, x.high, y.point, y.low, y.high)
    return RateIntervals(d, low, high, np.full(d.shape, np.nan), np.minimum(x.seeds, y.seeds))


def mover(px: Any, lx: Any, ux: Any, py: Any, ly: Any, uy: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(d, low, high)`` of ``d = px - py`` from each rate's own interval (Newcombe's method 10, MOVER):
    ``low = d - √((px - lx)² + (uy - py)²)``, ``high = d + √((ux - px)² + (py - ly)²)``, within [-1, 1].

    Example:
        >>> [round(float(v), 3) for v in mover(0.0, 0.0, 0.1, 0.0, 0.0, 0.2)]
        [0.0, -0.2, 0.1]
    """
    low, high = mover_bounds(px, lx, ux, py, ly, uy)
    return np.asarray(px, dtype=float) - np.asarray(py, dtype=float), np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def _step_rates(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each seed's binomial-step rate and each task's resampling shape (see :func:`bootstrap_rates`).

    A seed's rate is smoothed by :data:`HALF_COUNT` pseudo-episodes per task (split over its seeds), then pulled
    towards (or pushed away from) the task's smoothed mean by the factor ``c`` that makes the two stages'
    variance equal ``max(S², binomial)`` per seed, the variance :func:`task_intervals` uses (at ``c = 1`` the
    seed draw alone would give the plug-in ``S²(s-1)/s`` and the binomial step would add the episode noise a
    second time).
    """
    s = _seed_summary(k, n)
    seeds = s["seeds"][:, None]
    a = HALF_COUNT / seeds
    smooth = (k + a) / (n + 2 * a)
    centre = np.nanmean(smooth, axis=1, keepdims=True)
    spread = np.where(np.isnan(smooth), 0.0, smooth - centre)
    plugin = np.sum(spread**2, axis=1, keepdims=True) / seeds
    within = np.nanmean(smooth * (1 - smooth) / n, axis=1, keepdims=True)
    per_seed_binomial = s["point"][:, None] * (1 - s["point"][:, None]) * np.nanmean(1.0 / n, axis=1, keepdims=True)
    target = np.maximum(s["var"][:, None], per_seed_binomial)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(plugin > 0, np.sqrt(np.maximum(target - within, 0.0) / plugin), 0.0)
    rate = np.clip(centre + c * spread, 0.0, 1.0)
    return np.where(np.isnan(n), np.nan, rate), s["seeds"]


def bootstrap_rates(
    successes: np.ndarray, episodes: np.ndarray, reps: int, seed: int | np.random.Generator = 0
) -> np.ndarray:
    """Replicates of every seed's success rate, ``(reps, tasks, seeds)`` (NaN where a task has fewer seeds).

    Each replicate draws, per task, its seeds with replacement (stratified: tasks keep their seed counts), then
    each drawn seed's successes ``~ Binomial(n_j, q_j)`` with ``q_j`` from :func:`_step_rates`. Drawn in fixed
    chunks of :data:`CHUNK_REPS`, so the replicates depend only on ``seed``.
    """
    k, n = check_counts(successes, episodes)
    if reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps}")
    rng = np.random.default_rng(seed)
    q, seeds = _step_rates(k, n)
    tasks, width = k.shape
    present = ~np.isnan(n)
    # column j of task t draws among that task's seeds; missing columns stay missing
    order = np.argsort(~present, axis=1, kind="stable")  # the present seeds first
    out = np.empty((reps, tasks, width))
    n_filled = np.where(present, n, 1.0)
    q_filled = np.where(present, q, 0.0)
    for lo in range(0, reps, CHUNK_REPS):
        b = min(CHUNK_REPS, reps - lo)
        pick = np.floor(rng.random((b, tasks, width)) * seeds[None, :, None]).astype(np.intp)
        cols = np.take_along_axis(np.broadcast_to(order, (b, tasks, width)), pick, axis=2)
        rows = np.arange(tasks)[None, :, None]
        drawn_n = n_filled[rows, cols]
        hits = rng.binomial(drawn_n.astype(np.int64), q_filled[rows, cols])
        out[lo : lo + b] = np.where(present[None], hits / drawn_n, np.nan)
    return out


def mean_of_tasks(rates: np.ndarray) -> np.ndarray:
    """The mean over tasks of each task's mean seed rate, for ``rates`` (..., tasks, seeds) with NaN padding."""
    return np.nanmean(np.nanmean(rates, axis=-1), axis=-1)


@dataclass(frozen=True)
class AggregateInterval:
    """An aggregate success rate: ``point``, interval ``[low, high]`` (holding ``point``), how it was computed
    (``method``: ``score`` or ``percentile``) and the bootstrap ``replicates`` it rests on."""

    point: float
    low: float
    high: float
    method: str
    replicates: np.ndarray = field(repr=False)


def seed_df(successes: np.ndarray, episodes: np.ndarray) -> float:
    """Satterthwaite's degrees of freedom of the mean of the tasks' rates (inf: every task at its binomial floor).

    A task whose seed-to-seed variance exceeds its binomial variance contributes an estimated variance with
    s - 1 degrees of freedom; a task at the floor contributes a known one.
    """
    k, n = check_counts(successes, episodes)
    s = _seed_summary(k, n)
    between = s["var"] / s["seeds"]
    floor = s["point"] * (1 - s["point"]) / s["episodes"]
    v = np.maximum(between, floor)
    estimated = (between > floor) & (s["seeds"] > 1)
    den = float(np.sum(np.where(estimated, v**2 / np.maximum(s["seeds"] - 1, 1), 0.0)))
    return float("inf") if den == 0 else float(np.sum(v) ** 2 / den)


def _score_interval(point: float, dist: np.ndarray, episodes: float, df: float, ci: float) -> tuple[float, float]:
    """Wilson at the bootstrap's effective episode count ``q(1-q)/var`` (q the replicates' mean), adjusted to
    ``df`` degrees of freedom (Korn & Graubard): the score interval's shape, the bootstrap's variance."""
    z = _z(ci)
    q, var = float(np.mean(dist)), float(np.var(dist, ddof=1)) if dist.size > 1 else 0.0
    n_eff = q * (1 - q) / var if var > 0 and 0 < q < 1 else episodes
    if np.isfinite(df):
        n_eff *= (z / float(distributions.t_ppf(0.5 + ci / 2, df))) ** 2
    low, high = wilson(np.array(point), np.array(n_eff), z)
    return float(low), float(high)


def aggregate_interval(
    successes: np.ndarray,
    episodes: np.ndarray,
    *,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    reps: int = 2000,
    ci: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> AggregateInterval:
    """An aggregate over tasks with an interval from :func:`bootstrap_rates`.

    The default, the mean of the tasks' rates, gets the ``score`` interval: Wilson's at the replicates' effective
    episode count with :func:`seed_df` degrees of freedom (a percentile interval of so skewed a statistic falls
    short near 0 and 1, as Wald's does). Any other ``statistic`` (rates ``(..., tasks, seeds)``, NaN-padded, to
    one value per leading index) gets the ``percentile`` interval, widened to hold the estimate. Every episode
    failed: ``[0, high]`` with ``high > 0``.

    Example:
        >>> res = aggregate_interval(np.zeros((4, 3)), np.full((4, 3), 20), reps=500)
        >>> res.point, res.low, 0 < res.high < 0.1, res.method
        (0.0, 0.0, True, 'score')
    """
    k, n = check_counts(successes, episodes)
    _z(ci)
    fn = mean_of_tasks if statistic is None else statistic
    point = float(fn((k / n)[None])[0])
    dist = fn(bootstrap_rates(k, n, reps, seed))
    if statistic is None:
        total = float(np.sum(_seed_summary(k, n)["episodes"]))
        low, high = _score_interval(point, dist, total, seed_df(k, n), ci)
        return AggregateInterval(point, min(low, point), max(high, point), "score", dist)
    lo, hi = np.quantile(dist, [0.5 - ci / 2, 0.5 + ci / 2])
    return AggregateInterval(point, min(float(lo), point), max(float(hi), point), "percentile", dist)


def aggregate_difference(
    x: tuple[np.ndarray, np.ndarray],
    y: tuple[np.ndarray, np.ndarray],
    *,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    reps: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
) -> AggregateInterval:
    """Aggregate(X) - aggregate(Y) (``x``, ``y``: (successes, episodes), independent seeds).

    The mean of the tasks' rates: Newcombe's MOVER over the two ``score`` intervals (``method`` ``score``);
    another statistic: the percentile interval of the replicates' differences.
    """
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)]
    ax = aggregate_interval(*x, statistic=statistic, reps=reps, ci=ci, seed=streams[0])
    ay = aggregate_interval(*y, statistic=statistic, reps=reps, ci=ci, seed=streams[1])
    dist = ax.replicates - ay.replicates
    d = ax.point - ay.point
    if statistic is None:
        _, low, high = mover(ax.point, ax.low, ax.high, ay.point, ay.low, ay.high)
        return AggregateInterval(d, float(low), float(high), "score", dist)
    lo, hi = np.quantile(dist, [0.5 - ci / 2, 0.5 + ci / 2])
    return AggregateInterval(d, min(float(lo), d), max(float(hi), d), "percentile", dist)


def coverage_warnings(successes: np.ndarray, episodes: np.ndarray, ci: float = 0.95) -> np.ndarray:
    """Per task, True where the coverage study found the interval can be short: a rate within :data:`EDGE` of 0
    or 1. There, seeds that differ in truth (a few seeds carry every success, or every failure) are often not
    seen to differ by 3-10 seeds, and the interval, which uses the spread the seeds show, is too narrow."""
    k, n = check_counts(successes, episodes)
    point = np.nanmean(k / n, axis=1)
    return np.minimum(point, 1 - point) <= EDGE
