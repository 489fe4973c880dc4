"""End of training on MLflow: the convention ``log_final_score`` writes onto a run.

Tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
``rl_reliable_final_score``, in one ``log_batch`` call; the MLflow Source reads exactly these by default.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ...errors import TrackerError
from ..base.final_score import check_final_score
from ..base.records import DEFAULT_KEYS
from ..base.retry import RetryPolicy
from .client import Tracker, _import_mlflow


def write_final_score(score: Any, algorithm: Any, task: Any, seed: Any, run: Any = None) -> str:
    """Write the end-of-training convention on an MLflow run; return its id.

    Tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
    ``rl_reliable_final_score`` (one ``log_batch`` call), on ``run`` (an id, a Run or ActiveRun)
    or the active run. A non-finite score, a missing run, or tags that already name a different
    algorithm/task/seed raise before anything is written.

    Example:
        >>> with mlflow.start_run():                                              # doctest: +SKIP
        ...     write_final_score(812.5, algorithm="PPO", task="Hopper-v4", seed=3)
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    value, algorithm, task, seed = checked.score, checked.algorithm, checked.task, checked.seed
    mlflow = _import_mlflow()
    from mlflow.entities import Metric, RunTag

    run_id = _run_id_of(run, mlflow)
    # the end of a long training run: ride out a server restart rather than lose the score
    tracker = Tracker(None, must_exist=False, retry=RetryPolicy())
    client = tracker.client
    current = tracker.call("reading the run", client.get_run, run_id).data.tags
    wanted = {
        DEFAULT_KEYS["algorithm"]: str(algorithm),
        DEFAULT_KEYS["task"]: str(task),
        DEFAULT_KEYS["seed"]: _seed_text(seed),
    }
    clash = {k: (current[k], v) for k, v in wanted.items() if k in current and current[k] != v}
    if clash:
        detail = ", ".join(f"{k} is {old!r}, new {new!r}" for k, (old, new) in clash.items())
        raise ValueError(
            f"log_final_score: run {run_id} already has {detail}; one run is one (algorithm, task, "
            "seed). Nothing was logged. Start a new run for a new configuration."
        )
    tracker.call(
        "logging the final score",
        client.log_batch,
        run_id,
        metrics=[Metric(DEFAULT_KEYS["score"], value, int(time.time() * 1000), 0)],
        tags=[RunTag(k, v) for k, v in wanted.items()],
    )
    return run_id


def _seed_text(seed: Any) -> str:
    if isinstance(seed, float) and seed.is_integer():
        return str(int(seed))
    if hasattr(seed, "item"):  # numpy scalar
        return _seed_text(seed.item())
    return str(seed)


def _run_id_of(run: Any, mlflow: Any) -> str:
    if run is None:
        active = mlflow.active_run()
        if active is not None:
            return active.info.run_id
        if os.environ.get("MLFLOW_RUN_ID"):  # `mlflow run` made the run; the script never started it
            return os.environ["MLFLOW_RUN_ID"]
        raise TrackerError(
            "log_final_score: no active MLflow run; call it inside `with mlflow.start_run():` or pass run=<run id>."
        )
    if isinstance(run, str):
        return run
    info = getattr(run, "info", None)
    if info is not None and getattr(info, "run_id", None):
        return str(info.run_id)
    raise ValueError(f"log_final_score: run must be an MLflow run id, Run or ActiveRun, got {type(run).__name__}.")
