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

from rl_reliable_logger.trackers.base.retry import REQUEST_TIMEOUT
from tests.support.paths import REPO
from tests.support.wandb_standin import API_KEY

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


_SLOW_SERVER = """
import sys, time, warnings
sys.path.insert(0, sys.argv[1])
import wandb
from rl_reliable_logger import log_final_score
from tests.support.wandb_standin import FAST_RETRY_SETTINGS

wandb.setup(settings=wandb.Settings(**FAST_RETRY_SETTINGS))
run = wandb.Api().run("ent/proj/r1")
print("READY", flush=True)
sys.stdin.readline()  # the test makes the server fail now
start = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    log_final_score(55.0, algorithm="PPO", task="Hopper", seed=1, run=run, retry_for=5, pending_dir=sys.argv[2])
print(f"returned after {time.monotonic() - start:.1f} s", flush=True)
for w in caught:
    print("WARNING", w.message, flush=True)
sys.stdout.flush()
import os
os._exit(0)  # wandb-core is still retrying the abandoned request; this test does not wait for it
"""


def test_log_final_score_on_a_slow_failing_server_returns_within_the_budget(wandb_standin, tmp_path):
    """In a subprocess: the abandoned request keeps that process's wandb-core busy, never this one's."""
    st = wandb_standin
    st.add_run("ent", "proj", id="r1", config={"lr": 0.1}, summary={"loss": 1.0})
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_SERVER, str(REPO), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "READY"
    st.fail("UpsertBucket", 500, times=10_000, delay=10.0)  # each try takes 10 s and fails
    proc.stdin.write("go\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=120)
    print(f"W&B log_final_score, server 500 after 10 s, retry_for=5: {out.splitlines()[0]}")
    took = float(out.split("returned after ")[1].split(" s")[0])
    assert took < 5 + REQUEST_TIMEOUT + 5, err
    (path,) = tmp_path.glob("wandb-r1-*.json")
    (message,) = [ln for ln in out.splitlines() if ln.startswith("WARNING")]
    assert str(path) in message and "Gave up after" in message and "5 s (`retry_for=`)" in message
