"""A time budget is a wall-clock promise on W&B too: the ``rl-reliable wandb`` command against a closed port,
and ``log_final_score`` on a Public API run whose server answers 500 slowly (the real wandb client)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger import log_final_score
from rl_reliable_logger.trackers.base.pending import PendingScoreWarning
from rl_reliable_logger.trackers.base.retry import REQUEST_TIMEOUT
from tests.support.paths import REPO
from tests.support.wandb_standin import API_KEY, FAST_RETRY_SETTINGS

pytestmark = pytest.mark.slow


def test_closed_port_retry_for_10_ends_within_45_s(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        WANDB_BASE_URL=f"http://127.0.0.1:{port}",
        WANDB_API_KEY=API_KEY,
        WANDB_DIR=str(tmp_path),
        WANDB_CACHE_DIR=str(tmp_path / "cache"),
        WANDB_CONFIG_DIR=str(tmp_path / "config"),
        WANDB_SILENT="true",
        WANDB_ERROR_REPORTING="false",
    )
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger", "wandb", "ent/proj", "--retry-for", "10", "--no-figures"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    took = time.monotonic() - start
    print(f"W&B closed port, --retry-for 10: exit {proc.returncode} after {took:.1f} s")
    assert proc.returncode == 2 and took < 45, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert "W&B request failed (connection)" in line and "could not be reached" in line
    assert "Gave up after" in line and "10 s (--retry-for)" in line


def test_log_final_score_on_a_slow_failing_server_returns_within_the_budget(wandb_standin, tmp_path):
    import wandb

    wandb.setup(settings=wandb.Settings(**FAST_RETRY_SETTINGS))
    st = wandb_standin
    st.add_run("ent", "proj", id="r1", config={"lr": 0.1}, summary={"loss": 1.0})
    run = wandb.Api().run("ent/proj/r1")
    st.fail("UpsertBucket", 500, times=10_000, delay=10.0)  # each try takes 10 s and fails
    start = time.monotonic()
    with pytest.warns(PendingScoreWarning) as caught:
        log_final_score(55.0, algorithm="PPO", task="Hopper", seed=1, run=run, retry_for=5, pending_dir=tmp_path)
    took = time.monotonic() - start
    print(f"W&B log_final_score, server 500 after 10 s, retry_for=5: returned after {took:.1f} s")
    assert took < 5 + REQUEST_TIMEOUT + 5
    (path,) = tmp_path.glob("wandb-r1-*.json")
    (message,) = [str(w.message) for w in caught]
    assert str(path) in message and "Gave up after" in message and "5 s (`retry_for=`)" in message
