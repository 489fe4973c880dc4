"""Empirical CDFs, DKW bands, score supports and performance percentiles (spec sections 1, 4.1, Q3, Q4)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...wording import Keyword, said

#: Default confidence parameter: intervals hold for all algorithms at once with probability 1 - delta.
DEFAULT_DELTA = 0.05
#: Population constant m of the saturated alpha-Rank chain (tie transitions get eta / m).
POPULATION_M = 50
#: Julia ``isapprox`` default rtol (no atol): the tie tolerance of the chains.
SQRT_EPS = math.sqrt(np.finfo(float).eps)

Samples = Sequence[Sequence[np.ndarray]]


def ecdf(sample: np.ndarray, x: np.ndarray | float, *, is_sorted: bool = False) -> np.ndarray:
    """Right-continuous empirical CDF ``#{t : sample_t <= x} / n`` evaluated at ``x``."""
    s = np.asarray(sample, dtype=float)
    if not is_sorted:
        s = np.sort(s)
    return np.searchsorted(s, np.asarray(x, dtype=float), side="right") / s.size


def dkw_epsilon(n: int | np.ndarray, delta: float) -> np.ndarray | float:
    """Two-sided DKW half-width with Massart's constant: ``sqrt(ln(2/delta) / (2n))``."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    return np.sqrt(np.log(2.0 / delta) / (2.0 * np.asarray(n, dtype=float)))


def approx(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Julia ``isapprox`` with default tolerances: ``|a-b| <= sqrt(eps) * max(|a|, |b|)``."""
    return np.abs(a - b) <= SQRT_EPS * np.maximum(np.abs(a), np.abs(b))


def as_samples(samples: Samples) -> list[list[np.ndarray]]:
    """Validate ``samples[i][j]`` (nA x nE non-empty finite 1-D arrays) and return sorted float copies."""
    out: list[list[np.ndarray]] = []
    n_env = None
    for i, row in enumerate(samples):
        row = list(row)
        if n_env is None:
            n_env = len(row)
        if len(row) != n_env or n_env == 0:
            raise ValueError("samples must be a rectangular nA x nE nesting with at least one task")
        cells = []
        for j, x in enumerate(row):
            arr = np.sort(np.asarray(x, dtype=float).ravel())
            if arr.size == 0:
                raise ValueError(f"algorithm {i}, task {j}: no scores")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"algorithm {i}, task {j}: non-finite scores")
            cells.append(arr)
        out.append(cells)
    if not out:
        raise ValueError("samples is empty: need at least one algorithm")
    return out


def cell_sizes(samples: list[list[np.ndarray]]) -> np.ndarray:
    return np.array([[x.size for x in row] for row in samples], dtype=np.int64)


def resolve_support(
    samples: list[list[np.ndarray]],
    support: tuple[float, float] | Sequence[tuple[float, float]] | np.ndarray | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Score bounds ``[a_j, b_j]`` per task as an ``(nE, 2)`` array, plus warnings (Q3).

    ``support`` may be one ``(low, high)`` pair for every task, one pair per task, or ``None`` for the
    pooled observed range (the authors' choice; the PBP guarantee then only holds approximately).
    """
    n_env = len(samples[0])
    lo = np.array([min(samples[i][j][0] for i in range(len(samples))) for j in range(n_env)])
    hi = np.array([max(samples[i][j][-1] for i in range(len(samples))) for j in range(n_env)])
    if support is None:
        return np.stack([lo, hi], axis=1), [
            said(
                "no score range given: PBP uses the observed pooled min/max of each task as the score bounds, "
                "so its guarantee is only approximate (it holds if no future run could score outside the "
                "observed range); give the known range (",
                Keyword("score_range"),
                " LOW,HIGH) for a valid bound.",
            ).text()
        ]
    arr = np.asarray(support, dtype=float)
    if arr.shape == (2,):
        arr = np.tile(arr, (n_env, 1))
    if arr.shape != (n_env, 2):
        raise ValueError(f"support must be (low, high) or one pair per task ({n_env}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 0] > arr[:, 1]):
        raise ValueError(f"support bounds must be finite with low <= high, got {arr.tolist()}")
    bad = [j for j in range(n_env) if lo[j] < arr[j, 0] or hi[j] > arr[j, 1]]
    if bad:
        raise ValueError(
            "scores fall outside the given score range on task index(es) "
            + ", ".join(f"{j} (observed [{lo[j]:g}, {hi[j]:g}] vs range [{arr[j, 0]:g}, {arr[j, 1]:g}])" for j in bad)
        )
    return arr, []


def percentile_scores(
    samples: Samples, weights: np.ndarray, x: np.ndarray, env: int, *, presorted: bool = False
) -> np.ndarray:
    """Performance percentile of scores ``x`` on task ``env``: ``sum_k w[k] * F_k,env(x)`` (spec section 1)."""
    s = samples if presorted else as_samples(samples)
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(s),) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError("weights must be one non-negative weight per algorithm summing to 1")
    x = np.asarray(x, dtype=float)
    return sum(w[k] * ecdf(s[k][env], x, is_sorted=True) for k in range(len(s)))


def quantile_bands(
    samples: Samples, delta: float = DEFAULT_DELTA, *, max_points: int | None = 2000, presorted: bool = False
) -> list[list[dict[str, Any]]]:
    """Per cell: sorted distinct scores, their ECDF values and the DKW band at ``delta/(nA*nE)``.

    With more than ``max_points`` distinct scores, evenly spaced order statistics are kept (always the
    smallest and the largest).
    """
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    d = split_cells(delta, n_alg, n_env)
    out = []
    for i in range(n_alg):
        row = []
        for j in range(n_env):
            x = s[i][j]
            z = np.unique(x)
            cdf = np.searchsorted(x, z, side="right") / x.size
            if max_points is not None and z.size > max_points:
                keep = np.unique(np.round(np.linspace(0, z.size - 1, max_points)).astype(int))
                z, cdf = z[keep], cdf[keep]
            eps = float(dkw_epsilon(x.size, d))
            row.append(
                {
                    "score": z,
                    "cdf": cdf,
                    "cdf_low": np.maximum(cdf - eps, 0.0),
                    "cdf_high": np.minimum(cdf + eps, 1.0),
                    "eps": eps,
                }
            )
        out.append(row)
    return out


def split_cells(delta: float, n_alg: int, n_env: int) -> float:
    return delta / (n_alg * n_env)
