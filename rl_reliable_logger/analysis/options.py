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
    rl_reliable_logger.analysis.options.OptionError: `method='studentized'` is not an interval method; choose one of percentile, basic, bc, bca, expanded, bootstrap-t
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from .. import executors
from ..data.counts import plural
from ..errors import InputError
from ..executors import Executor
from ..memory import available_memory
from ..memory import format_bytes as _bytes
from ..stats import bootstrap as bs
from ..stats import profiles as pf
from ..stats import registry

DEFAULT_METRICS = ("mean", "median", "iqm", "optimality_gap")
JORDAN_METHODS = ("pbp", "pbp-t", "bootstrap")
#: Smallest confidence level accepted: anything lower is almost surely a slip (``1.5`` meaning 1.5%?).
MIN_CI = 0.5
#: Replicates for the tuning view when ``tuning_reps`` is not given: ``min(reps, TUNING_REPS)``.
TUNING_REPS = 5_000
#: Bytes per row of a result table while it is built (measured: 1.08 M rank rows took about 100 MB).
_TABLE_ROW_BYTES = 96


class OptionError(InputError):
    """A bad analysis option. ``keyword`` is the offending keyword argument of :class:`AnalysisOptions`.

    The message names keywords backticked, as every library message does (```reps=```, ```ci=1.5```),
    so that the command line can put its flags in their place (``--reps``, ``--ci 1.5``).
    """

    def __init__(self, keyword: str, message: str) -> None:
        self.keyword = keyword
        super().__init__(message, [keyword])


def ci_label(ci: float) -> str:
    """The exact percentage of a confidence level: ``0.95`` → ``95%``, ``0.995`` → ``99.5%``."""
    return f"{float(ci) * 100:.10g}%"


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _names(keyword: str, value: Any) -> tuple[str, ...] | None:
    """A list of names (algorithms, tasks, columns) as a tuple of strings; a bare string is one name."""
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else tuple(value)
    if not items or any(not isinstance(v, str) or not v for v in items):
        raise OptionError(keyword, f"`{keyword}=` must be a non-empty list of non-empty names, got {value!r}")
    return items


