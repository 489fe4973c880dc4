"""rliable 1.2's ``plot_utils``: the same functions, signatures and return values, drawn by
:mod:`..render.rliable_plots` (matplotlib's public API; no seaborn). Importing this module loads matplotlib."""

from __future__ import annotations

from ..render.rliable_plots import (
    plot_interval_estimates,
    plot_performance_profiles,
    plot_probability_of_improvement,
    plot_sample_efficiency_curve,
)

__all__ = [
    "plot_interval_estimates",
    "plot_performance_profiles",
    "plot_probability_of_improvement",
    "plot_sample_efficiency_curve",
]
