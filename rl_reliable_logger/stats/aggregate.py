"""Aggregate metrics of one algorithm with intervals: the replicates, and their intervals by the request's rule.

One call draws what every interval method needs: the bootstrap replicates of the metrics and, where a statistic
gets a studentized interval (the mean, the IQM and the optimality gap under ``bootstrap-t``), the replicates of its
standard error drawn with the same replicates (:func:`standard_error`). Which interval each statistic gets, and what it needs besides the replicates (the
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
from .intervals.bounds import expanded_level, studentized_interval


class AlgorithmAggregates(NamedTuple):
    """The aggregate metrics of one algorithm: estimates ``point`` (n,), their intervals ``result``, the
    replicates ``replicates`` (reps, n) and, where statistics are studentized, ``standard_errors``: for each
    studentized kind (``"mean"``, ``"iqm"``, ``"optimality_gap"``) the replicates (``"dist"``, (reps, 2)) and
    estimate (``"point"``) of (statistic, standard error), for the studentized differences
    (:func:`..intervals.studentized_difference`)."""

    point: np.ndarray
    result: intervals.IntervalResult
    replicates: np.ndarray
    standard_errors: dict[str, dict[str, np.ndarray]] | None = None

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
    # studentized statistics: their standard errors from the same replicates
    errors = studentized_kinds(request, "aggregates", metric_objs)
    with_se = lambda r: np.concatenate([stacked(r), *(f(r) for f in errors.values())], axis=1)
    dist = bs.replicates(
        cells,
        with_se if errors else stacked,
        request.reps("aggregates"),
        rng,
        task_bootstrap=request.task_bootstrap,
        chunk_bytes=request.chunk_bytes,
        progress=progress,
    )
    n = len(metric_objs)
    dist, extra = dist[:, :n], dist[:, n:]
    original = bs.original(cells)
    se = {k: {"dist": extra[:, 2 * i : 2 * i + 2], "point": f(original)[0]} for i, (k, f) in enumerate(errors.items())}
    sample = intervals.Sample(
        level=lambda ci: expanded_level(cells, ci),
        jackknife=lambda: (bs.jackknife(cells, stacked), bs.jackknife_tasks(cells)),
        runs=cells,
        standard_errors=(lambda kind: (se[kind]["dist"], se[kind]["point"])) if se else None,
    )
    labels = [f"the {m.name}" for m in metric_objs]
    result = intervals.estimate(request, "aggregates", dist, point, sample, kinds=kinds, labels=labels)
    return AlgorithmAggregates(point, result, dist, se or None)


def statistic_kind(metric: mt.Metric) -> str:
    """The kind of statistic an interval rule names (:data:`.intervals.STATISTIC_KINDS`)."""
    if metric.fn is mt.mean:
        return "mean"
    if metric.fn is mt.median:
        return "median"
    if getattr(metric.fn, "trim_proportion", None) == 0.25:
        return "iqm"
    if getattr(metric.fn, "__name__", None) == "optimality_gap" and hasattr(metric.fn, "gamma"):
        return "optimality_gap"
    return "*"


def standard_error(metric: mt.Metric) -> Callable[[bs.Resample], np.ndarray] | None:
    """``resample -> (R, 2)`` of (statistic, standard error) for the kinds that can be studentized (the mean, the
    IQM, the optimality gap at its own γ); None for the others."""
    kind = statistic_kind(metric)
    if kind == "mean":
        return mt.mean_se
    if kind == "iqm":
        return mt.trimmed_mean_se(0.25)
    if kind == "optimality_gap":
        return mt.optimality_gap_se(float(metric.fn.gamma))  # type: ignore[attr-defined]
    return None


def studentized_kinds(
    request: intervals.ResamplingRequest, table: str, metric_objs: Sequence[mt.Metric]
) -> dict[str, Callable[[bs.Resample], np.ndarray]]:
    """The kinds of the statistics in ``metric_objs`` whose interval in ``table`` is studentized (the first metric
    of each kind), with their standard errors (:func:`standard_error`)."""
    out: dict[str, Callable[[bs.Resample], np.ndarray]] = {}
    for m in metric_objs:
        kind, se = statistic_kind(m), standard_error(m)
        if se is not None and kind not in out and request.needs_standard_errors(table, [kind]):
            out[kind] = se
    return out


def studentized_difference(
    x: dict[str, np.ndarray], y: dict[str, np.ndarray], ci: float = 0.95
) -> tuple[float, float] | None:
    """Bootstrap-t interval for stat(X) - stat(Y) from each algorithm's ``standard_errors[kind]`` of
    :func:`aggregate_intervals`, on their common replicates; None where degenerate."""
    return studentized_interval(*intervals.studentized_difference(x, y), ci)