@dataclass(frozen=True)
class AnalysisOptions:
    """Everything ``evaluate()`` needs besides the scores; defaults follow Agarwal et al. (2021).

    Args:
        normalize: packaged normaliser (``atari``, ``atari100k``, ``procgen``, ``dmc``, ``percentiles``, ...),
            a CSV path ``task,low,high``, a normaliser object, or None for raw scores.
        metrics: aggregate metrics by name (``mean, median, iqm, optimality_gap, dp25, trimmed_mean_<p>,
            p_above_<t>``) or as functions (see ``stats.metrics``).
        gamma: threshold of the optimality gap (finite, > 0).
        reps: bootstrap replicates for aggregates and their differences (paper: 50,000).
        profile_reps, improvement_reps, curve_reps: replicates for profiles / ranks / per-task intervals,
            probability of improvement, sample-efficiency curves.
        ci: confidence level, a fraction in [0.5, 1) or a percentage in [50, 100); stored as a fraction.
        method: interval method, one of ``percentile`` (default), ``basic``, ``bc``, ``bca``, ``expanded`` or
            ``bootstrap-t`` (small samples; see ``stats.bootstrap``). It applies to every table (the rule and
            its exceptions: the registry, ``stats.intervals``; recorded as ``provenance["intervals"]``);
            with 10 or fewer runs per task ``bootstrap-t`` is the one the coverage study recommends (README).
        task_bootstrap: also resample tasks, not only runs within tasks (every algorithm's replicate r
            resamples the same tasks, so differences and probability of improvement are paired).
        rank_by: rank distributions of ``"runs"`` (default, the paper's: one random run per task per
            replicate) or ``"task-means"`` (bootstrapped task means); see ``stats.profiles``.
        seed: int (default 0, so the same inputs give the same numbers), a numpy Generator, or None
            for fresh entropy (warned).
        taus: τ grid of the performance profiles (default: 101 points over the score range).
        curves, curve_points, curve_metrics: sample-efficiency curves (the table needs steps).
        budget: common training budget (a step; the table needs steps): every final score is the run's last
            score at or before it, and the curves end there. Default None: each run's last step (runs that
            stop more than one logging interval short of their cell's longest run are named in a warning).
        only_algorithms, only_tasks: analyse only these algorithms / tasks (a name that is not in the
            table is an error naming the known ones).
        jordan: add Jordan et al. (2020)'s equilibrium aggregate (``jordan``, ``jordan_quantiles`` tables).
        jordan_delta, jordan_method, jordan_reps, score_range: its ``1 - delta`` simultaneous intervals
            (``pbp``, ``pbp-t``, ``bootstrap``), bootstrap replicates and known score range for PBP.
        hyperparameter_keys: columns defining a configuration: adds the tuning-aware view (``tuning``).
        tuning_metric, tuning_reps: metric that picks the best configuration (default ``iqm`` when it is
            among ``metrics``, else the first) and its replicates (default ``min(reps, 5000)``).
        progress: progress bars on stderr. chunk_bytes: memory budget of one chunk of replicates.
        executor: where independent units of work run: ``"serial"`` (default, in this process), ``"ray"``
            (Ray tasks on the cluster of ``RAY_ADDRESS`` or a local one; ``pip install rl_reliable_logger[ray]``)
            or an executor object (``rl_reliable_logger.executors``). The numbers do not depend on it (to the
            last bit when BLAS starts with the same thread count, as under ``OMP_NUM_THREADS=1``).
        strict: protocol checks (``analysis.protocol``, run before any statistics) that warn become an
            error instead, for CI pipelines.
        comparisons: add all-pairs comparisons with family-wise error control (``comparisons`` table,
            ``analysis.comparisons``) of the headline metric (the tuning metric rule: ``iqm`` when it is
            among ``metrics``, else the first), with ``improvement_reps`` replicates.
    """

    normalize: str | Any | None = None
    metrics: tuple[str | Callable[..., Any], ...] = DEFAULT_METRICS
    gamma: float = 1.0
    reps: int = 50_000
    profile_reps: int = 2_000
    improvement_reps: int = 2_000
    curve_reps: int = 2_000
    ci: float = 0.95
    method: str = "percentile"
    task_bootstrap: bool = False
    rank_by: str = "runs"
    seed: int | np.random.Generator | None = 0
    taus: tuple[float, ...] | None = None
    curves: bool = False
    curve_points: int = 25
    curve_metrics: tuple[str, ...] = ("iqm", "mean")
    budget: float | None = None
    only_algorithms: tuple[str, ...] | None = None
    only_tasks: tuple[str, ...] | None = None
    jordan: bool = False
    jordan_delta: float = 0.05
    jordan_method: str = "pbp"
    jordan_reps: int = 10_000
    score_range: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None
    hyperparameter_keys: tuple[str, ...] = ()
    tuning_metric: str | None = None
    tuning_reps: int | None = None
    progress: bool = False
    chunk_bytes: int = bs.DEFAULT_CHUNK_BYTES
    executor: str | Executor | None = None
    strict: bool = False
    comparisons: bool = False

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)
        for name in ("reps", "profile_reps", "improvement_reps", "curve_reps", "curve_points", "jordan_reps"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise OptionError(name, f"`{name}=` must be a positive integer, got {value!r}")
            set_(name, int(value))
        if self.tuning_reps is not None:
            if not _is_int(self.tuning_reps) or self.tuning_reps < 1:
                raise OptionError("tuning_reps", f"`tuning_reps=` must be a positive integer, got {self.tuning_reps!r}")
            set_("tuning_reps", int(self.tuning_reps))
        if not _is_int(self.chunk_bytes) or self.chunk_bytes < 1:
            raise OptionError(
                "chunk_bytes", f"`chunk_bytes=` must be a positive number of bytes, got {self.chunk_bytes!r}"
            )
        try:
            set_("executor", executors.check(self.executor))
        except InputError as err:
            raise OptionError("executor", str(err)) from None
        set_("ci", self._level(self.ci))
        if self.method not in bs.METHODS:
            raise OptionError(
                "method",
                f"`method={self.method!r}` is not an interval method; choose one of {', '.join(bs.METHODS)}",
            )
        if self.rank_by not in pf.RANK_DEFINITIONS:
            raise OptionError(
                "rank_by",
                f"`rank_by={self.rank_by!r}` is not a rank definition; choose one of {', '.join(pf.RANK_DEFINITIONS)}",
            )
        if self.jordan_method not in JORDAN_METHODS:
            raise OptionError(
                "jordan_method",
                f"`jordan_method={self.jordan_method!r}` is not a Jordan interval method; "
                f"choose one of {', '.join(JORDAN_METHODS)}",
            )
        gamma = self._real("gamma", self.gamma)
        if not gamma > 0:
            raise OptionError("gamma", f"`gamma=` must be finite and positive, got {self.gamma!r}")
        set_("gamma", gamma)
        delta = self._real("jordan_delta", self.jordan_delta)
        if not 0 < delta < 1:
            raise OptionError(
                "jordan_delta", f"`jordan_delta=` must be between 0 and 1 (e.g. 0.05), got {self.jordan_delta!r}"
            )
        set_("jordan_delta", delta)
        if isinstance(self.metrics, (str, bytes)) or callable(self.metrics):
            set_("metrics", (self.metrics,))
        set_("metrics", tuple(self.metrics))
        if not self.metrics:
            raise OptionError("metrics", "`metrics=` is empty: give at least one metric (e.g. iqm)")
        names = [self._metric("metrics", m).name for m in self.metrics]
        if len(set(names)) != len(names):
            raise OptionError("metrics", f"`metrics=` must be unique, got {names}")
        set_(
            "curve_metrics", tuple((self.curve_metrics,) if isinstance(self.curve_metrics, str) else self.curve_metrics)
        )
        for m in self.curve_metrics:
            self._metric("curve_metrics", m)
        if self.budget is not None:
            set_("budget", self._real("budget", self.budget))
        if self.tuning_metric is not None:
            self._metric("tuning_metric", self.tuning_metric)
        if self.taus is not None:
            taus = tuple(float(t) for t in np.asarray(self.taus, dtype=float).ravel())
            if not taus or not all(math.isfinite(t) for t in taus):
                raise OptionError("taus", "`taus=` must be a non-empty list of finite numbers")
            set_("taus", taus)
        set_("only_algorithms", _names("only_algorithms", self.only_algorithms))
        set_("only_tasks", _names("only_tasks", self.only_tasks))
        set_("hyperparameter_keys", _names("hyperparameter_keys", self.hyperparameter_keys or None) or ())
        set_("score_range", self._score_range(self.score_range))
        seed = self.seed
        if not (seed is None or _is_int(seed) or isinstance(seed, np.random.Generator)):
            raise OptionError("seed", f"`seed=` must be an integer, a numpy Generator or None, got {seed!r}")
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            if seed < 0:
                raise OptionError("seed", f"`seed=` must be a non-negative integer, got {seed!r}")
            set_("seed", int(seed))
        for flag in ("task_bootstrap", "curves", "jordan", "progress", "strict", "comparisons"):
            set_(flag, bool(getattr(self, flag)))

    # ------------------------------------------------------------------ validation helpers
    @staticmethod
    def _real(name: str, value: Any) -> float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise OptionError(name, f"`{name}=` must be a number, got {value!r}")
        out = float(value)
        if not math.isfinite(out):
            raise OptionError(name, f"`{name}=` must be finite, got {value!r}")
        return out

    @classmethod
    def _level(cls, value: Any) -> float:
        return confidence_level(value)

    @staticmethod
    def _metric(keyword: str, metric: Any) -> Any:
        try:
            return registry.get_metric(metric)
        except (ValueError, KeyError) as err:
            raise OptionError(keyword, f"`{keyword}=`: {err}") from None

    @classmethod
    def _score_range(cls, value: Any) -> Any:
        if value is None:
            return None

        def pair(v: Any) -> tuple[float, float]:
            try:
                low, high = (cls._real("score_range", x) for x in v)
            except (TypeError, ValueError):
                raise OptionError("score_range", f"`score_range=` must be (low, high), got {v!r}") from None
            if not low < high:
                raise OptionError("score_range", f"`score_range=` needs low < high, got {v!r}")
            return low, high

        if isinstance(value, Mapping):
            return {str(k): pair(v) for k, v in value.items()}
        return pair(value)

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

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON-friendly values (for provenance)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "metrics":
                value = [
                    m if isinstance(m, str) else getattr(m, "name", getattr(m, "__name__", repr(m))) for m in value
                ]
            elif f.name == "seed" and isinstance(value, np.random.Generator):
                value = repr(value)
            elif f.name == "normalize" and value is not None and not isinstance(value, str):
                value = str(value)
            elif f.name == "executor" and value is not None and not isinstance(value, str):
                value = str(getattr(value, "name", type(value).__name__))
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = {k: list(v) for k, v in value.items()}
            out[f.name] = value
        out["ci_label"] = ci_label(self.ci)
        return out

    # ------------------------------------------------------------------ memory
    def memory_estimate(self, n_algorithms: int, n_tasks: int, n_runs: int) -> dict[str, float]:
        """Peak memory (bytes) of the parts of one analysis that grow with the replicate counts.

        ``n_runs`` is the largest number of runs of one algorithm (over all its tasks). Returns the
        bytes attributable to each replicate keyword plus ``"base"`` (chunk buffers), so that the
        largest feasible value of one keyword follows from the others.
        """
        a, m, k = max(n_algorithms, 1), max(n_tasks, 1), max(n_runs, 1)
        n_metrics = len(self.metrics)
        n_taus = len(self.taus) if self.taus is not None else 101
        count_bytes = 2 if k < 2**16 else 4
        f8 = 8.0
        est = {
            # every algorithm's replicates are kept for the differences, plus the interval's sorted copies
            "reps": self.reps * n_metrics * f8 * (a + 3),
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
        # rank on every task and on average) and the differences of every pair, about 96 bytes per row while
        # they are built (their columns as lists, then as frames); the ranks themselves are chunked (chunk_bytes)
        est["base"] += _TABLE_ROW_BYTES * (a * a * (m + 1) + a * (a - 1) / 2 * n_metrics)
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
                f"`reps={self.reps}` cannot give a {ci_label(self.ci)} interval at all: an interval needs two or more "
                f"replicates, and its ends need at least {needed:,} (2 / (1 - level)); use `reps=` of {needed:,} or "
                "more (the default is 50,000)",
            )
        used = ["reps", "profile_reps", "improvement_reps"]
        used += ["curve_reps"] if self.curves else []
        used += ["jordan_reps"] if self.jordan and self.jordan_method == "bootstrap" else []
        return [
            f"`{name}={getattr(self, name)}` cannot resolve a {ci_label(self.ci)} interval: its ends need at least "
            f"{needed:,} replicates (2 / (1 - level)); the interval shown is only the range of the replicates"
            for name in used
            if getattr(self, name) < needed
        ]

    def check_memory(self, n_algorithms: int, n_tasks: int, n_runs: int, *, available: float | None = None) -> None:
        """Refuse replicate counts whose estimated memory exceeds the available memory.

        The message gives the estimate, the memory available and the largest feasible value of the
        keyword that needs most. ``available`` defaults to :func:`available_memory` (no check when unknown).
        """
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
                f"{plural(n_algorithms, 'algorithm')} x {plural(n_tasks, 'task')} with up to {n_runs:,} runs per algorithm would need "
                f"about {_bytes(est['runs'] + est['base'])} of memory for the runs alone, but about "
                f"{_bytes(avail)} is available; analyse fewer tasks or runs at a time (`only_tasks=`)",
            )
        keyword = max((k for k in est if k not in ("base", "runs")), key=lambda k: est[k])
        value = getattr(self, keyword)
        per_rep = est[keyword] / value
        largest = int((avail - (total - est[keyword])) // per_rep) if per_rep > 0 else 0
        advice = (
            f"the largest feasible `{keyword}=` is {largest:,}"
            if largest >= 1
            else "lower the other replicate counts or analyse fewer algorithms"
        )
        raise OptionError(
            keyword,
            f"`{keyword}={value}` would need about {_bytes(total)} of memory for {plural(n_algorithms, 'algorithm')} x "
            f"{plural(n_tasks, 'task')} x up to {n_runs} runs, but about {_bytes(avail)} is available; {advice}",
        )


def confidence_level(value: Any) -> float:
    """A confidence level as a fraction, by the rule of the module docstring (``95`` and ``0.95`` → 0.95);
    every command (``evaluate``, ``plan``) reads ``ci=`` through this one function."""
    ci = AnalysisOptions._real("ci", value)
    level = ci if 0 < ci < 1 else ci / 100.0 if 1 < ci < 100 else None
    if level is None:
        raise OptionError(
            "ci",
            f"`ci={value!r}` is not a confidence level: give a fraction in (0, 1) such as 0.95, "
            "or a percentage in (1, 100) such as 95 or 99.5",
        )
    if level < MIN_CI:
        raise OptionError(
            "ci",
            f"`ci={value!r}` reads as a {ci_label(level)} interval; levels below {ci_label(MIN_CI)} are "
            "refused as a likely slip (did you mean 0.95 or 95?)",
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
    avail = available_memory() if available is None else available
    if avail is None:
        return
    per_rep = 8.0 * max(n_tasks, 1) * max(largest_n, 1) * (6 if pair else 4)
    need = sim_reps * per_rep + 64 * 2**20
    if need <= avail:
        return
    largest = int((avail - 64 * 2**20) // per_rep)
    advice = (
        f"lower `sim_reps=` to at most {largest:,} or simulate fewer runs per task (`runs=` / `max_runs=`)"
        if largest >= 10
        else "simulate fewer runs per task (`runs=` / `max_runs=`)"
    )
    raise OptionError(
        "sim_reps",
        f"planning {largest_n:,} runs per task x {plural(n_tasks, 'task')} with `sim_reps={sim_reps}` would need about "
        f"{_bytes(need)} of memory, but about {_bytes(avail)} is available; {advice}",
    )


class OptionKeywords(TypedDict, total=False):
    """The keywords of ``evaluate()`` (and ``aggregate()``): one per :class:`AnalysisOptions` field, typed as the
    values it accepts (sequences may be lists; ``ci`` may be a percentage), so type checkers and IDEs see every
    option. A test keeps these names equal to the dataclass's fields."""

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
    fixed = {k: (tuple(v) if isinstance(v, (list, np.ndarray)) else v) for k, v in overrides.items()}
    return base.replace(**fixed)


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
    "replicates_needed",
]
