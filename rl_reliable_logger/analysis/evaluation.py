"""evaluate(): ScoreTable + options → Report. The one place the statistics are assembled.

Defaults follow Agarwal et al. (2021): 50,000 bootstrap replicates for aggregate metrics, 2,000 for
performance profiles, probability of improvement and rank distributions; 95% percentile intervals;
stratified bootstrap over runs within each (algorithm, task) cell.

The options become, once, a :class:`~..stats.intervals.ResamplingRequest` (every choice about resampling and
intervals) and the tables' shared inputs (:class:`.tables.base.TableInputs`); each table is a module of
:mod:`.tables` called with them, in the order below, the differences with the aggregates' results.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.counts import count_runs
from ..data.scores import CANONICAL, ScoreTable
from ..stats import checks as ck
from ..stats import intervals, registry
from ..stats.intervals import ResamplingRequest
from ..version import __version__
from . import protocol as pc
from .inputs import FieldKeywords, FieldOptions, as_score_table, split_field_options
from .notices import emit as emit_warnings
from .options import DEFAULT_METRICS, AnalysisOptions, OptionKeywords, as_options
from .prepared import Preparation, Prepared, cells_by_algorithm, prepare
from .redacted import redact_report
from .report import Report
from .tables import (
    aggregates,
    comparisons,
    curves,
    differences,
    improvement,
    jordan,
    per_task,
    profiles,
    success,
    tuning,
)
from .tables.base import Part, TableInputs, compared_pairs, for_runs, spawn_streams

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_METRICS", "EvaluateKeywords", "evaluate"]


class EvaluateKeywords(OptionKeywords, FieldKeywords, total=False):
    """The keywords of ``evaluate()``: every analysis option, and how to read a DataFrame or a file."""


#: The tables every Report holds (``Report`` fields); other tables are extras.
CORE_TABLES = ("aggregates", "per_task", "improvement", "differences", "profiles", "ranks", "gap_curve", "curves")


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
    table: ScoreTable | pd.DataFrame | str,
    options: AnalysisOptions | None = None,
    *,
    source: dict[str, Any] | None = None,
    **overrides: Unpack[EvaluateKeywords],
) -> Report:
    """Evaluate every algorithm of ``table`` with interval estimates; return the complete :class:`Report`.

    Args:
        table: validated per-run scores, or a long DataFrame or the path of a score file, read as the command
            line reads them: with the field options of the command line (``run_key=``, ``hyperparameter_keys=``,
            ``algorithm_key=``, ... of :class:`~rl_reliable_logger.analysis.inputs.FieldOptions`; a sweep's
            configurations are told apart by ``hyperparameter_keys``, as for ``--hyperparameter-keys``).
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
    field_keywords, analysis = split_field_options(overrides)
    opts = as_options(options, **analysis)
    counts = (opts.successes, opts.episodes) if opts.successes is not None and opts.episodes is not None else None
    fields = FieldOptions(**field_keywords, hyperparameter_keys=tuple(opts.hyperparameter_keys), success_counts=counts)
    table = as_score_table(table, fields)
    started = _dt.datetime.now(_dt.timezone.utc)
    # the options, once: how the table is prepared, the resampling request every table gets, each table's choices
    request, choices = opts.resampling(), TableChoices.of(opts)
    prep = prepare(table, choices.preparation)
    # before any statistics: what is wrong with the experiment itself (strict: refuse to go on)
    findings = pc.by_severity(pc.check_protocol(prep.selected or prep.table, hyperparameter_keys=fields.sweep_keys))
    pc.enforce(findings, strict=opts.strict)
    checks = pc.checks_run(prep.selected or prep.table, hyperparameter_keys=fields.sweep_keys)
    inputs, request = _inputs(prep, request, choices)
    warnings = [pc.format_finding(f) for f in findings] + prep.warnings
    warnings += _scale_warnings(inputs, choices.gamma, prep.normalization if prep.normalized else None)
    parts = _tables(inputs, request, prep, choices)
    for part in parts:
        warnings += part.warnings
    tables = {name: frame for part in parts for name, frame in part.tables.items()}
    provenance = {
        "created": started.isoformat(timespec="seconds"),
        "protocol": [f.to_dict() for f in findings],
        "source": {**dict(table.source), **dict(source or {})},
        **_provenance(inputs, prep, opts.to_dict(), parts, table, checks),
    }
    if opts.seed is None:
        warnings.append(
            "no seed given (seed=None): intervals will differ slightly from run to run; "
            "pass an integer seed for reproducible numbers."
        )
    scores_out = _without_secrets(
        (prep.table if prep.table.has_steps and choices.curves is not None else prep.final).frame, warnings
    )
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


