"""evaluate(): ScoreTable + options → Report. The one place the statistics are assembled.

Defaults follow Agarwal et al. (2021): 50,000 bootstrap replicates for aggregate metrics, 2,000 for
performance profiles, probability of improvement and rank distributions; 95% percentile intervals;
stratified bootstrap over runs within each (algorithm, task) cell.
"""

from __future__ import annotations

import copy
import datetime as _dt
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.counts import agree, count_runs, plural
from ..data.normalize import spec_text
from ..data.scores import CANONICAL, ScoreTable
from ..stats import aggregate as agg
from ..stats import bootstrap as bs
from ..stats import checks as ck
from ..stats import curves as cv
from ..stats import intervals, registry
from ..stats import metrics as mt
from ..stats import profiles as pf
from ..version import __version__
from . import comparisons as cmp
from . import protocol as pc
from . import trust
from .aggregates import (
    Prepared,
    aggregate_tables,
    analysis_streams,
    cells_by_algorithm,
    ci_bounds,
    prepare,
)
from .budgets import histories
from .inputs import as_score_table
from .jordan import jordan_tables, tuning_table
from .notices import emit as emit_warnings
from .options import DEFAULT_METRICS, AnalysisOptions, OptionKeywords, as_options, ci_label
from .redacted import redact_report
from .report import Report

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_METRICS", "evaluate"]


