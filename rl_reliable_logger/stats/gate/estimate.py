"""What a candidate's effect is estimated to be once its test ended, and the interval of a look (pure arrays).

The mean difference at the look a candidate stopped at leans upward when it is kept: it passed a screen, and a
sequential test stops early when its estimate happens to be high. The estimate accounts for both by the
**median-unbiased estimate** under the stagewise ordering (Jennison & Turnbull 2000, sec. 8.4) in the canonical
model: the drift θ̂ at which the outcome observed (the look it stopped at and its ``Z``) is the median of the
design's outcomes given the screen, ``P_θ̂(an outcome at least as extreme | screen passed) = 1/2``
(``stagewise.tail``, increasing in θ, so the root is unique), put back on the scale of the differences through the
look's t statistic: ``min_effect + t(θ̂ √t_k) · se_k`` (``t(.)`` the inverse of the t-to-z map). It is the plain
mean when nothing was selected (one look at ``max_seeds``, no screen).

What it does not remove, and what is approximate: the canonical model treats the normal-scale statistics as if
the variance were known, and a kept candidate is also chosen *because* it crossed, which the stagewise ordering
does not condition on. Over kept candidates the estimate still leans upward, about half as much as the mean
(the gate study measures both, ``docs/gate.md``); over candidates that ran out of seeds it leans downward.

The **interval** of a look is the repeated interval at the candidate's boundary ``b_k`` (Jennison & Turnbull
1989): ``mean ± t_{n-1}(b_k) · se`` with the boundary mapped back to the t scale; its lower end is above
``min_effect`` exactly when the candidate is kept at this look. At the screen look (no error spent there) it is
unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .paired import PairedLook, z_to_t
from .stagewise import tail

#: The estimate's drift is searched within this many canonical units of the naive one (to 1e-4 of a unit: the
#: effect to about 1e-4 / √max_seeds of the differences' standard deviation).
REACH = 12.0


def median_unbiased_drift(
    times: Sequence[float], lower: Sequence[float], upper: Sequence[float], look: int, z: float
) -> float:
    """The drift θ̂ (canonical scale) at which ``P_θ̂(outcome at least as extreme as Z = z at look) = 1/2``."""
    if not np.isfinite(z):
        return float(z)
    naive = z / math.sqrt(times[look])

    def excess(theta: float) -> float:
        return tail(times, lower, upper, look, z, theta) - 0.5

    lo, hi = naive - 1.0, naive + 1.0  # the root is usually near: widen the bracket only as far as needed
    while excess(lo) > 0 and lo > naive - REACH:
        lo -= 2.0
    while excess(hi) < 0 and hi < naive + REACH:
        hi += 2.0
    if excess(lo) >= 0:
        return lo
    if excess(hi) <= 0:
        return hi
    from scipy import optimize  # imported where a root is searched: a gate call that needs none loads none

    return float(optimize.brentq(excess, lo, hi, xtol=1e-4))


def adjusted_effect(
    look: PairedLook,
    min_effect: float,
    times: Sequence[float],
    lower: Sequence[float],
    upper: Sequence[float],
) -> float:
    """The median-unbiased estimate of the effect (candidate - incumbent) of a candidate that stopped at its last
    look ``look`` (the design's ``times``, ``lower`` and ``upper`` boundaries up to it)."""
    if look.seeds < 2 or not np.isfinite(look.z):
        return look.mean
    k = len(times) - 1
    theta = median_unbiased_drift(times, lower, upper, k, look.z)
    return float(min_effect + z_to_t(theta * math.sqrt(times[k]), look.seeds - 1) * look.se)


def repeated_interval(look: PairedLook, bound: float) -> tuple[float, float]:
    """``mean ± t(bound) · se``: the look's interval at the candidate's boundary ``bound`` (z scale)."""
    if look.seeds < 2 or not np.isfinite(bound):
        return -math.inf, math.inf
    if look.se == 0:
        return look.mean, look.mean
    half = z_to_t(bound, look.seeds - 1) * look.se
    return look.mean - half, look.mean + half
