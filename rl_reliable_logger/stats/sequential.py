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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import optimize, special

from . import bootstrap as bs

SPENDING = ("obf", "pocock")
#: Points of the Simpson grid over the continuation region (odd); the crossing probabilities it gives agree
#: with a Monte-Carlo of the canonical process to a few 1e-5 (``tests/stats/test_sequential.py``).
GRID = 401
#: A critical value above this spends no error (the look cannot reject): the grid is cut there.
NO_SPEND = 8.0


def _phi(x: np.ndarray) -> np.ndarray:
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


def _simpson(n: int) -> np.ndarray:
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
    if t.ndim != 1 or t.size == 0 or not ((t > 0) & (t <= 1)).all() or (np.diff(t) <= 0).any():
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
            out[k] = optimize.brentq(_excess, 0.0, NO_SPEND, args=(u, mass, float(t[k]), dt, target), xtol=1e-10)
        u, mass = _step(u, mass, out[k], t[k], dt)
    return out


def _start(t: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid and Simpson mass of the score's density at the first look, inside its continuation region."""
    b = min(c, NO_SPEND) * math.sqrt(t)
    u = np.linspace(-b, b, GRID)
    density = _phi(u / math.sqrt(t)) / math.sqrt(t)
    return u, density * _simpson(GRID) * (u[1] - u[0])


def _step(u: np.ndarray, mass: np.ndarray, c: float, t: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The continuing paths' density one look on (at time ``t``, inside ``|S| < c √t``), as grid and mass."""
    b, sd = min(c, NO_SPEND) * math.sqrt(t), math.sqrt(dt)
    s = np.linspace(-b, b, GRID)
    density = (_phi((s[:, None] - u[None, :]) / sd) / sd) @ mass
    return s, density * _simpson(GRID) * (s[1] - s[0])


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
    interval widens its level (:func:`..bootstrap.expanded_level` at the look's nominal level, over the
    ``cells`` the statistic is made of), i.e. ``c`` becomes ``κ t_df(Φ(c))``. The normal form (not bootstrap
    quantiles) keeps the far tails the early looks use (``Φ(-c_1)`` ~ 1e-4) stable with a few thousand
    replicates.
    """
    if not np.isfinite(bound):
        point = np.asarray(point, dtype=float)
        return np.full_like(point, -np.inf), np.full_like(point, np.inf)
    tail = bs.expanded_level(cells, 1.0 - 2.0 * float(nominal_tail(bound)))
    return bs.normal_interval(np.asarray(dist, dtype=float), np.asarray(point, dtype=float), tail)


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
