"""Preparing a table for analysis, and the aggregate metrics alone.

:func:`prepare` is the one place a ScoreTable becomes what the statistics see (algorithm/task
filters, the memory check, normalisation); :func:`aggregate` is the aggregates-only entry point
(interval estimates of the aggregate metrics, nothing else), used by the tuning view so that it
does not run a whole ``evaluate()``. Both use the random-stream layout of ``evaluate()``, so an
aggregate computed here equals the one in the full Report for the same options.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.bundle_scores import UNCHANGED
from ..data.normalize import get_normalizer
from ..data.scores import ScoreTable
from ..stats import bootstrap as bs
from ..stats import intervals, registry
from ..stats import metrics as mt
from ..stats.aggregate import aggregate_intervals
from ..stats.checks import clip_noise
from .budgets import budget_warnings, histories
from .normalization import normalize_final
from .options import AnalysisOptions, OptionError, OptionKeywords, as_options

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: Random streams per algorithm, in this order; the layout does not depend on what is computed.
STREAMS = ("aggregates", "profiles", "per_task", "improvement", "curves")


@dataclass
class Prepared:
    """A table ready for the statistics: ``table`` (every step, normalised), ``final`` (one row per run).

    ``selected`` is the table after the algorithm/task selection, before normalisation: what the
    protocol checks read (budgets from every step, score key and configs from the source).
    """

    table: ScoreTable
    final: ScoreTable
    raw_final: ScoreTable
    normalization: str
    warnings: list[str] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)
    selected: ScoreTable | None = None


def select(table: ScoreTable, algorithms: Sequence[str] | None, tasks: Sequence[str] | None) -> ScoreTable:
    """The rows of ``algorithms`` and ``tasks`` only; a name the table does not have is an error naming the known."""
    if algorithms is None and tasks is None:
        return table
    mask = pd.Series(True, index=table.frame.index)
    for keyword, wanted, column, known in (
        ("only_algorithms", algorithms, "algorithm", table.algorithms),
        ("only_tasks", tasks, "task", table.tasks),
    ):
        if wanted is None:
            continue
        unknown = [w for w in wanted if w not in set(known)]
        if unknown:
            shown = ", ".join(repr(k) for k in sorted(known)[:50]) + (" ..." if len(known) > 50 else "")
            raise OptionError(
                keyword,
                f"`{keyword}=` names {', '.join(repr(u) for u in unknown)}, which the scores do not have; "
                f"the {column}s are: {shown}",
            )
        mask &= table.frame[column].isin(list(wanted))

    def rebuild(frame: pd.DataFrame) -> ScoreTable:
        step = "step" if table.has_steps else None
        return ScoreTable(frame, run_id="run_id", seed="seed", step=step, source=table.source)

    out = rebuild(table.frame[mask])
    # the checks' warnings (small cells, unequal runs) are those of the selection; the source's own stay
    own = set(rebuild(table.frame).warnings)
    out.warnings = [w for w in table.warnings if w not in own] + out.warnings
    out.dropped = table.dropped.copy()
    return out


def _check_not_normalized_twice(table: ScoreTable, options: AnalysisOptions) -> None:
    """Refuse to normalise a results bundle's ``score`` column again (it holds the normalised scores already)."""
    origin = table.source.get("bundle_normalized")
    if not origin or str(options.normalize) in UNCHANGED:
        return
    raise OptionError(
        "normalize",
        f"{origin['path']}: a results bundle's scores, whose `score` column the analysis that wrote it already "
        f"normalised ({origin['normalize']}); leave out `normalize=` to analyse them as they are, or pass "
        f"`score='raw_score'` to normalise the raw scores again",
    )


def prepare(table: ScoreTable, options: AnalysisOptions) -> Prepared:
    """Filter, check the memory the options need, normalise; nothing random happens here."""
    if options.curves and not table.has_steps:  # checked before any resampling work
        raise OptionError(
            "curves",
            "sample-efficiency curves (`curves=True`) need per-step scores: give the table a step column",
        )
    if options.budget is not None and not table.has_steps:
        raise OptionError(
            "budget", "`budget=` needs per-step scores: give the table a step column (final scores are taken there)"
        )
    # the canonical row order (only_algorithms' order, else sorted names): every table, pair and figure follows it
    table = selected = select(table, options.only_algorithms, options.only_tasks).in_order(options.only_algorithms)
    runs = histories(table) if table.has_steps else []
    raw_final = final = table.final(options.budget)
    if final.frame.empty and options.budget is not None:
        first = float(table.frame["step"].min()) if "step" in table.frame.columns else float("nan")
        raise OptionError(
            "budget", f"`budget={options.budget:g}` is before every run's first logged step ({first:g}): no scores"
        )
    sizes = final.frame.groupby("algorithm", sort=False).size()
    options.check_memory(len(final.algorithms), len(final.tasks), int(sizes.max()))
    warnings = list(table.warnings) + budget_warnings(runs, options.budget) + options.resolution_warnings()
    normalization = "raw score"
    if options.normalize is not None:
        _check_not_normalized_twice(table, options)
        normalizer = get_normalizer(options.normalize)
        if normalizer.per_step:
            table = normalizer.apply(table)  # every step, so curves are normalised too
            final = table.final(options.budget)
        else:
            final = normalize_final(final, normalizer)
        if normalizer.caveat:
            warnings.append(normalizer.caveat)
        normalization = final.source.get("normalization_description", str(options.normalize))
    filters = {
        k: list(v)
        for k, v in (("only_algorithms", options.only_algorithms), ("only_tasks", options.only_tasks))
        if v is not None
    }
    return Prepared(table, final, raw_final, normalization, warnings, filters, selected)


