"""MLflow: ``plugin`` (what the package knows of MLflow), ``client`` (plumbing), ``source`` (runs -> ScoreTable),
``sink`` (publish a report), ``final_score``.

``mlflow`` itself is imported only inside the functions that talk to it; the names below are loaded on first
use, so importing the plugin (``rl-reliable --help``) loads neither pandas nor the client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .final_score import write_final_score
    from .sink import MlflowSink, publish_mlflow
    from .source import DEFAULT_REFS, MlflowSource, load_mlflow_runs, mlflow_table

_LAZY = {
    "DEFAULT_REFS": "source",
    "MlflowSink": "sink",
    "MlflowSource": "source",
    "load_mlflow_runs": "source",
    "mlflow_table": "source",
    "publish_mlflow": "sink",
    "write_final_score": "final_score",
}
__all__ = [
    "DEFAULT_REFS",
    "MlflowSink",
    "MlflowSource",
    "load_mlflow_runs",
    "mlflow_table",
    "publish_mlflow",
    "write_final_score",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
