"""Confidence intervals from bootstrap replicates as rliable 1.2 returns them (through ``arch``'s ``conf_int``).

The shapes and rules rliable's users see: a ``(2, k)`` array (lower row, upper row; ``k = 1`` for a function
returning one number); percentiles by ``np.percentile`` (linear); ``basic`` reflects them about the estimate;
``bc``/``bca`` take the bias from the share of replicates *strictly* below the estimate and refuse (RuntimeError)
when it is 0 or 1; ``bca``'s acceleration comes from leaving out one run index of every task at a time and
centres the leave-one-out values on their grand mean (over every output, as ``arch`` does); ``norm`` uses the
replicates' standard deviation (divisor ``reps``). These are rliable's semantics, not the engine's own intervals
(:func:`..stats.intervals.interval` counts ties half and stratifies the jackknife), so that a script gets the
intervals it got from rliable, up to Monte-Carlo error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..stats import distributions

#: Method names and their aliases, as rliable (``arch``) accepts them.
PERCENTILE_METHODS = ("percentile", "basic")
BIAS_CORRECTED = ("bc", "debiased", "bias-corrected", "bca")
NORMAL_METHODS = ("norm", "var", "cov")
METHODS = PERCENTILE_METHODS + BIAS_CORRECTED + NORMAL_METHODS


def check(method: str, size: float, tail: str) -> None:
    """ValueError naming the argument when ``method``, ``size`` or ``tail`` is not one rliable accepts."""
    if not 0.0 < size < 1.0:
        raise ValueError(f"confidence_interval_size must be strictly between 0 and 1, got {size!r}")
    if str(tail).lower() not in ("two", "lower", "upper"):
        raise ValueError(f"tail must be 'two', 'lower' or 'upper', got {tail!r}")
    if method == "studentized":
        raise ValueError("method='studentized' (a nested bootstrap) is not offered by the drop-in: use 'bca' or 'bc'")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def acceleration(jackknife: np.ndarray) -> np.ndarray:
    """(k, 1) BCa acceleration from (n, k) or (n,) leave-one-out values, centred on their grand mean."""
    jack = np.asarray(jackknife, dtype=float)
    u = jack.mean() - jack
    numer = np.sum(u**3, axis=0)
    denom = 6.0 * np.sum(u**2, axis=0) ** 1.5
    if np.any(denom < np.abs(numer) * np.finfo(np.float64).eps):
        raise RuntimeError(f"the jackknife variance ({denom}) is too small for BCa; use method='bc' or 'percentile'")
    return np.atleast_1d(numer / denom)[:, None]


def conf_int(
    results: np.ndarray,
    base: np.ndarray,
    *,
    method: str,
    size: float,
    tail: str = "two",
    jackknife: Callable[[], np.ndarray] | None = None,
) -> np.ndarray:
    """(2, k) interval of each output from ``results`` (reps, k) and the estimate ``base`` ((k,) or scalar)."""
    check(method, size, tail)
    tail = str(tail).lower()
    base = np.asarray(base, dtype=float)
    alpha = (1.0 - size) / 2 if tail == "two" else 1.0 - size
    k = results.shape[1]
    quantiles = np.array([[alpha, 1.0 - alpha]] * k)
    z = distributions.norm_ppf(quantiles)
    if method in NORMAL_METHODS:
        errors = results - results.mean(axis=0)
        std_err = np.sqrt(np.diag(errors.T @ errors / results.shape[0]))
        lower, upper = base + z[:, 0] * std_err, base + z[:, 1] * std_err
    else:
        if method in BIAS_CORRECTED:
            below = (results < base).mean(axis=0)
            if below.min() <= 0.0 or below.max() >= 1.0:
                raise RuntimeError(
                    "bias correction needs replicates on both sides of the estimate; none lie on one side "
                    "(an extreme statistic): use method='percentile'"
                )
            b = distributions.norm_ppf(below)[:, None]
            a = acceleration(jackknife()) if method == "bca" and jackknife is not None else 0.0
            quantiles = distributions.norm_cdf(b + (b + z) / (1.0 - a * (b + z)))
        percents = 100.0 * quantiles
        lower, upper = np.zeros(k), np.zeros(k)
        for i in range(k):
            lower[i], upper[i] = np.percentile(results[:, i], list(percents[i]))
        if method == "basic":
            lower, upper = 2.0 * base - upper, 2.0 * base - lower
    if tail == "lower":
        upper = np.full(np.shape(base), np.inf)
    elif tail == "upper":
        lower = np.full(np.shape(base), -np.inf)
    return np.vstack((lower, upper))