class _Progress:
    """A tqdm bar on stderr when asked for and available; silent otherwise."""

    def __init__(self, total: int, enabled: bool, desc: str = "bootstrap") -> None:
        self.bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="rep", unit_scale=True, file=sys.stderr, leave=False)
            except ImportError:  # pragma: no cover - tqdm is optional
                self.bar = None

    def __call__(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _versions() -> dict[str, str]:
    import scipy

    return {
        "rl_reliable_logger": __version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
        "python": platform.python_version(),
    }


def evaluate(
    table: ScoreTable,
    options: AnalysisOptions | None = None,
    *,
    source: dict[str, Any] | None = None,
    **overrides: Unpack[OptionKeywords],
) -> Report:
    """Evaluate every algorithm of ``table`` with interval estimates; return the complete :class:`Report`.

    Args:
        table: validated per-run scores.
        options: an :class:`~rl_reliable_logger.analysis.options.AnalysisOptions` (default: the paper's
            replicate counts, ``bootstrap-t`` intervals, ``seed=0``; ``method="percentile"`` for the paper's
            intervals). Every option can also be given as a keyword (``reps=2000``), which
            overrides the same field of ``options``; the keywords are typed by
            :class:`~rl_reliable_logger.analysis.options.OptionKeywords` (see ``AnalysisOptions`` for what each
            means).
        source: where the scores came from (recorded in provenance).

    Every option is validated before any computation (an
    :class:`~rl_reliable_logger.analysis.options.OptionError` names the keyword), including the
    memory the replicate counts need. The protocol checks (:mod:`.protocol`) run next, still before
    any statistics: their findings are ``provenance["protocol"]`` and the first warnings, and with
    ``strict=True`` a warning among them is an :class:`~rl_reliable_logger.errors.InputError`.
    The Report holds the core tables, plus ``jordan`` and ``jordan_quantiles`` with ``jordan=True``,
    ``tuning`` with ``hyperparameter_keys`` and ``comparisons`` with ``comparisons=True``.

    ``report.warnings`` lists every warning in full; they are also emitted, grouped one line per algorithm
    (:func:`.notices.grouped`), as :class:`~rl_reliable_logger.ReliabilityWarning` through Python's
    :mod:`warnings`, so a notebook shows each once and ``warnings.simplefilter("ignore", ReliabilityWarning)``
    silences them.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 4 + ["B"] * 4, "task": ["x", "x", "y", "y"] * 2,
        ...                    "seed": [0, 1] * 4, "score": [1, 2, 3, 4, 2, 3, 4, 5]})
        >>> report = evaluate(ScoreTable(df), reps=500, profile_reps=200, improvement_reps=200, seed=0)
        >>> report.headline("iqm")[["algorithm", "point"]].values.tolist()
        [['A', 2.5], ['B', 3.5]]
    """
    table = as_score_table(table)  # a DataFrame or a path is read like the CLI reads it; anything else: InputError
    opts = as_options(options, **overrides)
    started = _dt.datetime.now(_dt.timezone.utc)
    raw_table = table
    prep = prepare(table, opts)
    # before any statistics: what is wrong with the experiment itself (strict: refuse to go on)
    findings = pc.by_severity(
        pc.check_protocol(prep.selected or prep.table, hyperparameter_keys=opts.hyperparameter_keys or None)
    )
    pc.enforce(findings, strict=opts.strict)
    run = _setup(prep, opts)
    warnings = [pc.format_finding(f) for f in findings] + prep.warnings
    warnings += _scale_warnings(
        run.final, run.tasks, [m.name for m in run.metric_objs], opts.gamma,
        prep.normalization if opts.normalize is not None else None,
    )  # fmt: skip
    parts: list[Part] = []
    try:
        parts += [build(run) for build in TABLE_BUILDERS]
    finally:
        run.bar.close()
    parts += [build(run) for build in EXTRA_BUILDERS]
    for part in parts:
        warnings += part.warnings
    tables = {name: frame for part in parts for name, frame in part.tables.items()}
    provenance = _provenance(run, prep, raw_table, findings, parts, started, source)
    if opts.seed is None:
        warnings.append(
            "no seed given (seed=None): intervals will differ slightly from run to run; "
            "pass an integer seed for reproducible numbers."
        )
    scores_out = _without_secrets((prep.table if prep.table.has_steps and opts.curves else run.final).frame, warnings)
    core = {name: tables.pop(name) for name in CORE_TABLES}
    report = Report(
        **core,
        scores=scores_out.reset_index(drop=True),
        provenance=provenance,
        warnings=warnings,
        extra=tables,
    )
    report = redact_report(report)  # under redacting_run_names(...): every text, after the numbers, for every caller
    emit_warnings(report)  # grouped, as ReliabilityWarning: a notebook shows each once
    return report


#: The tables every Report holds (``Report`` fields), built by :data:`TABLE_BUILDERS`; other tables are extras.
CORE_TABLES = ("aggregates", "per_task", "improvement", "differences", "profiles", "ranks", "gap_curve", "curves")


@dataclass
class Run:
    """What the table builders share: the options, the cells, the random streams and the progress bar.

    ``dists`` and ``se_replicates``: the aggregates' replicates (and, studentized, the mean's and the IQM's standard
    errors) that the differences reuse.
    """

    opts: AnalysisOptions
    prep: Prepared
    cells: dict[str, bs.Cells]
    tasks: list[str]
    metric_objs: list[mt.Metric]
    rng: dict[str, dict[str, np.random.Generator]]
    shared_tasks: Any
    bar: _Progress
    spec: intervals.IntervalMethod
    side_seeds: tuple[Any, Any]
    dists: dict[str, np.ndarray] = field(default_factory=dict)
    se_replicates: dict[str, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)
    points: dict[tuple[str, str], float] = field(default_factory=dict)

    @property
    def final(self) -> ScoreTable:
        return self.prep.final

    @property
    def algorithms(self) -> list[str]:
        return self.prep.final.algorithms

    def table_spec(self, table: str) -> intervals.IntervalMethod:
        """The interval method ``table`` gets (the registry's rule for the requested method)."""
        return self.spec.for_table(table)

    def record(self, table: str, replicates: int, **extra: Any) -> dict[str, dict[str, Any]]:
        """``{table: {method, level, replicates, ...}}``: what was computed for ``table``, for provenance
        ``intervals`` (``replicates`` None where the method uses none; ``statistics``: the method of each
        statistic where the rule gives them their own)."""
        spec = self.table_spec(table)
        out: dict[str, Any] = {
            "method": spec.name,
            "level": self.opts.ci,
            "replicates": int(replicates) if spec.replicates else None,
        }
        own_median = table == "aggregates" and self.opts.median_interval != "method"
        if table in intervals.STATISTIC_TABLES and (spec.statistics or own_median):
            out["statistics"] = {m.name: self.statistic_method(table, m) for m in self.metric_objs}
        return {table: {**out, **extra}}

    def statistic_method(self, table: str, metric: mt.Metric) -> str:
        """The interval method ``metric`` gets in ``table``: the registry's rule, or the ``median_interval``
        option's for the aggregates' median."""
        kind = agg.statistic_kind(metric)
        if table == "aggregates" and kind == "median" and self.opts.median_interval != "method":
            return self.opts.median_interval
        return self.spec.for_statistic(table, kind).name


@dataclass
class Part:
    """What one builder returns: its tables, its provenance (``intervals`` records and other keys), warnings."""

    tables: dict[str, pd.DataFrame]
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _setup(prep: Prepared, opts: AnalysisOptions) -> Run:
    """Cells, metrics, streams and the progress bar: the same layout whatever is computed."""
    algorithms = prep.final.algorithms
    # the engine sees tasks (and random streams are assigned to algorithms) in sorted name order,
    # so results do not depend on the order of the input rows
    tasks = sorted(prep.final.tasks)
    # fixed layout: results do not depend on what else is computed; with task resampling every algorithm's
    # replicate r resamples the same tasks (paired differences and improvement)
    rng, shared_tasks = analysis_streams(opts.seed, algorithms, opts.task_bootstrap)
    side_seeds = _side_seeds(opts.seed)  # after the streams: a Generator seed spawns them in this order
    total = len(algorithms) * (opts.reps + 2 * opts.profile_reps + opts.improvement_reps) + (
        len(algorithms) * opts.curve_reps if opts.curves else 0
    )
    return Run(
        opts=opts,
        prep=prep,
        cells=cells_by_algorithm(prep.final, tasks),
        tasks=tasks,
        metric_objs=[registry.get_metric(m, gamma=opts.gamma) for m in opts.metrics],
        rng=rng,
        shared_tasks=shared_tasks,
        bar=_Progress(total, opts.progress),
        spec=intervals.requested(opts.method),
        side_seeds=side_seeds,
    )


def _provenance(
    run: Run,
    prep: Prepared,
    raw_table: ScoreTable,
    findings: list[pc.Finding],
    parts: list[Part],
    started: _dt.datetime,
    source: dict[str, Any] | None,
) -> dict[str, Any]:
    """What was computed and from what: the run's inputs, then every builder's part."""
    opts, frame_used, cells, algorithms, tasks = run.opts, run.final.frame, run.cells, run.algorithms, run.tasks
    seed = opts.seed
    recorded = {name: rec for part in parts for name, rec in part.intervals.items()}
    provenance: dict[str, Any] = {
        "created": started.isoformat(timespec="seconds"),
        "protocol": [f.to_dict() for f in findings],
        "source": {**dict(raw_table.source), **dict(source or {})},
        "normalization": prep.normalization,
        "normalize": spec_text(opts.normalize),
        "filters": prep.filters,
        "algorithms": algorithms,
        "tasks": tasks,
        "counts": count_runs(frame_used).to_dict(),
        "n_runs": {a: int((frame_used["algorithm"] == a).sum()) for a in algorithms},
        "runs_per_task": {a: {t: int(n) for t, n in zip(tasks, cells[a].sizes)} for a in algorithms},
        "runs_used": frame_used[["algorithm", "task", "run_id"]].astype(str).values.tolist(),
        "dropped": raw_table.dropped.astype(object).where(raw_table.dropped.notna(), None).to_dict("records"),
        "excluded": raw_table.source.get("excluded", []),
        "metrics": [m.name for m in run.metric_objs],
        "gamma": opts.gamma,
        "reps": opts.reps,
        "profile_reps": opts.profile_reps,
        "improvement_reps": opts.improvement_reps,
        "curve_reps": opts.curve_reps if opts.curves else None,
        "ci": opts.ci,
        "ci_label": ci_label(opts.ci),
        "method": opts.method,
        # per table: the interval method the registry's rule gave it, its level and replicate count
        "intervals": {name: recorded[name] for name in intervals.TABLES if name in recorded},
        "interval_fallbacks": [],
        "mean_skewness": None,
        "checks": pc.checks_run(prep.selected or prep.table, hyperparameter_keys=opts.hyperparameter_keys or None),
        "task_bootstrap": opts.task_bootstrap,
        "rank_by": opts.rank_by,
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
        "chunk_bytes": opts.chunk_bytes,
        "curves": {},
        "options": opts.to_dict(),
        "versions": _versions(),
    }
    for part in parts:
        for key, value in part.provenance.items():
            provenance[key] = provenance.get(key, []) + value if isinstance(value, list) else value
    return provenance


# ----------------------------------------------------------------------------- the builders
def _aggregates_part(run: Run) -> Part:
    """The aggregate metrics of every algorithm; keeps their replicates for the differences."""
    notes: list[str] = []
    table, run.dists = aggregate_tables(
        run.cells,
        run.metric_objs,
        run.opts.reps,
        run.rng["aggregates"],
        run.shared_tasks,
        run.opts.chunk_bytes,
        run.opts.ci,
        run.opts.method,
        run.bar,
        notes,
        run.se_replicates,
        median_interval=run.opts.median_interval,
    )
    run.points = dict(zip(zip(table["algorithm"], table["metric"]), table["point"]))
    return Part(
        {"aggregates": table},
        run.record("aggregates", run.opts.reps),
        {"interval_fallbacks": notes},
        notes,
    )


def _trust_part(run: Run) -> Part:
    """The skew diagnostic of the mean: recorded always, warned where the mean is reported."""
    trust_warnings, mean_skewness = trust.mean_trust(run.cells, differences=len(run.algorithms) > 1)
    reported = any(m.fn is mt.mean for m in run.metric_objs)
    return Part({}, provenance={"mean_skewness": mean_skewness}, warnings=trust_warnings if reported else [])


def _comparisons_part(run: Run) -> Part:
    """The all-pairs comparisons (``comparisons=True``), on their own stream."""
    opts = run.opts
    if not opts.comparisons:
        return Part({})
    if len(run.algorithms) < 2:
        return Part(
            {}, warnings=["`comparisons=True` needs at least two algorithms; no all-pairs comparisons were made."]
        )
    pairs = cmp.compare_all(
        run.final,
        metric=opts.headline_metric,
        reps=opts.improvement_reps,
        ci=opts.ci,
        gamma=opts.gamma,
        seed=_comparison_seed(opts.seed),
    )
    return Part(
        {"comparisons": pairs},
        provenance={"comparisons": pairs.attrs["method"], "comparisons_metric": opts.headline_metric},
    )


def _jordan_part(run: Run) -> Part:
    """Jordan et al.'s aggregate and quantile tables (``jordan=True``), on raw scores."""
    opts = run.opts
    if not opts.jordan:
        return Part({})
    tables, warnings = jordan_tables(
        run.prep.raw_final,  # percentiles do not depend on the scale: raw scores
        delta=opts.jordan_delta,
        method=opts.jordan_method,
        score_range=opts.score_range,
        reps=opts.jordan_reps,
        seed=run.side_seeds[0],
        progress=opts.progress,
        executor=opts.executor,
    )
    record = {"delta": opts.jordan_delta, "method": opts.jordan_method, "score_range": opts.score_range}
    return Part(tables, provenance={"jordan": {**record, "reps": opts.jordan_reps}}, warnings=warnings)


def _tuning_part(run: Run) -> Part:
    """The tuning view (``hyperparameter_keys``)."""
    opts = run.opts
    if not opts.hyperparameter_keys:
        return Part({})
    tuning, warnings = tuning_table(
        run.prep.raw_final,
        opts.hyperparameter_keys,
        metric=opts.resolved_tuning_metric,
        reps=opts.resolved_tuning_reps,
        seed=run.side_seeds[1],
        normalize=opts.normalize,
        ci=opts.ci,
    )
    record = {
        "hyperparameter_keys": list(opts.hyperparameter_keys),
        "metric": opts.resolved_tuning_metric,
        "reps": opts.resolved_tuning_reps,
    }
    return Part({"tuning": tuning}, provenance={"tuning": record}, warnings=warnings)


def _without_secrets(frame: pd.DataFrame, warnings: list[str]) -> pd.DataFrame:
    """The scores table as outputs get it: extra columns named like secrets dropped (with a warning), and the
    credentials inside other extra text columns (a URL's password, ``token=...``) redacted."""
    from ..redaction import is_secret_name, redact

    extra = [c for c in frame.columns if c not in CANONICAL]
    secret = [c for c in extra if is_secret_name(c)]
    if secret:
        warnings.append(
            f"column(s) {', '.join(repr(str(c)) for c in secret)} look like secrets by their name: they are not "
            "copied into the scores table, the results folder or the tracker"
        )
        frame = frame.drop(columns=secret)
    texts = [c for c in extra if c not in secret and not pd.api.types.is_numeric_dtype(frame[c])]
    if not texts:
        return frame
    block = frame[texts].astype(object)
    values = pd.unique(block.to_numpy().ravel())  # each distinct text once, however many columns hold it
    changed = {v: r for v in values if isinstance(v, str) and (r := redact(v)) != v}
    if not changed:
        return frame
    hit = [c for c, found in block.isin(list(changed)).any().items() if found]
    out = frame.copy()
    out[hit] = block[hit].apply(lambda col: col.map(lambda v: changed.get(v, v) if isinstance(v, str) else v))
    return out


def _scale_warnings(
    final: ScoreTable, tasks: list[str], metrics: list[str], gamma: float, normalization: str | None
) -> list[str]:
    """Aggregates that would mean little: raw scores of very different scales pooled over tasks, the optimality
    gap on a scale where ``gamma`` is no target (issue 13 item 7), and scores declared normalised (``normalization``,
    None for raw scores) that look like raw returns (issue 43; one warning, which then stands for the gap's)."""
    frame = final.frame
    normalized = normalization is not None
    out = []
    if not normalized:
        pooled = {t: frame.loc[frame["task"] == t, "score"].to_numpy(float) for t in tasks}
        out.append(ck.raw_scale_warning(pooled))
    else:
        contradicted = ck.normalization_warning(frame["score"].to_numpy(float), str(normalization), gamma)
        if contradicted:
            return [contradicted]
    if "optimality_gap" in metrics:
        out.append(ck.gap_warning(gamma, frame["score"].to_numpy(float), normalized=normalized))
    return [w for w in out if w]


def _comparison_seed(seed: Any) -> Any:
    """The all-pairs comparisons' own stream: never one of the streams of the other tables, so asking for
    them changes no other number."""
    if isinstance(seed, np.random.Generator):
        return seed.spawn(1)[0]
    if seed is None:
        return None
    return np.random.default_rng(np.random.SeedSequence([int(seed), 0xC0FFEE]))


def _side_seeds(seed: Any) -> tuple[Any, Any]:
    """Seeds of the Jordan and tuning parts: the integer itself, or two children of a Generator."""
    if isinstance(seed, np.random.Generator):
        jordan, tuning = seed.spawn(2)
        return jordan, tuning
    return seed, seed


# ----------------------------------------------------------------------------- pieces
# Intervals are per column, so every piece stacks its distributions and asks for their intervals together: the
# same numbers as one call per statistic, in one selection pass per ``chunk_bytes`` of replicates.
def _grouped_bounds(
    rows: int,
    width: int,
    count: int,
    fill,
    points: list[np.ndarray],
    ci: float,
    spec: intervals.IntervalMethod,
    chunk_bytes: int,
    tails: list[np.ndarray] | None = None,
):
    """``ci_bounds`` of ``count`` distributions of ``rows`` replicates and ``width`` statistics each, distribution
    ``i`` written by ``fill(i, out)`` into a ``(rows, width)`` block. The blocks are stacked ``chunk_bytes`` at a
    time (at least one), as one ``(rows, parts, width)`` view the selection reads without a copy. Returns one
    ``(low, high)`` pair per distribution. ``tails``: the expanded level of each distribution (one per
    statistic or a scalar), required by a method that ``needs_tail``."""
    lows, highs = [], []
    per_stack = max(1, chunk_bytes // max(1, rows * width * 8))
    for i in range(0, count, per_stack):
        j = min(count, i + per_stack)
        stack = np.empty((j - i, rows, width))
        for k in range(i, j):
            fill(k, stack[k - i])
        point = np.concatenate(points[i:j]).reshape(j - i, width)
        tail = None
        if spec.needs_tail:
            assert tails is not None, "the expanded interval needs each distribution's level"
            tail = np.stack([np.broadcast_to(t, (width,)) for t in tails[i:j]])
        low, high = ci_bounds(np.moveaxis(stack, 0, 1), point, ci, spec, tail=tail)
        lows.append(np.reshape(low, -1))
        highs.append(np.reshape(high, -1))
    low, high = np.concatenate(lows), np.concatenate(highs)
    return [(low[k * width : (k + 1) * width], high[k * width : (k + 1) * width]) for k in range(count)]


def _stacked_bounds(
    parts: list[np.ndarray],
    points: list[np.ndarray],
    ci: float,
    spec: intervals.IntervalMethod,
    chunk_bytes: int,
    tails=None,
):
    """:func:`_grouped_bounds` of distributions at hand, ``(B, n)`` each (the same B and n)."""

    def fill(i: int, out: np.ndarray) -> None:
        out[...] = parts[i]

    rows, width = parts[0].shape
    return _grouped_bounds(rows, width, len(parts), fill, points, ci, spec, chunk_bytes, tails)


def _pair_levels(cells, pairs, ci) -> list[np.ndarray]:
    """The expanded level of each pair's difference: both algorithms' cells pooled."""
    return [np.asarray(bs.expanded_level([cells[x], cells[y]], ci)) for x, y in pairs]


def _pairs(algorithms: list[str]) -> list[tuple[str, str]]:
    """Every pair of algorithms once, in table order."""
    return [(x, y) for i, x in enumerate(algorithms) for y in algorithms[i + 1 :]]


def _differences_part(run: Run) -> Part:
    """The differences between algorithms' aggregate metrics, on the aggregates' replicates."""
    table, notes = _differences(run)
    return Part(
        {"differences": table},
        run.record("differences", run.opts.reps),
        {"interval_fallbacks": notes},
        notes,
    )


def _difference_bounds(run: Run, pairs, pair_points, tails, spec):
    """The table method's bounds of every pair's differences (on the common replicates)."""
    dists, names, ci, chunk_bytes = run.dists, [m.name for m in run.metric_objs], run.opts.ci, run.opts.chunk_bytes
    n = min(d.shape[0] for d in dists.values())
    if all(d.shape[0] == n for d in dists.values()):  # always in evaluate(): many pairs' differences at once

        def fill(p: int, out: np.ndarray) -> None:
            np.subtract(dists[pairs[p][0]], dists[pairs[p][1]], out=out)

        return _grouped_bounds(n, len(names), len(pairs), fill, pair_points, ci, spec, chunk_bytes, tails)
    bounds = []  # replicate counts that differ between algorithms: one pair at a time, on their common replicates
    for k, ((x, y), pair_point) in enumerate(zip(pairs, pair_points)):
        n = min(dists[x].shape[0], dists[y].shape[0])
        tail = None if tails is None else tails[k]
        bounds.append(ci_bounds(dists[x][:n] - dists[y][:n], pair_point, ci, spec, tail=tail))
    return bounds


def _differences(run: Run) -> tuple[pd.DataFrame, list[str]]:
    """The differences table and its fallback notes. Each statistic gets the registry's rule: under
    ``bootstrap-t`` studentized for the mean and the IQM (from ``run.se_replicates``, each algorithm's (statistic,
    se) replicates), the
    normal interval with the bootstrap standard deviation for the median (at the pair's expanded level), expanded
    for every other metric and where the studentized replicates are degenerate (a sentence in the notes)."""
    names = [m.name for m in run.metric_objs]
    columns = ["algorithm_x", "algorithm_y", "metric", "point", "low", "high"]
    pairs = _pairs(run.algorithms)
    if not pairs or not names:
        return pd.DataFrame([], columns=columns), []
    ci, spec = run.opts.ci, run.table_spec("differences")
    pair_points = [np.array([run.points[(x, m)] - run.points[(y, m)] for m in names]) for x, y in pairs]
    tails = _pair_levels(run.cells, pairs, ci) if spec.needs_tail else None
    bounds = _difference_bounds(run, pairs, pair_points, tails, spec)
    notes: list[str] = []
    for j, m in enumerate(run.metric_objs):
        own = run.spec.for_statistic("differences", agg.statistic_kind(m))
        if own.studentized and run.se_replicates:
            _studentized_differences(run, pairs, bounds, j, notes)
        elif not own.studentized and own.bounds is not spec.bounds and own.bounds is not None:
            for k, (x, y) in enumerate(pairs):
                n = min(run.dists[x].shape[0], run.dists[y].shape[0])
                diff = run.dists[x][:n, j] - run.dists[y][:n, j]
                tail = None if tails is None else tails[k]
                bounds[k][0][j], bounds[k][1][j] = own.bounds(diff, pair_points[k][j], ci, tail, None)
    point = np.concatenate(pair_points)
    low = np.concatenate([b[0] for b in bounds])
    high = np.concatenate([b[1] for b in bounds])
    frame = pd.DataFrame(
        {
            "algorithm_x": [x for x, _ in pairs for _ in names],
            "algorithm_y": [y for _, y in pairs for _ in names],
            "metric": list(names) * len(pairs),
            "point": ck.clip_noise(point, low, high),
            "low": low,
            "high": high,
        },
        columns=columns,
    )
    return frame, notes


def _studentized_differences(run: Run, pairs, bounds, j: int, notes: list[str]) -> None:
    """The studentized interval of metric ``j``'s difference for every pair (in ``bounds``), or a note."""
    name, kind = run.metric_objs[j].name, agg.statistic_kind(run.metric_objs[j])
    for k, (x, y) in enumerate(pairs):
        found = agg.studentized_difference(run.se_replicates[x][kind], run.se_replicates[y][kind], run.opts.ci)
        if found is None:
            notes.append(f"{x} - {y}: " + agg.fallback_note(f"the {name} difference"))
        else:
            bounds[k][0][j], bounds[k][1][j] = found


def _profiles_part(run: Run) -> Part:
    """Performance profiles (runs and tasks) and the optimality gap as a function of its threshold."""
    opts, cells = run.opts, run.cells
    prof_columns = ["algorithm", "kind", "tau", "fraction", "low", "high"]
    gap_columns = ["algorithm", "gamma", "point", "low", "high"]
    records = {**run.record("profiles", opts.profile_reps), **run.record("gap_curve", opts.profile_reps)}
    if not cells:
        empty = {"profiles": pd.DataFrame([], columns=prof_columns), "gap_curve": pd.DataFrame([], columns=gap_columns)}
        return Part(empty, records)
    all_values = np.concatenate([c.values for c in cells.values()])
    taus = np.asarray(opts.taus, float) if opts.taus is not None else pf.default_taus(all_values)
    top = max(opts.gamma, float(np.quantile(all_values, 0.95)))
    gammas = np.linspace(min(0.0, float(all_values.min())), top, 51)
    algorithms = list(cells)
    points, dists = [], []
    for alg, c in cells.items():
        points.append(pf.profile_curves(bs.original(c), taus, gammas)[0])
        dists.append(
            bs.replicates(
                c,
                lambda r: pf.profile_curves(r, taus, gammas),
                opts.profile_reps,
                run.rng["profiles"][alg],
                task_bootstrap=opts.task_bootstrap,
                chunk_bytes=opts.chunk_bytes,
                progress=run.bar,
            )
        )
    spec = run.table_spec("profiles")
    tails = [np.asarray(bs.expanded_level(c, opts.ci)) for c in cells.values()] if spec.needs_tail else None
    bounds = _stacked_bounds(dists, points, opts.ci, spec, opts.chunk_bytes, tails)
    n_t, n_a = taus.size, len(algorithms)
    fractions, lows, highs, gap_point, gap_low, gap_high = [], [], [], [], [], []
    for point, (low, high) in zip(points, bounds):
        sl = slice(0, 2 * n_t)  # run-score then average-score profile
        # fractions: into [0, 1] and points into their intervals only where the excess is rounding noise
        lo_f, hi_f = ck.clip_fraction(low[sl]), ck.clip_fraction(high[sl])
        fractions.append(ck.clip_noise(ck.clip_fraction(point[sl]), lo_f, hi_f))
        lows.append(lo_f)
        highs.append(hi_f)
        sl = slice(2 * n_t, None)
        gap_point.append(ck.clip_noise(point[sl], low[sl], high[sl]))
        gap_low.append(low[sl])
        gap_high.append(high[sl])
    profiles = pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(2 * n_t)],
            "kind": (["runs"] * n_t + ["tasks"] * n_t) * n_a,
            "tau": np.tile(taus, 2 * n_a),
            "fraction": np.concatenate(fractions),
            "low": np.concatenate(lows),
            "high": np.concatenate(highs),
        },
        columns=prof_columns,
    )
    gap = pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(gammas.size)],
            "gamma": np.tile(gammas, n_a),
            "point": np.concatenate(gap_point),
            "low": np.concatenate(gap_low),
            "high": np.concatenate(gap_high),
        },
        columns=gap_columns,
    )
    return Part({"profiles": profiles, "gap_curve": gap}, records)


