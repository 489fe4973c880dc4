"""MLflow: ``plugin`` (what the package knows of MLflow), ``client`` (plumbing), ``source`` (runs -> ScoreTable),
``sink`` (publish a report), ``final_score``.

``mlflow`` itself is imported only inside the functions that talk to it; the names below are loaded on first
use, so importing the plugin (``rl-reliable --help``) loads neither pandas nor the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .final_score import write_final_score as write_final_score
    from .sink import MlflowSink as MlflowSink
    from .sink import publish_mlflow as publish_mlflow
    from .source import DEFAULT_REFS as DEFAULT_REFS
    from .source import MlflowSource as MlflowSource
    from .source import load_mlflow_runs as load_mlflow_runs
    from .source import mlflow_table as mlflow_table

__getattr__, __dir__, __all__ = attach(__name__)
