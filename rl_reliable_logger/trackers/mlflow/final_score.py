"""End of training on MLflow: the convention ``log_final_score`` writes onto a run.

Tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
``rl_reliable_final_score``, in one ``log_batch`` call; the MLflow Source reads exactly these by default.
When the write still fails after the retry policy, the score goes to a pending file
(:mod:`..base.pending`); :func:`push_pending` sends such a file later.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any

from ...errors import InputError, TrackerError, caller_stacklevel
from ...wording import kw, said
from ..base.final_score import FinalScore, check_final_score
from ..base.pending import PendingScore, report_failure
from ..base.request import DEFAULT_KEYS
from ..base.retry import DEFAULT_RETRY_FOR, RetryPolicy
from .client import Tracker, import_mlflow, sqlite_path
from .names import LABEL, NAME


def write_final_score(
    score: Any,
    algorithm: Any,
    task: Any,
    seed: Any,
    run: Any = None,
    *,
    retry_for: float | None = None,
    pending_dir: str | os.PathLike[str] | None = None,
    on_failure: str = "warn",
) -> str:
    """Write the end-of-training convention on an MLflow run; return its id.

    Tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
    ``rl_reliable_final_score`` (one ``log_batch`` call), on ``run`` (an id, a Run or ActiveRun)
    or the active run. A non-finite score, a missing run, or tags that already name a different
    algorithm/task/seed raise before anything is written. When the tracker still fails after
    ``retry_for`` seconds of retries (default 300), the score is saved to a pending file (see
    :func:`~rl_reliable_logger.trackers.base.pending.report_failure`).

    Example:
        >>> with mlflow.start_run():                                              # doctest: +SKIP
        ...     write_final_score(812.5, algorithm="PPO", task="Hopper-v4", seed=3)
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    mlflow = import_mlflow()
    from mlflow.exceptions import MlflowException

    run_id = _run_id_of(run, mlflow)
    # the end of a long training run: ride out a server restart rather than lose the score
    uri = str(mlflow.get_tracking_uri())
    try:  # opening the client may fail too (a refused server with no retries, a missing driver): the score is kept
        tracker = Tracker(uri, must_exist=False, retry=RetryPolicy(total=_seconds(retry_for)))
        _write(tracker, run_id, checked)
    except (TrackerError, MlflowException, OSError) as err:
        target = {"run_id": run_id, "tracking_uri": _absolute_uri(uri)}
        report_failure(
            checked,
            tracker=NAME,
            label=LABEL,
            target=target,
            error=err,
            directory=pending_dir,
            on_failure=on_failure,
        )
    return run_id


def _seconds(retry_for: float | None) -> float:
    return DEFAULT_RETRY_FOR if retry_for is None else max(0.0, float(retry_for))


def _absolute_uri(uri: str) -> str:
    """A relative ``sqlite:///x.db`` made absolute, so a pending file can be pushed from another folder."""
    path = sqlite_path(uri)
    if path is not None and not path.is_absolute():
        return "sqlite:///" + str(Path(path).absolute()) + (uri[uri.index("?") :] if "?" in uri else "")
    return uri


def _write(tracker: Tracker, run_id: str, checked: FinalScore) -> str:
    """Check the run's tags, then log the metric and tags; ``"written"`` or ``"already"`` (same score there)."""
    from mlflow.entities import Metric, RunTag

    client = tracker.client
    data = tracker.call("reading the run", client.get_run, run_id).data
    wanted = {
        DEFAULT_KEYS["algorithm"]: checked.algorithm,
        DEFAULT_KEYS["task"]: checked.task,
        DEFAULT_KEYS["seed"]: str(checked.seed),
    }
    current = data.tags
    clash = {k: (current[k], v) for k, v in wanted.items() if k in current and current[k] != v}
    if clash:
        detail = ", ".join(f"{k} is {old!r}, new {new!r}" for k, (old, new) in clash.items())
        raise ValueError(
            f"log_final_score: run {run_id} already has {detail}; one run is one (algorithm, task, "
            "seed). Nothing was logged. Start a new run for a new configuration."
        )
    old = data.metrics.get(DEFAULT_KEYS["score"])
    if old == checked.score and all(current.get(k) == v for k, v in wanted.items()):
        return "already"
    if old is not None and old != checked.score:  # MLflow keeps both; analyses read the latest without a word
        warnings.warn(
            f"log_final_score: run {run_id} already has {DEFAULT_KEYS['score']} = {old!r}; {checked.score!r} is "
            "logged after it and is the value every analysis uses (the earlier one stays in the metric's history). "
            "Log one final score per run.",
            UserWarning,
            stacklevel=caller_stacklevel(),
        )
    tracker.call(
        "logging the final score",
        client.log_batch,
        run_id,
        metrics=[Metric(DEFAULT_KEYS["score"], checked.score, int(time.time() * 1000), 0)],
        tags=[RunTag(k, v) for k, v in wanted.items()],
    )
    return "written"


def push_pending(item: PendingScore, *, tracking_uri: str | None = None, retry: RetryPolicy | None = None) -> str:
    """Send one pending MLflow score to the run it names (and no other); ``"written"`` or ``"already"``.

    ``tracking_uri`` replaces the URI recorded in the file (needed when it held a secret, which is
    never saved). A run that already has a *different* final score is left alone (InputError).
    """
    uri = tracking_uri or str(item.run.get("tracking_uri") or "")
    if not uri or "***" in uri:
        raise InputError(
            said(
                f"{item.path.name}: the tracking URI is not recorded in full (secrets are never saved); pass ",
                kw("tracking_uri="),
                " (the URI of that server)",
            )
        )
    from mlflow.exceptions import MlflowException

    tracker = Tracker(uri, must_exist=True, retry=retry or RetryPolicy(total=0), uri_keyword=kw("tracking_uri="))
    checked = FinalScore(item.score, item.algorithm, item.task, item.seed)
    try:
        present = tracker.call("reading the run", tracker.client.get_run, item.run_id).data.metrics
    except MlflowException as err:
        if getattr(err, "error_code", "") != "RESOURCE_DOES_NOT_EXIST":
            raise
        raise InputError(
            said(
                f"{item.path.name}: run {item.run_id} does not exist at {tracker.shown_uri} (deleted, or another "
                "store); nothing was written. Pass ",
                kw("tracking_uri="),
                " with the store that holds it, or remove the file",
            )
        ) from None
    old = present.get(DEFAULT_KEYS["score"])
    if old is not None and old != item.score:
        raise InputError(
            f"{item.path.name}: run {item.run_id} already has {DEFAULT_KEYS['score']} = {old!r}, not the saved "
            f"{item.score!r}; left unchanged (remove the pending file if the run's value is the right one)"
        )
    return _write(tracker, item.run_id, checked)


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
