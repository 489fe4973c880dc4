"""Interval methods, each declared once: its name, its bounds, the method each table gets, and its words.

An :class:`IntervalMethod` is everything the package knows about one method. :data:`REGISTRY` holds them;
nothing else compares method names. ``method=`` accepts the *requestable* ones (:data:`METHODS`); the others
(``normal``, ``student-t``) are what a requested method gives some tables or statistics (:meth:`IntervalMethod.for_table`,
:meth:`IntervalMethod.for_statistic`): under ``bootstrap-t`` only the mean is studentized, the median gets a normal
interval, the other statistics the expanded percentile one, and the per-task means a Student-t interval.

The bounds of a method are one function ``bounds(dist, point, ci, tail, accel) -> (low, high)`` of the bootstrap
replicates ``dist`` (B, ...) and the estimate ``point`` (...); ``tail`` is the expanded tail probability (scalar
or one per statistic) for methods with ``needs_tail``, ``accel`` the acceleration for ``needs_jackknife``.
:func:`interval` and :func:`estimate` compute those inputs and call it. A method computed from something else than
replicates (``student-t``: the runs themselves; the studentized mean: the replicates' standard errors) says so by
its flags, and its caller computes it.

Adding a method is one :func:`register` call (``docs/architecture.md`` has a worked example). The rule of a
requested method, table by table::

    >>> rule = table_rule("bootstrap-t")
    >>> rule["aggregates"], rule["per_task"], rule["improvement"], rule["curves"]
    ('bootstrap-t', 'student-t', 'expanded', 'percentile')
    >>> get("bootstrap-t").for_statistic("aggregates", "median").name
    'normal'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ..memory import DEFAULT_CHUNK_BYTES

if TYPE_CHECKING:  # numpy is imported by the bounds that compute: ``rl-reliable --help`` reads these words, no numpy
    import numpy as np

#: The tables of a Report that carry intervals, in the order descriptions list them.
TABLES = ("aggregates", "differences", "improvement", "profiles", "gap_curve", "per_task", "curves")
#: The other tables with intervals, after :data:`TABLES`: their methods are their own (the tuning view's follow the
#: aggregates' rule, the comparisons' are percentile, the Jordan tables' are Jordan et al.'s).
OTHER_TABLES = (
    "tuning",
    "comparisons",
    "jordan",
    "jordan_quantiles",
    "success_rates",
    "success_aggregates",
    "success_differences",
)
#: Tables of aggregate statistics: there a method may give each statistic its own interval (``statistics``).
STATISTIC_TABLES = ("aggregates", "differences")
#: Kinds of statistic a rule can name (``analysis`` maps metrics to them); ``*`` is every other statistic.
STATISTIC_KINDS = ("mean", "median", "*")
#: What each table holds, in the words of the sentences that describe its intervals.
TABLE_WORDS = {
    "aggregates": "the aggregate metrics",
    "differences": "the differences between algorithms' aggregate metrics",
    "improvement": "the probability of improvement",
    "profiles": "the performance profiles",
    "gap_curve": "the optimality gap as a function of its threshold",
    "per_task": "the per-task means",
    "curves": "the sample-efficiency curves",
    "tuning": "the tuning view's aggregate metric",
    "comparisons": "the all-pairs comparisons",
    "jordan": "Jordan et al.'s aggregate (simultaneous over the algorithms)",
    "jordan_quantiles": "the per-task score distributions (ECDF bands)",
    "success_rates": "the per-task success rates",
    "success_aggregates": "the success rates over tasks",
    "success_differences": "the differences of success rates",
}
#: Each kind of :data:`STATISTIC_KINDS` in words.
STATISTIC_WORDS = {"mean": "the mean", "median": "the median", "*": "the other statistics (IQM, optimality gap, ...)"}

if TYPE_CHECKING:
    Tail = float | np.ndarray | None
    Bounds = Callable[[np.ndarray, np.ndarray, float, Tail, np.ndarray | None], tuple[np.ndarray, np.ndarray]]
    FromRuns = Callable[[Any, float], tuple[Any, Any]]


@dataclass(frozen=True)
class IntervalMethod:
    """One interval method.

    Attributes:
        name: what ``method=`` takes and provenance records.
        phrase: the method in words, without "interval" (``"expanded percentile"``).
        bounds: ``(dist, point, ci, tail, accel) -> (low, high)``; None where the method is not computed from
            replicates alone (``student-t``).
        bootstrap: a bootstrap interval (False: ``student-t``, computed from the runs).
        replicates: computed from bootstrap replicates (their count is part of its description).
        requestable: can be asked for with ``method=`` (False: only a table or statistic rule gives it).
        needs_tail: needs the expanded tail probability (from the cells the statistic is made of).
        needs_jackknife: needs the leave-one-run-out values (the acceleration); tables without them get ``tables``.
        studentized: the mean's interval studentizes with the replicates' standard errors.
        tables: the method a table gets instead of this one (table name -> method name); others get this one.
        statistics: on :data:`STATISTIC_TABLES`, the method each statistic kind gets (``*``: the others).
        from_runs: ``(cells, ci) -> (low, high)`` for a method computed from the runs themselves, not from
            replicates (``student-t``: each task's mean; ``order-statistic``: the median over tasks).
    """

    name: str
    phrase: str
    bounds: Bounds | None
    bootstrap: bool = True
    replicates: bool = True
    requestable: bool = True
    needs_tail: bool = False
    needs_jackknife: bool = False
    studentized: bool = False
    tables: Mapping[str, str] = field(default_factory=dict)
    statistics: Mapping[str, str] = field(default_factory=dict)
    from_runs: FromRuns | None = None

    def for_table(self, table: str) -> IntervalMethod:
        """The method ``table`` gets when this one is asked for."""
        return get(self.tables.get(table, self.name))

    def for_statistic(self, table: str, kind: str) -> IntervalMethod:
        """The method a statistic of kind ``kind`` (``mean``, ``median`` or ``*``) of ``table`` gets."""
        spec = self.for_table(table)
        if table not in STATISTIC_TABLES or not spec.statistics:
            return spec
        return get(spec.statistics.get(kind, spec.statistics["*"]))


REGISTRY: dict[str, IntervalMethod] = {}
#: The requestable methods' names, in registration order (kept in step by :func:`register`).
METHODS: tuple[str, ...] = ()


def register(spec: IntervalMethod) -> IntervalMethod:
    """Add ``spec`` (its rules may only name methods already registered or itself); return it."""
    global METHODS
    named = {*spec.tables.values(), *spec.statistics.values()} - {spec.name}
    unknown = sorted(n for n in named if n not in REGISTRY)
    if unknown:
        raise ValueError(f"interval method {spec.name!r} names unregistered method(s) {', '.join(unknown)}")
    REGISTRY[spec.name] = spec
    METHODS = tuple(n for n, s in REGISTRY.items() if s.requestable)
    return spec


def unregister(name: str) -> None:
    """Remove a method added by :func:`register` (tests and examples)."""
    global METHODS
    del REGISTRY[name]
    METHODS = tuple(n for n, s in REGISTRY.items() if s.requestable)


def get(name: str) -> IntervalMethod:
    """The registered method ``name`` (any, requestable or not)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown interval method {name!r}; known: {', '.join(REGISTRY)}") from None


def requested(name: str) -> IntervalMethod:
    """The method ``method=`` names; a ValueError lists the requestable ones."""
    spec = REGISTRY.get(name)
    if spec is None or not spec.requestable:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    return spec


def table_rule(name: str) -> dict[str, str]:
    """The method each table of :data:`TABLES` gets when ``name`` is asked for."""
    spec = requested(name)
    return {table: spec.for_table(table).name for table in TABLES}


def rule_words(name: str) -> str:
    """What asking for ``name`` gives each table, and on the aggregate tables each kind of statistic, in words
    (``--help`` says the default's rule with it)::

        >>> rule_words("percentile").endswith(": percentile")
        True
    """
    spec = requested(name)
    groups: dict[str, list[str]] = {}
    for table in TABLES:
        kinds = {kind: spec.for_statistic(table, kind).phrase for kind in STATISTIC_KINDS}
        words = kinds["*"]
        if len(set(kinds.values())) > 1:
            words = ", ".join(f"{phrase} for {STATISTIC_WORDS[kind]}" for kind, phrase in kinds.items())
        groups.setdefault(words, []).append(TABLE_WORDS[table])
    return "; ".join(f"{_join(tables)}: {words}" for words, tables in groups.items())


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe(spec: IntervalMethod, *, replicates: int | None = None) -> str:
    """``expanded percentile intervals (2,000 bootstrap replicates)``: one method's intervals in words."""
    text = f"{spec.phrase} intervals"
    if spec.replicates and replicates:
        text += f" ({int(replicates):,} bootstrap replicates)"
    return text


# ---------------------------------------------------------------------------- bounds
def quantile_pair(dist: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles ``low`` and ``high`` of every column (``np.quantile``, method ``linear``)."""
    import numpy as np

    both = np.quantile(dist, [low, high], axis=0)
    return both[0], both[1]


def diag_quantile(dist: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q[i] of column i (each statistic its own level)."""
    import numpy as np

    flat = dist.reshape(dist.shape[0], -1)
    qs = np.broadcast_to(np.asarray(q, float), dist.shape[1:]).ravel()
    out = np.array([np.quantile(flat[:, i], qs[i]) if np.isfinite(qs[i]) else np.nan for i in range(flat.shape[1])])
    return out.reshape(dist.shape[1:])


def tie_tolerance(dist: np.ndarray, point: np.ndarray) -> np.ndarray:
    """How far a replicate may lie from the estimate and still count as equal to it: 1e-9 of the statistic's
    scale (its largest finite |replicate| or |estimate|). Far above the rounding of sums in another order
    (~1e-16 relative), far below any real difference between replicates of a statistic of ≤ 10⁶ runs."""
    import numpy as np

    finite = np.where(np.isfinite(dist), np.abs(dist), 0.0)
    scale = np.maximum(finite.max(axis=0, initial=0.0), np.where(np.isfinite(point), np.abs(point), 0.0))
    return 1e-9 * scale


def percentile_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """The ``(1 - ci) / 2`` and ``(1 + ci) / 2`` quantiles of the replicates."""
    alpha = 1.0 - ci
    return quantile_pair(dist, alpha / 2, 1 - alpha / 2)


def basic_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """The percentile interval reflected about the estimate."""
    lo, hi = percentile_bounds(dist, point, ci, tail, accel)
    return 2 * point - hi, 2 * point - lo


def bias_corrected_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """BC (``accel`` None) or BCa: quantiles shifted by ``z0 = Φ⁻¹(fraction of replicates below the estimate)``,
    ties (within :func:`tie_tolerance`) counting half, and stretched by the acceleration."""
    import numpy as np

    from . import distributions

    alpha = 1.0 - ci
    tol = tie_tolerance(dist, point)
    below = (dist < point - tol).mean(axis=0) + 0.5 * (np.abs(dist - point) <= tol).mean(axis=0)
    z0 = distributions.norm_ppf(np.clip(below, 1e-12, 1 - 1e-12))
    a = np.zeros_like(z0) if accel is None else accel
    bounds = []
    for z in distributions.norm_ppf(np.array([alpha / 2, 1 - alpha / 2])):
        adj = z0 + (z0 + z) / (1 - a * (z0 + z))
        bounds.append(diag_quantile(dist, distributions.norm_cdf(adj)))
    return bounds[0], bounds[1]


def expanded_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """Hesterberg's expanded percentile interval: the quantiles at ``tail`` and ``1 - tail``."""
    import numpy as np

    if tail is None:
        raise ValueError("the expanded percentile interval needs its tail probability")
    if np.ndim(tail) == 0:
        return quantile_pair(dist, float(tail), 1 - float(tail))
    return diag_quantile(dist, np.asarray(tail)), diag_quantile(dist, 1 - np.asarray(tail))


def normal_interval(dist: np.ndarray, point: np.ndarray, tail: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``point ± c · t · sd*`` for each column: the bootstrap standard deviation ``sd*`` of the replicates (ddof 1)
    with the expanded level's multiplier ``c · t = -Φ⁻¹(tail)`` (``tail`` from :func:`..bootstrap.expanded_level`).

    Used for the median over tasks under ``bootstrap-t``: the bootstrap distribution of a median of 10-26 task
    means is lumpy, its far quantiles sit on the few task means near the middle, and the expanded percentile
    interval over-covers with 26 tasks (0.96-0.98); its standard deviation is smooth
    (``benchmarks/coverage/median_candidates.py``)."""
    import numpy as np

    from . import distributions

    # sd in units of each column's largest |replicate|: squares of scores near 1e200 (or 1e-200) stay in range
    unit = np.abs(dist).max(axis=0, initial=0.0)
    unit = np.where((unit > 0) & np.isfinite(unit), unit, 1.0)
    sd = unit * np.std(dist / unit, axis=0, ddof=1)
    half = -distributions.norm_ppf(np.asarray(tail, dtype=float)) * sd
    return point - half, point + half


def normal_bounds(dist: np.ndarray, point: np.ndarray, ci: float, tail: Tail, accel: np.ndarray | None):
    """:func:`normal_interval` at the expanded level ``tail``."""
    if tail is None:
        raise ValueError("the normal interval needs the expanded tail probability")
    return normal_interval(dist, point, tail)


def student_t_runs(cells: Any, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Each task's mean ± t·s/√N (:func:`..bootstrap.student_t_task_intervals`): the ``student-t`` method."""
    from .bootstrap import student_t_task_intervals

    return student_t_task_intervals(cells, ci)


def order_statistic_median(low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    """``[median of the per-task lower bounds, median of the upper bounds]``: the median over tasks does not
    decrease when any task's mean grows, so this interval covers the median of the true task means whenever every
    per-task interval covers its task's mean (conservative: wide, and it needs no resampling)."""
    import numpy as np

    return float(np.median(np.asarray(low, dtype=float))), float(np.median(np.asarray(high, dtype=float)))


def median_order_statistic_interval(cells: Any, ci: float = 0.95) -> tuple[float, float]:
    """The order-statistic interval of the median over tasks from each task's Student-t interval at level ``ci``
    (:func:`..bootstrap.student_t_task_intervals`; a task of one run contributes its score twice)."""
    return order_statistic_median(*student_t_runs(cells, ci))


# ---------------------------------------------------------------------------- the methods
_PERCENTILE_CURVES = {"curves": "percentile"}  # no expanded level per stretch of a curve's grid is computed

register(IntervalMethod("percentile", "percentile", percentile_bounds))
register(IntervalMethod("basic", "basic (reverse percentile)", basic_bounds))
register(IntervalMethod("bc", "bias-corrected (BC)", bias_corrected_bounds))
register(
    IntervalMethod(
        "bca",
        "bias-corrected and accelerated (BCa)",
        bias_corrected_bounds,
        needs_jackknife=True,
        # only the aggregates compute the leave-one-run-out values: every other table gets BC
        tables=MappingProxyType({t: "bc" for t in TABLES if t != "aggregates"}),
    )
)
register(
    IntervalMethod(
        "expanded", "expanded percentile", expanded_bounds, needs_tail=True, tables=MappingProxyType(_PERCENTILE_CURVES)
    )
)
register(
    IntervalMethod(
        "normal",
        "normal (bootstrap standard deviation, expanded percentile level)",
        normal_bounds,
        requestable=False,
        needs_tail=True,
    )
)
register(
    IntervalMethod(
        "student-t",
        "Student-t (mean ± t·s/√N, no resampling)",
        None,
        bootstrap=False,
        replicates=False,
        requestable=False,
        from_runs=student_t_runs,
    )
)
register(
    IntervalMethod(
        "order-statistic",
        "order-statistic (median of the per-task Student-t bounds, conservative, no resampling)",
        None,
        bootstrap=False,
        replicates=False,
        requestable=False,
        from_runs=median_order_statistic_interval,
    )
)
#: What ``median_interval=`` takes: ``method`` (the median's interval by the requested method's rule) or the
#: registered method the aggregates' median gets instead, whatever the requested method.
MEDIAN_INTERVALS = ("method", "order-statistic")
register(
    IntervalMethod(
        "bootstrap-t",
        "studentized bootstrap (bootstrap-t)",
        expanded_bounds,  # without the replicates' standard errors (every statistic but the mean): expanded
        needs_tail=True,
        studentized=True,
        tables=MappingProxyType(
            {
                "improvement": "expanded",
                "profiles": "expanded",
                "gap_curve": "expanded",
                # what the bootstrap-t approximates; a bootstrap of 3 runs cannot reach beyond their range
                "per_task": "student-t",
                **_PERCENTILE_CURVES,
            }
        ),
        statistics=MappingProxyType({"mean": "bootstrap-t", "median": "normal", "*": "expanded"}),
    )
)


# ---------------------------------------------------------------------------- the request
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
    ``seed`` every stream is spawned from, task resampling, the median's interval (``median_interval``: ``method``
    or a registered method the aggregates' median gets instead), where independent work runs and the memory of
    one chunk of replicates. It answers every question about intervals (:meth:`table_method`,
    :meth:`statistic_method`, :meth:`record`), and :func:`estimate` computes them.

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
    median_interval: str = "method"
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

    def statistic_method(self, table: str, kind: str) -> IntervalMethod:
        """The method a statistic of kind ``kind`` (:data:`STATISTIC_KINDS`) gets in ``table``: the registry's rule,
        or for the aggregates' median the ``median_interval`` one."""
        if table == "aggregates" and kind == "median" and self.median_interval != "method":
            return get(self.median_interval)
        return requested(self.method).for_statistic(table, kind)

    def needs_standard_errors(self, table: str, kinds: Sequence[str]) -> bool:
        """Whether a statistic of ``table`` gets a studentized interval: its replicates must come with the
        replicates of the mean's standard error (:attr:`Sample.standard_errors`)."""
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
        own_median = table == "aggregates" and self.median_interval != "method"
        if kinds is not None and table in STATISTIC_TABLES and (spec.statistics or own_median):
            out["statistics"] = {name: self.statistic_method(table, kind).name for name, kind in kinds.items()}
        return {**out, **extra}


# ---------------------------------------------------------------------------- computing intervals
class ConfidenceInterval(NamedTuple):
    """``(low, high)``, as scipy's ``ConfidenceInterval``."""

    low: Any
    high: Any


@dataclass(frozen=True)
class IntervalResult:
    """The intervals of some statistics (modelled on ``scipy.stats.bootstrap``'s result):
    ``confidence_interval`` (``low``, ``high``, each the statistics' shape), the method each statistic's interval
    was computed by (``methods``, one per statistic of the last axis) and one sentence per interval that fell back
    from its method (``notes``)."""

    confidence_interval: ConfidenceInterval
    methods: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def low(self) -> Any:
        return self.confidence_interval.low

    @property
    def high(self) -> Any:
        return self.confidence_interval.high


@dataclass(frozen=True)
class Sample:
    """What the replicates were drawn from, as far as an interval may need it besides them; each is computed only
    where the method asks for it.

    Attributes:
        level: ``level(ci)``: the expanded tail probability at ``ci`` (scalar, or one per statistic), for a method
            that ``needs_tail`` (:func:`..bootstrap.expanded_level` of the cells, ``task_levels``, ...).
        jackknife: ``jackknife()``: the leave-one-run-out values ``(J, ...)`` and their strata, for the BCa
            acceleration.
        runs: the cells, for a method computed from the runs themselves (``from_runs``).
        standard_errors: ``standard_errors()``: the replicates ``(B, 2)`` and estimate ``(2,)`` of (mean,
            standard error), for the studentized mean.
        name: what a fallback sentence is about (``"A - B"``), or None.
    """

    level: Callable[[float], Any] | None = None
    jackknife: Callable[[], tuple[Any, Any]] | None = None
    runs: Any = None
    standard_errors: Callable[[], tuple[Any, Any]] | None = None
    name: str | None = None


def fallback_note(what: str) -> str:
    """The sentence that says a bootstrap-t interval fell back to the expanded one."""
    return (
        f"bootstrap-t: {what}'s studentized replicates are degenerate (too few distinct runs per task), so its "
        "interval is the expanded percentile one"
    )


def estimate(
    request: ResamplingRequest,
    table: str,
    dist: np.ndarray,
    point: np.ndarray,
    sample: Sample = Sample(),
    *,
    kinds: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> IntervalResult:
    """The intervals of ``table``'s statistics from their replicates ``dist`` ``(B, n)`` and estimates ``point``
    ``(n,)``, each by the method ``request`` gives it: with ``kinds`` (each statistic's kind, on the aggregate
    tables) every statistic its own (:meth:`ResamplingRequest.statistic_method`; ``labels`` name them in a fallback
    sentence), else the table's method for every one (of any shape).

    Example:
        >>> import numpy as np
        >>> request = ResamplingRequest("percentile", 0.9)
        >>> result = estimate(request, "aggregates", np.arange(100.0)[:, None], np.array([50.0]))
        >>> [round(float(v[0]), 2) for v in result.confidence_interval], result.methods
        ([4.95, 94.05], ('percentile',))
    """
    import numpy as np

    ci, spec = request.level, request.table_method(table)
    point = np.asarray(point, dtype=float)
    if kinds is None and spec.from_runs is not None:
        low, high = spec.from_runs(sample.runs, ci)
        return IntervalResult(ConfidenceInterval(low, high), (spec.name,))
    methods = [spec] * point.shape[-1] if kinds is None else [request.statistic_method(table, k) for k in kinds]
    tail = sample.level(ci) if sample.level is not None and any(m.needs_tail for m in methods) else None
    accel = None
    if spec.needs_jackknife:
        from .bootstrap import acceleration

        assert sample.jackknife is not None, f"{spec.name} needs the leave-one-run-out values"
        accel = acceleration(*sample.jackknife())
    if spec.needs_tail and tail is None:
        raise ValueError("the expanded percentile interval needs the level of the sample the replicates are from")
    block = [j for j, m in enumerate(methods) if _in_block(m, spec)]
    if len(block) == len(methods):
        low, high = _bounds(spec)(dist, point, ci, tail, accel)
    else:
        low, high = np.full(point.shape, np.nan), np.full(point.shape, np.nan)
        if block:
            low[block], high[block] = _bounds(spec)(
                dist[:, block], point[block], ci, _take(tail, block), _take(accel, block)
            )
    notes: list[str] = []
    for j, m in enumerate(methods):
        if j not in block:
            label = labels[j] if labels is not None else f"statistic {j}"
            low[j], high[j] = _own(m, dist[:, j], point[j], ci, (_at(tail, j), _at(accel, j)), sample, label, notes)
    return IntervalResult(ConfidenceInterval(low, high), tuple(m.name for m in methods), tuple(notes))


def estimate_stacked(
    request: ResamplingRequest,
    table: str,
    shape: tuple[int, int, int],
    fill: Callable[[int, np.ndarray], None],
    points: Sequence[np.ndarray],
    samples: Sequence[Sample],
    *,
    kinds: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> list[IntervalResult]:
    """:func:`estimate` of ``count`` distributions of ``rows`` replicates and ``width`` statistics each
    (``shape``), distribution ``i`` written by ``fill(i, out)`` into a ``(rows, width)`` block, with its estimates
    ``points[i]`` and its ``samples[i]``. The blocks are stacked ``request.chunk_bytes`` at a time (at least one),
    as one ``(rows, parts, width)`` view the selection reads without a copy: the same numbers as one call per
    distribution, in one selection pass per chunk. Returns one result per distribution."""
    import numpy as np

    count, rows, width = shape
    ci, spec = request.level, request.table_method(table)
    if kinds is None and spec.from_runs is not None:  # from the runs themselves: no replicates needed
        return [estimate(request, table, np.empty((0, width)), points[i], samples[i]) for i in range(count)]
    methods = [spec] * width if kinds is None else [request.statistic_method(table, k) for k in kinds]
    needs_tail = any(m.needs_tail for m in methods)
    block = [j for j, m in enumerate(methods) if _in_block(m, spec)]
    out: list[IntervalResult] = []
    per_stack = max(1, request.chunk_bytes // max(1, rows * width * 8))
    for i in range(0, count, per_stack):
        j = min(count, i + per_stack)
        stack = np.empty((j - i, rows, width))
        for k in range(i, j):
            fill(k, stack[k - i])
        point = np.concatenate([np.asarray(p, dtype=float) for p in points[i:j]]).reshape(j - i, width)
        tail = None
        if needs_tail:
            tail = np.stack([np.broadcast_to(samples[k].level(ci), (width,)) for k in range(i, j)])  # type: ignore[misc]
        view = np.moveaxis(stack, 0, 1)
        if len(block) == width:
            low, high = _bounds(spec)(view, point, ci, tail, None)
        else:
            low, high = np.full(point.shape, np.nan), np.full(point.shape, np.nan)
            if block:
                low[:, block], high[:, block] = _bounds(spec)(
                    view[..., block], point[:, block], ci, _take(tail, block), None
                )
        for k in range(i, j):
            notes: list[str] = []
            for c, m in enumerate(methods):
                if c not in block:
                    label = labels[c] if labels is not None else f"statistic {c}"
                    at = (None if tail is None else tail[k - i, c], None)
                    low[k - i, c], high[k - i, c] = _own(
                        m, stack[k - i][:, c], point[k - i, c], ci, at, samples[k], label, notes
                    )
            result = ConfidenceInterval(np.reshape(low[k - i], -1), np.reshape(high[k - i], -1))
            out.append(IntervalResult(result, tuple(m.name for m in methods), tuple(notes)))
    return out


def _in_block(method: IntervalMethod, table: IntervalMethod) -> bool:
    """A statistic whose interval is the table method's bounds: computed with the others, in one pass."""
    return not method.studentized and method.from_runs is None and method.bounds is table.bounds


def _bounds(spec: IntervalMethod) -> Bounds:
    assert spec.bounds is not None, f"{spec.name} is not computed from replicates"
    return spec.bounds


def _take(values: Any, columns: list[int]) -> Any:
    """The ``columns`` of a per-statistic value (last axis); a scalar or None as it is."""
    import numpy as np

    return values if values is None or np.ndim(values) == 0 else np.asarray(values)[..., columns]


def _at(values: Any, j: int) -> Any:
    import numpy as np

    return values if values is None or np.ndim(values) == 0 else np.asarray(values)[..., j]


def _own(
    method: IntervalMethod,
    dist: np.ndarray,
    point: Any,
    ci: float,
    extras: tuple[Any, Any],
    sample: Sample,
    label: str,
    notes: list[str],
) -> tuple[Any, Any]:
    """One statistic's interval by its own method (not the table's): studentized (falling back, with a sentence in
    ``notes``, to the method's bounds), from the runs, or from its replicates. ``extras``: its tail and acceleration."""
    tail, accel = extras
    if method.studentized:
        from .bootstrap import studentized_mean_interval

        assert sample.standard_errors is not None, "a studentized interval needs the standard errors' replicates"
        found = studentized_mean_interval(*sample.standard_errors(), ci)
        if found is not None:
            return found
        notes.append((f"{sample.name}: " if sample.name else "") + fallback_note(label))
    elif method.from_runs is not None:
        return method.from_runs(sample.runs, ci)
    return _bounds(method)(dist, point, ci, tail, accel)


def studentized_difference(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The replicates and estimate of (mean(X) - mean(Y), its standard error) from each algorithm's (mean, se)
    replicates ``"dist"`` and estimate ``"point"``, on their common replicates: the studentized difference's
    :attr:`Sample.standard_errors` (``t* = (d* - d) / sqrt(se_x*² + se_y*²)``)."""
    import numpy as np

    n = min(len(x["dist"]), len(y["dist"]))
    dx, dy = x["dist"][:n], y["dist"][:n]
    dist = np.column_stack([dx[:, 0] - dy[:, 0], np.hypot(dx[:, 1], dy[:, 1])])
    point = np.array([x["point"][0] - y["point"][0], np.hypot(x["point"][1], y["point"][1])])
    return dist, point


def interval(
    dist: np.ndarray,
    point: np.ndarray,
    *,
    ci: float = 0.95,
    method: str = "percentile",
    jackknife: np.ndarray | None = None,
    strata: np.ndarray | None = None,
    cells: Any = None,
    tail: float | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Confidence interval (low, high) of each statistic from its bootstrap distribution, by one requested method.

    Args:
        dist: (B, ...) bootstrap replicates.
        point: (...) estimate on the original data.
        ci: confidence level, e.g. 0.95.
        method: a requestable method (``percentile``, the default, ``basic``, ``bc``, ``bca``, ``expanded``,
            ``bootstrap-t``); this function gives it what its declaration needs. ``bca`` needs ``jackknife``, the
            (J, ...) leave-one-run-out values, from which each statistic gets its *own* acceleration; pass
            ``strata`` = :func:`..bootstrap.jackknife_tasks` for the stratified acceleration
            (:func:`..bootstrap.acceleration`). ``expanded`` (Hesterberg's expanded percentile interval for small
            samples, stratified by cell) needs the ``cells`` the replicates were drawn from
            (:func:`..bootstrap.expanded_level`) or ``tail``; so does ``bootstrap-t``, here without standard
            errors the expanded interval (:func:`estimate` studentizes the mean). For a statistic of several
            algorithms (a difference, P(X > Y)) pass every algorithm's cells: the level pools them. ``tail``: the
            expanded tail probability of each statistic (scalar or one per column, e.g.
            :func:`..bootstrap.task_levels`), instead of the one :func:`..bootstrap.expanded_level` gives.

    The bias correction counts replicates equal to the estimate as half below; "equal" is within
    :func:`tie_tolerance` of it, so that the estimate and its replicates, summed in different orders, find the
    same ties whatever the input's row order or scale.
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    spec = requested(method)
    import numpy as np

    from . import bootstrap as bs

    point = np.asarray(point, dtype=float)
    if spec.needs_tail and tail is None:
        if cells is None:
            raise ValueError("the expanded percentile interval needs the cells the replicates were drawn from")
        tail = bs.expanded_level(cells, ci)
    accel = None
    if spec.needs_jackknife:
        if jackknife is None:
            raise ValueError(f"{method} needs the jackknife values of each statistic")
        accel = bs.acceleration(jackknife, strata)
    return _bounds(spec)(dist, point, ci, tail, accel)


# ---------------------------------------------------------------------------- Jordan et al.'s intervals
#: The intervals of the Jordan tables, by ``jordan_method`` (and ``dkw``: the ECDF bands): computed by
#: :mod:`.jordan`, declared here for their words and records.
JORDAN_METHODS = {
    "pbp": register(
        IntervalMethod(
            "pbp",
            "performance bound propagation (PBP, guaranteed)",
            None,
            bootstrap=False,
            replicates=False,
            requestable=False,
        )
    ),
    "pbp-t": register(
        IntervalMethod(
            "pbp-t",
            "PBP-t (t-approximation, no guarantee)",
            None,
            bootstrap=False,
            replicates=False,
            requestable=False,
        )
    ),
    "bootstrap": register(
        IntervalMethod(
            "jordan-bootstrap",
            "percentile bootstrap of the whole aggregate (Bonferroni over the cells)",
            None,
            requestable=False,
        )
    ),
    "dkw": register(
        IntervalMethod(
            "dkw",
            "Dvoretzky-Kiefer-Wolfowitz (DKW) band",
            None,
            bootstrap=False,
            replicates=False,
            requestable=False,
        )
    ),
}


# ---------------------------------------------------------------------------- success rates (issue 46)
#: The intervals of the success-rate tables (``successes=``/``episodes=``): computed by :mod:`.success`, declared
#: here for their words and records.
SUCCESS_METHODS = {
    "per_task": register(
        IntervalMethod(
            "wilson-seeds",
            "Wilson score at the effective number of episodes (the seeds' Korn-Graubard design effect, "
            "s - 1 degrees of freedom)",
            None,
            bootstrap=False,
            replicates=False,
            requestable=False,
        )
    ),
    "aggregate": register(
        IntervalMethod(
            "seed-binomial-bootstrap",
            "Wilson score at the effective number of episodes of a bootstrap over seeds with a binomial step "
            "within seeds (Satterthwaite degrees of freedom)",
            None,
            requestable=False,
        )
    ),
    "differences": register(
        IntervalMethod(
            "newcombe",
            "Newcombe hybrid score (MOVER over the two rates' intervals)",
            None,
            bootstrap=False,
            replicates=False,
            requestable=False,
        )
    ),
}
