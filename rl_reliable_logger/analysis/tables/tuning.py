"""The ``tuning`` table (``hyperparameter_keys``): complete-algorithm vs tune-and-report vs split-half views of a
sweep (Jordan et al. 2020), evaluated side by side with the aggregates' intervals.

The views' runs are relabelled as pseudo-algorithms (:mod:`...stats.tuning`) and their aggregate is the
``aggregates`` table's, by the same request: the requested interval method and its rule for the statistic, task
resampling, the median's interval, on the tuning view's own replicates (``tuning_reps``) and stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...data.scores import ScoreTable
from ...stats import registry
from ...stats import tuning as tn
from ...stats.aggregate import statistic_kind
from ...stats.intervals import ResamplingRequest
from ...wording import kw, said
from ..normalization import normalize_final
from ..options import AnalysisOptions, OptionKeywords, as_options
from ..prepared import cells_by_algorithm
from ..report import SPECS
from .aggregates import aggregate_table
from .base import Part, spawn_streams

if TYPE_CHECKING:
    from typing_extensions import Unpack

TUNING_COLUMNS = list(SPECS["tuning"].columns)
VIEWS = ("complete", "tuned", "split")


@dataclass(frozen=True)
class TuningChoices:
    """What the tuning view shows: the sweep's configuration columns ``keys``, the ``metric`` that picks a
    configuration and is reported, and the normaliser applied first (None: raw scores)."""

    keys: tuple[str, ...]
    metric: str
    normalize: Any = None


def build(table: ScoreTable, request: ResamplingRequest, choices: TuningChoices | None) -> Part:
    """The tuning view of ``table`` (raw scores; normalised here as ``choices.normalize`` says; no table without
    ``choices``), on ``request`` (its seed: the tuning view's stream)."""
    if choices is None:
        return Part({})
    metric = choices.metric
    tuning, warnings = views_table(table, choices.keys, request, metric=metric, normalize=choices.normalize)
    record = {"hyperparameter_keys": list(choices.keys), "metric": metric, "reps": request.reps("tuning")}
    kinds = {registry.get_metric(metric).name: statistic_kind(registry.get_metric(metric))}
    recorded = {"tuning": {**_aggregates_request(request).record("aggregates", kinds)}}
    return Part({"tuning": tuning}, recorded, provenance={"tuning": record}, warnings=warnings)


def tuning_table(
    table: ScoreTable,
    hyperparameter_keys: Sequence[str],
    options: AnalysisOptions | None = None,
    /,
    *,
    views: Sequence[str] = VIEWS,
    **overrides: Unpack[OptionKeywords],
) -> tuple[pd.DataFrame, list[str]]:
    """Complete-algorithm vs tune-and-report vs split-half views of a sweep, evaluated side by side.

    Args:
        table: per-run scores whose frame carries the hyperparameter columns.
        hyperparameter_keys: the columns that define a configuration.
        options, overrides: the analysis options, as for :func:`~rl_reliable_logger.evaluate`: ``tuning_metric``
            (default: the headline metric, IQM) is reported and picks the best configuration; ``tuning_reps``
            (default ``min(reps, 5000)``), ``seed`` (also the random split of seeds), ``ci``, ``method``,
            ``task_bootstrap``, ``median_interval`` give its intervals, as they give the aggregates'; ``normalize``
            normalises first (the selection pools tasks, so raw scores on tasks of different scales would let one
            task dominate).
        views: subset of ``("complete", "tuned", "split")``.

    Returns:
        ``(tuning, warnings)`` with the columns of ``TUNING_COLUMNS``.
    """
    opts = as_options(options, **overrides)
    request = opts.resampling()
    metric = opts.resolved_tuning_metric
    return views_table(table, hyperparameter_keys, request, metric=metric, normalize=opts.normalize, views=views)


def views_table(
    table: ScoreTable,
    keys: Sequence[str],
    request: ResamplingRequest,
    *,
    metric: str = "iqm",
    normalize: Any = None,
    views: Sequence[str] = VIEWS,
) -> tuple[pd.DataFrame, list[str]]:
    """The tuning table of ``table``'s ``keys`` with ``metric``'s intervals by ``request`` (``request.seed``: the
    root of the random split and of the views' resampling streams)."""
    keys = [str(k) for k in keys]
    final = table.final()
    warnings: list[str] = []
    if normalize is not None:
        final = normalize_final(final, normalize)
    elif len(final.tasks) > 1:
        warnings.append(
            said(
                "tuning view: scores are not normalised, so selecting the best configuration pools raw scores of "
                "tasks with possibly different scales; pass ",
                kw("normalize="),
                " if they differ.",
            ).text()
        )
    root = np.random.default_rng(request.seed)
    split_rng, eval_seed = root.spawn(2)
    runs, choices, w = tn.tuning_views(
        final.frame, keys, criterion=tn.metric_criterion(metric), seed=split_rng, views=views
    )
    warnings += [f"tuning view: {x}" if not x.startswith("tuning") else x for x in w]
    if runs.empty:
        return pd.DataFrame(columns=TUNING_COLUMNS), warnings
    cols = [c for c in ("algorithm", "task", "run_id", "seed", "score") if c in runs.columns]
    relabelled = ScoreTable(runs[cols], run_id="run_id", seed="seed" if "seed" in cols else None).final()
    aggregates = _views_aggregates(relabelled, request.replace(seed=eval_seed), metric)
    agg = aggregates.rename(columns={"algorithm": "label"})[["label", "metric", "point", "low", "high"]]
    out = choices.merge(agg, on="label", how="left")
    return out[TUNING_COLUMNS], warnings


def _aggregates_request(request: ResamplingRequest) -> ResamplingRequest:
    """The tuning view's aggregates are computed as the ``aggregates`` table's, on the tuning view's replicates."""
    return request.replace(replicates={"aggregates": request.reps("tuning")})


def _views_aggregates(relabelled: ScoreTable, request: ResamplingRequest, metric: str) -> pd.DataFrame:
    """The aggregates of the views' pseudo-algorithms, with the stream layout of ``evaluate()``."""
    tasks = sorted(relabelled.tasks)
    cells = cells_by_algorithm(relabelled, tasks)
    streams = spawn_streams(request.replace(task_bootstrap=bool(request.task_bootstrap)), relabelled.algorithms)
    views_request = _aggregates_request(request).replace(task_bootstrap=streams.shared_tasks)
    table, _, _ = aggregate_table(cells, [registry.get_metric(metric)], views_request, streams.of("aggregates"))
    return table