def cells_by_algorithm(table: ScoreTable, tasks: list[str]) -> dict[str, bs.Cells]:
    """Runs of every algorithm as bootstrap cells, tasks in ``tasks`` order, runs sorted within tasks."""
    # runs sorted by score within each task: a canonical order (results depend on neither the input's
    # row order nor run ids), and probability of improvement needs no per-replicate sort
    fast = _sorted_cells(table, tasks)
    if fast is not None:
        return fast
    cells = table.cells()
    return {alg: bs.Cells.from_list([np.sort(cells[(alg, t)]) for t in tasks]) for alg in table.algorithms}


def _sorted_cells(table: ScoreTable, tasks: list[str]) -> dict[str, bs.Cells] | None:
    """:func:`cells_by_algorithm` by one sort of the whole table (about 4x faster), or None where it could differ.

    Sorted scores are the same numbers whichever sort made them, except that a sort may put 0.0 and -0.0 in
    either order: scores holding a negative zero (and tables with an empty cell) are left to the cell-by-cell
    path.
    """
    frame = table.final().frame
    scores = frame["score"].to_numpy(dtype=float)
    if np.signbit(scores[scores == 0]).any():
        return None
    algorithms = table.algorithms
    alg_code = pd.Categorical(frame["algorithm"], categories=algorithms).codes.astype(np.int64)
    task_code = pd.Categorical(frame["task"], categories=tasks).codes.astype(np.int64)
    if (alg_code < 0).any() or (task_code < 0).any():
        return None
    counts = np.bincount(alg_code * len(tasks) + task_code, minlength=len(algorithms) * len(tasks))
    counts = counts.reshape(len(algorithms), len(tasks))
    if (counts == 0).any():
        return None
    ordered = scores[np.lexsort((scores, task_code, alg_code))]
    out, at = {}, 0
    for i, alg in enumerate(algorithms):
        total = int(counts[i].sum())
        out[alg] = bs.Cells.from_list(np.split(ordered[at : at + total], np.cumsum(counts[i])[:-1]))
        at += total
    return out


def streams(seed: Any, algorithms: Sequence[str]) -> dict[str, dict[str, np.random.Generator]]:
    """One generator per (purpose, algorithm), assigned in sorted name order (input order does not matter)."""
    return _streams(seed, algorithms, task_bootstrap=False)[0]


def _streams(
    seed: Any, algorithms: Sequence[str], *, task_bootstrap: bool
) -> tuple[dict[str, dict[str, np.random.Generator]], Any]:
    """The per-algorithm streams and, with task resampling, the task SeedSequence every algorithm shares
    (so that replicate r of every algorithm resamples the same tasks: paired differences)."""
    root = bs.as_generator(seed)
    spawned = root.spawn(len(STREAMS) * len(algorithms))
    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    per_purpose = {
        purpose: {a: spawned[len(STREAMS) * slot[a] + k] for a in algorithms} for k, purpose in enumerate(STREAMS)
    }
    shared_tasks = root.spawn(1)[0].bit_generator.seed_seq if task_bootstrap else False
    return per_purpose, shared_tasks


def analysis_streams(
    seed: Any, algorithms: Sequence[str], task_bootstrap: bool
) -> tuple[dict[str, dict[str, np.random.Generator]], Any]:
    """:func:`streams` plus the shared task SeedSequence (``False`` without task resampling)."""
    return _streams(seed, algorithms, task_bootstrap=task_bootstrap)


