"""One algorithm's aggregate intervals as ``(point, low, high, replicates)``, for the tests of the statistics."""

from __future__ import annotations

from typing import Any

import numpy as np

from rl_reliable_logger.stats import intervals
from rl_reliable_logger.stats.aggregate import aggregate_intervals


def aggregate_tuple(
    cells: Any,
    metrics: Any,
    reps: int,
    rng: Any,
    *,
    method: str = "percentile",
    ci: float = 0.95,
    median_interval: str = "method",
    notes: list[str] | None = None,
    mean_se: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`aggregate_intervals` under a request of ``method``, ``ci`` and ``reps`` replicates; ``notes`` receives
    the fallback sentences and ``mean_se`` the (mean, se) replicates, where given."""
    request = intervals.ResamplingRequest(method, ci, {"aggregates": reps}, median_interval=median_interval)
    found = aggregate_intervals(cells, metrics, request, np.random.default_rng(rng) if isinstance(rng, int) else rng)
    if notes is not None:
        notes += list(found.result.notes)
    if mean_se is not None and found.standard_errors is not None:
        mean_se.update(found.standard_errors)
    return found.point, found.low, found.high, found.replicates
