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

__all__ = ["ScoreTable", "ScoreTableError", "Report", "evaluate", "log_final_score", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: `import rl_reliable_logger` stays fast and pulls in neither pandas nor a tracker.
    if name in ("ScoreTable", "ScoreTableError"):
        from . import scores

        return getattr(scores, name)
    if name == "Report":
        from .report import Report

        return Report
    if name == "evaluate":
        from .evaluate import evaluate

        return evaluate
    if name == "log_final_score":
        from .callback import log_final_score

        return log_final_score
    raise AttributeError(f"module 'rl_reliable_logger' has no attribute {name!r}")
