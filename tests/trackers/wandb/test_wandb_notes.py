"""The W&B sink's notes are messages put into words by the edge that prints them: asking for a W&B Report of an
offline publish names ``wandb_report=True`` to a library user and ``--wandb-report`` on the command line (real
offline wandb runs, no key, no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("wandb")
pytest.importorskip("wandb_workspaces")  # wandb_report=True needs the extra before anything is written

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.wandb.sink import OFFLINE_PRESETS_NOTE, WandbSink
from tests.support.reports import small_report
from tests.support.wandb_env import isolate_wandb

ONLINE_ONLY = "needs an online W&B server; no W&B Report was made"


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    """An offline W&B environment under ``tmp_path`` (runs in ``wb/wandb``)."""
    return isolate_wandb(monkeypatch, tmp_path, WANDB_MODE="offline")


def _write_runs(root: Path) -> None:
    """Four finished offline runs (2 algorithms x 2 seeds on one task) written by log_final_score."""
    script = f"""
import sys, wandb
sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
from rl_reliable_logger import log_final_score
for algorithm, base in (("ppo", 1.0), ("sac", 2.0)):
    for seed in (0, 1):
        run = wandb.init(project="bandits", dir={str(root)!r})
        log_final_score(base + seed / 10, algorithm=algorithm, task="bandit", seed=seed)
        run.finish()
"""
    subprocess.run([sys.executable, "-c", script], env=dict(os.environ), check=True, timeout=300)


def test_the_online_only_note_names_the_keyword_in_the_library_and_the_flag_on_the_command_line(
    offline, monkeypatch, capsys
):
    monkeypatch.chdir(offline)
    sink = WandbSink(project="p", group="g", mode="offline", dir=offline / "wb", figures=False, wandb_report=True)
    assert sink.publish(small_report()).created
    library = capsys.readouterr().err
    assert f"note: `wandb_report=True` {ONLINE_ONLY}\n" in library, library
    assert f"note: {OFFLINE_PRESETS_NOTE}\n" in library  # the other notes, as before

    _write_runs(offline / "runs")
    argv = ["wandb", "--offline-dir", str(offline / "runs" / "wandb"), "--reps", "200", "--profile-reps", "100",
            "--improvement-reps", "100", "--publish", "group", "--group", "cli", "--wandb-report", "--no-figures"]  # fmt: skip
    assert main(argv) == 0
    command = capsys.readouterr().err
    assert f"note: --wandb-report {ONLINE_ONLY}\n" in command, command
    assert "wandb_report" not in command and command.count(f"note: {OFFLINE_PRESETS_NOTE}\n") == 1, command
