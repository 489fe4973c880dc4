"""The one-line end-of-training call: record a run's final score in a documented convention.

``log_final_score(score, algorithm=..., task=..., seed=...)`` writes, on the active tracker run:

* W&B: config ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed``; summary
  ``rl_reliable_final_score`` (a key of its own, never logged as history, so a pending history row
  cannot overwrite it at finish); tags ``algorithm:<A>`` and ``task:<T>``.
* MLflow: tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
  ``rl_reliable_final_score``.

``rl-reliable wandb`` / ``rl-reliable mlflow`` read exactly these names by default, so no field
flags are needed in the common case.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ..errors import TrackerError


def _validate(score: Any, algorithm: str, task: str) -> float:
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise ValueError(f"log_final_score: the score must be a number, got {score!r}") from None
    if not math.isfinite(value):
        raise ValueError(
            f"log_final_score: refusing non-finite score {value!r} for {algorithm} / {task}; nothing was written, "
            "the run is left as it was. Fix the evaluation (e.g. a diverged return) and call again."
        )
    if not str(algorithm).strip() or not str(task).strip():
        raise ValueError("log_final_score: algorithm and task must be non-empty strings")
    return value


def log_final_score(score: float, *, algorithm: str, task: str, seed: int | str, run: Any = None) -> str:
    """Record the final score of this run on the active W&B or MLflow run.

    Args:
        score: the run's final evaluation score (e.g. mean return of the last evaluation).
        algorithm, task, seed: how the run is grouped in the analysis.
        run: a ``wandb`` Run, an MLflow run id, or None for the active run of whichever tracker
            has one (W&B first).

    Returns:
        ``"wandb"`` or ``"mlflow"``: the tracker written to.

    Example:
        >>> import mlflow                                                    # doctest: +SKIP
        >>> with mlflow.start_run():                                          # doctest: +SKIP
        ...     log_final_score(412.0, algorithm="PPO", task="CartPole-v1", seed=3)
    """
    value = _validate(score, algorithm, task)
    target = _detect(run)
    if target == "wandb":
        from .wandb.final_score import write_final_score as write_wandb

        write_wandb(value, algorithm=str(algorithm), task=str(task), seed=seed, run=run)
    else:
        from .mlflow.final_score import write_final_score as write_mlflow

        write_mlflow(value, algorithm=str(algorithm), task=str(task), seed=seed, run=run)
    return target


def _detect(run: Any) -> str:
    if run is not None:
        if type(run).__module__.startswith("wandb"):
            return "wandb"
        return "mlflow"
    wandb = sys.modules.get("wandb")
    if wandb is not None and getattr(wandb, "run", None) is not None:
        return "wandb"
    mlflow = sys.modules.get("mlflow")
    if mlflow is not None and mlflow.active_run() is not None:
        return "mlflow"
    raise TrackerError(
        "log_final_score: no active tracker run. Call it inside `wandb.init(...)` or `mlflow.start_run()`, "
        "or pass run=<wandb run | mlflow run id>."
    )
