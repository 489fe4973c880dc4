"""How extreme a candidate's outcome is, under a given effect: the stagewise-ordered tail in the canonical model.

The estimate after a candidate's test ended (:mod:`.estimate`) asks, for a drift θ, how likely an outcome at least
as extreme as the one observed is. In the canonical model (Jennison & Turnbull 2000, ch. 3) the standardised
statistic of look k is ``Z_k`` and ``S_k = Z_k √t_k`` is a Brownian motion with drift θ in information time
(``t_k`` = seeds / ``max_seeds``; θ = 0 at an effect of exactly ``min_effect``, θ = (effect - m) √max_seeds / σ).
The design has, per look, a lower boundary ``a_k`` (the screen at look 1, futility after: a path below it stops)
and an upper one ``b_k`` (the path crosses: keep); the screen look keeps nothing (``b_1 = ∞``) unless it is the one
look at t = 1. Everything is given the screen passed: the density of ``S`` on a Simpson grid, convolved look by
look with the normal increment (Armitage, McPherson & Rowe 1969), as :mod:`..sequential` does.

**Stagewise ordering** (Jennison & Turnbull 2000, sec. 8.4): an outcome is more extreme than stopping at look k
with ``Z_k = z`` when it crosses an upper boundary at an earlier look, or reaches look k with ``Z_k >= z``
(whatever happens after); a stop below a lower boundary at an earlier look is less extreme. That event is
*increasing* in the path (a path raised everywhere crosses no later and falls no earlier), and a path started
higher or with a larger drift is raised everywhere; given the screen, ``S_1`` is a normal with mean θ t_1
truncated below, stochastically increasing in θ. So the tail probability increases in θ, and the estimate that
makes it 1/2 is unique. The same argument, for the event "crosses before falling below", is why a screened test
holds its level for every effect below the margin (``gate/__init__.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special

from .. import sequential as sq

#: Points of the Simpson grid of a look (odd). Tails agree with those of the watch's 401-point grid to 1e-7
#: (``tests/stats/gate/test_stagewise.py``); fewer points keep the estimate fast.
GRID = 151
#: The grid of a look covers the continuing paths' mean ± SPAN standard deviations (beyond: < 1e-18 of the mass).
SPAN = 9.0


def _check(times: tuple[float, ...], lower: tuple[float, ...], upper: tuple[float, ...]) -> None:
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size == 0 or not ((t > 0) & (t <= 1)).all() or (np.diff(t) <= 0).any():
        raise ValueError(f"times must increase strictly within (0, 1], got {list(times)}")
    if not len(lower) == len(upper) == t.size:
        raise ValueError(f"one lower and one upper boundary per look: {len(lower)}, {len(upper)} for {t.size} looks")


def _first(t1: float, lower: float, drift: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid and mass of ``S_1`` given that it passed the screen (``S_1 >= lower √t_1``); the mass sums to 1."""
    sd, mean = math.sqrt(t1), drift * t1
    lo = max(lower * sd, mean - SPAN * sd) if np.isfinite(lower) else mean - SPAN * sd
    hi = max(lo, mean) + SPAN * sd
    x = np.linspace(lo, hi, GRID)
    log_density = -0.5 * ((x - mean) / sd) ** 2
    mass = np.exp(log_density - log_density.max()) * sq.simpson_weights(GRID)
    return x, mass / mass.sum()


def _above(x: np.ndarray, mass: np.ndarray, level: float, dt: float, drift: float) -> float:
    """P(the continuing paths (``mass`` at scores ``x``) are at or above ``level`` one increment ``dt`` later)."""
    if not mass.size or level == np.inf:
        return 0.0
    if level == -np.inf:
        return float(mass.sum())
    return float(mass @ special.ndtr((x + drift * dt - level) / math.sqrt(dt)))


def _go_on(
    x: np.ndarray, mass: np.ndarray, dt: float, drift: float, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """The continuing paths one increment on, inside ``[lo, hi]`` (scores), as grid and (unnormalised) mass."""
    if not mass.size:
        return x, mass
    sd = math.sqrt(dt)
    lo = max(lo, float(x.min()) + drift * dt - SPAN * sd)
    hi = min(hi, float(x.max()) + drift * dt + SPAN * sd)
    if not lo < hi:
        return np.zeros(0), np.zeros(0)
    y = np.linspace(lo, hi, GRID)
    density = (sq.normal_density((y[:, None] - x[None, :] - drift * dt) / sd) / sd) @ mass
    return y, density * sq.simpson_weights(GRID) * (y[1] - y[0])


def _scores(z: float, t: float) -> float:
    return z * math.sqrt(t) if np.isfinite(z) else z


def tail(
    times: Sequence[float], lower: Sequence[float], upper: Sequence[float], look: int, z: float, drift: float = 0.0
) -> float:
    """P_θ(an outcome at least as extreme as ``Z = z`` at look ``look`` (0-based) | the screen passed).

    ``times``: the looks' information fractions; ``lower`` and ``upper``: their boundaries (z scale; ``lower[0]``
    the screen, ``upper[0] = inf`` unless the only look is at t = 1).

    >>> round(tail([1.0], [-np.inf], [1.645], 0, 2.0, drift=0.0), 4)  # one fixed look: the normal tail
    0.0228
    """
    t = np.asarray(times, dtype=float)
    a, b = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    _check(tuple(t), tuple(a), tuple(b))
    if not 0 <= look < t.size:
        raise ValueError(f"look must be one of the {t.size} looks, got {look}")
    if look == 0:
        mean = drift * math.sqrt(t[0])
        if t[0] == 1.0 or not np.isfinite(a[0]):
            return float(special.ndtr(mean - z))
        passed = special.log_ndtr(mean - a[0])
        return float(np.exp(special.log_ndtr(mean - max(z, a[0])) - passed))
    x, mass = _first(float(t[0]), float(a[0]), drift)
    total = 0.0
    for k in range(1, look + 1):
        dt = float(t[k] - t[k - 1])
        if k == look:
            break
        total += _above(x, mass, _scores(b[k], t[k]), dt, drift)
        x, mass = _go_on(x, mass, dt, drift, _scores(a[k], t[k]), _scores(b[k], t[k]))
    return total + _above(x, mass, _scores(z, t[look]), float(t[look] - t[look - 1]), drift)
