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
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.wandb.sink import OFFLINE_PRESETS_NOTE, WandbSink
from tests.support.paths import REPO
from tests.support.reports import small_report
from tests.support.wandb_env import isolate_wandb, wandb_env
from tests.support.wandb_standin import API_KEY

#: A publish without figures (quick).
QUICK = PublishOptions(figures=False)
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
    client = {"mode": "offline", "dir": offline / "wb"}
    sink = WandbSink(project="p", group="g", wandb_report=True, publishing=QUICK, client_kwargs=client)
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


#: An online publish with ``wandb_report=True`` in its own process, as the publish-budget tests run theirs (in this
#: process, after the offline publish above, ``wandb.init`` went to W&B's default server instead of the stand-in).
#: Saving the Report is replaced: the stand-in does not answer wandb-workspaces' project query for a project a run
#: created (``test_wandb_report_page.py`` saves a Report to it directly).
_ONLINE_REPORT = """
import sys
sys.path.insert(0, sys.argv[1])
from rl_reliable_logger.trackers.wandb import report_page
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.wandb.sink import WandbSink
from tests.support.reports import small_report

saved = []
report_page.save_report_page = lambda page: saved.append(page.entity) or sys.argv[2]
options = PublishOptions(figures=False)
sink = WandbSink(project="proj", entity="ent", group="g", wandb_report=True, publishing=options,
                 client_kwargs={"mode": "online"})
print("CREATED", sink.publish(small_report()).created, saved)
"""


@pytest.mark.slow
def test_the_w_and_b_report_url_is_a_note(wandb_standin, tmp_path):
    """Online, the saved W&B Report's URL is said through the one chokepoint: ``note: W&B Report: URL``."""
    url = "http://127.0.0.1/ent/proj/reports/rl-reliable-test--VmlldzoxMjM="
    env = wandb_env(tmp_path)
    del env["WANDB_MODE"]
    env.update(WANDB_BASE_URL=wandb_standin.base_url, WANDB_API_KEY=API_KEY)
    proc = subprocess.run([sys.executable, "-c", _ONLINE_REPORT, str(REPO), url], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert proc.stdout.strip() == "CREATED True ['ent']", proc.stdout + proc.stderr
    assert [ln for ln in proc.stderr.splitlines() if "W&B Report" in ln] == [f"note: W&B Report: {url}"], proc.stderr
