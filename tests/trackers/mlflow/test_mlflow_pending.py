"""A real ``mlflow server`` stopped at the end of training: the final score goes to a pending file and is
pushed to its run (and no other) once the server is back on the same store."""

from __future__ import annotations

import json

import pytest

from rl_reliable_logger import log_final_score
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.pending import PendingScoreWarning
from tests.support.mlflow_server import free_port, mlflow_server
from tests.support.mlflow_store import mlflow, use_store

pytestmark = pytest.mark.slow


def test_server_down_at_the_end_of_training_then_back(tmp_path, monkeypatch, capsys):
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "3")
    pending = tmp_path / "pending"
    with mlflow_server(tmp_path, port=port, startup=90):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("train")
        run_id = client.create_run(exp).info.run_id
        other = client.create_run(exp).info.run_id
    # the server went away just before training ends

    with use_store(uri, monkeypatch), pytest.warns(PendingScoreWarning) as caught:
        log_final_score(812.5, algorithm="PPO", task="Hopper", seed=3, run=run_id, retry_for=1, pending_dir=pending)
    (path,) = pending.glob("*.json")
    data = json.loads(path.read_text())
    assert data["run"] == {"run_id": run_id, "tracking_uri": uri} and data["score"] == 812.5
    assert data["cause"] == "connection"
    assert [str(path) in str(w.message) for w in caught] == [True]
    capsys.readouterr()

    assert main(["pending", str(pending), "--push", "--retry-for", "0"]) == 2  # still down: kept
    assert path.is_file()
    capsys.readouterr()

    with mlflow_server(tmp_path, port=port, startup=90):  # back, on the same store
        assert main(["pending", str(pending), "--push"]) == 0
        assert f"pushed: mlflow run {run_id}: score 812.5 written" in capsys.readouterr().out
        got = client.get_run(run_id).data
        assert got.metrics["rl_reliable_final_score"] == 812.5
        assert (got.tags["rl_reliable_algorithm"], got.tags["rl_reliable_task"], got.tags["rl_reliable_seed"]) == (
            "PPO", "Hopper", "3",
        )  # fmt: skip
        untouched = client.get_run(other).data
        assert not untouched.metrics and not any(k.startswith("rl_reliable") for k in untouched.tags)
        assert (pending / "pushed" / path.name).is_file() and not path.exists()
