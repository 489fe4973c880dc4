"""One log_final_score: the same checks for every tracker, MLflow's MLFLOW_RUN_ID, the MLproject's float seed."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from rl_reliable_logger import log_final_score
from rl_reliable_logger.trackers.base.final_score import check_final_score
from tests.support.mlflow_store import make_store, mlflow, use_store
from tests.support.paths import REPO


@pytest.mark.parametrize("score", [True, False, "12.5", math.nan, -math.inf, np.float64("nan"), None, [1.0]])
def test_unusable_scores_are_value_errors(score):
    with pytest.raises(ValueError, match="log_final_score"):
        check_final_score(score, algorithm="PPO", task="Hopper", seed=0)


@pytest.mark.parametrize("seed", [True, 3.5, math.nan, "", None])
def test_unusable_seeds_are_value_errors(seed):
    with pytest.raises(ValueError, match="seed"):
        check_final_score(1.0, algorithm="PPO", task="Hopper", seed=seed)


def test_numbers_and_seeds_are_normalised():
    got = check_final_score(np.float32(1.5), algorithm="PPO", task="Hopper", seed=np.int64(3))
    assert (got.score, got.seed) == (1.5, 3) and type(got.seed) is int
    assert check_final_score(2, algorithm="PPO", task="Hopper", seed=3.0).seed == 3
    assert check_final_score(2, algorithm="PPO", task="Hopper", seed="s-3").seed == "s-3"


def test_wandb_writer_uses_the_shared_checks():
    pytest.importorskip("wandb")
    from rl_reliable_logger.trackers.wandb.final_score import write_final_score

    # the check runs before anything touches the run object
    for bad in (True, "1.0", math.inf):
        with pytest.raises(ValueError, match="log_final_score"):
            write_final_score(bad, "PPO", "Hopper", 0, run=object())
    with pytest.raises(ValueError, match="seed"):
        write_final_score(1.0, "PPO", "Hopper", 0.5, run=object())


def test_mlflow_rejects_text_and_writes_nothing(tmp_path, monkeypatch):
    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("reject")  # never an experiment id left active by another test's store
        with mlflow.start_run() as run:
            with pytest.raises(ValueError, match="real number"):
                log_final_score("12.5", algorithm="PPO", task="Hopper", seed=1)
        got = mlflow.MlflowClient(uri).get_run(run.info.run_id)
        assert "rl_reliable_final_score" not in got.data.metrics and "rl_reliable_seed" not in got.data.tags


def test_mlflow_resumes_the_run_named_by_mlflow_run_id(tmp_path, monkeypatch):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("proj")).info.run_id
    with use_store(uri, monkeypatch):
        monkeypatch.setenv("MLFLOW_RUN_ID", run_id)
        assert mlflow.active_run() is None
        assert log_final_score(7.0, algorithm="PPO", task="Hopper", seed=2.0) == "mlflow"
    got = client.get_run(run_id)
    assert got.data.metrics["rl_reliable_final_score"] == 7.0
    assert got.data.tags["rl_reliable_seed"] == "2"


def test_mlproject_train_entry_point_with_a_float_seed(tmp_path):
    """As `mlflow run -e train -P seed=3.0` does: the run exists with -P params logged, MLFLOW_RUN_ID names it."""
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("proj")).info.run_id
    for k, v in {"algorithm": "ucb1", "task": "bernoulli-10", "seed": "3.0", "steps": "200.0"}.items():
        client.log_param(run_id, k, v)
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "MLFLOW_RUN_ID": run_id, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "train.py", "--algorithm", "ucb1", "--task", "bernoulli-10", "--seed", "3.0"]
    done = subprocess.run(
        [*cmd, "--steps", "200.0"],
        cwd=REPO / "integrations" / "mlflow",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = client.get_run(run_id)
    assert got.info.status == "FINISHED"
    assert got.data.tags["rl_reliable_seed"] == "3" and got.data.params["seed"] == "3.0"
    assert math.isfinite(got.data.metrics["rl_reliable_final_score"])