def ci_bounds(
    dist: np.ndarray,
    point: np.ndarray,
    ci: float,
    spec: intervals.IntervalMethod,
    tail: float | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval of a table's method ``spec`` (the registry's rule for the requested method,
    :meth:`..stats.intervals.IntervalMethod.for_table`); a method that ``needs_tail`` gets ``tail`` (its level:
    :func:`..stats.bootstrap.expanded_level`, ``task_levels`` or ``improvement_level``)."""
    assert spec.bounds is not None, f"{spec.name} is not computed from replicates"
    return spec.bounds(dist, np.asarray(point, dtype=float), ci, tail, None)


def check_method(method: str, cells: dict[str, bs.Cells]) -> None:
    """Refuse a method that needs the jackknife (BCa) where no leave-one-run-out value exists (one run in every
    task of an algorithm)."""
    if not intervals.requested(method).needs_jackknife:
        return
    for alg, c in cells.items():
        if (c.sizes < 2).all():
            raise OptionError(
                "method",
                f"`method='bca'` needs two or more runs in at least one task, but {alg!r} has one run per task "
                "(no jackknife for the acceleration); use `method='percentile'` or add runs",
            )


def aggregate_tables(
    cells: dict[str, bs.Cells],
    metric_objs: list[mt.Metric],
    reps: int,
    rngs: dict[str, np.random.Generator],
    task_bootstrap: Any,
    chunk_bytes: int,
    ci: float,
    method: str,
    bar: Callable[[int], None],
    notes: list[str] | None = None,
    se_replicates: dict[str, dict[str, dict[str, np.ndarray]]] | None = None,
    median_interval: str = "method",
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The ``aggregates`` table and every algorithm's replicates (for the differences).

    ``task_bootstrap``: False, or the shared task SeedSequence of :func:`analysis_streams`. ``notes``: receives
    one sentence per interval that fell back from the requested method (naming the algorithm). ``se_replicates``:
    receives each algorithm's (statistic, se) replicates of its studentized statistics under ``bootstrap-t`` (see
    ``aggregate_intervals``).
    ``median_interval``: the ``median_interval`` option (the median's order-statistic interval on request).
    """
    check_method(method, cells)
    rows, dists = [], {}
    for alg, c in cells.items():
        fell_back: list[str] = []
        point, low, high, dists[alg] = aggregate_intervals(
            c, metric_objs, reps, rngs[alg], ci=ci, method=method, task_bootstrap=task_bootstrap,
            chunk_bytes=chunk_bytes, progress=bar, notes=fell_back,
            se_replicates=None if se_replicates is None else se_replicates.setdefault(alg, {}),
            median_interval=median_interval,
        )  # fmt: skip
        if notes is not None:
            notes += [f"{alg}: {n}" for n in fell_back]
        point = clip_noise(point, low, high)  # a point outside its interval by rounding only
        if notes is not None:
            notes += _nan_notes(alg, metric_objs, point, low, high)
        for j, m in enumerate(metric_objs):
            rows.append({"algorithm": alg, "metric": m.name, "point": point[j], "low": low[j], "high": high[j]})
    return pd.DataFrame(rows, columns=["algorithm", "metric", "point", "low", "high"]), dists


def _nan_notes(alg: str, metric_objs: list[mt.Metric], *values: np.ndarray) -> list[str]:
    """One sentence per metric whose point or interval is NaN (a custom metric returned NaN): never a silent NaN."""
    bad = np.isnan(np.vstack([np.asarray(v, dtype=float) for v in values])).any(axis=0)
    return [
        f"{alg}: metric {m.name!r} is NaN (its function returned NaN on these scores, e.g. an empty slice or 0/0); "
        "its point and interval mean nothing: fix the metric or leave it out"
        for m, nan in zip(metric_objs, bad)
        if nan
    ]


def aggregate(
    table: ScoreTable, options: AnalysisOptions | None = None, **overrides: Unpack[OptionKeywords]
) -> pd.DataFrame:
    """Interval estimates of the aggregate metrics only (the ``aggregates`` table of ``evaluate()``).

    Takes the same options as :func:`~rl_reliable_logger.evaluate` (only those about aggregates
    matter) and gives the same numbers as its ``aggregates`` table, without profiles, ranks,
    probability of improvement, curves, Jordan or tuning.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 4 + ["B"] * 4, "task": ["x", "x", "y", "y"] * 2,
        ...                    "seed": [0, 1] * 4, "score": [1, 2, 3, 4, 2, 3, 4, 5]})
        >>> aggregate(ScoreTable(df), metrics=["iqm"], reps=500)[["algorithm", "point"]].values.tolist()
        [['A', 2.5], ['B', 3.5]]
    """
    opts = as_options(options, **overrides)
    # the memory check counts only what is computed here: the aggregates' replicates, not the other tables'
    counted = opts.replace(
        profile_reps=1, improvement_reps=1, curve_reps=1, comparisons=False, jordan=False, hyperparameter_keys=()
    )
    prep = prepare(table, counted)
    tasks = sorted(prep.final.tasks)
    cells = cells_by_algorithm(prep.final, tasks)
    metric_objs = [registry.get_metric(m, gamma=opts.gamma) for m in opts.metrics]
    rng, shared_tasks = analysis_streams(opts.seed, prep.final.algorithms, opts.task_bootstrap)
    table_out, _ = aggregate_tables(
        cells, metric_objs, opts.reps, rng["aggregates"], shared_tasks, opts.chunk_bytes, opts.ci, opts.method, _no_bar,
        median_interval=opts.median_interval,
    )  # fmt: skip
    return table_out


def _no_bar(n: int) -> None:
    return None
