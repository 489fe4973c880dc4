"""No orphans, one current analysis (real SQLite store, a publishing process really killed with SIGKILL).

A publish killed mid-write leaves its analysis run RUNNING with ``publish_state=writing``; the next publish
of the same source ends it FAILED (saying why and which run replaced it) and leaves exactly one current,
complete analysis run. A publish of changed data marks the previous run superseded; publishing the earlier
data again reuses (and re-marks as current) the run that holds it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rl_reliable_logger.trackers.mlflow.sink import (
    CURRENT_RUN_TAG,
    FAILURE_TAG,
    NOTE_TAG,
    PUBLISHER_TAG,
    SERIES_TAG,
    STATE_TAG,
    SUPERSEDED_BY_TAG,
    publish_mlflow,
)
from tests.support.mlflow_store import REPO, convention, log_run, make_store, mlflow
from tests.support.reports import hand_report


@pytest.fixture()
def setup(tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("exp")
    runs = {}
    for alg, seed, score in (("PPO", 0, 0.6), ("PPO", 1, 0.8), ("DQN", 0, 0.2), ("DQN", 1, 0.4)):
        runs[(alg, seed)] = log_run(
            client, exp, f"{alg}-{seed}", tags=convention(alg, "Pong", seed), metrics={"rl_reliable_final_score": score}
        )
    return {"uri": uri, "client": client, "exp": exp, "runs": runs, "cwd": tmp_path}


def _analysis_runs(client, exp):
    found = client.search_runs([exp], "tags.`rl_reliable.role` = 'analysis'")
    return {r.info.run_id: r for r in found}


_KILLED = """
import json, os, signal, sys
sys.path.insert(0, sys.argv[1])
from rl_reliable_logger.trackers.mlflow import sink
from tests.support.reports import hand_report

