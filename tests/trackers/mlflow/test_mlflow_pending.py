"""A real ``mlflow server`` stopped at the end of training: the final score goes to a pending file and is
pushed to its run (and no other) once the server is back on the same store."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rl_reliable_logger import log_final_score
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.pending import PendingScoreWarning
from tests.support.mlflow_store import mlflow, use_store

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp_path: Path, port: int) -> subprocess.Popen:
    """``mlflow server`` on 127.0.0.1:``port`` over ``tmp_path/server.db``; returns once /health says OK."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
           "--backend-store-uri", f"sqlite:///{tmp_path}/server.db", "--artifacts-destination", str(tmp_path / "art")]  # fmt: skip
    log = open(tmp_path / f"server-{time.monotonic_ns()}.log", "w")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            pytest.fail(f"mlflow server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if response.read().strip() == b"OK":
                    return proc
        except OSError:
            pass
        if time.monotonic() > deadline:
            _stop(proc)
            pytest.fail("mlflow server did not become healthy within 90 s")
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_server_down_at_the_end_of_training_then_back(tmp_path, monkeypatch, capsys):
    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "3")
    pending = tmp_path / "pending"
    proc = _start(tmp_path, port)
    try:
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("train")
        run_id = client.create_run(exp).info.run_id
        other = client.create_run(exp).info.run_id
    finally:
        _stop(proc)  # the server goes away just before training ends

    with use_store(uri, monkeypatch), pytest.warns(PendingScoreWarning):
        log_final_score(812.5, algorithm="PPO", task="Hopper", seed=3, run=run_id, retry_for=1, pending_dir=pending)
    (path,) = pending.glob("*.json")
    data = json.loads(path.read_text())
    assert data["run"] == {"run_id": run_id, "tracking_uri": uri} and data["score"] == 812.5
    assert data["cause"] == "connection"
    assert str(path) in capsys.readouterr().err

    assert main(["pending", str(pending), "--push", "--retry-for", "0"]) == 1  # still down: kept
    assert path.is_file()
    capsys.readouterr()

    proc = _start(tmp_path, port)  # back, on the same store
    try:
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
    finally:
        _stop(proc)