def _per_task_part(run: Run) -> Part:
    """Per-task means with intervals, and the rank distributions."""
    opts, cells, tasks = run.opts, run.cells, run.tasks
    reps, rngs = opts.profile_reps, run.rng["per_task"]
    means_by_alg, points, dists = [], [], []
    for alg, c in cells.items():
        points.append(bs.original(c).task_means()[0])
        dists.append(
            bs.replicates(c, bs.Resample.task_means, reps, rngs[alg], chunk_bytes=opts.chunk_bytes, progress=run.bar)
        )
        # after the per-task replicates on the same stream, so per-task intervals do not depend on rank_by
        means_by_alg.append(pf.single_runs(c, reps, rngs[alg]) if opts.rank_by == "runs" else dists[-1])
    spec = run.table_spec("per_task")
    if spec.replicates:
        tails = [bs.task_levels(c, opts.ci) for c in cells.values()] if spec.needs_tail else None
        bounds = _stacked_bounds(dists, points, opts.ci, spec, opts.chunk_bytes, tails)
    else:  # from the runs themselves (Student-t)
        bounds = [bs.student_t_task_intervals(c, opts.ci) for c in cells.values()]
    per_task = _per_task_table(cells, tasks, points, bounds)
    probs = pf.rank_probabilities(np.stack(means_by_alg), chunk_bytes=opts.chunk_bytes)  # (A, M, A)
    return Part({"per_task": per_task, "ranks": _ranks_table(list(cells), tasks, probs)}, run.record("per_task", reps))


