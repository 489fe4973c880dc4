"""rl_reliable_logger: reliable evaluation of RL results, straight from your experiment tracker.

Normalised scores, IQM, optimality gap, stratified-bootstrap confidence intervals, performance
profiles, probability of improvement (Agarwal et al., 2021) and Jordan et al. (2020) performance
percentiles / PBP intervals, computed from W&B or MLflow runs and published back to them.

This module is the public API; the folders below it are the layers (see docs/architecture.md).

Example (``scores.csv`` has the columns algorithm, task, seed, score; ``normalize="atari"`` would map raw Atari
returns to human-normalised scores):
    >>> from rl_reliable_logger import ScoreTable, evaluate, save_report, save_scores
    >>> path = save_scores(table, "scores.csv")
    >>> table = ScoreTable.from_csv("scores.csv")
    >>> report = evaluate(table, reps=2000, profile_reps=200, improvement_reps=200, seed=0)
    >>> folder = save_report(report, "results/", figures=False)
    >>> (folder / "aggregates.csv").exists()
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import InputError, ReliabilityWarning, RLReliableError, ScoreTableError, TrackerError
from .trackers import registry as _trackers  # noqa: F401  (light: each tracker's redaction rules join redact())
from .version import __version__

if TYPE_CHECKING:  # the lazy names below, for type checkers and IDEs
    from .analysis.evaluation import evaluate
    from .analysis.jordan import jordan_tables
    from .analysis.options import AnalysisOptions, OptionError
    from .analysis.planning import plan
    from .analysis.report import Report
    from .analysis.tables.tuning import tuning_table
    from .data.scores import ScoreTable
    from .looks.gate import gate
    from .looks.race import race
    from .looks.watch import watch
    from .render.plan_figures import save_plan
    from .render.writer import load_report, save_report, save_scores
    from .store.bundle import check_output_folder
    from .trackers.base.protocols import PublishResult
    from .trackers.callback import log_final_score
    from .trackers.folder import FolderSink
    from .trackers.mlflow.sink import MlflowSink, publish_mlflow
    from .trackers.mlflow.source import MlflowSource, mlflow_table
    from .trackers.wandb.sink import WandbSink, publish_wandb
    from .trackers.wandb.source import WandbSource, wandb_table

__all__ = [
    "AnalysisOptions",
    "InputError",
    "OptionError",
    "RLReliableError",
    "ReliabilityWarning",
    "Report",
    "ScoreTable",
    "ScoreTableError",
    "TrackerError",
    "__version__",
    "evaluate",
    "FolderSink",
    "gate",
    "MlflowSink",
    "MlflowSource",
    "PublishResult",
    "WandbSink",
    "WandbSource",
    "check_output_folder",
    "jordan_tables",
    "load_report",
    "log_final_score",
    "mlflow_table",
    "plan",
    "publish_mlflow",
    "race",
    "publish_wandb",
    "save_plan",
    "save_report",
    "save_scores",
    "tuning_table",
    "wandb_table",
    "watch",
]

# Loaded on first use: matplotlib (rendering) and the tracker clients stay out of `import rl_reliable_logger`.
_LAZY = {
    "save_report": ("rl_reliable_logger.render.writer", "save_report"),
    "load_report": ("rl_reliable_logger.render.writer", "load_report"),
    "save_scores": ("rl_reliable_logger.render.writer", "save_scores"),
    "check_output_folder": ("rl_reliable_logger.store.bundle", "check_output_folder"),
    "log_final_score": ("rl_reliable_logger.trackers.callback", "log_final_score"),
    "PublishResult": ("rl_reliable_logger.trackers.base.protocols", "PublishResult"),
    "FolderSink": ("rl_reliable_logger.trackers.folder", "FolderSink"),
    "MlflowSource": ("rl_reliable_logger.trackers.mlflow.source", "MlflowSource"),
    "MlflowSink": ("rl_reliable_logger.trackers.mlflow.sink", "MlflowSink"),
    "mlflow_table": ("rl_reliable_logger.trackers.mlflow.source", "mlflow_table"),
    "publish_mlflow": ("rl_reliable_logger.trackers.mlflow.sink", "publish_mlflow"),
    "WandbSource": ("rl_reliable_logger.trackers.wandb.source", "WandbSource"),
    "WandbSink": ("rl_reliable_logger.trackers.wandb.sink", "WandbSink"),
    "wandb_table": ("rl_reliable_logger.trackers.wandb.source", "wandb_table"),
    "publish_wandb": ("rl_reliable_logger.trackers.wandb.sink", "publish_wandb"),
    "jordan_tables": ("rl_reliable_logger.analysis.jordan", "jordan_tables"),
    "tuning_table": ("rl_reliable_logger.analysis.tables.tuning", "tuning_table"),
    "plan": ("rl_reliable_logger.analysis.planning", "plan"),
    "save_plan": ("rl_reliable_logger.render.plan_figures", "save_plan"),
    "watch": ("rl_reliable_logger.looks.watch", "watch"),
    "race": ("rl_reliable_logger.looks.race", "race"),
    "gate": ("rl_reliable_logger.looks.gate", "gate"),
    # numpy/pandas/scipy too load only with the first analysis name, so `rl-reliable --help` stays fast
    "AnalysisOptions": ("rl_reliable_logger.analysis.options", "AnalysisOptions"),
    "OptionError": ("rl_reliable_logger.analysis.options", "OptionError"),
    "Report": ("rl_reliable_logger.analysis.report", "Report"),
    "ScoreTable": ("rl_reliable_logger.data.scores", "ScoreTable"),
    "evaluate": ("rl_reliable_logger.analysis.evaluation", "evaluate"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'rl_reliable_logger' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
