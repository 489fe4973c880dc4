"""Aggregate metrics of one algorithm with intervals: replicates, and the interval method's extras.

One call does what every interval method needs: the bootstrap replicates of the metrics, the leave-one-run-out
values and strata for ``bca``, the cells for ``expanded``, and, for ``bootstrap-t``, the replicates of the mean's
the IQM's and the optimality gap's standard errors drawn with the same replicates (:func:`standard_error`; these get
the studentized interval, the median the normal interval with the bootstrap standard deviation at the expanded
level, :func:`..bootstrap.normal_interval`, every other metric the expanded one). Where the studentized
distribution is degenerate (:func:`..bootstrap.studentized_interval` returns None) the statistic keeps the
expanded interval and a note in ``notes`` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import bootstrap as bs
from . import intervals
from . import metrics as mt


def aggregate_intervals(
    cells: bs.Cells,
    metric_objs: Sequence[mt.Metric],
    reps: int,
    rng: np.random.Generator,
    *,
    ci: float = 0.95,
    method: str = "percentile",
    task_bootstrap: bs.TaskBootstrap = False,
    chunk_bytes: int = bs.DEFAULT_CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
    notes: list[str] | None = None,
    se_replicates: dict[str, dict[str, np.ndarray]] | None = None,
    median_interval: str = "method",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(point, low, high, replicates)`` of the metrics: ``(n,)`` three times and ``(reps, n)``.

    ``median_interval``: ``order-statistic`` gives the median its order-statistic interval
    (:func:`median_order_statistic_interval`) instead of the method's (:data:`.intervals.MEDIAN_INTERVALS`).

    ``notes``: receives one sentence per metric whose interval is not the requested method's (a fallback).
    ``se_replicates``: with ``bootstrap-t``, receives for each studentized kind of statistic (``"mean"``, ``"iqm"``)
    the replicates (``"dist"``, (reps, 2)) and estimate (``"point"``) of (statistic, standard error), for the
    studentized differences (:func:`studentized_difference`)."""
    spec = intervals.requested(method)
    if median_interval not in intervals.MEDIAN_INTERVALS:
        raise ValueError(
            f"median_interval must be one of {', '.join(intervals.MEDIAN_INTERVALS)}, got {median_interval!r}"
        )
    stacked = lambda r: np.stack([m(r) for m in metric_objs], axis=1)
    point = stacked(bs.original(cells))[0]
    # studentized statistics: their standard errors from the same replicates
    kinds = studentized_kinds(spec, "aggregates", metric_objs) if spec.studentized else {}
    with_se = lambda r: np.concatenate([stacked(r), *(se(r) for se in kinds.values())], axis=1)
    dist = bs.replicates(
        cells, with_se if kinds else stacked, reps, rng, task_bootstrap=task_bootstrap, chunk_bytes=chunk_bytes,
        progress=progress,
    )  # fmt: skip
    jack = bs.jackknife(cells, stacked) if spec.needs_jackknife else None
    strata = bs.jackknife_tasks(cells) if spec.needs_jackknife else None
    n = len(metric_objs)
    dist, dist_se = dist[:, :n], dist[:, n:]
    low, high = bs.interval(dist, point, ci=ci, method=method, jackknife=jack, strata=strata, cells=cells)
    if spec.studentized:
        original = bs.original(cells)
        ses = {
            k: {"dist": dist_se[:, 2 * i : 2 * i + 2], "point": se(original)[0]}
            for i, (k, se) in enumerate(kinds.items())
        }
        if se_replicates is not None:
            se_replicates.update(ses)
        _by_statistic(spec, metric_objs, cells, ci, (dist, point, low, high), ses, notes)
    if median_interval == "order-statistic":
        for j, m in enumerate(metric_objs):
            if statistic_kind(m) == "median":
                low[j], high[j] = median_order_statistic_interval(cells, ci)
    return point, low, high, dist


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


def studentized_kinds(
    spec: intervals.IntervalMethod, table: str, metric_objs: Sequence[mt.Metric]
) -> dict[str, Callable[[bs.Resample], np.ndarray]]:
    """The kinds of the statistics in ``metric_objs`` whose interval in ``table`` is studentized (the first metric
    of each kind), with their standard errors (:func:`standard_error`)."""
    out: dict[str, Callable[[bs.Resample], np.ndarray]] = {}
    for m in metric_objs:
        kind, se = statistic_kind(m), standard_error(m)
        if se is not None and kind not in out and spec.for_statistic(table, kind).studentized:
            out[kind] = se
    return out


def _by_statistic(spec, metric_objs, cells, ci, replicates, se, notes) -> None:
    """Overwrite (in ``low``/``high``) the intervals of the statistics whose rule differs from the table's
    method: the studentized mean, the median's normal interval."""
    dist, point, low, high = replicates
    table = spec.for_table("aggregates")
    for j, m in enumerate(metric_objs):
        kind = statistic_kind(m)
        own = spec.for_statistic("aggregates", kind)
        if own.studentized:
            found = bs.studentized_interval(se[kind]["dist"], se[kind]["point"], ci)
            if found is None:
                if notes is not None:
                    notes.append(fallback_note(f"the {m.name}"))
            else:
                low[j], high[j] = found
        elif own.bounds is not table.bounds and own.bounds is not None:  # not the table's interval
            tail = bs.expanded_level(cells, ci) if own.needs_tail else None
            low[j], high[j] = own.bounds(dist[:, j], point[j], ci, tail, None)


def order_statistic_median(low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    """``[median of the per-task lower bounds, median of the upper bounds]``: the median over tasks does not
    decrease when any task's mean grows, so this interval covers the median of the true task means whenever every
    per-task interval covers its task's mean (conservative: wide, and it needs no resampling)."""
    return float(np.median(np.asarray(low, dtype=float))), float(np.median(np.asarray(high, dtype=float)))


def median_order_statistic_interval(cells: bs.Cells, ci: float = 0.95) -> tuple[float, float]:
    """The order-statistic interval of the median over tasks from each task's Student-t interval at level ``ci``
    (:func:`..bootstrap.student_t_task_intervals`; a task of one run contributes its score twice)."""
    return order_statistic_median(*bs.student_t_task_intervals(cells, ci))


def fallback_note(what: str) -> str:
    """The sentence that says a bootstrap-t interval fell back to the expanded one."""
    return (
        f"bootstrap-t: {what}'s studentized replicates are degenerate (too few distinct runs per task), so its "
        "interval is the expanded percentile one"
    )


def studentized_difference(
    x: dict[str, np.ndarray], y: dict[str, np.ndarray], ci: float = 0.95, n: int | None = None
) -> tuple[float, float] | None:
    """Bootstrap-t interval for stat(X) - stat(Y) from each algorithm's ``se_replicates[kind]`` of
    :func:`aggregate_intervals`: ``t* = (d* - d) / sqrt(se_x*² + se_y*²)`` on the first ``n`` (common) replicates;
    None where degenerate."""
    n = min(len(x["dist"]), len(y["dist"])) if n is None else n
    dx, dy = x["dist"][:n], y["dist"][:n]
    dist = np.column_stack([dx[:, 0] - dy[:, 0], np.hypot(dx[:, 1], dy[:, 1])])
    point = np.array([x["point"][0] - y["point"][0], np.hypot(x["point"][1], y["point"][1])])
    return bs.studentized_interval(dist, point, ci)