class Progress:
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


@dataclass(frozen=True)
class TableChoices:
    """Each table's own choices besides the resampling request, taken from the options once (:meth:`of`): how the
    scores are prepared, the metrics, the optimality gap's ``gamma``, the profiles' thresholds, the ranks' rule, and
    the optional tables' choices (None: not asked for)."""

    preparation: Preparation
    metrics: tuple[Any, ...]
    gamma: float
    taus: tuple[float, ...] | None
    rank_by: str
    pairs: str
    headline: str
    curves: curves.CurveChoices | None
    comparisons: comparisons.ComparisonChoices | None
    jordan: jordan.JordanTableChoices | None
    tuning: tuning.TuningChoices | None
    success: success.SuccessChoices | None = None
    progress: bool = False

    @classmethod
    def of(cls, opts: AnalysisOptions) -> TableChoices:
        return cls(
            preparation=Preparation.of(opts),
            metrics=opts.metrics,
            gamma=opts.gamma,
            taus=opts.taus,
            rank_by=opts.rank_by,
            pairs=opts.pairs,
            headline=opts.headline_metric,
            curves=curves.CurveChoices(opts.curve_metrics, opts.curve_points, opts.budget, opts.gamma)
            if opts.curves
            else None,
            comparisons=comparisons.ComparisonChoices(opts.headline_metric, opts.gamma) if opts.comparisons else None,
            jordan=jordan.JordanTableChoices(opts.jordan_delta, opts.jordan_method, opts.score_range, opts.progress)
            if opts.jordan
            else None,
            tuning=tuning.TuningChoices(opts.hyperparameter_keys, opts.resolved_tuning_metric, opts.normalize)
            if opts.hyperparameter_keys
            else None,
            success=success.SuccessChoices(opts.successes, opts.episodes)
            if opts.successes is not None and opts.episodes is not None
            else None,
            progress=opts.progress,
        )


def _inputs(prep: Prepared, request: ResamplingRequest, choices: TableChoices) -> tuple[TableInputs, ResamplingRequest]:
    """The tables' shared inputs and the request with its task stream: the same layout whatever is computed."""
    algorithms = prep.final.algorithms
    # the engine sees tasks (and random streams are assigned to algorithms) in sorted name order,
    # so results do not depend on the order of the input rows
    tasks = sorted(prep.final.tasks)
    # fixed layout: results do not depend on what else is computed; with task resampling every algorithm's
    # replicate r resamples the same tasks (paired differences and improvement)
    streams = spawn_streams(request, algorithms)
    cells = cells_by_algorithm(prep.final, tasks)
    request = for_runs(request.replace(task_bootstrap=streams.shared_tasks), cells)
    per_algorithm = request.reps("aggregates") + 2 * request.reps("profiles") + improvement.replicates(request)
    per_algorithm += request.reps("curves") if choices.curves is not None else 0
    inputs = TableInputs(
        final=prep.final,
        cells=cells,
        tasks=tasks,
        metrics=[registry.get_metric(m, gamma=choices.gamma) for m in choices.metrics],
        streams=streams,
        progress=Progress(len(algorithms) * per_algorithm, choices.progress),
    )
    return inputs, request


