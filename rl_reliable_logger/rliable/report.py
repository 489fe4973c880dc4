"""The bridge from a rliable script to the rest of rl_reliable_logger: the same scores as a Report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis.evaluation import evaluate
from ..analysis.report import Report
from ..data.scores import ScoreTable


def to_report(
    score_dict: Mapping[str, np.ndarray],
    tasks: Sequence[str] | None = None,
    *,
    method: str = "percentile",
    task_bootstrap: bool = False,
    reps: int = 50000,
    confidence_interval_size: float = 0.95,
    seed: int = 0,
    **options: Any,
) -> Report:
    """A :class:`~rl_reliable_logger.Report` of rliable's ``{algorithm: (runs, tasks)}`` scores, for
    ``save_report``, ``publish_wandb`` or ``publish_mlflow``.

    A Report is computed from the per-run scores, not from the drop-in's estimates: this runs
    :func:`~rl_reliable_logger.evaluate` on the same scores with the same interval ``method``, ``reps``,
    ``task_bootstrap`` and level (rliable's keyword names), so its IQM, mean, median and optimality gap have
    the drop-in's point estimates and intervals within Monte-Carlo error of its; profiles, probability of
    improvement and the rest of the Report come with it. ``tasks`` names the task columns (default
    ``task_0``, ...); ``options`` are further :class:`~rl_reliable_logger.AnalysisOptions` keywords.
    rliable's score matrices are normalised already (its optimality gap and profiles assume so), so
    ``normalize`` defaults to ``"already-normalized"`` (kept as given, said so in the report) instead of
    warning about raw scores; pass ``normalize=`` to normalise raw returns here instead. Warnings point at
    the line that called ``to_report``.
    """
    options.setdefault("normalize", "already-normalized")
    table = ScoreTable.from_rliable({str(k): np.asarray(v, dtype=float) for k, v in score_dict.items()}, tasks)
    return evaluate(
        table,
        method=method,
        task_bootstrap=task_bootstrap,
        reps=reps,
        ci=float(confidence_interval_size),
        seed=seed,
        **options,
    )
