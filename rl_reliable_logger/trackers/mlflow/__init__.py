"""MLflow: ``client`` (plumbing), ``source`` (runs -> ScoreTable), ``sink`` (publish a report), ``final_score``.

``mlflow`` itself is imported only inside the functions that talk to it.
"""

from .final_score import write_final_score
from .sink import MlflowSink, publish_mlflow
from .source import DEFAULT_REFS, MlflowSource, load_mlflow_runs, mlflow_table

__all__ = [
    "DEFAULT_REFS",
    "MlflowSink",
    "MlflowSource",
    "load_mlflow_runs",
    "mlflow_table",
    "publish_mlflow",
    "write_final_score",
]
