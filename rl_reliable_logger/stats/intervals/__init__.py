"""Intervals, in one package: every interval question of the package is answered here.

* :mod:`.methods`: the registry of interval methods and their words (:class:`~.methods.IntervalMethod`,
  :func:`~.methods.register`, the rule of each table, ``rule_words`` for ``--help``); imports no numpy;
* :mod:`.bounds`: every bound formula (percentile, basic, BC/BCa with the acceleration, expanded percentile and its
  levels, normal, studentized, Student-t, order statistic and its MOVER difference, Wilson, the Mann-Whitney
  proportions' normal interval with its floor for separated tasks) and the sides an interval bounds (``tail=``);
* :mod:`.request`: the :class:`~.request.ResamplingRequest` an analysis builds once from its options;
* :mod:`.result`: what an interval is computed from (:class:`~.result.Sample`) and gives
  (:class:`~.result.IntervalResult`, with ``scipy.stats.bootstrap``'s names);
* :mod:`.estimate`: :func:`~.estimate.estimate`, :func:`~.estimate.estimate_stacked` and
  :func:`~.estimate.interval`.

The names below are the package's API (``from rl_reliable_logger.stats import intervals; intervals.estimate(...)``);
the resampling engine is :mod:`..bootstrap`. Importing this package loads no numpy.
"""

from __future__ import annotations

from typing import Any

from . import methods as _methods
from .bounds import (
    TAILS,
    basic_bounds,
    bias_corrected_bounds,
    diag_quantile,
    expanded_bounds,
    median_order_statistic_interval,
    normal_bounds,
    normal_interval,
    order_statistic_median,
    percentile_bounds,
    quantile_pair,
    student_t_runs,
    tie_tolerance,
)
from .estimate import (
    clip_note,
    clip_to_range,
    estimate,
    estimate_stacked,
    fallback_note,
    interval,
    studentized_difference,
)
from .methods import (
    JORDAN_METHODS,
    MEDIAN_DIFFERENCES,
    MEDIAN_INTERVALS,
    ORDER_STATISTIC_RUNS,
    OTHER_TABLES,
    REGISTRY,
    STATISTIC_KINDS,
    STATISTIC_TABLES,
    STATISTIC_WORDS,
    SUCCESS_METHODS,
    TABLE_WORDS,
    TABLES,
    IntervalMethod,
    describe,
    get,
    register,
    requested,
    rule_words,
    table_rule,
    unregister,
)
from .request import REPLICATE_OPTIONS, ResamplingRequest
from .result import Clip, ConfidenceInterval, Fallback, IntervalResult, Sample

#: The requestable methods' names, in registration order: read from :mod:`.methods` when asked, so a method
#: registered later is in it.
METHODS: tuple[str, ...]


def __getattr__(name: str) -> Any:
    if name == "METHODS":
        return _methods.METHODS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JORDAN_METHODS",
    "MEDIAN_DIFFERENCES",
    "MEDIAN_INTERVALS",
    "METHODS",
    "ORDER_STATISTIC_RUNS",
    "OTHER_TABLES",
    "REGISTRY",
    "REPLICATE_OPTIONS",
    "STATISTIC_KINDS",
    "STATISTIC_TABLES",
    "STATISTIC_WORDS",
    "SUCCESS_METHODS",
    "TABLES",
    "TABLE_WORDS",
    "TAILS",
    "Clip",
    "ConfidenceInterval",
    "IntervalMethod",
    "Fallback",
    "IntervalResult",
    "ResamplingRequest",
    "Sample",
    "basic_bounds",
    "bias_corrected_bounds",
    "clip_note",
    "clip_to_range",
    "describe",
    "diag_quantile",
    "estimate",
    "estimate_stacked",
    "expanded_bounds",
    "fallback_note",
    "get",
    "interval",
    "median_order_statistic_interval",
    "normal_bounds",
    "normal_interval",
    "order_statistic_median",
    "percentile_bounds",
    "quantile_pair",
    "register",
    "requested",
    "rule_words",
    "student_t_runs",
    "studentized_difference",
    "table_rule",
    "tie_tolerance",
    "unregister",
]
