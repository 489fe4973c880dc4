"""AnalysisOptions: every choice of one analysis in one frozen, validated object.

``evaluate(table, options)`` reads nothing else, so the same table and options give the same Report,
and a wrong option is refused here, before any resampling starts. Messages name the Python keyword
(```reps=```, backticked like every library message); the command line puts its flags in their place.

The confidence level rule: ``0 < ci < 1`` is a fraction (``0.95``), ``1 < ci < 100`` a percentage
(``95``, ``99.5``); anything else (``1`` included: 1% or 100%?) is an error, and so is a level below
50% (``1.5`` would be a 1.5% interval: a slip, not a choice). The label is exact: ``0.995`` prints
as ``99.5%`` (:func:`ci_label`).

Example:
    >>> opts = AnalysisOptions(reps=2_000, ci=99.5)
    >>> opts.ci, ci_label(opts.ci)
    (0.995, '99.5%')
    >>> AnalysisOptions(method="studentized")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.analysis.declared.OptionError: `method='studentized'` is not an interval method; choose one of percentile, basic, bc, bca, expanded, bootstrap-t
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from ..executors import Executor
from ..memory import available_memory
from ..memory import format_bytes as _bytes
from ..wording import Message, kw, said
from . import declared as d
from .declared import CHECKS, JORDAN, SELECTION, OptionError, declared, option

if TYPE_CHECKING:  # numpy is imported by the checks that need it, so that ``rl-reliable --help`` loads none
    import numpy as np

    from ..stats.intervals import ResamplingRequest

DEFAULT_METRICS = ("mean", "median", "iqm", "optimality_gap")
#: The interval method when none is asked for: the one the coverage study (docs/validation.md) shows nearest
#: the nominal level at 3-10 runs per task.
DEFAULT_METHOD = "bootstrap-t"
#: The interval method of Agarwal et al. (2021) and rliable: what reproduces their numbers.
PAPER_METHOD = "percentile"
JORDAN_METHODS = ("pbp", "pbp-t", "bootstrap")
#: Smallest confidence level accepted: anything lower is almost surely a slip (``1.5`` meaning 1.5%?).
MIN_CI = 0.5
#: Replicates for the tuning view when ``tuning_reps`` is not given: ``min(reps, TUNING_REPS)``.
TUNING_REPS = 5_000
#: Which pairs of algorithms the differences and improvement tables compare (``pairs=``): ``auto`` (every pair up to
#: :data:`ALL_PAIRS_UP_TO` algorithms, else ``leader``), ``all`` (every pair: quadratic in the algorithms) or ``leader``
#: (each algorithm against the one with the best headline metric, as a reader of a sweep compares).
PAIR_RULES = ("auto", "all", "leader")
#: Up to this many algorithms ``pairs="auto"`` compares every pair (45 pairs); beyond, each against the leader.
ALL_PAIRS_UP_TO = 10
#: Bytes per row of a result table while it is built (measured: 1.08 M rank rows took about 100 MB).
_TABLE_ROW_BYTES = 96


def pair_rule(rule: str, n_algorithms: int) -> str:
    """The rule ``pairs=`` stands for among ``n_algorithms``: ``all`` or ``leader`` (``auto`` resolved)."""
    if rule == "auto":
        return "all" if n_algorithms <= ALL_PAIRS_UP_TO else "leader"
    return rule


def pair_count(rule: str, n_algorithms: int) -> int:
    """How many pairs ``pairs=rule`` compares among ``n_algorithms``."""
    a = max(n_algorithms, 0)
    return a * (a - 1) // 2 if pair_rule(rule, a) == "all" else max(a - 1, 0)


def _column(name: str, value: Any) -> str:
    """A column name of the scores (text, not empty)."""
    if not isinstance(value, str) or not value.strip():
        raise OptionError(name, said(kw(f"{name}="), f" names a column of the scores, got {value!r}"))
    return value.strip()


def ci_label(ci: float) -> str:
    """The exact percentage of a confidence level: ``0.95`` → ``95%``, ``0.995`` → ``99.5%``."""
    return f"{float(ci) * 100:.10g}%"


def _interval_methods() -> Sequence[str]:
    from ..stats import intervals

    return intervals.METHODS


def _method_default() -> str:
    """The default method and its rule in words (the registry's words; numpy-free, for ``--help``)."""
    from ..stats import intervals

    others = ", ".join(m for m in intervals.METHODS if m != DEFAULT_METHOD)
    return (
        f"{DEFAULT_METHOD}, which gives {intervals.rule_words(DEFAULT_METHOD)}; chosen for its coverage at 3-10 "
        f"runs per task, exceptions in docs/validation.md. Also {others}"
    )


def _median_intervals() -> Sequence[str]:
    from ..stats import intervals

    return intervals.MEDIAN_INTERVALS


def _rank_definitions() -> Sequence[str]:
    from ..stats import profiles as pf

    return pf.RANK_DEFINITIONS


def _chunk_bytes() -> int:
    from ..stats import bootstrap as bs

    return bs.DEFAULT_CHUNK_BYTES


def _level(name: str, value: Any) -> float:
    return confidence_level(value)


def _replicates(flag: str, what: Message | str, **more: Any) -> Any:
    """A replicate count's declaration: a positive integer set by ``flag``."""
    return dict(
        help=said("bootstrap replicates for ", what), check=d.positive_int, flag=flag, metavar="N", parse=int, **more
    )


@dataclass(frozen=True)
class AnalysisOptions:
    """Everything ``evaluate()`` needs besides the scores; defaults follow Agarwal et al. (2021), except the interval
    method (:data:`DEFAULT_METHOD`; theirs is :data:`PAPER_METHOD`).

    Each field is one option's whole declaration (:func:`.declared.option`): default, check, help, flag and
    whether it changes the numbers. Read an option's meaning in its ``help`` (``rl-reliable evaluate --help``
    prints them all).
    """

    normalize: str | Any | None = option(
        None,
        help="normalise scores per task: a packaged normaliser (atari, atari100k, atari-record, procgen, dmc, "
        "already-normalized: scores the training code normalised, kept as logged; percentiles: Jordan et al.), "
        "a CSV with columns task,low,high, a mapping {task: (low, high)} or such a DataFrame, or a normaliser "
        "object",
        record=d.normalize_record,
        flag="--normalize",
        metavar="NAME|PATH",
        parse=str,
        default_text="raw scores",
    )
    metrics: tuple[str | Callable[..., Any], ...] = option(
        DEFAULT_METRICS,
        help="aggregate metrics by name (mean, median, iqm, optimality_gap, dp25, trimmed_mean_<p>, p_above_<t>) "
        "or, in Python, as functions (see stats.metrics)",
        check=d.metrics,
        record=lambda value: [d.name_of(m) for m in value],
        flag="--metrics",
        metavar="M1,M2",
        parse=d.comma_names,
    )
    gamma: float = option(
        1.0,
        help="threshold of the optimality gap (finite, > 0)",
        check=d.within(0, math.inf, "finite and positive"),
        flag="--gamma",
        metavar="GAMMA",
        parse=float,
    )
    reps: int = option(
        50_000,
        **_replicates("--reps", "aggregate metrics and their differences", default_text="50000, as in the paper"),
    )
    profile_reps: int = option(
        2_000, **_replicates("--profile-reps", "performance profiles, ranks, per-task intervals")
    )
    improvement_reps: int = option(2_000, **_replicates("--improvement-reps", "probability of improvement"))
    curve_reps: int = option(2_000, **_replicates("--curve-reps", "sample-efficiency curves", only_with="curves"))
    ci: float = option(
        0.95,
        help="confidence level: a fraction such as 0.95 or a percentage such as 95 or 99.5; at least 50%; "
        "stored as a fraction",
        check=_level,
        flag="--ci",
        metavar="LEVEL",
        parse=float,
    )
    method: str = option(
        DEFAULT_METHOD,
        help="interval method, each table and statistic by the method's rule (the registry, stats.intervals; "
        f"recorded as provenance intervals); {PAPER_METHOD} gives the intervals of Agarwal et al. (2021) and rliable",
        check=d.one_of(_interval_methods, "an interval method"),
        flag="--method",
        metavar="METHOD",
        parse=str,
        default_text=_method_default,
    )
    task_bootstrap: bool = option(
        False,
        help="also resample tasks, not only runs within tasks (every algorithm's replicate r resamples the same "
        "tasks, so differences and probability of improvement are paired)",
        check=d.switch,
        flag="--task-bootstrap",
        parse=bool,
    )
    rank_by: str = option(
        "runs",
        help="rank distributions of single runs per task (runs: one random run per task per replicate, as in the "
        "paper) or of bootstrapped task means (task-means)",
        check=d.one_of(_rank_definitions, "a rank definition"),
        flag="--rank-by",
        metavar="RULE",
        parse=str,
        default_text="runs; or task-means",
    )
    pairs: str = option(
        "auto",
        help="pairs of algorithms the differences and improvement (P(X > Y)) tables compare: all (every pair; grows "
        "with the square of the algorithms), leader (each algorithm against the one with the best headline metric, "
        f"iqm when it is among the metrics) or auto (all up to {ALL_PAIRS_UP_TO} algorithms, else leader); said in "
        "methods.md",
        check=d.one_of(lambda: PAIR_RULES, "a pair rule"),
        flag="--pairs",
        metavar="RULE",
        parse=str,
        default_text=f"auto: all pairs up to {ALL_PAIRS_UP_TO} algorithms, else each against the leader",
    )
    median_interval: str = option(
        "auto",
        help="interval of the median (and its differences): auto (order-statistic at 10 runs per task or fewer, "
        "else what --method gives it), method, or order-statistic (median of each task's own Student-t bounds, its "
        "differences the MOVER over them: conservative and wide, it covers whenever every task's interval covers; "
        "the median's bootstrap intervals under-cover at few runs, docs/validation.md)",
        check=d.one_of(_median_intervals, "a median interval"),
        flag="--median-interval",
        metavar="RULE",
        parse=str,
        default_text="auto; or method, order-statistic",
    )
    successes: str | None = option(
        None,
        help=said(
            "column with each run's successful episodes: adds success-rate tables whose intervals see the seeds "
            "and never collapse at 0% or 100% (with ",
            kw("episodes="),
            "; docs/success-rates.md)",
        ),
        check=d.optional(_column),
        flag="--successes",
        metavar="COL",
        parse=str,
        default_text="none",
    )
    episodes: str | None = option(
        None,
        help=said("column with each run's number of evaluation episodes (with ", kw("successes="), ")"),
        check=d.optional(_column),
        flag="--episodes",
        metavar="COL",
        parse=str,
        default_text="none",
    )
    seed: int | np.random.Generator | None = option(
        0,
        help="random seed, recorded in provenance: the same runs and options give the same numbers (in Python "
        "also a numpy Generator, or None for fresh entropy, warned)",
        check=d.seed,
        record=d.seed_record,
        flag="--seed",
        metavar="N",
        parse=int,
    )
    taus: tuple[float, ...] | None = option(
        None,
        help="threshold grid of the performance profiles",
        check=d.optional(d.numbers),
        default_text="101 points over the score range",
    )
    curves: bool = option(
        False,
        help="also compute sample-efficiency curves (needs per-step scores)",
        check=d.switch,
        flag="--curves",
        parse=bool,
    )
    curve_points: int = option(
        25,
        help="steps on the curve grid",
        check=d.positive_int,
        only_with="curves",
        flag="--curve-points",
        metavar="N",
        parse=int,
    )
    curve_metrics: tuple[str, ...] = option(
        ("iqm", "mean"),
        help="metrics of the sample-efficiency curves",
        check=lambda name, value: tuple(
            d.known_metric(name, m) for m in ((value,) if isinstance(value, str) else value)
        ),
        only_with="curves",
    )
    budget: float | None = option(
        None,
        help="common training budget (a step; needs per-step scores): every final score is the run's last score "
        "at or before it, and the curves end there",
        check=d.optional(d.real),
        flag="--budget",
        metavar="STEP",
        parse=float,
        default_text="each run's last step; runs stopping more than one logging interval short are named in a warning",
    )
    only_algorithms: tuple[str, ...] | None = option(
        None,
        help=said(
            "analyse only these algorithms; an unknown name is an error listing the known. Trackers with ",
            kw("variant="),
            ": a base name (PPO) keeps every configuration and a full label ('PPO lr=0.001') keeps that one",
        ),
        check=d.names,
        flag="--only-algorithms",
        group=SELECTION,
        metavar="A,B",
        parse=d.comma_names,
        repeatable=True,
        default_text="all",
    )
    only_tasks: tuple[str, ...] | None = option(
        None,
        help="analyse only these tasks",
        check=d.names,
        flag="--only-tasks",
        group=SELECTION,
        metavar="T1,T2",
        parse=d.comma_names,
        repeatable=True,
        default_text="all",
    )
    jordan: bool = option(
        False,
        help="add Jordan et al. (2020)'s equilibrium aggregate with simultaneous intervals (jordan, "
        "jordan_quantiles tables)",
        check=d.switch,
        flag="--jordan",
        group=JORDAN,
        parse=bool,
    )
    jordan_delta: float = option(
        0.05,
        help="1 - confidence of the Jordan intervals, for all algorithms at once",
        check=d.within(0, 1, "between 0 and 1 (e.g. 0.05)"),
        flag="--delta",
        group=JORDAN,
        only_with="jordan",
        metavar="DELTA",
        parse=float,
    )
    jordan_method: str = option(
        "pbp",
        help="interval method of the Jordan aggregate",
        check=d.one_of(lambda: JORDAN_METHODS, "a Jordan interval method"),
        flag="--jordan-ci",
        group=JORDAN,
        only_with="jordan",
        metavar="METHOD",
        parse=str,
        default_text="pbp; also pbp-t, bootstrap",
    )
    jordan_reps: int = option(
        10_000,
        **_replicates(
            "--jordan-reps",
            said("the Jordan aggregate with ", kw("jordan_method=bootstrap")),
            group=JORDAN,
            default_text="10000, as in the paper",
            only_with="jordan",
        ),
    )
    score_range: tuple[float, float] | Mapping[str, tuple[float, float]] | None = option(
        None,
        help="known score range for PBP (in Python also a mapping of task to range)",
        check=d.optional(d.score_range),
        flag="--score-range",
        group=JORDAN,
        only_with="jordan",
        metavar="LOW,HIGH",
        parse=d.low_high,
        default_text="observed range, warned",
    )
    hyperparameter_keys: tuple[str, ...] = option(
        (),
        help="fields holding hyperparameters: adds the tuning-aware sweep view (tuning table)",
        check=d.names_or_none,
        flag="--hyperparameter-keys",
        group=JORDAN,
        metavar="K1,K2",
        parse=d.comma_names,
        default_text="none",
    )
    tuning_metric: str | None = option(
        None,
        help="metric that picks the best configuration in the tuning view",
        check=d.optional(d.known_metric),
        default_text="iqm when it is among the metrics, else the first",
    )
    tuning_reps: int | None = option(
        None,
        help="bootstrap replicates of the tuning view",
        check=d.optional(d.positive_int),
        default_text="min(reps, 5000)",
    )
    progress: bool = option(False, help="progress bars on stderr", check=d.switch, execution=True)
    chunk_bytes: int = option(
        default_factory=_chunk_bytes,
        help="memory budget of one chunk of replicates",
        check=lambda name, value: d.positive_int(name, value, "number of bytes"),
        execution=True,
    )
    executor: str | Executor | None = option(
        None,
        help="where independent units of work run: serial (this process), ray (Ray tasks on the cluster of "
        "RAY_ADDRESS, or a local Ray; needs pip install 'rl_reliable_logger[ray]') or, in Python, an executor "
        "object; the numbers are the same",
        check=d.executor,
        record=lambda value: (
            value if value is None or isinstance(value, str) else str(getattr(value, "name", type(value).__name__))
        ),
        execution=True,
        flag="--executor",
        metavar="NAME",
        parse=str,
        default_text="serial",
    )
    strict: bool = option(
        False,
        help="protocol checks that warn (unequal runs or budgets, evaluation settings that differ, max-over-training "
        "scores, reused tuning seeds) are an error instead (for CI; the command exits with status 2)",
        check=d.switch,
        flag="--strict",
        group=CHECKS,
        parse=bool,
    )
    comparisons: bool = option(
        False,
        help=said(
            "compare all pairs of algorithms with family-wise error control (max-T simultaneous intervals, Holm "
            "p-values) of the headline metric (iqm when it is among the metrics, else the first), with ",
            kw("improvement_reps="),
            " replicates (comparisons table)",
        ),
        check=d.switch,
        flag="--compare-all",
        group=CHECKS,
        parse=bool,
    )

    def __post_init__(self) -> None:
        d.check_all(self)
        if (self.successes is None) != (self.episodes is None):
            given, missing = ("successes", "episodes") if self.episodes is None else ("episodes", "successes")
            raise OptionError(
                given,
                said(
                    kw(f"{given}="),
                    " needs ",
                    kw(f"{missing}="),
                    " too: a success rate is a run's successes out of its episodes",
                ),
            )

    # ------------------------------------------------------------------ derived values
    def replace(self, **changes: Any) -> AnalysisOptions:
        """A copy with some options changed (validated again); unknown names are an error listing the known."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(
                f"unknown analysis option(s): {', '.join(unknown)}; the options are: {', '.join(sorted(known))}"
            )
        return dataclasses.replace(self, **changes) if changes else self

    @property
    def resolved_tuning_metric(self) -> str:
        """The metric that picks a configuration in the tuning view."""
        return self.tuning_metric if self.tuning_metric is not None else self.headline_metric

    @property
    def headline_metric(self) -> str:
        """``iqm`` when it is among ``metrics``, else the first named metric: the metric compared all-pairs."""
        names = [m for m in self.metrics if isinstance(m, str)]
        return "iqm" if "iqm" in names else (names[0] if names else "iqm")

    @property
    def resolved_tuning_reps(self) -> int:
        return self.tuning_reps if self.tuning_reps is not None else min(self.reps, TUNING_REPS)

    def resampling(self) -> ResamplingRequest:
        """The one resampling request of this analysis, passed whole to every table: the interval method, level,
        each table's replicates (:data:`..stats.intervals.REPLICATE_OPTIONS`), seed, task resampling, the median's
        interval, executor and chunk size."""
        from ..stats.intervals import REPLICATE_OPTIONS, ResamplingRequest

        return ResamplingRequest(
            method=self.method,
            level=self.ci,
            replicates={table: int(getattr(self, option)) for table, option in REPLICATE_OPTIONS.items()},
            seed=self.seed,
            task_bootstrap=self.task_bootstrap,
            median_interval=self.median_interval,
            executor=self.executor,
            chunk_bytes=self.chunk_bytes,
        )

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON-friendly values (``provenance["options"]``), each by its declaration's ``record``."""
        out = {f.name: (decl.record or d.record)(getattr(self, f.name)) for f, decl in declared(self)}
        out["ci_label"] = ci_label(self.ci)
        return out

    # ------------------------------------------------------------------ memory
    def memory_estimate(self, n_algorithms: int, n_tasks: int, n_runs: int) -> dict[str, float]:
        """Peak memory (bytes) of the parts of one analysis that grow with the replicate counts.

        ``n_runs`` is the largest number of runs of one algorithm (over all its tasks). Returns the
        bytes attributable to each replicate keyword plus ``"base"`` (chunk buffers), so that the
        largest feasible value of one keyword follows from the others.
        """
        from ..stats import aggregate, registry

        a, m, k = max(n_algorithms, 1), max(n_tasks, 1), max(n_runs, 1)
        n_metrics = len(self.metrics)
        # a studentized method (bootstrap-t) also keeps every algorithm's (statistic, standard error) replicates of
        # each studentized statistic (the mean, the IQM, the optimality gap)
        metrics = [registry.get_metric(x) for x in self.metrics]
        columns = n_metrics + 2 * len(aggregate.studentized_kinds(self.resampling(), "aggregates", metrics))
        n_taus = len(self.taus) if self.taus is not None else 101
        count_bytes = 2 if k < 2**16 else 4
        f8 = 8.0
        est = {
            # every algorithm's replicates are kept for the differences, plus the interval's sorted copies
            "reps": self.reps * columns * f8 * (a + 3),
            # profiles of one algorithm at a time; per-task means of every algorithm kept for the ranks
            "profile_reps": self.profile_reps * f8 * (2 * (2 * n_taus + 51) + 3 * a * m + a * m),
            # draw counts of every algorithm kept, and the replicates of one pair
            # all-pairs comparisons: every algorithm's replicates and draw counts, two families of pairs
            # P(X > Y) of one pair: running sums over y's runs, the gathered sums and the wins, (R, K) floats each
            "improvement_reps": self.improvement_reps * (a * k * count_bytes + 4 * k * f8)
            + (self.improvement_reps * (a * (k * count_bytes + f8) + a * a * f8 * 3) if self.comparisons else 0.0),
            "curve_reps": (self.curve_reps * len(self.curve_metrics) * self.curve_points * f8 * 3)
            if self.curves
            else 0.0,
            "jordan_reps": (self.jordan_reps * a * f8 * 3)
            if self.jordan and self.jordan_method == "bootstrap"
            else 0.0,
            # chunk buffers; with curves also one group of grid steps evaluated at once (stats.bootstrap.column_groups)
            "base": (4.0 + self.curves) * self.chunk_bytes
            + 256 * 2**20 * (self.jordan and self.jordan_method == "bootstrap"),
            # not a replicate count: the runs themselves, held a few times over (table, cells, sorted copies)
            "runs": 64.0 * a * k,
        }
        if self.hyperparameter_keys:
            est["base"] += self.resolved_tuning_reps * f8 * 4 * a
        # tables that grow with the algorithms: the rank distribution (every algorithm's probability of every
        # rank on every task and on average) and the differences of the compared pairs, about 96 bytes per row while
        # they are built (their columns as lists, then as frames); the ranks themselves are chunked (chunk_bytes)
        est["base"] += _TABLE_ROW_BYTES * (a * a * (m + 1) + pair_count(self.pairs, a) * n_metrics)
        return est

    def resolution_warnings(self) -> list[str]:
        """One warning per replicate count too small to resolve the ``ci`` level (with the count it needs).

        A percentile interval's end is the (1 - ci)/2 quantile of the replicates: with fewer than
        2 / (1 - ci) of them no replicate lies beyond it, and the interval's ends are just the
        extreme replicates. ``reps`` below 2 (a "95%" interval of one value, which need not contain the point)
        is refused with the count needed.
        """
        needed = replicates_needed(self.ci)
        if self.reps < 2:  # one replicate is one value: no interval at any level, so nothing to show
            raise OptionError(
                "reps",
                said(
                    kw(f"reps={self.reps}"),
                    f" cannot give a {ci_label(self.ci)} interval at all: an interval needs two or more "
                    f"replicates, and its ends need at least {needed:,} (2 / (1 - level)); use ",
                    kw("reps="),
                    f" of {needed:,} or more (the default is 50,000)",
                ),
            )
        used = ["reps", "profile_reps", "improvement_reps"]
        used += ["curve_reps"] if self.curves else []
        used += ["jordan_reps"] if self.jordan and self.jordan_method == "bootstrap" else []
        return [
            said(
                kw(f"{name}={getattr(self, name)}"),
                f" cannot resolve a {ci_label(self.ci)} interval: its ends need at least {needed:,} replicates (2 "
                "/ (1 - level)); the interval shown is only the range of the replicates",
            ).text()
            for name in used
            if getattr(self, name) < needed
        ]

    def check_memory(self, n_algorithms: int, n_tasks: int, n_runs: int, *, available: float | None = None) -> None:
        """Refuse replicate counts whose estimated memory exceeds the available memory.

        The message gives the estimate, the memory available and the largest feasible value of the
        keyword that needs most. ``available`` defaults to :func:`available_memory` (no check when unknown).
        """
        from ..data.counts import plural

        avail = available_memory() if available is None else available
        if avail is None:
            return
        est = self.memory_estimate(n_algorithms, n_tasks, n_runs)
        total = sum(est.values())
        if total <= avail:
            return
        if est["runs"] + est["base"] > avail:
            raise OptionError(
                "only_tasks",
                said(
                    f"{plural(n_algorithms, 'algorithm')} x {plural(n_tasks, 'task')} with up to {n_runs:,} runs "
                    f"per algorithm would need about {_bytes(est['runs'] + est['base'])} of memory for the runs "
                    f"alone, but about {_bytes(avail)} is available; analyse fewer tasks or runs at a time (",
                    kw("only_tasks="),
                    ")",
                ),
            )
        keyword = max((k for k in est if k not in ("base", "runs")), key=lambda k: est[k])
        value = getattr(self, keyword)
        per_rep = est[keyword] / value
        largest = int((avail - (total - est[keyword])) // per_rep) if per_rep > 0 else 0
        advice = (
            said("the largest feasible ", kw(f"{keyword}="), f" is {largest:,}")
            if largest >= 1
            else "lower the other replicate counts or analyse fewer algorithms"
        )
        raise OptionError(
            keyword,
            said(
                kw(f"{keyword}={value}"),
                f" would need about {_bytes(total)} of memory for {plural(n_algorithms, 'algorithm')} x "
                f"{plural(n_tasks, 'task')} x up to {n_runs} runs, but about {_bytes(avail)} is available; ",
                advice,
            ),
        )


def recorded_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``provenance["options"]`` that shape the results (every declared option but the execution
    settings: executor, progress, chunk size), in declaration order: the report hash covers them and every
    tracker records them on the analysis run (MLflow params, W&B config)."""
    return {name: options[name] for name in d.recorded_names(AnalysisOptions) if name in options}


def published_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """What a tracker records on the analysis run (MLflow params, W&B config): every entry of
    ``provenance["options"]`` but the execution settings, read from the declarations (``execution=True``), so a
    value derived from an option (``ci_label``) is published as the option is."""
    execution = {f.name for f, decl in d.declared(AnalysisOptions) if decl.execution}
    return {name: value for name, value in options.items() if name not in execution}


#: What a look's design holds that is no setting of it: the tasks and configurations it covers, the pairs (the
#: ``compare`` option's), the analysis options (published as options).
_NOT_SETTINGS = ("kind", "tasks", "configs", "pairs", "options")


def look_design(kind: str, design: Mapping[str, Any]) -> dict[str, Any]:
    """The frozen design of a published look of a watch or race (``provenance["look_design"]``): its ``kind`` and
    every setting of ``design`` (its JSON form) that changes the look's numbers and is one value or a list of names:
    looks, max_runs, alpha, metric, spending, a race's delta and hyperparameter keys, a watch's futility, ...

    Example:
        >>> look_design("race", {"looks": 3, "alpha": 0.05, "keys": ["lr"], "tasks": ["a"], "options": {}})
        {'kind': 'race', 'looks': 3, 'alpha': 0.05, 'keys': ['lr']}
    """
    out: dict[str, Any] = {"kind": kind}
    for key, value in design.items():
        names = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if key not in _NOT_SETTINGS and (isinstance(value, (str, int, float, bool)) or names):
            out[key] = value
    return out


def published(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """What a tracker records on the analysis run, flat: :func:`published_options` of ``provenance["options"]``
    and, for a published look of a watch or race, its design (:func:`look_design`) as ``design.<setting>``."""
    out = published_options(provenance.get("options") or {})
    out.update({f"design.{key}": value for key, value in (provenance.get("look_design") or {}).items()})
    return out


def confidence_level(value: Any) -> float:
    """A confidence level as a fraction, by the rule of the module docstring (``95`` and ``0.95`` → 0.95);
    every command (``evaluate``, ``plan``) reads ``ci=`` through this one function."""
    ci = d.real("ci", value)
    level = ci if 0 < ci < 1 else ci / 100.0 if 1 < ci < 100 else None
    if level is None:
        raise OptionError(
            "ci",
            said(
                kw(f"ci={value!r}"),
                " is not a confidence level: give a fraction in (0, 1) such as 0.95, or a percentage in (1, 100) "
                "such as 95 or 99.5",
            ),
        )
    if level < MIN_CI:
        raise OptionError(
            "ci",
            said(
                kw(f"ci={value!r}"),
                f" reads as a {ci_label(level)} interval; levels below {ci_label(MIN_CI)} are refused as a likely "
                "slip (did you mean 0.95 or 95?)",
            ),
        )
    return level


def replicates_needed(ci: float) -> int:
    """Fewest bootstrap replicates whose (1 - ci)/2 tails each hold at least one replicate."""
    return math.ceil(2.0 / (1.0 - ci) - 1e-9)


def check_plan_memory(
    n_tasks: int, largest_n: int, sim_reps: int, *, pair: bool, available: float | None = None
) -> None:
    """Refuse a plan whose synthetic experiments would not fit in memory (before simulating, never an OOM kill).

    One synthetic experiment of one algorithm holds its ``sim_reps`` x (runs per task x tasks) draw
    indices, the drawn values, their sorted copy and (for a pair) the draw counts.
    """
    from ..data.counts import plural

    avail = available_memory() if available is None else available
    if avail is None:
        return
    per_rep = 8.0 * max(n_tasks, 1) * max(largest_n, 1) * (6 if pair else 4)
    need = sim_reps * per_rep + 64 * 2**20
    if need <= avail:
        return
    largest = int((avail - 64 * 2**20) // per_rep)
    advice = (
        said(
            "lower ",
            kw("sim_reps="),
            f" to at most {largest:,} or simulate fewer runs per task (",
            kw("runs="),
            " / ",
            kw("max_runs="),
            ")",
        )
        if largest >= 10
        else said("simulate fewer runs per task (", kw("runs="), " / ", kw("max_runs="), ")")
    )
    raise OptionError(
        "sim_reps",
        said(
            f"planning {largest_n:,} runs per task x {plural(n_tasks, 'task')} with ",
            kw(f"sim_reps={sim_reps}"),
            f" would need about {_bytes(need)} of memory, but about {_bytes(avail)} is available; ",
            advice,
        ),
    )


class OptionKeywords(TypedDict, total=False):
    """The keywords of ``evaluate()`` (and ``aggregate()``): one per :class:`AnalysisOptions` field, typed as the
    values it accepts (sequences may be lists; ``ci`` may be a percentage), so type checkers and IDEs see every
    option. Python cannot derive a TypedDict from a dataclass for type checkers, so this typing-only view names
    the fields again (``tests/test_api_types.py`` fails when the two differ); every other fact of an option is
    in its field's declaration."""

    normalize: str | Any | None
    metrics: Sequence[str | Callable[..., Any]]
    gamma: float
    reps: int
    profile_reps: int
    improvement_reps: int
    curve_reps: int
    ci: float
    method: str
    task_bootstrap: bool
    rank_by: str
    pairs: str
    median_interval: str
    successes: str | None
    episodes: str | None
    seed: int | np.random.Generator | None
    taus: Sequence[float] | np.ndarray | None
    curves: bool
    curve_points: int
    curve_metrics: Sequence[str]
    budget: float | None
    only_algorithms: Sequence[str] | None
    only_tasks: Sequence[str] | None
    jordan: bool
    jordan_delta: float
    jordan_method: str
    jordan_reps: int
    score_range: tuple[float, float] | Mapping[str, tuple[float, float]] | None
    hyperparameter_keys: Sequence[str]
    tuning_metric: str | None
    tuning_reps: int | None
    progress: bool
    chunk_bytes: int
    executor: str | Executor | None
    strict: bool
    comparisons: bool


if TYPE_CHECKING:  # PEP 692 (``**kwargs: Unpack[...]``); typing has Unpack from Python 3.11 on
    from typing_extensions import Unpack


def as_options(options: AnalysisOptions | None = None, **overrides: Unpack[OptionKeywords]) -> AnalysisOptions:
    """``options`` (default: all defaults) with ``overrides`` applied; sequences become tuples."""
    base = options if options is not None else AnalysisOptions()
    if not isinstance(base, AnalysisOptions):
        raise TypeError(f"options must be an AnalysisOptions, got {type(base).__name__}")
    import numpy as np

    fixed = {k: (tuple(v) if isinstance(v, (list, np.ndarray)) else v) for k, v in overrides.items()}
    out = base.replace(**fixed)
    d.check_given(out, fixed)  # a keyword that cannot act (curve_reps= without curves=True) is refused
    return out


__all__ = [
    "DEFAULT_METRICS",
    "JORDAN_METHODS",
    "AnalysisOptions",
    "OptionKeywords",
    "OptionError",
    "as_options",
    "available_memory",
    "check_plan_memory",
    "ci_label",
    "confidence_level",
    "recorded_options",
    "replicates_needed",
]
