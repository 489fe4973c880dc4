"""Aggregate metrics of one algorithm with intervals: the replicates, and their intervals by the request's rule.

One call draws what every interval method needs: the bootstrap replicates of the metrics and, where a statistic
gets a studentized interval (the mean under ``bootstrap-t``), the replicates of the mean's standard error drawn
with the same replicates. Which interval each statistic gets, and what it needs besides the replicates (the
expanded level of the cells, the leave-one-run-out values for ``bca``, the runs for the order-statistic median),
is :func:`..intervals.estimate`'s to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from . import bootstrap as bs
from . import intervals
from . import metrics as mt
from .intervals import fallback_note as fallback_note  # re-exported: the sentence of a fallback
from .intervals import median_order_statistic_interval as median_order_statistic_interval
from .intervals import order_statistic_median as order_statistic_median


class AlgorithmAggregates(NamedTuple):
    """The aggregate metrics of one algorithm: estimates ``point`` (n,), their intervals ``result``, the
    replicates ``replicates`` (reps, n) and, where the mean is studentized, ``standard_errors``: the replicates
    (``"dist"``, (reps, 2)) and estimate (``"point"``) of (mean, standard error), for the studentized differences
    (:func:`..intervals.studentized_difference`)."""

    point: np.ndarray
    result: intervals.IntervalResult
    replicates: np.ndarray
    standard_errors: dict[str, np.ndarray] | None = None

    @property
    def low(self) -> np.ndarray:
        return self.result.low

    @property
    def high(self) -> np.ndarray:
        return self.result.high


def aggregate_intervals(
    cells: bs.Cells,
    metric_objs: Sequence[mt.Metric],
    request: intervals.ResamplingRequest,
    rng: np.random.Generator,
    *,
    progress: Callable[[int], None] | None = None,
) -> AlgorithmAggregates:
    """The metrics' estimates, intervals (each by the method ``request`` gives it in the ``aggregates`` table) and
    ``request.reps("aggregates")`` replicates drawn from ``rng`` (task draws: ``request.task_bootstrap``).

    Example:
        >>> cells = bs.Cells.from_list([np.array([1.0, 2.0, 4.0]), np.array([3.0, 5.0, 6.0])])
        >>> request = intervals.ResamplingRequest("percentile", 0.9, {"aggregates": 500})
        >>> out = aggregate_intervals(cells, [mt.Metric("mean", mt.mean)], request, np.random.default_rng(0))
        >>> float(out.point[0]), out.result.methods, out.replicates.shape
        (3.5, ('percentile',), (500, 1))
    """
    kinds = [statistic_kind(m) for m in metric_objs]
    stacked = lambda r: np.stack([m(r) for m in metric_objs], axis=1)
    point = stacked(bs.original(cells))[0]
    studentized = request.needs_standard_errors("aggregates", kinds)
    # studentized: the mean's standard error from the same replicates
    statistic = (lambda r: np.concatenate([stacked(r), mt.mean_se(r)], axis=1)) if studentized else stacked
    dist = bs.replicates(
        cells,
        statistic,
        request.reps("aggregates"),
        rng,
        task_bootstrap=request.task_bootstrap,
        chunk_bytes=request.chunk_bytes,
        progress=progress,
    )
    se = None
    if studentized:
        dist, se = dist[:, :-2], {"dist": dist[:, -2:], "point": mt.mean_se(bs.original(cells))[0]}
    sample = intervals.Sample(
        level=lambda ci: bs.expanded_level(cells, ci),
        jackknife=lambda: (bs.jackknife(cells, stacked), bs.jackknife_tasks(cells)),
        runs=cells,
        standard_errors=None if se is None else (lambda: (se["dist"], se["point"])),
    )
    labels = [f"the {m.name}" for m in metric_objs]
    result = intervals.estimate(request, "aggregates", dist, point, sample, kinds=kinds, labels=labels)
    return AlgorithmAggregates(point, result, dist, se)


def statistic_kind(metric: mt.Metric) -> str:
    """The kind of statistic an interval rule names (:data:`.intervals.STATISTIC_KINDS`)."""
    if metric.fn is mt.mean:
        return "mean"
    if metric.fn is mt.median:
        return "median"
    return "*"


def studentized_difference(
    x: dict[str, np.ndarray], y: dict[str, np.ndarray], ci: float = 0.95
) -> tuple[float, float] | None:
    """Bootstrap-t interval for mean(X) - mean(Y) from each algorithm's ``standard_errors`` of
    :func:`aggregate_intervals`, on their common replicates; None where degenerate."""
    return bs.studentized_mean_interval(*intervals.studentized_difference(x, y), ci)
