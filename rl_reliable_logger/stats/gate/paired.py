"""The paired statistics of one candidate at one look: differences on shared seeds, studentized against the margin.

Candidate and incumbent run on the same seeds (common random numbers), so the noise a seed shares between them
cancels in the difference ``d_s = candidate_s - incumbent_s``. The null of a candidate is "its effect is at most
``min_effect``" (``E[d] <= m``), so at look k (its first ``n_k`` differences) the statistic is the one-sample
``t_k = (mean_k - m) / (sd_k / √n_k)`` with ``n_k - 1`` degrees of freedom, put on the normal scale by matching
its tail, ``z_k = -Φ^{-1}(F_{t,n_k-1}(-t_k))`` (exactly N(0, 1) at the null's edge for normal differences): one
monotone map per look, so comparing ``z_k`` with a boundary on the normal scale is the t test at that look (the
boundaries themselves come from the exact joint law of the t statistics, :mod:`.student`). Its information
fraction is ``n_k / max_seeds``.

Differences without spread (every seed the same difference: all ties, or a deterministic score) have no t
statistic: ``z`` is +inf when that difference exceeds the margin, -inf when it is below, 0 when equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class PairedLook:
    """One look at a candidate's paired differences: seeds so far, mean, standard deviation (ddof 1; NaN for one
    seed) and standard error of the mean, the t statistic against the margin and its normal-scale ``z``."""

    seeds: int
    mean: float
    sd: float
    se: float
    t: float
    z: float


def t_to_z(t: float, df: int) -> float:
    """The normal quantile with the same upper tail as ``t`` under Student's t with ``df`` degrees of freedom.

    >>> round(t_to_z(2.262, 9), 3)  # the t_9 97.5% quantile is the normal's 1.96
    1.96
    """
    if not np.isfinite(t):
        return float(t)
    return float(-special.ndtri(special.stdtr(df, -t)))


def z_to_t(z: float, df: int) -> float:
    """The inverse of :func:`t_to_z`: the t value whose upper tail under ``t_df`` is the normal's beyond ``z``."""
    if not np.isfinite(z):
        return float(z)
    return float(-special.stdtrit(df, special.ndtr(-z)))


def paired_look(differences: np.ndarray, min_effect: float) -> PairedLook:
    """The statistics of ``differences`` (candidate - incumbent, one per shared seed) against ``min_effect``.

    >>> look = paired_look(np.array([0.9, 1.4, 0.7, 1.2]), 0.25)
    >>> look.seeds, round(look.mean, 3), round(look.t, 2), round(look.z, 2)
    (4, 1.05, 5.15, 2.45)
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"differences must be one non-empty sequence, got shape {d.shape}")
    if not np.isfinite(d).all():
        raise ValueError("differences must be finite numbers")
    n, mean = d.size, float(d.mean())
    if n == 1:
        return PairedLook(1, mean, math.nan, math.nan, math.nan, math.nan)
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    gap = mean - float(min_effect)
    if se <= 1e-12 * max(1.0, abs(mean)):  # no spread: every seed gives the same difference
        z = math.inf if gap > 0 else (-math.inf if gap < 0 else 0.0)
        return PairedLook(n, mean, 0.0, 0.0, z, z)
    t = gap / se
    return PairedLook(n, mean, sd, se, t, t_to_z(t, n - 1))
