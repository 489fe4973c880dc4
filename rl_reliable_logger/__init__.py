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

from typing import TYPE_CHECKING

from .errors import InputError as InputError
from .errors import ReliabilityWarning as ReliabilityWarning
from .errors import RLReliableError as RLReliableError
from .errors import ScoreTableError as ScoreTableError
from .errors import TrackerError as TrackerError
from .lazy import attach
from .trackers import registry as _trackers  # noqa: F401  (light: each tracker's redaction rules join redact())
from .version import __version__ as __version__

if TYPE_CHECKING:  # the public names loaded on first use (rl_reliable_logger.lazy reads this block)
    from .analysis.evaluation import evaluate as evaluate
    from .analysis.jordan import jordan_tables as jordan_tables
    from .analysis.options import AnalysisOptions as AnalysisOptions
    from .analysis.options import OptionError as OptionError
    from .analysis.planning import plan as plan
    from .analysis.report import Report as Report
    from .analysis.tables.tuning import tuning_table as tuning_table
    from .data.scores import ScoreTable as ScoreTable
    from .looks.gate import gate as gate
    from .looks.race import race as race
    from .looks.watch import watch as watch
    from .render.methods import methods_markdown as methods_text  # noqa: F401  (the verb's name)
    from .render.plan_figures import save_plan as save_plan
    from .render.tables import to_latex as to_latex
    from .render.tables import to_markdown as to_markdown
    from .render.writer import load_report as load_report
    from .render.writer import save_report as save_report
    from .render.writer import save_scores as save_scores
    from .store.bundle import check_output_folder as check_output_folder
    from .trackers.base.protocols import PublishResult as PublishResult
    from .trackers.base.publishing import PublishOptions as PublishOptions
    from .trackers.base.reading import ReadOptions as ReadOptions
    from .trackers.callback import log_final_score as log_final_score
    from .trackers.folder import FolderSink as FolderSink
    from .trackers.mlflow.sink import MlflowSink as MlflowSink
    from .trackers.mlflow.sink import publish_mlflow as publish_mlflow
    from .trackers.mlflow.source import MlflowSource as MlflowSource
    from .trackers.mlflow.source import mlflow_table as mlflow_table
    from .trackers.sb3.callback import FinalScoreCallback as FinalScoreCallback
    from .trackers.wandb.sink import WandbSink as WandbSink
    from .trackers.wandb.sink import publish_wandb as publish_wandb
    from .trackers.wandb.source import WandbSource as WandbSource
    from .trackers.wandb.source import wandb_table as wandb_table

# The one list of public names is the type-checking block above (what type checkers and IDEs read) plus the eager
# imports: each lazy name is loaded on first use, so matplotlib, numpy, pandas, scipy and the tracker clients stay
# out of `import rl_reliable_logger` and `rl-reliable --help` stays fast.
__getattr__, __dir__, __all__ = attach(__name__)
