"""Group-sequential boundaries with error spending, and repeated confidence intervals (pure arrays).

A comparison is looked at K times while runs accumulate. At look k its information fraction is
``t_k`` (runs so far / the maximum runs, 0 < t_1 < ... <= 1). An *error-spending function* ``α(t)``
(Lan & DeMets 1983) says how much of the two-sided error ``α`` may have been spent by time t:

* ``obf`` (O'Brien-Fleming type): ``α(t) = 2 - 2 Φ(z_{1-α/2} / √t)``: almost nothing early, the most at the end;
* ``pocock`` (Pocock type): ``α(t) = α log(1 + (e - 1) t)``: evenly spread, wider final interval.

Under the null the standardised statistics ``Z_k`` of the looks are jointly normal with
``corr(Z_i, Z_j) = √(t_i / t_j)`` (a Brownian motion in information time: the canonical joint distribution,
Jennison & Turnbull 2000, ch. 3). The two-sided critical value ``c_k`` of look k solves

    P(|Z_1| < c_1, ..., |Z_{k-1}| < c_{k-1}, |Z_k| >= c_k) = α(t_k) - α(t_{k-1}),

computed here by numerical integration over the continuation region (Armitage, McPherson & Rowe 1969):
the density of the score ``S_k = Z_k √t_k`` on a Simpson grid, convolved look by look with the normal
increment. The looks' times need not be planned in advance: each ``c_k`` depends only on the times seen
so far, so unequal or unplanned looks keep the overall error at ``α``.

The *repeated confidence intervals* ``θ̂_k ± c_k · se_k`` (Jennison & Turnbull 1989) then cover the true
value at every look simultaneously with probability ``1 - α``: whatever look a watch stops at, its interval
is valid. A comparison is decided at the first look whose interval excludes 0.

Several comparisons (pairs) share the error by a Holm-type step-down that recycles it across looks
(:func:`step_down`; Maurer & Bretz 2013, the sequentially rejective graphical procedure for group-sequential
designs with Holm's graph): each of the ``m`` pairs starts with the local level ``α / m``, whose boundaries come
from the spending function at that level; when pairs are decided, each open pair's level becomes
``α / (m - r)`` (r decided so far) and its boundaries are recomputed from the spending function at the larger
level over the same information fractions, so an open pair may be decided at the same look. This is a shortcut
of the closed test whose intersection hypotheses are tested by weighted Bonferroni over group-sequential tests,
so the family-wise error over all looks and pairs is at most ``α`` whatever the pairs' dependence.

A pair may stop for *futility* (:func:`conditional_power`): when, at information ``t >= futility_from``, the
probability of being decided by the last look under the current estimate (stochastic curtailment, Lan, Simon &
Halperin 1982) is below ``futility``. The rule is non-binding: the boundaries are computed as if no pair ever
stopped for futility, so stopping only lowers the error, whether or not a user obeys it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import bootstrap as bs
from .intervals.bounds import expanded_level, normal_interval

SPENDING = ("obf", "pocock")
#: How the pairs share ``alpha``: ``holm`` recycles a decided pair's level, ``bonferroni`` keeps ``alpha / m``.
MULTIPLICITY = ("holm", "bonferroni")
#: Points of the Simpson grid over the continuation region (odd); the crossing probabilities it gives agree
#: with a Monte-Carlo of the canonical process to a few 1e-5 (``tests/stats/test_sequential.py``).
GRID = 401
#: A critical value above this spends no error (the look cannot reject): the grid is cut there.
NO_SPEND = 8.0


def normal_density(x: np.ndarray) -> np.ndarray:
    """The standard normal density (the integrands of the boundary recursions here and in ``gate``)."""
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def spent(t: float | np.ndarray, alpha: float, spending: str = "obf") -> np.ndarray:
    """Cumulative two-sided error ``α(t)`` spent by information fraction ``t`` (0 at t=0, ``alpha`` at t>=1)."""
    t = np.clip(np.asarray(t, dtype=float), 0.0, 1.0)
    if spending == "obf":
        z = special.ndtri(1.0 - alpha / 2.0)
        with np.errstate(divide="ignore"):
            out = 2.0 - 2.0 * special.ndtr(z / np.sqrt(t))
        return np.where(t > 0, out, 0.0)
    if spending == "pocock":
        return alpha * np.log1p((math.e - 1.0) * t)
    raise ValueError(f"spending must be one of {', '.join(SPENDING)}, got {spending!r}")


def simpson_weights(n: int) -> np.ndarray:
    """Simpson's rule weights over ``n`` (odd) equally spaced points, before multiplying by the spacing."""
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w / 3.0