def _per_task_table(cells, tasks, points, bounds) -> pd.DataFrame:
    """One row per (algorithm, task): the mean with its interval, and the runs' median, min and max."""
    columns: dict[str, list] = {
        k: [] for k in ("algorithm", "task", "n_runs", "mean", "low", "high", "median", "min", "max")
    }
    for alg, point, (low, high) in zip(list(cells), points, bounds):
        c = cells[alg]
        point = ck.clip_noise(point, low, high)
        for m, task in enumerate(tasks):
            run_scores = c.values[c.offsets[m] : c.offsets[m] + c.sizes[m]]
            columns["algorithm"].append(alg)
            columns["task"].append(task)
            columns["n_runs"].append(int(c.sizes[m]))
            columns["mean"].append(point[m])
            columns["low"].append(low[m])
            columns["high"].append(high[m])
            columns["median"].append(float(np.median(run_scores)))
            columns["min"].append(float(run_scores.min()))
            columns["max"].append(float(run_scores.max()))
    return pd.DataFrame(columns, columns=list(columns))


def _ranks_table(algorithms: list[str], tasks: list[str], probs: np.ndarray) -> pd.DataFrame:
    """Every algorithm's rank distribution per task, then their average over tasks."""
    n_a, labels = len(algorithms), list(tasks) + ["__average__"]
    table = np.concatenate([probs, probs.mean(axis=1, keepdims=True)], axis=1)  # (A, M + 1, A)
    return pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(len(labels) * n_a)],
            "task": [t for _ in algorithms for t in labels for _ in range(n_a)],
            "rank": np.tile(np.arange(1, n_a + 1), n_a * len(labels)),
            "probability": table.reshape(-1),
        },
        columns=["algorithm", "task", "rank", "probability"],
    )


