"""Family-wise error control for many comparisons at once (all pairs of algorithms).

With A algorithms there are A(A-1)/2 pairs; at 95% each, the chance that *some* interval misses is
far above 5% (6 algorithms: 15 pairs, up to 1 - 0.95^15 ≈ 54% if the pairs were independent).
Two remedies, on bootstrap distributions (pure arrays, no pandas):

* :func:`max_t_intervals` — simultaneous intervals from the bootstrap distribution of the maximum
  studentised deviation over the family (the "max-T" method; Westfall & Young 1993, Romano & Wolf
  2005): all intervals cover their true values together with probability ≈ ``ci``.
* :func:`holm` — Holm's (1979) step-down adjustment of p-values, valid under any dependence;
  :func:`bootstrap_pvalues` gives the two-sided percentile-bootstrap p-values it adjusts.

:func:`letter_display` turns "which pairs are distinguishable" into a compact letter display
(Piepho 2004): algorithms that share a letter were not told apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import distributions


def bootstrap_pvalues(dist: np.ndarray, null: float | np.ndarray = 0.0) -> np.ndarray:
    """Two-sided p-value per column of ``dist`` (B, P): 2·min(P(d ≤ null), P(d ≥ null)), at most 1.

    The smallest p-value that a percentile interval at level 1 - p would still exclude ``null``
    (duality with the intervals), with one replicate added to each side so it is never 0.
    """
    dist = np.asarray(dist, dtype=float)
    if dist.ndim == 1:
        dist = dist[:, None]
    b = dist.shape[0]
    below = ((dist <= null).sum(axis=0) + 1) / (b + 1)
    above = ((dist >= null).sum(axis=0) + 1) / (b + 1)
    return np.minimum(1.0, 2 * np.minimum(below, above))


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (same order as the input).

    Example:
        >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
        [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


def max_t_intervals(
    dist: np.ndarray,
    point: np.ndarray,
    ci: float = 0.95,
    *,
    scale: np.ndarray | float = 1.0,
    df: np.ndarray | float | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Simultaneous intervals for the P columns of ``dist`` (B, P) around ``point`` (P,).

    Each column is scaled by its bootstrap standard error; the ``ci`` quantile c of
    max_p |d_bp − mean_p| / se_p over replicates gives ``point ± c·se·scale`` for every column at
    once. ``scale`` (scalar or (P,)) corrects the standard errors, e.g. by √(n/(n−1)) for the
    bootstrap's plug-in variance with n runs. Columns with zero spread get a zero-width interval
    and do not enter the maximum. Returns (low, high, c).

    ``df`` (scalar or (P,)): the degrees of freedom of each column's standard error. The bootstrap's
    c is a quantile on a *known*-variance (normal) scale, but the standard error is estimated from the
    runs, so the realised maximum has t-like tails and the family under-covers (6 algorithms, 5 tasks ×
    5–10 runs: 0.935–0.948 for P(X > Y)). With ``df`` each column uses the t quantile at the same tail
    probability, ``t_df⁻¹(Φ(c))`` — Hesterberg's (2015) expansion of the percentile interval, applied to
    the max-T critical value.
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    dist = np.asarray(dist, dtype=float)
    point = np.asarray(point, dtype=float)
    if dist.ndim != 2 or dist.shape[1] != point.size:
        raise ValueError(f"dist must be (B, P) with P = {point.size}, got {dist.shape}")
    se = dist.std(axis=0, ddof=1)
    live = se > 0
    if not live.any():
        return point.copy(), point.copy(), 0.0
    centred = np.abs(dist[:, live] - dist[:, live].mean(axis=0)) / se[live]
    crit = float(np.quantile(centred.max(axis=1), ci))
    factor = np.full(se.shape, crit)
    if df is not None:
        factor = distributions.t_ppf(
            distributions.norm_cdf(crit), np.broadcast_to(np.asarray(df, dtype=float), se.shape)
        )
    half = np.where(live, factor * se * np.broadcast_to(np.asarray(scale, dtype=float), se.shape), 0.0)
    return point - half, point + half, crit


def letter_display(names: Sequence[str], points: Sequence[float], different: np.ndarray) -> dict[str, str]:
    """Compact letter display: algorithms sharing a letter are not distinguishable.

    ``different[i, j]`` is True when algorithms i and j are told apart. Letters are handed out in
    order of the best ``points`` (a = the group of the highest), by Piepho's insert-and-absorb
    algorithm.

    Example:
        >>> diff = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=bool)
        >>> letter_display(["A", "B", "C"], [3.0, 2.0, 1.9], diff)
        {'A': 'a', 'B': 'b', 'C': 'b'}
    """
    n = len(names)
    different = np.asarray(different, dtype=bool)
    if different.shape != (n, n):
        raise ValueError(f"different must be ({n}, {n}), got {different.shape}")
    groups: list[set[int]] = [set(range(n))]
    for i in range(n):
        for j in range(i + 1, n):
            if not (different[i, j] or different[j, i]):
                continue
            new: list[set[int]] = []
            for g in groups:
                if i in g and j in g:
                    new += [g - {i}, g - {j}]
                else:
                    new.append(g)
            # absorb: drop groups contained in another
            unique = []
            for g in new:
                if g and not any(g < h for h in new) and g not in unique:
                    unique.append(g)
            groups = unique
    rank = np.argsort(-np.asarray(points, dtype=float), kind="stable")
    position = {int(k): r for r, k in enumerate(rank)}
    groups.sort(key=lambda g: min(position[k] for k in g))
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = {str(name): "" for name in names}
    for idx, g in enumerate(groups):
        letter = letters[idx] if idx < len(letters) else f"<{idx}>"
        for k in sorted(g, key=lambda k: position[k]):
            out[str(names[k])] += letter
    return out
