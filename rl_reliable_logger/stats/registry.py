"""The built-in statistics: one code per statistic and one entry per metric name.

``Statistic`` is the code a compiled kernel switches on; ``METRICS`` maps every metric name (or name
prefix with a parameter, e.g. ``trimmed_mean_0.1``) to its statistic, how its parameter is read and
how it is displayed. :mod:`.metrics` (numpy) and :mod:`.kernels` (numba) both read these, so a new
built-in metric is added here once, with its numpy function in ``metrics`` and, optionally, a
closed form in the kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum


class Statistic(IntEnum):
    """Codes of the built-in batched statistics (the kernel's switch)."""

    MEAN = 0  # mean over tasks of task means
    MEDIAN = 1  # median over tasks of task means
    TRIMMED_MEAN = 2  # parameter: proportion cut from each end (mass ⌊p·K⌋/K)
    OPTIMALITY_GAP = 3  # parameter: γ
    LOWER_TAIL_MEAN = 4  # parameter: fraction of mass
    FRACTION_ABOVE = 5  # parameter: threshold (runs, task-weighted)
    TASKS_ABOVE = 6  # parameter: threshold (fraction of task means above it)


#: (statistic, parameter): what a compiled kernel needs to compute a built-in metric
Spec = tuple[Statistic, float]


@dataclass(frozen=True)
class MetricEntry:
    """One metric name (``parametric``: a prefix followed by a number) and how it is shown."""

    name: str
    statistic: Statistic
    display: str
    parameter: float = 0.0  # fixed parameter of a non-parametric name (γ is filled in at lookup)
    parametric: bool = False
    scale: float = 1.0  # the number after the prefix times this is the parameter
    lower_is_better: bool = False


METRICS: dict[str, MetricEntry] = {
    e.name: e
    for e in (
        MetricEntry("mean", Statistic.MEAN, "Mean"),
        MetricEntry("median", Statistic.MEDIAN, "Median"),
        MetricEntry("iqm", Statistic.TRIMMED_MEAN, "IQM", parameter=0.25),
        MetricEntry("optimality_gap", Statistic.OPTIMALITY_GAP, "Optimality gap", lower_is_better=True),
        MetricEntry("dp25", Statistic.LOWER_TAIL_MEAN, "DP-25 (bottom-25% mean)", parameter=0.25),
        MetricEntry("trimmed_mean_", Statistic.TRIMMED_MEAN, "Trimmed mean", parametric=True),
        MetricEntry("p_above_", Statistic.FRACTION_ABOVE, "Fraction of runs above", parametric=True),
        MetricEntry("dp", Statistic.LOWER_TAIL_MEAN, "Bottom-tail mean", parametric=True, scale=0.01),
    )
}


def lookup(name: str, *, gamma: float = 1.0) -> tuple[MetricEntry, float] | None:
    """The entry of a metric name and its parameter, or None for an unknown name."""
    key = str(name).strip().lower()
    entry = METRICS.get(key)
    if entry is not None and not entry.parametric:
        return entry, float(gamma) if entry.statistic is Statistic.OPTIMALITY_GAP else entry.parameter
    for entry in METRICS.values():
        if entry.parametric and key.startswith(entry.name):
            try:
                value = float(key[len(entry.name) :]) * entry.scale
            except ValueError:
                return None
            return (entry, value) if math.isfinite(value) else None  # p_above_nan is no metric
    return None


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
