"""The interval methods' registry, each method declared once: its name, its bounds, the method each table gets, and
its words.

An :class:`IntervalMethod` is everything the package knows about one method. :data:`REGISTRY` holds them;
nothing else compares method names. ``method=`` accepts the *requestable* ones (:data:`METHODS`); the others
(``normal``, ``student-t``, ...) are what a requested method gives some tables or statistics (:meth:`IntervalMethod.for_table`,
:meth:`IntervalMethod.for_statistic`): under ``bootstrap-t`` the mean, the IQM and the optimality gap are studentized, the median gets a normal
interval, the other statistics the expanded percentile one, the per-task means a Student-t interval and P(X > Y) the
``mann-whitney`` one. The median's own option (``median_interval``, :mod:`.request`) may give it the order-statistic
interval instead, and its differences the MOVER over it.

The bounds of a method are one function ``bounds(dist, point, ci, tail, accel) -> (low, high)`` of the bootstrap
replicates ``dist`` (B, ...) and the estimate ``point`` (...); ``tail`` is the expanded tail probability (scalar
or one per statistic) for methods with ``needs_tail``, ``accel`` the acceleration for ``needs_jackknife``; every
formula is in :mod:`.bounds`. :func:`.estimate.interval` and :func:`.estimate.estimate` compute those inputs and call
it. A method computed from something else than replicates (``student-t``: the runs themselves; the studentized mean:
the replicates' standard errors) says so by its flags, and its caller computes it.

This module imports no numpy (``rl-reliable --help`` says the default method's rule in these words); the bounds
import it when they compute.

Adding a method is one :func:`register` call (``docs/architecture.md`` has a worked example). The rule of a
requested method, table by table::

    >>> rule = table_rule("bootstrap-t")
    >>> rule["aggregates"], rule["per_task"], rule["improvement"], rule["curves"]
    ('bootstrap-t', 'student-t', 'mann-whitney', 'percentile')
    >>> get("bootstrap-t").for_statistic("aggregates", "median").name
    'normal'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .bounds import (
    basic_bounds,
    bias_corrected_bounds,
    expanded_bounds,
    improvement_runs,
    median_order_statistic_interval,
    median_order_statistic_mover,
    normal_bounds,
    percentile_bounds,
    student_t_runs,
)

if TYPE_CHECKING:  # numpy is imported by the bounds that compute: ``rl-reliable --help`` reads these words, no numpy
    import numpy as np

    from .bounds import Tail

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
    "tuning": "the tuning view's aggregate metric",
    "comparisons": "the all-pairs comparisons",
    "jordan": "Jordan et al.'s aggregate (simultaneous over the algorithms)",
    "jordan_quantiles": "the per-task score distributions (ECDF bands)",
    "success_rates": "the per-task success rates",
    "success_aggregates": "the success rates over tasks",
    "success_differences": "the differences of success rates",
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
        studentized: the interval studentizes with the replicates' standard errors (the mean's, IQM's, gap's).
        tables: the method a table gets instead of this one (table name -> method name); others get this one.
        statistics: on :data:`STATISTIC_TABLES`, the method each statistic kind gets (``*``: the others).
        from_runs: ``(cells, ci) -> (low, high)`` for a method computed from the runs themselves, not from
            replicates (``student-t``: each task's mean; ``order-statistic``: the median over tasks).
        few_runs_median: the method the median gets instead under ``median_interval=auto`` (the default) where the
            fewest runs of a task are :data:`ORDER_STATISTIC_RUNS` or fewer; None: the rule's, whatever the runs
            (``percentile`` stays rliable's).
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
    few_runs_median: str | None = None

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
    said = "; ".join(f"{_join(tables)}: {words}" for words, tables in groups.items())
    if spec.few_runs_median is not None:
        said += (
            f"; the median and its differences at {ORDER_STATISTIC_RUNS} runs per task or fewer (median_interval=auto): "
            f"{get(spec.few_runs_median).phrase}"
        )
    return said


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe(spec: IntervalMethod, *, replicates: int | None = None) -> str:
    """``expanded percentile intervals (2,000 bootstrap replicates)``: one method's intervals in words."""
    text = f"{spec.phrase} intervals"
    if spec.replicates and replicates:
        text += f" ({int(replicates):,} bootstrap replicates)"
    return text


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
        "Student-t (mean ± t·s/√N, each task's s at least the median s of its algorithm's tasks, no resampling)",
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
        "order-statistic (median of each task's own Student-t bounds, conservative, no resampling)",
        None,
        bootstrap=False,
        replicates=False,
        requestable=False,
        from_runs=median_order_statistic_interval,
    )
)
register(
    IntervalMethod(
        "order-statistic-mover",
        "MOVER over the two order-statistic intervals (Newcombe's method 10: the difference's ends from each "
        "median's own ends, no resampling)",
        None,
        bootstrap=False,
        replicates=False,
        requestable=False,
        from_runs=median_order_statistic_mover,
    )
)
#: What ``median_interval=`` takes: ``auto`` (the default: the requested method's ``few_runs_median`` at
#: :data:`ORDER_STATISTIC_RUNS` runs per task or fewer, else ``method``), ``method`` (the median's interval by the
#: requested method's rule) or the registered method the median gets instead, whatever the requested method (its
#: differences: the MOVER over it).
MEDIAN_INTERVALS = ("auto", "method", "order-statistic")
#: Under ``median_interval=auto`` the median gets the order-statistic interval where the fewest runs of a task are
#: this many or fewer: there the bootstrap's median interval covered 0.66-0.96 on real data sets, the order-statistic
#: one 0.87-1.0 (``docs/validation.md``).
ORDER_STATISTIC_RUNS = 10
#: The method the median's differences get where the median gets a method of its own (``median_interval``).
MEDIAN_DIFFERENCES = {"order-statistic": "order-statistic-mover"}
register(
    IntervalMethod(
        "mann-whitney",
        "normal from the Mann-Whitney proportions' unbiased (Hoeffding) variance, a task whose runs separate "
        "adding a proportion's variance at Newcombe's effective count (no resampling)",
        None,
        bootstrap=False,
        replicates=False,
        requestable=False,
        from_runs=improvement_runs,
    )
)
register(
    IntervalMethod(
        "bootstrap-t",
        "studentized bootstrap (bootstrap-t)",
        expanded_bounds,  # without the replicates' standard errors (all but the mean, IQM and gap): expanded
        needs_tail=True,
        studentized=True,
        tables=MappingProxyType(
            {
                # the bootstrap of P(X > Y) collapses where the runs separate (issue 52, docs/validation.md)
                "improvement": "mann-whitney",
                "profiles": "expanded",
                "gap_curve": "expanded",
                # what the bootstrap-t approximates; a bootstrap of 3 runs cannot reach beyond their range
                "per_task": "student-t",
                **_PERCENTILE_CURVES,
            }
        ),
        # at 10 runs per task or fewer the median's bootstrap intervals covered 0.66-0.96 on real data, the
        # order-statistic one 0.87 and above (issue 52, docs/validation.md): the default's under median_interval=auto
        few_runs_median="order-statistic",
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