def _improvement_counts(run: Run) -> dict[str, list]:
    """One set of independent replicates per algorithm, shared by all its pairs; only the draw counts are
    kept, chunked identically for every algorithm."""
    cells, shared_tasks, rngs = run.cells, run.shared_tasks, run.rng["improvement"]
    sizes = list(
        bs.chunk_sizes(run.opts.improvement_reps, max(cells.values(), key=lambda c: c.n_runs), run.opts.chunk_bytes)
    )
    counts: dict[str, list] = {}
    for alg, c in cells.items():
        counts[alg] = []
        task_rng = bs.task_stream(shared_tasks)  # the same task draws for every algorithm
        for n in sizes:
            if shared_tasks:
                counts[alg].append(bs.draw(c, n, rngs[alg], task_bootstrap=True, task_rng=task_rng))
            else:
                counts[alg].append(bs.draw(c, n, rngs[alg]).small_counts())
            run.bar(n)
    return counts


def _runs_of(c: bs.Cells) -> list[np.ndarray]:
    """Each task's runs."""
    return [c.values[c.offsets[m] : c.offsets[m] + c.sizes[m]] for m in range(c.n_tasks)]


def _improvement_part(run: Run) -> Part:
    """The probability of improvement P(X > Y) of every ordered pair."""
    cells, ci = run.cells, run.opts.ci
    spec = run.table_spec("improvement")
    # P(X > Y) is a U-statistic: its expanded level is its own (the mean difference's over-widens it)
    record = run.record(
        "improvement", run.opts.improvement_reps, **({"expanded_level": "mann-whitney"} if spec.needs_tail else {})
    )
    columns = ["algorithm_x", "algorithm_y", "point", "low", "high"]
    algorithms = list(cells)
    if len(algorithms) < 2:
        return Part({"improvement": pd.DataFrame(columns=columns)}, record)
    counts = _improvement_counts(run)
    pairs = _pairs(algorithms)
    points, dists = [], []
    for x, y in pairs:
        cx, cy = cells[x], cells[y]
        points.append(np.array([mt.probability_of_improvement(_runs_of(cx), _runs_of(cy))]))
        if run.shared_tasks:
            dist = np.concatenate([mt.improvement_task_slots(bx, by) for bx, by in zip(counts[x], counts[y])])
        else:
            dist = np.concatenate([mt.improvement_replicates(cx, kx, cy, ky) for kx, ky in zip(counts[x], counts[y])])
        dists.append(dist[:, None])
    rows = []
    tails = [np.asarray(bs.improvement_level(cells[x], cells[y], ci)) for x, y in pairs] if spec.needs_tail else None
    bounds = _stacked_bounds(dists, points, ci, spec, run.opts.chunk_bytes, tails)
    for (x, y), point_x, (low, high) in zip(pairs, points, bounds):
        low, high = ck.clip_fraction(low), ck.clip_fraction(high)
        point = float(ck.clip_noise(point_x, low, high)[0])
        rows.append({"algorithm_x": x, "algorithm_y": y, "point": point, "low": float(low[0]), "high": float(high[0])})
        rows.append(
            {
                "algorithm_x": y,
                "algorithm_y": x,
                "point": 1 - point,
                "low": 1 - float(high[0]),
                "high": 1 - float(low[0]),
            }
        )
    out = pd.DataFrame(rows, columns=columns)
    order = {a: i for i, a in enumerate(algorithms)}
    out = out.sort_values(["algorithm_x", "algorithm_y"], key=lambda s: s.map(order), kind="stable")
    return Part({"improvement": out.reset_index(drop=True)}, record)