def _cross(u: np.ndarray, mass: np.ndarray, c: float, t: float, dt: float) -> float:
    """P(the path continued so far (``mass`` at scores ``u``) has ``|S_t| >= c √t``), increment variance ``dt``."""
    b, sd = c * math.sqrt(t), math.sqrt(dt)
    tails = special.ndtr((-b - u) / sd) + special.ndtr((u - b) / sd)
    return float(mass @ tails)


def _excess(c: float, u: np.ndarray, mass: np.ndarray, t: float, dt: float, target: float) -> float:
    return _cross(u, mass, c, t, dt) - target


def boundaries(times: Sequence[float], alpha: float, spending: str = "obf") -> np.ndarray:
    """Two-sided critical values ``c_k`` (one per look) for looks at information fractions ``times``.

    ``times`` must increase strictly and lie in (0, 1]; a look at t=1 spends all that is left. A look whose
    share of the error is 0 gets ``inf`` (it cannot reject).
    """
    t = np.asarray(times, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"times must be one sequence of fractions, got an array of shape {t.shape}")
    # the same looks are asked for again and again (every pair, every level): each is computed once
    return _boundaries(tuple(float(v) for v in t), float(alpha), spending).copy()


@functools.lru_cache(maxsize=4096)
def _boundaries(times: tuple[float, ...], alpha: float, spending: str) -> np.ndarray:
    t = np.asarray(times, dtype=float)
    if t.size == 0 or not ((t > 0) & (t <= 1)).all() or (np.diff(t) <= 0).any():
        raise ValueError(f"times must increase strictly within (0, 1], got {list(t)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    increments = np.diff(np.concatenate([[0.0], spent(t, alpha, spending)]))
    out = np.empty(t.size)
    out[0] = special.ndtri(1.0 - increments[0] / 2.0) if increments[0] > 0 else np.inf
    u, mass = _start(t[0], out[0])
    for k in range(1, t.size):
        dt = float(t[k] - t[k - 1])
        target = float(increments[k])
        if target <= 0 or _cross(u, mass, NO_SPEND, t[k], dt) >= target:
            out[k] = np.inf if target <= 0 else NO_SPEND
        else:
            from scipy import optimize  # a later look only: importing it costs a first look more than its work

            out[k] = optimize.brentq(_excess, 0.0, NO_SPEND, args=(u, mass, float(t[k]), dt, target), xtol=1e-10)
        u, mass = _step(u, mass, out[k], t[k], dt)
    return out


def _start(t: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid and Simpson mass of the score's density at the first look, inside its continuation region."""
    b = min(c, NO_SPEND) * math.sqrt(t)
    u = np.linspace(-b, b, GRID)
    density = normal_density(u / math.sqrt(t)) / math.sqrt(t)
    return u, density * simpson_weights(GRID) * (u[1] - u[0])


def _step(u: np.ndarray, mass: np.ndarray, c: float, t: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The continuing paths' density one look on (at time ``t``, inside ``|S| < c √t``), as grid and mass."""
    b, sd = min(c, NO_SPEND) * math.sqrt(t), math.sqrt(dt)
    s = np.linspace(-b, b, GRID)
    density = (normal_density((s[:, None] - u[None, :]) / sd) / sd) @ mass
    return s, density * simpson_weights(GRID) * (s[1] - s[0])


def crossing_probabilities(times: Sequence[float], bounds: Sequence[float]) -> np.ndarray:
    """Under the null, P(the first look whose ``|Z_k| >= c_k`` is look k), per look: sums to the error spent."""
    t, c = np.asarray(times, dtype=float), np.asarray(bounds, dtype=float)
    out = np.empty(t.size)
    out[0] = 2.0 * special.ndtr(-c[0])
    u, mass = _start(t[0], c[0])
    for k in range(1, t.size):
        dt = float(t[k] - t[k - 1])
        out[k] = _cross(u, mass, min(c[k], 50.0), t[k], dt)
        u, mass = _step(u, mass, c[k], t[k], dt)
    return out


def nominal_tail(bound: float | np.ndarray) -> np.ndarray:
    """One-sided tail ``Φ(-c)`` of a critical value: the repeated interval at look k is a ``1 - 2Φ(-c_k)`` one."""
    return special.ndtr(-np.asarray(bound, dtype=float))


def repeated_interval(
    dist: np.ndarray, point: np.ndarray, bound: float, cells: bs.Cells | Sequence[bs.Cells]
) -> tuple[np.ndarray, np.ndarray]:
    """The repeated confidence interval ``point ± c · sd*`` of each column of bootstrap replicates ``dist``.

    ``sd*`` is the replicates' standard deviation. With few runs per task it is too small by about
    ``(n-1)/n`` and the normal quantile too short: the critical value is widened as the expanded percentile
    interval widens its level (:func:`.intervals.bounds.expanded_level` at the look's nominal level, over the
    ``cells`` the statistic is made of), i.e. ``c`` becomes ``κ t_df(Φ(c))``. The normal form (not bootstrap
    quantiles) keeps the far tails the early looks use (``Φ(-c_1)`` ~ 1e-4) stable with a few thousand
    replicates.
    """
    if not np.isfinite(bound):
        point = np.asarray(point, dtype=float)
        return np.full_like(point, -np.inf), np.full_like(point, np.inf)
    tail = expanded_level(cells, 1.0 - 2.0 * float(nominal_tail(bound)))
    return normal_interval(np.asarray(dist, dtype=float), np.asarray(point, dtype=float), tail)


def decide(low: np.ndarray, high: np.ndarray, *, lower_is_better: bool = False) -> np.ndarray:
    """``x>y`` where the interval of x - y lies above 0, ``y>x`` where below, ``undecided`` otherwise (reversed
    when smaller values of the metric are better)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    above, below = ("y>x", "x>y") if lower_is_better else ("x>y", "y>x")
    return np.where(low > 0, above, np.where(high < 0, below, "undecided"))


def look_targets(max_runs: int, looks: int) -> np.ndarray:
    """Runs per cell planned at each look: ``⌈k N / K⌉`` for k = 1..K (equal steps of information)."""
    k = np.arange(1, looks + 1)
    return -((-k * max_runs) // looks)


def pair_levels(alpha: float, pairs: int, decided: int, multiplicity: str = "holm") -> np.ndarray:
    """The local levels an open pair may be tested at, after ``decided`` of ``pairs`` were decided at earlier looks.

    ``holm``: ``α / (m - r)`` for r = decided, ..., m - 1 (column j of :func:`step_down` is the level after j more
    decisions at this look); ``bonferroni``: the one level ``α / m``.
    """
    if multiplicity == "bonferroni":
        return np.array([alpha / pairs])
    if multiplicity != "holm":
        raise ValueError(f"multiplicity must be one of {', '.join(MULTIPLICITY)}, got {multiplicity!r}")
    return alpha / (pairs - np.arange(decided, pairs))


def step_down(crosses: Callable[[int], np.ndarray], columns: int) -> tuple[np.ndarray, int]:
    """Which open pairs are decided at this look, and the column of the level the open ones end at.

    ``crosses(j)`` says, per open pair, whether its interval excludes 0 at the j-th level of :func:`pair_levels`
    (``columns`` of them, increasing). Start at column 0; decide every pair that crosses there; move to the
    column of the number decided; repeat until no new pair is decided (Holm's step-down at one look, Maurer &
    Bretz 2013). Only the visited columns are computed.
    """
    j, decided = 0, np.asarray(crosses(0), dtype=bool)
    while True:
        nxt = min(int(decided.sum()), columns - 1)
        if nxt <= j:
            return decided, j
        j, decided = nxt, decided | np.asarray(crosses(nxt), dtype=bool)  # a larger level never un-decides


def conditional_power(z: float | np.ndarray, t: float | np.ndarray, final: float) -> np.ndarray:
    """P(``|Z_K| >= final`` at information 1 | ``Z`` = ``z`` at information ``t``), the drift set to its estimate.

    In information time the score ``S = Z √t`` is a Brownian motion with drift ``θ``; with ``θ = S_t / t`` the
    final score is normal with mean ``z / √t`` and variance ``1 - t`` (two-sided: both tails).
    """
    z, t = np.abs(np.asarray(z, dtype=float)), np.asarray(t, dtype=float)
    mean, sd = z / np.sqrt(t), np.sqrt(np.maximum(1.0 - t, 1e-12))
    return special.ndtr((mean - final) / sd) + special.ndtr((-final - mean) / sd)


@dataclass(frozen=True)
class PairsLook:
    """One look at the open pairs (arrays, one entry per pair): the repeated interval at the level a pair was
    decided at (the level it ends the look with when undecided), its critical value and level, whether it is
    decided, and whether it stops for futility with the conditional power that said so (NaN where not checked)."""

    low: np.ndarray
    high: np.ndarray
    bound: np.ndarray
    level: np.ndarray
    decided: np.ndarray
    futile: np.ndarray
    power: np.ndarray


@dataclass(frozen=True)
class Procedure:
    """How the open pairs are tested at a look: the family-wise ``alpha`` over ``pairs`` pairs, of which
    ``decided`` were decided at earlier looks, the ``spending`` function, the ``multiplicity`` rule, and the
    (non-binding) ``futility`` threshold from the information fraction ``futility_from`` on (0: never)."""

    alpha: float
    pairs: int
    decided: int = 0
    spending: str = "obf"
    multiplicity: str = "holm"
    futility: float = 0.0
    futility_from: float = 0.5


def look_at_pairs(
    diffs: Sequence[np.ndarray],
    points: Sequence[float],
    cells: Sequence[Sequence[bs.Cells]],
    times: Sequence[Sequence[float]],
    future: Sequence[float],
    procedure: Procedure,
) -> PairsLook:
    """Test the open pairs at one look: step-down over :func:`pair_levels`, then futility for the undecided.

    ``diffs[p]`` are the bootstrap replicates of pair p's difference, ``points[p]`` its estimate, ``cells[p]`` the
    cells it is made of, ``times[p]`` its information fractions up to this look (the last is this look's; 1 at the
    last look). ``future`` are the planned fractions of the looks after this one (empty at the last look): a pair's
    final critical value for futility is the one of its times followed by the planned ones beyond them (and 1).
    ``procedure``: alpha, the pairs and those decided before, spending, multiplicity and futility.
    """
    alpha, pairs, decided, spending, multiplicity, futility, futility_from = (
        procedure.alpha,
        procedure.pairs,
        procedure.decided,
        procedure.spending,
        procedure.multiplicity,
        procedure.futility,
        procedure.futility_from,
    )
    n = len(diffs)
    if n == 0:
        empty = np.zeros(0)
        return PairsLook(empty, empty, empty, empty, empty.astype(bool), empty.astype(bool), empty)
    levels = pair_levels(alpha, pairs, decided, multiplicity)
    bounds, lows, highs = (np.full((n, levels.size), np.nan) for _ in range(3))
    first = np.full(n, -1)  # the column at which each pair was decided (its reported level)

    def crosses(j: int) -> np.ndarray:
        for p in range(n):
            bounds[p, j] = float(boundaries(times[p], float(levels[j]), spending)[-1])
            lows[p, j], highs[p, j] = repeated_interval(diffs[p], np.asarray(points[p]), bounds[p, j], cells[p])
        now = (lows[:, j] > 0) | (highs[:, j] < 0)
        first[(first < 0) & now] = j
        return now

    rejected, j = step_down(crosses, levels.size)
    col = np.where(rejected, first, j)
    rows = np.arange(n)
    low, high = lows[rows, col], highs[rows, col]
    futile, power = np.zeros(n, dtype=bool), np.full(n, np.nan)
    for p in range(n):
        now = float(times[p][-1])
        if rejected[p] or futility <= 0 or not len(future) or now >= 1.0 or now < futility_from:
            continue
        ahead = [f for f in future if f > now]
        final = float(
            boundaries(
                [*times[p], *(ahead if ahead and ahead[-1] >= 1.0 else [*ahead, 1.0])], float(levels[j]), spending
            )[-1]
        )
        lo, hi = repeated_interval(diffs[p], np.asarray(points[p]), final, cells[p])
        half = float(hi - lo) / 2.0
        z = abs(float(points[p])) * final / half if half > 0 and np.isfinite(half) else 0.0
        power[p] = float(conditional_power(z, now, final))
        futile[p] = power[p] < futility
    return PairsLook(low, high, bounds[rows, col], levels[col], rejected, futile, power)
