"""No orphans, one current analysis, offline W&B (real wandb; a publishing process really killed with SIGKILL).

The offline publish record (``wandb/rl-reliable-published.json``) says which publish is current; a publish
killed mid-write is left ``writing`` there and the next publish of the same source marks it failed and names
the run that replaced it. A publish of changed data supersedes the previous one; the same data is reused.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.trackers.wandb.sink import INTERRUPTED, OFFLINE_INDEX, WandbSink
from tests.support.paths import REPO
from tests.support.reports import small_report
from tests.support.wandb_env import isolate_wandb, wandb_env

_KILLED = """
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from rl_reliable_logger.trackers.wandb import sink
from tests.support.reports import small_report

sink._charts = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies inside the analysis run
sink.WandbSink(project="p", group="g", mode="offline", dir=sys.argv[2], figures=False).publish(small_report())
"""


def _index(root):
    return json.loads((root / "wandb" / OFFLINE_INDEX).read_text())["published"]


def _sink(root):
    return WandbSink(project="p", group="g", mode="offline", dir=root, figures=False)


def test_a_killed_offline_publish_is_marked_failed_by_the_next_one(tmp_path, monkeypatch, capsys):
    root = tmp_path / "wb"
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(REPO), str(root)],
        env=wandb_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    (orphan,) = _index(root)
    assert orphan["state"] == "writing" and list(root.glob(f"wandb/offline-run-*-{orphan['run_id']}"))

    isolate_wandb(monkeypatch, tmp_path, WANDB_MODE="offline")
    capsys.readouterr()
    done = _sink(root).publish(small_report())
    assert done.created
    line = f"note: ended 1 interrupted W&B offline publish (analysis run {orphan['run_id']}, now marked failed)"
    assert capsys.readouterr().err.count(line) == 1  # the recovery is said, once
    entries = {e["run_id"]: e for e in _index(root)}
    assert [e["state"] for e in entries.values()].count("writing") == 0
    current = [e for e in entries.values() if e["current"]]
    assert len(current) == 1 and current[0]["state"] == "complete" and current[0]["run_dir"] == done.target
    old = entries[orphan["run_id"]]
    assert (old["state"], old["current"], old["failure"]) == ("failed", False, INTERRUPTED)
    assert old["superseded_by"] == current[0]["run_id"]


def test_changed_data_supersedes_and_unchanged_data_reuses(tmp_path, monkeypatch):
    isolate_wandb(monkeypatch, tmp_path, WANDB_MODE="offline")
    root = tmp_path / "wb"
    a = _sink(root).publish(small_report())
    b = _sink(root).publish(small_report(shift=0.1))
    assert a.created and b.created and a.target != b.target
    again = _sink(root).publish(small_report(shift=0.1))
    assert not again.created and again.target == b.target
    first, second = _index(root)
    assert (first["current"], first["superseded_by"]) == (False, second["run_id"])
    assert second["current"] and "superseded_by" not in second

    back = _sink(root).publish(small_report())  # the earlier data again: its run is current again
    assert not back.created and back.target == a.target
    first, second = _index(root)
    assert first["current"] and "superseded_by" not in first
    assert (second["current"], second["superseded_by"]) == (False, first["run_id"])
