"""What an interval is computed from besides the replicates (:class:`Sample`) and what it gives
(:class:`IntervalResult`, modelled on ``scipy.stats.bootstrap``'s result)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class ConfidenceInterval(NamedTuple):
    """``(low, high)``, as scipy's ``ConfidenceInterval``."""

    low: Any
    high: Any


@dataclass(frozen=True)
class Fallback:
    """A statistic whose studentized interval fell back to its method's bounds: its index on the last axis, and the
    share of its replicates whose standard error is near 0 (:func:`.bounds.degenerate_share`; 1 where the estimate's
    own is), what made the studentized replicates degenerate."""

    statistic: int
    share: float


@dataclass(frozen=True)
class Clip:
    """A statistic whose interval had bounds outside its hard range (:attr:`Sample.hard_range`, the values its
    estimand can take whatever the data), moved to the range's edge: its index on the last axis and how many of its
    bounds were moved (over the leading axes, if any)."""

    statistic: int
    moved: int


@dataclass(frozen=True)
class IntervalResult:
    """The intervals of some statistics (modelled on ``scipy.stats.bootstrap``'s result, with its names):
    ``confidence_interval`` (``low``, ``high``, each the statistics' shape), the method each statistic's interval
    was computed by (``methods``, one per statistic of the last axis), one sentence per interval that fell back
    from its method (``notes``; which statistics and why: ``fallbacks``), the ``bootstrap_distribution`` the intervals were computed from (the replicates,
    ``(B, ...)``: on the first axis, where scipy puts them last; None when no replicates were kept, as for a method
    computed from the runs or :func:`.estimate.estimate_stacked`, which bounds its memory) and their
    ``standard_error`` (the replicates' standard deviation, ``ddof=1`` as scipy's); ``clipped``: the statistics
    whose bounds fell outside their hard range (:attr:`Sample.hard_range`) and were moved to its edge
    (:class:`Clip`; :func:`.estimate.clip_note` says it).

    Example:
        >>> import numpy as np
        >>> result = IntervalResult(ConfidenceInterval(0.0, 1.0), bootstrap_distribution=np.array([[1.0], [3.0]]))
        >>> result.standard_error.tolist(), IntervalResult(ConfidenceInterval(0.0, 1.0)).standard_error
        ([1.4142135623730951], None)
    """

    confidence_interval: ConfidenceInterval
    methods: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    bootstrap_distribution: Any = field(default=None, repr=False, compare=False)
    fallbacks: tuple[Fallback, ...] = ()
    clipped: tuple[Clip, ...] = ()

    @property
    def low(self) -> Any:
        return self.confidence_interval.low

    @property
    def high(self) -> Any:
        return self.confidence_interval.high

    @property
    def standard_error(self) -> Any:
        """The standard deviation of the replicates (``ddof=1``), one per statistic; None without replicates."""
        import numpy as np

        if self.bootstrap_distribution is None:
            return None
        return np.std(self.bootstrap_distribution, axis=0, ddof=1)


@dataclass(frozen=True)
class Sample:
    """What the replicates were drawn from, as far as an interval may need it besides them; each is computed only
    where the method asks for it.

    Attributes:
        level: ``level(ci)``: the expanded tail probability at ``ci`` (scalar, or one per statistic), for a method
            that ``needs_tail`` (:func:`.bounds.expanded_level` of the cells, ``task_levels``, ...).
        jackknife: ``jackknife()``: the leave-one-run-out values ``(J, ...)`` and their strata, for the BCa
            acceleration.
        runs: the cells, for a method computed from the runs themselves (``from_runs``).
        standard_errors: ``standard_errors(kind)``: the replicates ``(B, 2)`` and estimate ``(2,)`` of (statistic,
            standard error) of the statistic of kind ``kind`` (the mean, the IQM, the optimality gap), for its
            studentized interval.
        name: what a fallback sentence is about (``"A - B"``), or None.
        hard_range: ``(low, high)``: the values each statistic's estimand can take whatever the data (scalars, or
            one per statistic of the last axis; :func:`..metrics.hard_ranges`), or None (unbounded). A bound outside
            it (a bootstrap-t or expanded percentile interval can extrapolate) is moved to its edge and recorded
            (:attr:`IntervalResult.clipped`). Only a range the estimand cannot leave: never the data's own.
    """

    level: Callable[[float], Any] | None = None
    jackknife: Callable[[], tuple[Any, Any]] | None = None
    runs: Any = None
    standard_errors: Callable[[str], tuple[Any, Any]] | None = None
    name: str | None = None
    hard_range: tuple[Any, Any] | None = None
