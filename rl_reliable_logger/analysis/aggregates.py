"""The aggregate metrics alone: :func:`aggregate`, the aggregates-only entry point (interval estimates of the
aggregate metrics, nothing else), with the random-stream layout of ``evaluate()``, so an aggregate computed here
equals the one in the full Report for the same options.

(The names that lived here before the tables became modules of their own stay importable: :func:`prepare` and
:func:`cells_by_algorithm` from :mod:`.prepared`, :func:`analysis_streams` over :mod:`.tables.base`'s layout.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.scores import ScoreTable
from ..stats import registry
from ..stats.intervals import ResamplingRequest
from .options import AnalysisOptions, OptionKeywords, as_options
from .prepared import Prepared, cells_by_algorithm, prepare, select
from .tables.aggregates import aggregate_table
from .tables.base import STREAMS, spawn_streams

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["STREAMS", "Prepared", "aggregate", "analysis_streams", "cells_by_algorithm", "prepare", "select", "streams"]


def streams(seed: Any, algorithms: Sequence[str]) -> dict[str, dict[str, np.random.Generator]]:
    """One generator per (purpose, algorithm), assigned in sorted name order (input order does not matter)."""
    return spawn_streams(ResamplingRequest(seed=seed), algorithms).per_purpose


def analysis_streams(
    seed: Any, algorithms: Sequence[str], task_bootstrap: bool
) -> tuple[dict[str, dict[str, np.random.Generator]], Any]:
    """:func:`streams` plus the shared task SeedSequence (``False`` without task resampling)."""
    layout = spawn_streams(ResamplingRequest(seed=seed, task_bootstrap=task_bootstrap), algorithms)
    return layout.per_purpose, layout.shared_tasks


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
    request = opts.resampling()
    layout = spawn_streams(request, prep.final.algorithms)
    request = request.replace(task_bootstrap=layout.shared_tasks)
    table_out, _, _ = aggregate_table(cells, metric_objs, request, layout.of("aggregates"))
    return table_out
