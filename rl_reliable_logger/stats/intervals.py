"""Interval methods, each declared once: its name, its bounds, the method each table gets, and its words.

An :class:`IntervalMethod` is everything the package knows about one method. :data:`REGISTRY` holds them;
nothing else compares method names. ``method=`` accepts the *requestable* ones (:data:`METHODS`); the others
(``normal``, ``student-t``) are what a requested method gives some tables or statistics (:meth:`IntervalMethod.for_table`,
:meth:`IntervalMethod.for_statistic`): under ``bootstrap-t`` the mean, the IQM and the optimality gap are studentized, the median gets a normal
interval, the other statistics the expanded percentile one, and the per-task means a Student-t interval.

The bounds of a method are one function ``bounds(dist, point, ci, tail, accel) -> (low, high)`` of the bootstrap
replicates ``dist`` (B, ...) and the estimate ``point`` (...); ``tail`` is the expanded tail probability (scalar
or one per statistic) for methods with ``needs_tail``, ``accel`` the acceleration for ``needs_jackknife``.
:func:`..bootstrap.interval` computes those inputs and calls it. A method computed from something else than
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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported by the bounds that compute: ``rl-reliable --help`` reads these words, no numpy
    import numpy as np

#: The tables of a Report that carry intervals, in the order descriptions list them.
TABLES = ("aggregates", "differences", "improvement", "profiles", "gap_curve", "per_task", "curves")
#: Tables of aggregate statistics: there a method may give each statistic its own interval (``statistics``).
STATISTIC_TABLES = ("aggregates", "differences")
#: Kinds of statistic a rule can name (``analysis`` maps metrics to them); ``*`` is every other statistic.
STATISTIC_KINDS = ("mean", "iqm", "optimality_gap", "median", "*")
#: What each table holds, in the words of the sentences that describe its intervals.
TABLE_WORDS = {
    "aggregates": "the aggregate metrics",
    "differences": "the differences between algorithms' aggregate metrics",
    "improvement": "the probability of improvement",
    "profiles": "the performance profiles",
    "gap_curve": "the optimality gap as a function of its threshold",
    "per_task": "the per-task means",
    "curves": "the sample-efficiency curves",
}
#: Each kind of :data:`STATISTIC_KINDS` in words.
STATISTIC_WORDS = {
    "mean": "the mean",
    "iqm": "the IQM",
    "optimality_gap": "the optimality gap",
    "median": "the median",
    "*": "the other statistics (DP-25, other trimmed means, ...)",
}

if TYPE_CHECKING:
    Tail = float | np.ndarray | None
    Bounds = Callable[[np.ndarray, np.ndarray, float, Tail, np.ndarray | None], tuple[np.ndarray, np.ndarray]]


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
        studentized: the interval studentizes with the replicates' standard errors (the mean's, IQM's, gap's).
        tables: the method a table gets instead of this one (table name -> method name); others get this one.
        statistics: on :data:`STATISTIC_TABLES`, the method each statistic kind gets (``*``: the others).
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
            by_phrase: dict[str, list[str]] = {}
            for kind, phrase in kinds.items():
                by_phrase.setdefault(phrase, []).append(STATISTIC_WORDS[kind])
            words = ", ".join(f"{phrase} for {_join(named)}" for phrase, named in by_phrase.items())
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
    (``benchmarks/median_candidates.py``)."""
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
    )
)
register(
    IntervalMethod(
        "order-statistic",
        "order-statistic (median of the per-task Student-t bounds, conservative, no resampling)",
        None,  # computed from the per-task intervals: ..aggregate.median_order_statistic_interval
        bootstrap=False,
        replicates=False,
        requestable=False,
    )
)
#: What ``median_interval=`` takes: ``method`` (the median's interval by the requested method's rule) or the
#: registered method the aggregates' median gets instead, whatever the requested method.
MEDIAN_INTERVALS = ("method", "order-statistic")
register(
    IntervalMethod(
        "bootstrap-t",
        "studentized bootstrap (bootstrap-t)",
        expanded_bounds,  # without the replicates' standard errors (all but the mean, IQM and gap): expanded
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
        # the IQM and the optimality gap studentized too (issue 43): the IQM's estimate at 3-5 runs per task is
        # biased, which the expanded percentile interval carries over, and the gap's expanded interval under-covered
        # on real data drawn with replacement (docs/validation.md, benchmarks/coverage_fresh.py, skew_calibration.py)
        statistics=MappingProxyType(
            {
                "mean": "bootstrap-t",
                "iqm": "bootstrap-t",
                "optimality_gap": "bootstrap-t",  # a mean of the runs clipped at gamma
                "median": "normal",
                "*": "expanded",
            }
        ),
    )
)
