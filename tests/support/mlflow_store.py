"""Shared helpers for the MLflow tests (a real SQLite store in a temp dir; no mocks).

Imported by the other ``test_mlflow_*`` modules; it holds no tests of its own.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

mlflow = pytest.importorskip("mlflow")

from tests.support.paths import REPO  # noqa: E402,F401  (re-exported for the MLflow tests)


@contextlib.contextmanager
def use_store(uri: str, monkeypatch: pytest.MonkeyPatch):
    """Point MLflow (env + fluent API) at ``uri`` for one test and restore it after."""
    from mlflow.tracking._tracking_service import utils

    old = utils._tracking_uri
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    try:
        yield uri
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(old)


def make_store(tmp_dir: Path) -> str:
    """Create an MLflow SQLite store (runs the migrations once) and return its URI."""
    uri = f"sqlite:///{tmp_dir}/mlflow.db"
    # MLflow caches one store per URI and fixes its artifact root ("./mlruns") when the store is
    # first made: make it from inside tmp_dir so no test writes artifacts into the checkout.
    cwd = os.getcwd()
    os.chdir(tmp_dir)
    try:
        mlflow.MlflowClient(uri).search_experiments()
    finally:
        os.chdir(cwd)
    return uri


def log_run(
    client: Any,
    experiment_id: str,
    name: str,
    *,
    tags: dict[str, str] | None = None,
    metrics: dict[str, float] | None = None,
    params: dict[str, str] | None = None,
    history: dict[str, list[tuple[int, float]]] | None = None,
    status: str | None = "FINISHED",
) -> str:
    """One run written with the plain MLflow client; ``status=None`` leaves it RUNNING."""
    from mlflow.entities import Metric, Param, RunTag

    run = client.create_run(experiment_id, run_name=name)
    now = int(time.time() * 1000)
    points = [Metric(k, float(v), now, 0) for k, v in (metrics or {}).items()]
    for key, series in (history or {}).items():
        points += [Metric(key, float(v), now + i, int(s)) for i, (s, v) in enumerate(series)]
    client.log_batch(
        run.info.run_id,
        metrics=points,
        params=[Param(k, str(v)) for k, v in (params or {}).items()],
        tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()],
    )
    if status:
        client.set_terminated(run.info.run_id, status)
    return run.info.run_id


def convention(algorithm: str, task: str, seed: int) -> dict[str, str]:
    """The tags log_final_score writes (spelled out here, so a change of convention fails the tests)."""
    return {"rl_reliable_algorithm": algorithm, "rl_reliable_task": task, "rl_reliable_seed": str(seed)}


def snapshot(client: Any, run_ids: list[str]) -> dict[str, Any]:
    """Everything a user sees of some runs: status, tags, params, metrics and their full histories."""
    out = {}
    for run_id in run_ids:
        run = client.get_run(run_id)
        histories = {
            k: [(m.step, m.value, m.timestamp) for m in client.get_metric_history(run_id, k)] for k in run.data.metrics
        }
        artifacts = [f.path for f in client.list_artifacts(run_id)]
        out[run_id] = (
            run.info.status,
            run.info.end_time,
            dict(run.data.tags),
            dict(run.data.params),
            histories,
            artifacts,
        )
    return out
