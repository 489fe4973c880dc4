"""A time budget is a wall-clock promise: ``--retry-for S`` / ``retry_for=S`` ends the call within S plus one
request timeout, whatever MLflow's own HTTP retries would do (its defaults: 7 retries, backoff factor 2).

Each case runs in a subprocess with MLflow's default HTTP settings (no ``MLFLOW_HTTP_REQUEST_*`` set, as a
user would have them): a closed port, a real ``mlflow server`` killed with SIGKILL while a request is in
flight, and a proxy that delays every request and answers 500.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rl_reliable_logger.trackers.base.retry import REQUEST_TIMEOUT
from tests.support.fault_proxy import FaultProxy
from tests.support.mlflow_server import kill_server, mlflow_server
from tests.support.paths import REPO

pytestmark = pytest.mark.slow
pytest.importorskip("mlflow")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "RL_RELIABLE_PENDING"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true", **extra)
    return env


def _cli(tmp_path: Path, uri: str, seconds: float | None, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    argv = [sys.executable, "-m", "rl_reliable_logger", "mlflow", "--tracking-uri", uri, "--experiment", "exp"]
    budget = [] if seconds is None else ["--retry-for", f"{seconds:g}"]
    start = time.monotonic()
    proc = subprocess.run(
        [*argv, *budget, "--reps", "50", "--no-figures"],
        cwd=tmp_path,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc, time.monotonic() - start


def _one_error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_closed_port_retry_for_10_ends_within_45_s(tmp_path):
    proc, took = _cli(tmp_path, f"http://127.0.0.1:{_closed_port()}", 10)
    print(f"closed port, --retry-for 10: exit {proc.returncode} after {took:.1f} s")
    assert proc.returncode == 2, proc.stderr
    assert took < 45
    line = _one_error(proc.stderr)
    assert "could not reach the MLflow tracking server" in line and "(connection: connection refused" in line
    assert line.endswith(
        f"Gave up after 1 attempt in {10 + REQUEST_TIMEOUT:.0f} s: the time budget is 10 s (--retry-for) plus "
        f"{REQUEST_TIMEOUT:g} s for the last request."
    )
    # progress while waiting: the attempt and the time left, never more than the budget itself
    assert "note: still waiting for an answer (looking up experiment 'exp'): attempt 1, " in proc.stderr
    assert "s left of the 10 s time budget" in proc.stderr or "the 10 s time budget is spent; this last request" in (
        proc.stderr
    )
    left = [int(m) for m in re.findall(r"(\d+) s left of the 10 s time budget", proc.stderr)]
    assert all(0 <= n <= 10 for n in left), left


def test_a_closed_port_without_a_budget_is_could_not_connect_within_seconds(tmp_path):
    """No --retry-for: a port that refuses the very first connection is a typo or a stopped server, said at once
    (MLflow's own client would retry it for minutes)."""
    proc, took = _cli(tmp_path, f"http://127.0.0.1:{_closed_port()}", None)
    print(f"closed port, no --retry-for: exit {proc.returncode} after {took:.1f} s")
    assert proc.returncode == 2, proc.stderr
    assert took < 30
    line = _one_error(proc.stderr)
    assert "could not connect to the MLflow tracking server" in line and "(connection refused)" in line
    assert "--retry-for SECONDS" in line and "still waiting" not in proc.stderr


def test_proxy_answering_500_slowly_is_retried_within_the_budget(tmp_path):
    with FaultProxy(None, delay=1.0, status=500) as url:
        # the user's own choice of no HTTP retries inside MLflow: each attempt fails, ours retry it
        proc, took = _cli(tmp_path, url, 12, MLFLOW_HTTP_REQUEST_MAX_RETRIES="0")
    print(f"proxy 1 s + HTTP 500, --retry-for 12: exit {proc.returncode} after {took:.1f} s")
    assert proc.returncode == 2, proc.stderr
    assert took < 12 + REQUEST_TIMEOUT + 15
    line = _one_error(proc.stderr)
    assert "(server error" in line and "the time budget is 12 s (--retry-for)" in line
    retries = [ln for ln in proc.stderr.splitlines() if ln.startswith("note: looking up experiment 'exp' failed")]
    assert len(retries) >= 2 and all(
        "(server error); attempt " in ln and "s left of the 12 s time budget" in ln for ln in retries
    )


_TRAINING = """
import sys, time, warnings
from rl_reliable_logger import log_final_score
start = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    log_final_score(812.5, algorithm="PPO", task="Hopper", seed=3, run=sys.argv[1], retry_for=20, pending_dir=sys.argv[2])
print(f"returned after {time.monotonic() - start:.1f} s")
for w in caught:
    print("WARNING", w.category.__name__, w.message, file=sys.stderr)
"""


def test_server_killed_mid_call_log_final_score_returns_within_60_s(tmp_path):
    from tests.support.mlflow_store import mlflow

    pending = tmp_path / "pending"
    with mlflow_server(tmp_path, startup=90) as server:
        run_id = (
            mlflow.MlflowClient(server).create_run(mlflow.MlflowClient(server).create_experiment("train")).info.run_id
        )
        proxy = FaultProxy(server, delay=3.0)
        with proxy as url:
            start = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, "-c", _TRAINING, run_id, str(pending)],
                cwd=tmp_path,
                env=_env(MLFLOW_TRACKING_URI=url),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 60
            while proxy.hits == 0 and time.monotonic() < deadline:
                time.sleep(0.2)
            kill_server(server)  # SIGKILL while the request waits in the proxy
            out, err = proc.communicate(timeout=120)
            took = time.monotonic() - start
    print(f"server killed mid-call, retry_for=20: {out.strip()} (process {took:.1f} s)")
    assert proc.returncode == 0, err
    called = float(out.split("returned after ")[1].split(" s")[0])
    assert called < 60
    (path,) = pending.glob("mlflow-*.json")
    data = json.loads(path.read_text())
    assert data["run"]["run_id"] == run_id and data["score"] == 812.5
    said = [ln for ln in err.splitlines() if "could not write the final score" in ln]
    assert len(said) == 1 and said[0].startswith("WARNING PendingScoreWarning") and str(path) in said[0]
    assert "Gave up after" in said[0] and "20 s (`retry_for=`)" in said[0]
