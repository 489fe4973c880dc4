"""The one registry of aggregate metrics: every name, its batched numpy definition and how it is shown.

A metric is defined once, as a batched numpy function ``f(resample) -> (R,)`` (see :mod:`.metrics`), and
registered here once; every code path (aggregates, differences, curves, comparisons, planning) resolves
names through :func:`get_metric`, so they all compute the same definition. An unknown name is an error.

Adding a metric, built in or your own, is one ``register`` call; afterwards
``evaluate(table, metrics=["iqm", "best_task"])`` (and ``curve_metrics=``, ``compare_all(metric=...)``, in the
same process) computes it::

    >>> from rl_reliable_logger.stats import registry
    >>> _ = registry.register("best_task", lambda r: r.task_means().max(axis=1), display="Best task mean")
    >>> registry.get_metric("best_task").name
    'best_task'
    >>> del registry.METRICS["best_task"]  # (this example cleans up after itself)

A parametric family registers a factory of the parameter (``parametric=True``): the number after the name
prefix, times ``scale``, is passed to it (``trimmed_mean_0.1``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from . import metrics as mt


@dataclass(frozen=True)
class MetricEntry:
    """One metric name (``parametric``: a prefix followed by a number), its definition and display."""

    name: str
    #: the parameter (fixed, read from the name, or γ for ``uses_gamma``) -> the batched function
    make: Callable[[float], mt.MetricFn]
    display: str
    parameter: float | None = None  # a fixed parameter given to ``make`` (None: read from the name, or γ)
    parametric: bool = False
    scale: float = 1.0  # the number after the prefix times this is the parameter
    lower_is_better: bool = False
    uses_gamma: bool = False  # the parameter is the analysis' γ (optimality gap)


METRICS: dict[str, MetricEntry] = {}


def register(
    name: str,
    fn: mt.MetricFn | Callable[[float], mt.MetricFn],
    *,
    display: str | None = None,
    parametric: bool = False,
    scale: float = 1.0,
    parameter: float | None = None,
    lower_is_better: bool = False,
    uses_gamma: bool = False,
) -> MetricEntry:
    """Register a batched metric ``fn(resample) -> (R,)`` under ``name``. With ``parametric`` (names
    ``name<number>``), ``uses_gamma`` or a fixed ``parameter``, ``fn`` is instead a factory ``fn(parameter)`` of
    the batched function. Re-registering a name replaces it."""
    key = str(name).strip().lower()
    if not key:
        raise ValueError("a metric needs a name")
    factory = parametric or uses_gamma or parameter is not None
    make: Callable[[float], mt.MetricFn] = fn if factory else (lambda _p: fn)  # type: ignore[assignment,return-value]
    entry = MetricEntry(key, make, display or str(name), parameter, parametric, scale, lower_is_better, uses_gamma)
    METRICS[key] = entry
    return entry


register("mean", mt.mean, display="Mean")
register("median", mt.median, display="Median")
register("iqm", mt.trimmed_mean, display="IQM", parameter=0.25)
register("optimality_gap", mt.optimality_gap, display="Optimality gap", lower_is_better=True, uses_gamma=True)
register("dp25", mt.lower_tail_mean, display="DP-25 (bottom-25% mean)", parameter=0.25)
register("trimmed_mean_", mt.trimmed_mean, display="Trimmed mean", parametric=True)
register("p_above_", mt.prob_above, display="Fraction of runs above", parametric=True)
register("dp", mt.lower_tail_mean, display="Bottom-tail mean", parametric=True, scale=0.01)


def lookup(name: str, *, gamma: float = 1.0) -> tuple[MetricEntry, float] | None:
    """The entry of a metric name and its parameter, or None for an unknown name."""
    key = str(name).strip().lower()
    entry = METRICS.get(key)
    if entry is not None and not entry.parametric:
        return entry, float(gamma) if entry.uses_gamma else float(entry.parameter or 0.0)
    for entry in METRICS.values():
        if entry.parametric and key.startswith(entry.name):
            try:
                value = float(key[len(entry.name) :]) * entry.scale
            except ValueError:
                continue
            if math.isfinite(value):  # p_above_nan is no metric
                return entry, value
    return None


def get_metric(name: str | mt.Metric | Callable, *, gamma: float = 1.0) -> mt.Metric:
    """Resolve a registered metric name (``mean``, ``iqm``, ``trimmed_mean_0.1``, ...), a :class:`~.metrics.Metric`
    or an rliable-style callable of a ``(runs, tasks)`` array into a :class:`~.metrics.Metric`."""
    if isinstance(name, mt.Metric):
        return name
    if callable(name):
        return mt.per_replicate(name)
    found = lookup(str(name), gamma=gamma)
    if found is None:
        known = ", ".join(e.name + ("<x>" if e.parametric else "") for e in METRICS.values())
        raise ValueError(f"unknown metric {name!r}: use one of {known}, register it, or pass a function.")
    entry, parameter = found
    return mt.Metric(str(name).strip().lower(), entry.make(parameter))


def lower_is_better(name: str) -> bool:
    """Whether smaller values of the named metric are better (False for unknown names)."""
    found = lookup(name)
    return bool(found and found[0].lower_is_better)


def display_name(name: str) -> str:
    """A human-readable name of a metric (the name itself when unknown)."""
    found = lookup(name)
    if found is None:
        return str(name)
    entry, parameter = found
    return f"{entry.display} ({parameter:g})" if entry.parametric else entry.display
