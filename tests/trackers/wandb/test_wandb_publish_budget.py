"""A W&B publish is bounded by its time budget too (``--retry-for S`` / ``retry=``): the whole publish (the
Public API checks, ``wandb.init``, the artifact upload and ``run.finish``) ends within S plus one request
timeout, and what could not be sent is kept on disk with the ``wandb sync`` command that sends it.

Each publish runs in a subprocess with the real wandb client, so the wall time measured includes the
process exit (wandb-core's shutdown): against a closed port, and against the loopback stand-in when
``wandb.init`` keeps failing (before the run exists) or when the artifact commit answers 500 slowly
(after it exists).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.trackers.base.retry import REQUEST_TIMEOUT
from tests.support.paths import REPO
from tests.support.wandb_env import wandb_env
from tests.support.wandb_standin import API_KEY

pytestmark = pytest.mark.slow

_PUBLISH = """
import sys
sys.path.insert(0, sys.argv[1])
from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.base.retry import RetryPolicy
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.wandb.sink import WandbSink, publish_wandb
from tests.support.reports import small_report

try:
    options = PublishOptions(figures=False, retry=RetryPolicy(total=float(sys.argv[2])))
    sink = WandbSink(project="proj", entity="ent", client_kwargs={"mode": "online"}, publishing=options)
    result = publish_wandb(small_report(), sink)
    print("PUBLISHED", result.target)
except TrackerError as err:
    print("ERROR", type(err).__name__, err)
    print("KEPT", getattr(err, "path", None))
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tmp_path: Path, base_url: str) -> dict[str, str]:
    env = wandb_env(tmp_path)  # an isolated W&B environment, online against ``base_url``
    del env["WANDB_MODE"]
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""), WANDB_BASE_URL=base_url, WANDB_API_KEY=API_KEY
    )
    return env


def _publish(tmp_path: Path, base_url: str, seconds: float) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _PUBLISH, str(REPO), f"{seconds:g}"],
        cwd=tmp_path,
        env=_env(tmp_path, base_url),
        capture_output=True,
        text=True,
        timeout=240,
    )
    return proc, time.monotonic() - start


def _kept(out: str) -> tuple[str, Path]:
    (error,) = [ln for ln in out.splitlines() if ln.startswith("ERROR ")]
    (kept,) = [ln for ln in out.splitlines() if ln.startswith("KEPT ")]
    return error, Path(kept.split(" ", 1)[1])


def test_closed_port_publish_ends_within_the_budget_and_keeps_an_offline_run(tmp_path):
    proc, took = _publish(tmp_path, f"http://127.0.0.1:{_closed_port()}", 5)
    print(f"W&B publish, closed port, retry 5 s: {took:.1f} s")
    assert proc.returncode == 0, proc.stderr
    assert took < 5 + REQUEST_TIMEOUT + 10, proc.stdout + proc.stderr
    error, kept = _kept(proc.stdout)
    assert error.startswith("ERROR PendingPublishError W&B request failed (connection) while connecting"), error
    assert "Gave up after 1 attempt in " in error and "the time budget is 5 s (`retry_for=`) plus 20 s" in error
    assert error.endswith(f"The report was saved to {kept}; send it when W&B is back with: wandb sync {kept}")
    assert kept.name.startswith("offline-run-") and kept.parent == tmp_path / "wandb"
    assert list(kept.glob("run-*.wandb")) and (kept / "rl-reliable-artifact" / "files" / "manifest.json").is_file()
    # progress while waiting: the step and the time left (of the 5 s budget, or of the last request once it is spent)
    assert re.search(
        r"note: still waiting for an answer \(checking for an earlier publish .*"
        r"(\d+ s left of the 5 s time budget|the 5 s time budget is spent; this last request gets \d+ s more)",
        proc.stderr,
    ), proc.stderr


def test_init_failing_on_the_standin_is_bounded_and_kept(wandb_standin, tmp_path):
    st = wandb_standin
    st.fail("UpsertBucket", 500, times=10_000)  # the run is never created
    proc, took = _publish(tmp_path, st.base_url, 5)
    print(f"W&B publish, init answered 500, retry 5 s: {took:.1f} s")
    assert took < 5 + REQUEST_TIMEOUT + 10, proc.stdout + proc.stderr
    error, kept = _kept(proc.stdout)
    assert "while publishing the report to ent/proj" in error and "HTTP 500" in error and "Gave up after" in error, (
        error
    )
    assert kept.name.startswith("offline-run-") and f"wandb sync {kept}" in error
    assert st.run("ent", "proj", kept.name.rsplit("-", 1)[1]) is None  # nothing online under the kept run's id


def test_slow_failing_artifact_commit_is_bounded_and_the_run_folder_kept(wandb_standin, tmp_path):
    st = wandb_standin
    st.fail("CommitArtifact", 500, times=10_000, delay=2.0)  # the run exists; its artifact never commits
    proc, took = _publish(tmp_path, st.base_url, 5)
    print(f"W&B publish, commit answered 500 after 2 s, retry 5 s: {took:.1f} s")
    assert took < 5 + REQUEST_TIMEOUT + 10, proc.stdout + proc.stderr
    error, kept = _kept(proc.stdout)
    assert "uploading the artifact rl-reliable-report-rl-reliable" in error and "Gave up after" in error, error
    assert kept.name.startswith("run-") and kept.parent == tmp_path / "wandb"  # the online run's own folder
    assert error.endswith(f"send it when W&B is back with: wandb sync {kept}")
    assert list(kept.glob("run-*.wandb"))


def test_cli_publish_against_a_failing_server_exits_2_with_one_sentence(wandb_standin, tmp_path):
    st = wandb_standin
    for algo in ("ppo", "sac"):
        for seed in range(3):
            st.add_run("ent", "proj", id=f"{algo}-{seed}",
                       config={"rl_reliable_algorithm": algo, "rl_reliable_task": "hopper", "rl_reliable_seed": seed},
                       summary={"rl_reliable_final_score": 10.0 * (algo == "sac") + seed})  # fmt: skip
    st.fail("UpsertBucket", 500, times=10_000)  # reading works; the analysis run cannot be created
    argv = ["wandb", "ent/proj", "--publish", "group", "--retry-for", "5", "--reps", "50", "--no-figures", "--quiet"]
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "rl_reliable_logger", *argv], cwd=tmp_path,
                          env=_env(tmp_path, st.base_url), capture_output=True, text=True, timeout=240)  # fmt: skip
    took = time.monotonic() - start
    print(f"rl-reliable wandb --publish group, init answered 500, --retry-for 5: exit {proc.returncode}, {took:.1f} s")
    print(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    assert took < 5 + REQUEST_TIMEOUT + 20  # the analysis itself, then the publish's budget
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    (kept,) = (tmp_path / "wandb").glob("offline-run-*")
    assert line.startswith("error: the analysis ran but publishing to W&B failed: W&B request failed")
    assert "Gave up after" in line and "the time budget is 5 s (--retry-for)" in line
    assert "credentials" not in line  # a port such as 127.0.0.1:40107 is not an HTTP 401
    assert line.endswith(f"send it when W&B is back with: wandb sync {kept}")
