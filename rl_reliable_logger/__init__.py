"""rl_reliable_logger: reliable evaluation of RL results, straight from your experiment tracker.

Normalised scores, IQM, optimality gap, stratified-bootstrap confidence intervals, performance
profiles, probability of improvement (Agarwal et al., 2021) and Jordan et al. (2020) performance
percentiles / PBP intervals, computed from W&B or MLflow runs and published back to them.

Example:
    >>> from rl_reliable_logger import ScoreTable, evaluate        # doctest: +SKIP
    >>> table = ScoreTable.from_csv("scores.csv")                  # doctest: +SKIP
    >>> report = evaluate(table, normalize="atari", seed=0)        # doctest: +SKIP
    >>> report.save("results/")                                    # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The function `evaluate` shares its name with its module: import it eagerly so that
# `rl_reliable_logger.evaluate` is always the function (numpy/pandas/scipy only; no tracker).
from .evaluate import evaluate  # noqa: E402
from .report import Report  # noqa: E402
from .scores import ScoreTable, ScoreTableError  # noqa: E402

__all__ = ["ScoreTable", "ScoreTableError", "Report", "evaluate", "log_final_score", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: the tracker clients (wandb, mlflow) load only when a training script logs a score.
    if name == "log_final_score":
        from .callback import log_final_score

        return log_final_score
    raise AttributeError(f"module 'rl_reliable_logger' has no attribute {name!r}")
