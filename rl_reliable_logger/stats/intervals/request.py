"""The one request for resampling and intervals of an analysis (:class:`ResamplingRequest`), built once from its
options and passed whole to every table."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...memory import DEFAULT_CHUNK_BYTES
from .methods import (
    MEDIAN_DIFFERENCES,
    MEDIAN_INTERVALS,
    ORDER_STATISTIC_RUNS,
    STATISTIC_TABLES,
    IntervalMethod,
    get,
    requested,
)

#: The replicate option of each table that has intervals: the count its record gives (``tuning``: the resolved
#: count, ``min(reps, 5000)`` unless ``tuning_reps`` is given).
REPLICATE_OPTIONS = {
    "aggregates": "reps",
    "differences": "reps",
    "improvement": "improvement_reps",
    "profiles": "profile_reps",
    "gap_curve": "profile_reps",
    "per_task": "profile_reps",
    "curves": "curve_reps",
    "comparisons": "improvement_reps",
    "tuning": "resolved_tuning_reps",
    "jordan": "jordan_reps",
}


@dataclass(frozen=True)
class ResamplingRequest:
    """Every choice about resampling and intervals of one analysis, built once from its options and passed whole
    to every table: the requested interval ``method`` (from which each table and statistic gets its own, by the
    registry's rule), the confidence ``level``, the ``replicates`` of each table (``"*"``: any other table), the
    ``seed`` every stream is spawned from, task resampling, the median's interval (``median_interval``: ``method``,
    a registered method the median gets instead, or ``auto``, which :meth:`for_runs` resolves to one of them from the
    runs per task), where independent work runs and the memory of one chunk of replicates. It answers every question about intervals (:meth:`table_method`,
    :meth:`statistic_method`, :meth:`record`), and :func:`.estimate.estimate` computes them.

    Example:
        >>> request = ResamplingRequest("bootstrap-t", 0.95, {"aggregates": 2000})
        >>> request.table_method("per_task").name, request.statistic_method("aggregates", "median").name
        ('student-t', 'normal')
        >>> request.record("aggregates")
        {'method': 'bootstrap-t', 'level': 0.95, 'replicates': 2000}
    """

    method: str = "percentile"
    level: float = 0.95
    replicates: Mapping[str, int] = field(default_factory=dict)
    seed: Any = 0
    task_bootstrap: bool = False
    median_interval: str = "auto"
    executor: Any = None
    chunk_bytes: int = DEFAULT_CHUNK_BYTES

    def __post_init__(self) -> None:
        requested(self.method)
        if self.median_interval not in MEDIAN_INTERVALS:
            raise ValueError(
                f"median_interval must be one of {', '.join(MEDIAN_INTERVALS)}, got {self.median_interval!r}"
            )
        if not 0 < self.level < 1:
            raise ValueError(f"the level must be in (0, 1), got {self.level}")

    def replace(self, **changes: Any) -> ResamplingRequest:
        """A copy with some choices changed (e.g. another ``seed`` for a table of its own)."""
        return dataclasses.replace(self, **changes)

    def reps(self, table: str) -> int:
        """The replicate count of ``table``."""
        found = self.replicates.get(table, self.replicates.get("*"))
        if found is None:
            raise KeyError(f"the request has no replicate count for {table!r}")
        return int(found)

    def table_method(self, table: str) -> IntervalMethod:
        """The method ``table`` gets (the registry's rule for the requested method)."""
        return requested(self.method).for_table(table)

    def for_runs(self, fewest: int) -> ResamplingRequest:
        """This request with ``median_interval=auto`` resolved for data whose fewest runs of a task are ``fewest``:
        the requested method's ``few_runs_median`` (``bootstrap-t``: ``order-statistic``) at
        :data:`.methods.ORDER_STATISTIC_RUNS` or fewer, else ``method`` (as it is otherwise).

        Example:
            >>> request = ResamplingRequest("bootstrap-t")
            >>> request.for_runs(3).median_interval, request.for_runs(20).median_interval
            ('order-statistic', 'method')
            >>> ResamplingRequest("percentile").for_runs(3).median_interval  # rliable's, whatever the runs
            'method'
        """
        if self.median_interval != "auto":
            return self
        few = requested(self.method).few_runs_median
        return self.replace(median_interval=few if few is not None and fewest <= ORDER_STATISTIC_RUNS else "method")

    def own_median(self, table: str) -> str | None:
        """The method the median gets in ``table`` by ``median_interval`` (the aggregates: it; the differences: the
        MOVER over it), or None where the requested method's rule gives it (``method``; ``auto`` unresolved)."""
        if self.median_interval in ("method", "auto") or table not in STATISTIC_TABLES:
            return None
        return self.median_interval if table == "aggregates" else MEDIAN_DIFFERENCES[self.median_interval]

    def statistic_method(self, table: str, kind: str) -> IntervalMethod:
        """The method a statistic of kind ``kind`` (:data:`STATISTIC_KINDS`) gets in ``table``: the registry's rule,
        or for the median the ``median_interval`` one (:meth:`own_median`)."""
        own = self.own_median(table) if kind == "median" else None
        return get(own) if own is not None else requested(self.method).for_statistic(table, kind)

    def needs_standard_errors(self, table: str, kinds: Sequence[str]) -> bool:
        """Whether a statistic of ``table`` gets a studentized interval: its replicates must come with the
        replicates of its standard error (:attr:`.result.Sample.standard_errors`)."""
        return any(self.statistic_method(table, kind).studentized for kind in kinds)

    def widens_level(self, table: str) -> bool:
        """Whether ``table``'s method takes its quantiles at a widened (expanded) level: a U-statistic's table
        (P(X > Y)) then records whose level it is."""
        return self.table_method(table).needs_tail

    def needs_repeated_runs(self) -> bool:
        """Whether the method needs a task of two or more runs in every algorithm (the jackknife of ``bca``)."""
        return requested(self.method).needs_jackknife

    def record(self, table: str, kinds: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
        """What was computed for ``table``, for ``provenance["intervals"]``: method, level, replicate count (None
        where the method uses none) and, on the aggregate tables where a statistic gets a method of its own
        (``kinds``: each statistic's name and kind), ``statistics``, the method of each; ``extra`` is added."""
        spec = self.table_method(table)
        out: dict[str, Any] = {
            "method": spec.name,
            "level": self.level,
            "replicates": self.reps(table) if spec.replicates else None,
        }
        if kinds is not None and table in STATISTIC_TABLES and (spec.statistics or self.own_median(table)):
            out["statistics"] = {name: self.statistic_method(table, kind).name for name, kind in kinds.items()}
        return {**out, **extra}
