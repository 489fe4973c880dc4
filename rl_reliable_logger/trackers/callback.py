"""The one-line end-of-training call: record a run's final score in a documented convention.

``log_final_score(score, algorithm=..., task=..., seed=...)`` writes, on the active tracker run:

* W&B: config ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed``; summary
  ``rl_reliable_final_score`` (a key of its own, never logged as history, so a pending history row
  cannot overwrite it at finish); tags ``algorithm:<A>`` and ``task:<T>``.
* MLflow: tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
  ``rl_reliable_final_score``.

``rl-reliable wandb`` / ``rl-reliable mlflow`` read exactly these names by default, so no field
flags are needed in the common case.

A score is never lost: when the tracker still fails after the retry policy (``retry_for`` seconds,
default 300), the score is saved to a JSON file in the pending folder (``pending_dir``, else
``RL_RELIABLE_PENDING_DIR``, else ``./rl-reliable-pending``), a warning names it (once), and
``rl-reliable pending DIR --push`` sends it later (see ``trackers/base/pending.py``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..errors import TrackerError
from .base.final_score import check_final_score


def log_final_score(
    score: float,
    *,
    algorithm: str,
    task: str,
    seed: int | str,
    run: Any = None,
    retry_for: float | None = None,
    pending_dir: str | os.PathLike[str] | None = None,
    on_failure: str = "warn",
) -> str:
    """Record the final score of this run on the active W&B or MLflow run.

    Args:
        score: the run's final evaluation score (e.g. mean return of the last evaluation).
        algorithm, task, seed: how the run is grouped in the analysis.
        run: a ``wandb`` Run, an MLflow run id, or None for the active run of whichever tracker
            has one (W&B first; then MLflow's active run, or the run named by ``MLFLOW_RUN_ID``
            as under ``mlflow run``). A W&B Public API run (``wandb.Api().run(path)``) is written
            with ``run.update()``, for scores computed after training.
        retry_for: seconds of retries of transient tracker failures (default 300).
        pending_dir: where a score the tracker did not take is saved (default below).
        on_failure: what happens after the score was saved to a pending file: ``"warn"`` (default:
            a :class:`~rl_reliable_logger.trackers.base.pending.PendingScoreWarning`, the call
            returns, so the training script ends normally and its run is not marked failed because
            of the score) or ``"raise"`` (a ``PendingScoreError``, a TrackerError with ``.path``).

    Raises:
        ValueError: the score is a boolean, text or not finite, or a field is empty (nothing written).
        TrackerError: no run to write to; or ``on_failure="raise"`` and the write failed.

    Returns:
        ``"wandb"`` or ``"mlflow"``: the tracker written to (or whose score was saved to a pending file).

    Example:
        >>> import mlflow                                                    # doctest: +SKIP
        >>> with mlflow.start_run():                                          # doctest: +SKIP
        ...     log_final_score(412.0, algorithm="PPO", task="CartPole-v1", seed=3)
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    if on_failure not in ("warn", "raise"):
        raise ValueError(f"log_final_score: on_failure must be 'warn' or 'raise', got {on_failure!r}")
    target = _detect(run)
    kwargs: dict[str, Any] = {"run": run, "retry_for": retry_for, "pending_dir": pending_dir, "on_failure": on_failure}
    if target == "wandb":
        from .wandb.final_score import write_final_score as write_wandb

        write_wandb(checked.score, checked.algorithm, checked.task, checked.seed, **kwargs)
    else:
        from .mlflow.final_score import write_final_score as write_mlflow

        write_mlflow(checked.score, checked.algorithm, checked.task, checked.seed, **kwargs)
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
