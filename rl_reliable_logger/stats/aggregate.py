"""Aggregate metrics of one algorithm with intervals: the replicates, and their intervals by the request's rule.

One call draws what every interval method needs: the bootstrap replicates of the metrics and, where a statistic
gets a studentized interval (the mean, the IQM and the optimality gap under ``bootstrap-t``), the replicates of its
standard error drawn with the same replicates, all in one pass (:func:`..metrics.standard_errors`). Which interval each statistic gets, and what it needs besides the replicates (the
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
    # studentized statistics: their standard errors from the same replicates, all in one pass
    errors = studentized_kinds(request, "aggregates", metric_objs)
    error_kinds = [kind for _, kind in errors.values()]
    with_se = lambda r: np.concatenate([stacked(r), mt.standard_errors(r, error_kinds)], axis=1)
    original = bs.original(cells)
    point = (with_se if errors else stacked)(original)[0]
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
    se = {
        kind: {"dist": dist[:, [column, n + i]], "point": point[[column, n + i]]}
        for i, (kind, (column, _)) in enumerate(errors.items())
    }
    dist, point = dist[:, :n], point[:n]
    sample = intervals.Sample(
        level=lambda ci: expanded_level(cells, ci),
        jackknife=lambda: (bs.jackknife(cells, stacked), bs.jackknife_tasks(cells)),
        runs=cells,
        standard_errors=(lambda kind: (se[kind]["dist"], se[kind]["point"])) if se else None,
        hard_range=mt.hard_ranges(metric_objs),
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


def error_kind(metric: mt.Metric) -> mt.ErrorKind | None:
    """The statistic whose standard error :func:`..metrics.standard_errors` gives for ``metric``, for the kinds that
    can be studentized (the mean, the IQM, the optimality gap at its own γ); None for the others."""
    kind = statistic_kind(metric)
    if kind == "mean":
        return ("mean", 0.0)
    if kind == "iqm":
        return ("trimmed_mean", 0.25)
    if kind == "optimality_gap":
        return ("optimality_gap", float(metric.fn.gamma))  # type: ignore[attr-defined]
    return None


def standard_error(metric: mt.Metric) -> Callable[[bs.Resample], np.ndarray] | None:
    """``resample -> (R, 2)`` of (statistic, standard error) for the kinds that can be studentized (the mean, the
    IQM, the optimality gap at its own γ; :func:`error_kind`); None for the others."""
    found = error_kind(metric)
    if found is None:
        return None
    return lambda r: np.stack([metric(r), mt.standard_errors(r, [found])[:, 0]], axis=1)


def studentized_kinds(
    request: intervals.ResamplingRequest, table: str, metric_objs: Sequence[mt.Metric]
) -> dict[str, tuple[int, mt.ErrorKind]]:
    """The kinds of the statistics in ``metric_objs`` whose interval in ``table`` is studentized, each with the
    position of its metric (the first of that kind) and its standard error's kind (:func:`error_kind`)."""
    out: dict[str, tuple[int, mt.ErrorKind]] = {}
    for j, m in enumerate(metric_objs):
        kind, found = statistic_kind(m), error_kind(m)
        if found is not None and kind not in out and request.needs_standard_errors(table, [kind]):
            out[kind] = (j, found)
    return out


def studentized_difference(
    x: dict[str, np.ndarray], y: dict[str, np.ndarray], ci: float = 0.95
) -> tuple[float, float] | None:
    """Bootstrap-t interval for stat(X) - stat(Y) from each algorithm's ``standard_errors[kind]`` of
    :func:`aggregate_intervals`, on their common replicates; None where degenerate."""
    return studentized_interval(*intervals.studentized_difference(x, y), ci)