uri, exp, runs = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
report = hand_report({(a, int(s)): rid for a, s, rid in runs}, (exp, "exp"), shift=float(sys.argv[5]))
sink._present = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies after the bundle and metrics are up
sink.publish_mlflow(report, tracking_uri=uri, experiment="exp")
"""


def _killed_publish(setup, shift: float) -> None:
    runs = json.dumps([[a, s, rid] for (a, s), rid in setup["runs"].items()])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(REPO), setup["uri"], setup["exp"], runs, str(shift)],
        cwd=setup["cwd"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]


@pytest.mark.parametrize("shift", [0.0, 0.05], ids=["same data", "changed data"])
def test_a_killed_publish_is_ended_by_the_next_one(setup, shift):
    client, exp = setup["client"], setup["exp"]
    _killed_publish(setup, shift)
    (orphan,) = _analysis_runs(client, exp).values()
    assert orphan.info.status == "RUNNING" and orphan.data.tags[STATE_TAG] == "writing"  # what a kill leaves
    assert orphan.data.tags[PUBLISHER_TAG].split()[1].isdigit()

    report = hand_report(setup["runs"], (exp, "exp"))
    result = publish_mlflow(report, tracking_uri=setup["uri"], experiment="exp")
    assert result.created

    runs = _analysis_runs(client, exp)
    assert [r.info.status for r in runs.values()].count("RUNNING") == 0
    current = [r for r in runs.values() if r.data.tags.get(CURRENT_RUN_TAG) == "true"]
    assert [r.info.run_id for r in current] == [result.target]
    (run,) = current
    assert run.info.status == "FINISHED" and run.data.tags[STATE_TAG] == "complete"
    assert run.data.metrics["iqm/PPO"] == 0.75 and SUPERSEDED_BY_TAG not in run.data.tags
    old = runs[orphan.info.run_id]
    assert old.info.status == "FAILED" and old.data.tags[STATE_TAG] == "failed"
    assert old.data.tags[FAILURE_TAG].startswith("interrupted: the publish writing this run stopped")
    assert old.data.tags[CURRENT_RUN_TAG] == "false" and old.data.tags[SUPERSEDED_BY_TAG] == result.target
    for rid in setup["runs"].values():  # source runs untouched
        assert not any(k.startswith("rl_reliable.") for k in client.get_run(rid).data.tags)


def test_a_publish_still_running_elsewhere_is_left_alone(setup):
    client, exp = setup["client"], setup["exp"]
    report = hand_report(setup["runs"], (exp, "exp"))
    busy = client.create_run(
        exp,
        run_name="rl-reliable · 2 algorithms × 1 task · 00000000",
        tags={
            "rl_reliable.role": "analysis",
            STATE_TAG: "writing",
            SERIES_TAG: _series(report),
            PUBLISHER_TAG: f"other-host 123 {10**12}",  # its claim has not expired
        },
    ).info.run_id
    publish_mlflow(report, tracking_uri=setup["uri"], experiment="exp")
    assert client.get_run(busy).info.status == "RUNNING"


def _series(report) -> str:
    from rl_reliable_logger.trackers.base.publishing import series_key

    return series_key(report)


def test_changed_data_supersedes_and_unchanged_data_reuses(setup):
    client, exp = setup["client"], setup["exp"]
    first = hand_report(setup["runs"], (exp, "exp"))
    second = hand_report(setup["runs"], (exp, "exp"), shift=0.1)
    a = publish_mlflow(first, tracking_uri=setup["uri"], experiment="exp")
    assert client.get_run(a.target).data.tags[CURRENT_RUN_TAG] == "true"
    assert a.replaced == () and "replaces" not in a.message()
    b = publish_mlflow(second, tracking_uri=setup["uri"], experiment="exp")
    assert b.created and b.target != a.target
    tags_a, tags_b = client.get_run(a.target).data.tags, client.get_run(b.target).data.tags
    assert (tags_a[CURRENT_RUN_TAG], tags_a[SUPERSEDED_BY_TAG]) == ("false", b.target)
    assert tags_b[CURRENT_RUN_TAG] == "true" and SUPERSEDED_BY_TAG not in tags_b
    # the console and the replaced run's description say which run replaced which (issue 45)
    assert b.replaced == (f"analysis run {a.target}",)
    assert b.message().endswith(f"; it replaces analysis run {a.target} (no longer current)")
    note_a = tags_a[NOTE_TAG]
    assert note_a.startswith("**Superseded**: not the current analysis; it was replaced by [")
    assert f"(#/experiments/{exp}/runs/{b.target}) (run `{b.target}`)" in note_a.splitlines()[0]
    assert note_a.count("**Superseded**") == 1 and "**rl-reliable analysis**" in note_a
    assert "**Superseded**" not in tags_b[NOTE_TAG]

    again = publish_mlflow(second, tracking_uri=setup["uri"], experiment="exp")  # unchanged: reused
    assert not again.created and again.target == b.target and len(_analysis_runs(client, exp)) == 2
    assert again.replaced == ()  # nothing changed hands

    back = publish_mlflow(first, tracking_uri=setup["uri"], experiment="exp")  # the earlier data again
    assert not back.created and back.target == a.target
    assert back.replaced == (f"analysis run {b.target}",)
    tags_a, tags_b = client.get_run(a.target).data.tags, client.get_run(b.target).data.tags
    assert tags_a[CURRENT_RUN_TAG] == "true" and SUPERSEDED_BY_TAG not in tags_a
    assert (tags_b[CURRENT_RUN_TAG], tags_b[SUPERSEDED_BY_TAG]) == ("false", a.target)
    assert "**Superseded**" not in tags_a[NOTE_TAG] and tags_a[NOTE_TAG].startswith("**rl-reliable analysis**")
    assert f"(#/experiments/{exp}/runs/{a.target})" in tags_b[NOTE_TAG].splitlines()[0]
    current = [r for r in _analysis_runs(client, exp).values() if r.data.tags.get(CURRENT_RUN_TAG) == "true"]
    assert len(current) == 1
