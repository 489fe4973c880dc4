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

import os
import sys
from typing import Any

from ..errors import TrackerError
from .base.final_score import check_final_score


def log_final_score(score: float, *, algorithm: str, task: str, seed: int | str, run: Any = None) -> str:
    """Record the final score of this run on the active W&B or MLflow run.

    Args:
        score: the run's final evaluation score (e.g. mean return of the last evaluation).
        algorithm, task, seed: how the run is grouped in the analysis.
        run: a ``wandb`` Run, an MLflow run id, or None for the active run of whichever tracker
            has one (W&B first; then MLflow's active run, or the run named by ``MLFLOW_RUN_ID``
            as under ``mlflow run``).

    Raises:
        ValueError: the score is a boolean, text or not finite, or a field is empty (nothing written).

    Returns:
        ``"wandb"`` or ``"mlflow"``: the tracker written to.

    Example:
        >>> import mlflow                                                    # doctest: +SKIP
        >>> with mlflow.start_run():                                          # doctest: +SKIP
        ...     log_final_score(412.0, algorithm="PPO", task="CartPole-v1", seed=3)
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    target = _detect(run)
    if target == "wandb":
        from .wandb.final_score import write_final_score as write_wandb

        write_wandb(checked.score, algorithm=checked.algorithm, task=checked.task, seed=checked.seed, run=run)
    else:
        from .mlflow.final_score import write_final_score as write_mlflow

        write_mlflow(checked.score, algorithm=checked.algorithm, task=checked.task, seed=checked.seed, run=run)
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
    if os.environ.get("MLFLOW_RUN_ID"):  # an `mlflow run` entry point that has not started its run
        return "mlflow"
    raise TrackerError(
        "log_final_score: no active tracker run. Call it inside `wandb.init(...)` or `mlflow.start_run()`, "
        "or pass run=<wandb run | mlflow run id>."
    )
