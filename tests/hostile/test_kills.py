"""Kills at random moments of ``plan`` and ``report`` (SIGKILL: no cleanup runs). Whenever the kill lands, a
reader then sees the previous complete bundle (or none), and the next command completes. (Kills of an MLflow
publish: ``tests/trackers/mlflow/test_mlflow_slow.py``; of ``evaluate`` between the two renames: the corpus.)"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.store.bundle import read_bundle
from tests.support.paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
EXAMPLE = str(REPO / "examples" / "atari100k_scores.csv")


def _cli(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "rl_reliable_logger.cli", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _run_or_kill(args: list[str], after: float) -> int | None:
    """Run the command; SIGKILL it after ``after`` seconds if still running. The exit status, None if killed."""
    proc = _cli(*args)
    try:
        proc.communicate(timeout=after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        return None
    return proc.returncode


def _bundle_files(out: Path) -> list[str]:
    return sorted(entry.path for entry in read_bundle(out).files)


@pytest.mark.parametrize("seed", [0])
def test_a_killed_plan_leaves_the_previous_plan_whole(tmp_path, seed):
    out = tmp_path / "plan"
    args = ["plan", EXAMPLE, "--runs", "3,5", "--trials", "5", "--sim-reps", "50", "--quiet", "--out", str(out)]
    assert _run_or_kill(args, 600) == 0
    whole = _bundle_files(out)
    csv = (out / "plan.csv").read_bytes()
    rng = random.Random(seed)
    for _ in range(3):
        status = _run_or_kill(args, rng.uniform(0.5, 8.0))
        assert status in (0, None)
        assert _bundle_files(out) == whole  # verified against its manifest: never a mix of two plans
        assert (out / "plan.csv").read_bytes() == csv  # the same seed: the same numbers
    assert _run_or_kill(args, 600) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".plan.")] == []  # leftovers recovered


@pytest.mark.parametrize("seed", [1])
def test_a_killed_report_leaves_a_bundle_that_reads_and_redraws(tmp_path, seed):
    out = tmp_path / "out"
    setup = ["evaluate", EXAMPLE, "--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--quiet",
             "--out", str(out)]  # fmt: skip
    assert _run_or_kill(setup, 600) == 0
    tables = Report.load(out).aggregates
    rng = random.Random(seed)
    for _ in range(3):
        assert _run_or_kill(["report", str(out)], rng.uniform(0.5, 8.0)) in (0, None)
        read_bundle(out)
        assert Report.load(out).aggregates.equals(tables)
    assert _run_or_kill(["report", str(out)], 600) == 0
