"""The names of this tracker the rest of its subpackage uses (a module of its own so that the plugin, the
source and the sink share them without importing each other)."""

from __future__ import annotations

from ..base.request import DEFAULT_KEYS

NAME = "mlflow"
LABEL = "MLflow"
#: Field references of the end-of-training convention (what ``log_final_score`` writes).
DEFAULT_REFS = {
    "algorithm": f"tags.{DEFAULT_KEYS['algorithm']}",
    "task": f"tags.{DEFAULT_KEYS['task']}",
    "seed": f"tags.{DEFAULT_KEYS['seed']}",
    "score": f"metrics.{DEFAULT_KEYS['score']}",
}