def _curves_part(run: Run) -> Part:
    """Sample-efficiency curves (``curves=True``): the curves table, its provenance and warnings."""
    opts = run.opts
    if not opts.curves:
        empty = pd.DataFrame(columns=["algorithm", "metric", "step", "n_runs", "point", "low", "high"])
        return Part({"curves": empty})
    table, info, warnings = _curves(
        run.prep.table,
        opts.curve_metrics,
        opts.gamma,
        opts.curve_reps,
        opts.curve_points,
        run.rng["curves"],
        opts.chunk_bytes,
        opts.ci,
        run.table_spec("curves"),
        run.bar,
        opts.budget,
    )
    return Part({"curves": table}, run.record("curves", opts.curve_reps), {"curves": info}, warnings)


def _curves(table, curve_metrics, gamma, reps, n_points, rngs, chunk_bytes, ci, spec, bar, budget=None):
    """Curve table, provenance and warnings. Runs that stop early count up to their last step; within each
    stretch of the grid where the set of runs is fixed, every replicate follows the same whole runs."""
    runs = histories(table)
    shape = cv.common_grid(runs, n_points, budget=budget)
    grid = shape.grid
    by_cell: dict[tuple[str, str], list[np.ndarray]] = {}
    for h in runs:
        by_cell.setdefault(h.key[:2], []).append(cv.align(h, grid, shape.reach[h.key]))
    metric_objs = [registry.get_metric(m, gamma=gamma) for m in curve_metrics]
    tasks = sorted(table.tasks)
    rows, counts = [], {}
    for alg in table.algorithms:
        per_task = []
        for t in tasks:
            block = np.stack(by_cell[(alg, t)])  # (N_m, G)
            per_task.append(block[cv.canonical_order(block)])  # independent of row order and run ids
            counts[(alg, t)] = cv.run_counts(~np.isnan(per_task[-1]))
        values = np.concatenate(per_task, axis=0)  # (K, G), task-major
        task_of = np.concatenate([np.full(p.shape[0], m) for m, p in enumerate(per_task)])
        available = ~np.isnan(values)
        point = np.empty((len(metric_objs), grid.size))
        low, high = np.empty_like(point), np.empty_like(point)
        start_state = copy.deepcopy(rngs[alg])
        for a, b in cv.segments(available):
            keep = available[:, a]  # runs counting over this stretch of the grid
            # grid steps between two logged steps carry the same values: each distinct column is evaluated once
            sub, expand = cv.distinct_columns(values[keep][:, a:b])
            cells = bs.Cells.from_list([sub[task_of[keep] == m, 0] for m in range(len(tasks))])

            def stat(r: bs.Resample, sub: np.ndarray = sub) -> np.ndarray:
                # whole runs: the same draws evaluated at every step of the stretch, a group of steps at once
                out = np.empty((r.n_reps, len(metric_objs), sub.shape[1]))  # (R, n_metrics, b - a)
                for lo, hi in bs.column_groups(r, sub.shape[1], chunk_bytes):
                    steps = r.with_columns(sub[:, lo:hi])
                    for j, m in enumerate(metric_objs):
                        out[:, j, lo:hi] = np.stack([m(step.fresh()) for step in steps], axis=1)
                return out

            # every stretch starts from the same stream state: stretches with the same run counts draw the same runs
            rng = copy.deepcopy(start_state)
            seg_point = stat(bs.original(cells))[0]
            dist = bs.replicates(cells, stat, reps, rng, chunk_bytes=chunk_bytes, progress=None)
            seg_low, seg_high = ci_bounds(dist, seg_point, ci, spec)
            point[:, a:b], low[:, a:b], high[:, a:b] = seg_point[:, expand], seg_low[:, expand], seg_high[:, expand]
        bar(reps)
        n_alg = np.sum([counts[(alg, t)] for t in tasks], axis=0)
        for j, m in enumerate(metric_objs):
            for g, step in enumerate(grid):
                rows.append(
                    {
                        "algorithm": alg,
                        "metric": m.name,
                        "step": step,
                        "n_runs": int(n_alg[g]),
                        "point": point[j, g],
                        "low": low[j, g],
                        "high": high[j, g],
                    }
                )
    losses = {c: n for c, n in counts.items() if n[-1] < n[0]}
    info = {
        "grid": [float(s) for s in grid],
        "budget": budget,
        "runs_per_cell": [
            {"algorithm": a, "task": t, "tolerance": shape.tolerances[(a, t)], "n_runs": [int(x) for x in n]}
            for (a, t), n in sorted(counts.items())
        ],
        "stop_early": [[*k, s] for k, s in shape.short.items()],
        "rule": (
            "last value at or before each grid step; a run whose last step is within its cell's largest logging "
            "interval of the curve's end is carried to the end by its last value; runs stopping earlier count "
            "up to their last step; no extrapolation"
        ),
    }
    warnings = []
    if losses:
        parts = []
        for (a, t), n in sorted(losses.items()):
            drop = next(g for g in range(grid.size) if n[g] < n[0])
            parts.append(f"{a} / {t} {n[0]} → {n[-1]} runs from step {grid[drop]:g}")
        warnings.append(
            f"curves: {plural(len(losses), 'cell')} {agree(len(losses), 'lose')} runs along the curve (runs stopping more than one logging interval "
            "before the end count only up to their last step; the n_runs column of curves.csv has the counts): "
            + "; ".join(parts[:8])
            + (f"; ... ({len(parts) - 8} more)" if len(parts) > 8 else "")
        )
    if shape.stopped_before_budget:
        warnings.append(
            f"curves end at step {grid[-1]:g}, before the budget {budget:g}: no run of "
            + ", ".join(f"{a} / {t}" for a, t in shape.stopped_before_budget[:8])
            + " reaches it."
        )
    columns = ["algorithm", "metric", "step", "n_runs", "point", "low", "high"]
    return pd.DataFrame(rows, columns=columns), info, warnings


#: The core tables, built in this order inside the progress bar (each on its own random stream).
TABLE_BUILDERS: tuple[Callable[[Run], Part], ...] = (
    _aggregates_part,
    _differences_part,
    _trust_part,
    _profiles_part,
    _per_task_part,
    _improvement_part,
    _curves_part,
)
#: The optional tables, after the core ones.
EXTRA_BUILDERS: tuple[Callable[[Run], Part], ...] = (_comparisons_part, _jordan_part, _tuning_part)