def _tables(inputs: TableInputs, request: ResamplingRequest, prep: Prepared, choices: TableChoices) -> list[Part]:
    """Every table, each on its own random stream: the core tables inside the progress bar, then the optional
    ones (each an empty part when not asked for)."""
    bar = inputs.progress
    try:
        found = aggregates.build(inputs, request)
        chosen = compared_pairs(
            inputs.algorithms, choices.pairs, found.points(), choices.headline, ["differences", "improvement"]
        )
        parts = [
            found.part,
            differences.build(inputs, request, found, chosen),
            profiles.build(inputs, request, choices.taus, choices.gamma),
            per_task.build(inputs, request, choices.rank_by),
            improvement.build(inputs, request, chosen),
            curves.build(inputs, request, prep.table, choices.curves),
        ]
    finally:
        if isinstance(bar, Progress):
            bar.close()
    streams = inputs.streams
    return [
        *parts,
        comparisons.build(inputs, request, choices.comparisons),
        # percentiles do not depend on the scale: the Jordan tables and the tuning view read raw scores
        jordan.build(prep.raw_final, request.replace(seed=streams.jordan), choices.jordan),
        tuning.build(prep.raw_final, request.replace(seed=streams.tuning), choices.tuning),
        success.build(inputs, request, choices.success),
    ]


def _provenance(
    inputs: TableInputs,
    prep: Prepared,
    options: dict[str, Any],
    parts: list[Part],
    raw: ScoreTable,
    checks: Any,
) -> dict[str, Any]:
    """What was computed and from what (``raw``: the scores as given; ``options``: the options as provenance
    records them; ``checks``: the protocol checks run): the analysis' inputs, then every table's part."""
    frame_used, cells, algorithms, tasks = inputs.final.frame, inputs.cells, inputs.algorithms, inputs.tasks
    recorded = {name: rec for part in parts for name, rec in part.intervals.items()}
    provenance: dict[str, Any] = {
        "normalization": prep.normalization,
        "normalize": options["normalize"],
        "filters": prep.filters,
        "algorithms": algorithms,
        "tasks": tasks,
        "counts": count_runs(frame_used).to_dict(),
        "n_runs": {a: int((frame_used["algorithm"] == a).sum()) for a in algorithms},
        "runs_per_task": {a: {t: int(n) for t, n in zip(tasks, cells[a].sizes)} for a in algorithms},
        "runs_used": frame_used[["algorithm", "task", "run_id"]].astype(str).values.tolist(),
        "dropped": raw.dropped.astype(object).where(raw.dropped.notna(), None).to_dict("records"),
        "excluded": raw.source.get("excluded", []),
        "metrics": [m.name for m in inputs.metrics],
        **{key: options[key] for key in ("gamma", "reps", "profile_reps", "improvement_reps")},
        "curve_reps": options["curve_reps"] if options["curves"] else None,
        **{key: options[key] for key in ("ci", "ci_label", "method")},
        # per table with intervals: the method the request's rule gave it, its level and replicate count
        "intervals": {name: recorded[name] for name in intervals.TABLES + intervals.OTHER_TABLES if name in recorded},
        "interval_fallbacks": [],
        "fallen_back": [],  # their records: which cell, why (notices says them in one line)
        "checks": checks,
        **{key: options[key] for key in ("task_bootstrap", "rank_by", "seed", "chunk_bytes")},
        "curves": {},
        "options": options,
        "versions": _versions(),
    }
    for part in parts:
        for key, value in part.provenance.items():
            provenance[key] = provenance.get(key, []) + value if isinstance(value, list) else value
    return provenance


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


def _scale_warnings(inputs: TableInputs, gamma: float, normalization: str | None) -> list[str]:
    """Aggregates that would mean little: raw scores of very different scales pooled over tasks, the optimality
    gap on a scale where ``gamma`` is no target (issue 13 item 7), and scores declared normalised (``normalization``,
    None for raw scores) that look like raw returns (issue 43; one warning, which then stands for the gap's)."""
    frame = inputs.final.frame
    normalized = normalization is not None
    out = []
    if not normalized:
        pooled = {t: frame.loc[frame["task"] == t, "score"].to_numpy(float) for t in inputs.tasks}
        out.append(ck.raw_scale_warning(pooled))
    else:
        contradicted = ck.normalization_warning(frame["score"].to_numpy(float), str(normalization), gamma)
        if contradicted:
            return [contradicted]
    if "optimality_gap" in [m.name for m in inputs.metrics]:
        out.append(ck.gap_warning(gamma, frame["score"].to_numpy(float), normalized=normalized))
    return [w for w in out if w]
