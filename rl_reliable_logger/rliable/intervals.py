"""Confidence intervals from bootstrap replicates as rliable 1.2 returns them (through ``arch``'s ``conf_int``).

The formulas are the engine's (:mod:`..stats.intervals.bounds`: the tails, the reflection of ``basic``, the BC/BCa
levels and the acceleration, the studentized ends); what is here are ``arch``'s quirks, each said next to the code:
a ``(2, k)`` array (lower row, upper row; ``k = 1`` for a function returning one number); the tails named by the
side that is bounded (``lower``, ``upper``); percentiles by ``np.percentile`` of ``100 q``; the bias from the share
of replicates *strictly* below the estimate, refused (RuntimeError) when it is 0 or 1; the acceleration from
leaving out one run index of every task at a time, centred on the grand mean of every output and refused when its
variance is too small; ``norm`` with the replicates' standard deviation of divisor ``reps``. These are rliable's
semantics, not the engine's own intervals (:func:`..stats.intervals.interval` counts ties half and stratifies the
jackknife), so that a script gets the intervals it got from rliable, up to Monte-Carlo error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..stats import distributions
from ..stats.intervals import bounds

#: arch names a one-sided interval by the side it bounds; scipy (and :data:`..stats.intervals.bounds.TAILS`) by the
#: alternative: a lower bound only is ``greater``, an upper bound only ``less``.
SIDES = {"two": "two-sided", "lower": "greater", "upper": "less"}
#: Method names and their aliases, as rliable (``arch``) accepts them.
PERCENTILE_METHODS = ("percentile", "basic")
BIAS_CORRECTED = ("bc", "debiased", "bias-corrected", "bca")
NORMAL_METHODS = ("norm", "var", "cov")
METHODS = PERCENTILE_METHODS + BIAS_CORRECTED + NORMAL_METHODS + ("studentized",)


def check(method: str, size: float, tail: str) -> None:
    """ValueError naming the argument when ``method``, ``size`` or ``tail`` is not one rliable accepts."""
    if not 0.0 < size < 1.0:
        raise ValueError(f"confidence_interval_size must be strictly between 0 and 1, got {size!r}")
    if str(tail).lower() not in ("two", "lower", "upper"):
        raise ValueError(f"tail must be 'two', 'lower' or 'upper', got {tail!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def check_reps(reps: object, name: str = "reps") -> int:
    """``reps`` as an int, or a ValueError naming it (``reps=0`` failed inside numpy's percentile before)."""
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or int(reps) < 1:
        shown = int(reps) if isinstance(reps, np.integer) else reps
        raise ValueError(f"{name} must be a positive whole number of bootstrap replicates; got {shown!r}")
    return int(reps)


def check_sampling(sampling: str) -> None:
    """Only arch's nonparametric bootstrap (rliable's): the semi-parametric and parametric ones re-fit a model."""
    if str(sampling).lower() != "nonparametric":
        raise ValueError(
            f"sampling={sampling!r} is not offered by the drop-in: arch's semi-parametric and parametric bootstraps "
            "re-fit a model on every replicate (func(..., params=, state=)), which rliable never does; use "
            "sampling='nonparametric'"
        )


def studentized_conf_int(
    t: np.ndarray, base: np.ndarray, std_err: np.ndarray, *, size: float, tail: str = "two"
) -> np.ndarray:
    """(2, k) bootstrap-t interval from studentized replicates ``t`` (reps, k), the estimate and its standard
    error (arch's ``studentized``): ``[base - se · t*_upper, base - se · t*_lower]`` (``np.percentile``, linear)."""
    side = SIDES[str(tail).lower()]
    base = np.atleast_1d(np.asarray(base, dtype=float))
    alpha = bounds.tail_alpha(size, side)
    t_low, t_high = np.percentile(t, [100.0 * alpha, 100.0 * (1.0 - alpha)], axis=0)  # arch: np.percentile of 100 q
    return np.vstack(bounds.one_sided(*bounds.studentized_bounds(base, std_err, t_low, t_high), side))


def acceleration(jackknife: np.ndarray) -> np.ndarray:
    """(k, 1) BCa acceleration from (n, k) or (n,) leave-one-out values (:func:`..stats.intervals.bounds.acceleration_ratio`
    of their cubed and squared deviations), with arch's quirks."""
    jack = np.asarray(jackknife, dtype=float)
    u = jack.mean() - jack  # arch: deviations from the grand mean of every output, not from each output's own mean
    cubes, squares = np.sum(u**3, axis=0), np.sum(u**2, axis=0)
    denom = 6.0 * squares**1.5
    if np.any(denom < np.abs(cubes) * np.finfo(np.float64).eps):  # arch refuses a near-zero jackknife variance
        raise RuntimeError(f"the jackknife variance ({denom}) is too small for BCa; use method='bc' or 'percentile'")
    ratio = np.where(squares > 0, bounds.acceleration_ratio(cubes, squares), np.nan)  # arch divides 0 by 0: NaN
    return np.atleast_1d(ratio)[:, None]


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
    side = SIDES[str(tail).lower()]
    base = np.asarray(base, dtype=float)
    alpha = bounds.tail_alpha(size, side)
    k = results.shape[1]
    quantiles = np.array([[alpha, 1.0 - alpha]] * k)
    z = distributions.norm_ppf(quantiles)
    if method in NORMAL_METHODS:
        errors = results - results.mean(axis=0)
        std_err = np.sqrt(np.diag(errors.T @ errors / results.shape[0]))  # arch: divisor reps, not reps - 1
        lower, upper = base + z[:, 0] * std_err, base + z[:, 1] * std_err
    else:
        if method in BIAS_CORRECTED:
            below = (results < base).mean(axis=0)  # arch: strictly below (the engine counts ties half)
            if below.min() <= 0.0 or below.max() >= 1.0:
                raise RuntimeError(
                    "bias correction needs replicates on both sides of the estimate; none lie on one side "
                    "(an extreme statistic): use method='percentile'"
                )
            b = distributions.norm_ppf(below)[:, None]
            a = acceleration(jackknife()) if method == "bca" and jackknife is not None else 0.0
            quantiles = bounds.bca_levels(b, z, a)
        percents = 100.0 * quantiles
        lower, upper = np.zeros(k), np.zeros(k)
        for i in range(k):
            lower[i], upper[i] = np.percentile(results[:, i], list(percents[i]))  # arch: np.percentile of 100 q
        if method == "basic":
            lower, upper = bounds.reflect(base, lower, upper)
    return np.vstack(bounds.one_sided(lower, upper, side))
