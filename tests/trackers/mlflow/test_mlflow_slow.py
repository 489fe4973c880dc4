"""The slow MLflow tests: a real `mlflow server` on loopback, and the MLproject end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger import PublishOptions, ScoreTable, evaluate
from rl_reliable_logger.trackers.mlflow import mlflow_table, publish_mlflow, write_final_score
from tests.support.mlflow_server import mlflow_server
from tests.support.mlflow_store import REPO, convention, log_run, mlflow

pytestmark = pytest.mark.slow


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MLFLOW_RUN_ID", None)
    env.pop("MLFLOW_EXPERIMENT_ID", None)
    env.update(extra)
    return env


@pytest.fixture()
def server(tmp_path):
    """`mlflow server` on 127.0.0.1 with a free port, proxying artifacts; stopped after the test."""
    with mlflow_server(tmp_path, startup=90) as url:
        yield url


def test_against_a_real_tracking_server(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    client = mlflow.MlflowClient(server)
    exp = client.create_experiment("remote")
    scores = {
        ("A", "t1"): [1.0, 2.0, 3.0],
        ("A", "t2"): [4.0, 5.0, 6.0],
        ("B", "t1"): [2.0, 3.0, 4.0],
        ("B", "t2"): [5.0, 6.0, 7.5],
    }
    for (alg, task), values in scores.items():
        for seed, score in enumerate(values):
            log_run(
                client,
                exp,
                f"{alg}-{task}-{seed}",
                tags=convention(alg, task, seed),
                metrics={"rl_reliable_final_score": score},
            )
    # the end-of-training call over HTTP, on the active run
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server)
    mlflow.set_tracking_uri(server)
    try:
        with mlflow.start_run(experiment_id=exp, run_name="B-t2-3"):
            write_final_score(8.0, "B", "t2", 3)
    finally:
        mlflow.set_tracking_uri(None)

    table = mlflow_table("remote", tracking_uri=server, page_size=5)
    got = {(a, t): sorted(g.score) for (a, t), g in table.frame.groupby(["algorithm", "task"])}
    assert got == {**{k: sorted(v) for k, v in scores.items()}, ("B", "t2"): [5.0, 6.0, 7.5, 8.0]}
    assert table.frame["url"].str.startswith(f"{server}/#/experiments/{exp}/runs/").all()

    report = evaluate(table, reps=200, profile_reps=100, improvement_reps=100, seed=0)
    first = publish_mlflow(report, tracking_uri=server)
    again = publish_mlflow(report, tracking_uri=server)
    assert first.created and not again.created and again.target == first.target
    run_id = first.target
    run = client.get_run(run_id)
    iqm_a = report.headline("iqm").set_index("algorithm").loc["A"]
    assert run.data.metrics["iqm/A"] == iqm_a.point and run.data.metrics["iqm_low/A"] == iqm_a.low
    folder = run.data.tags["rl_reliable.current_report"]
    path = client.download_artifacts(run_id, f"{folder}/tables/aggregates.json", str(tmp_path))
    assert json.loads(Path(path).read_text())["columns"] == ["algorithm", "metric", "point", "low", "high", "caveat"]
    assert len(client.search_runs([exp], "tags.`rl_reliable.role` = 'analysis'")) == 1


def _checkout_stores() -> dict[str, tuple[int, int] | None]:
    """(mtime_ns, size) of the MLflow files a careless run would write into the checkout (None: absent)."""
    out: dict[str, tuple[int, int] | None] = {}
    for name in ("mlflow.db", "mlruns"):
        path = REPO / name
        out[name] = (path.stat().st_mtime_ns, path.stat().st_size) if path.exists() else None
    return out


def test_mlproject_end_to_end(tmp_path):
    """`mlflow run integrations/mlflow` trains a small grid, aggregates, and publishes onto the parent."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    before = _checkout_stores()  # the README's own example may have made these: they must stay untouched
    cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "run",
        str(REPO / "integrations" / "mlflow"),
        "--env-manager",
        "local",
        "--experiment-name",
        "e2e",
        "-P",
        "algorithms=ucb1,thompson",
        "-P",
        "tasks=bernoulli-10,gaussian-5",
        "-P",
        "seeds=3",
        "-P",
        "steps=300",
        "-P",
        "reps=200",
    ]
    done = subprocess.run(
        cmd, cwd=tmp_path, env=_env(tmp_path, MLFLOW_TRACKING_URI=uri), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # train.py normalises its scores: the flagship example does not warn that they are not (issue 26)
    assert "not normalised" not in done.stdout + done.stderr

    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name("e2e").experiment_id
    parents = client.search_runs([exp], "tags.mlflow.project.entryPoint = 'main'")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    parent = parents[0]
    children = client.search_runs(
        [exp], f"tags.mlflow.parentRunId = '{parent.info.run_id}'", order_by=["attributes.start_time ASC"]
    )
    assert len(children) == 12 and {c.info.status for c in children} == {"FINISHED"}
    assert {(c.data.tags["rl_reliable_algorithm"], c.data.tags["rl_reliable_task"]) for c in children} == {
        (a, t) for a in ("ucb1", "thompson") for t in ("bernoulli-10", "gaussian-5")
    }

    # recompute from the children's metrics, read here with the plain client, and compare
    frame = pd.DataFrame(
        [
            {
                "algorithm": c.data.tags["rl_reliable_algorithm"],
                "task": c.data.tags["rl_reliable_task"],
                "seed": int(c.data.tags["rl_reliable_seed"]),
                "score": c.data.metrics["rl_reliable_final_score"],
            }
            for c in children
        ]
    )
    assert frame["score"].between(-1.5, 1.0 + 1e-9).all()  # normalised: 1 = always the best arm
    expected = evaluate(ScoreTable(frame), reps=200, seed=0).headline("iqm").set_index("algorithm")
    metrics = parent.data.metrics
    for alg in ("ucb1", "thompson"):
        assert metrics[f"iqm/{alg}"] == pytest.approx(expected.loc[alg, "point"], abs=1e-12)
    tags = parent.data.tags
    assert "rl_reliable.report_hash" in tags and "tags.mlflow.parentRunId" in tags["rl_reliable.source.filter"]
    folder = tags["rl_reliable.current_report"]
    files = {f.path for f in client.list_artifacts(parent.info.run_id, f"{folder}/tables")}
    assert f"{folder}/tables/aggregates.json" in files
    assert _checkout_stores() == before


# ---------------------------------------------------------------------------- sink contract on a real server
PUBLISHER = r"""
import json, sys, time
import mlflow
from tests.support.reports import small_report
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.mlflow.sink import MlflowSink
uri, target, shift, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
real = mlflow.MlflowClient.log_artifacts
def slow(self, *args, **kwargs):
    time.sleep(0.5)            # widen the window in which two publishers overlap
    if mode == "hang":
        print("uploading", flush=True)
        time.sleep(600)        # killed here by the test
    return real(self, *args, **kwargs)
mlflow.MlflowClient.log_artifacts = slow
kwargs = {"parent_run_id": target} if mode != "hang" else {"experiment": target}
try:
    result = MlflowSink(tracking_uri=uri, publishing=PublishOptions(figures=False), **kwargs).publish(small_report(shift=shift))
    print(json.dumps({"ok": True, "hash": result.report_hash}))
except Exception as err:
    print(json.dumps({"ok": False, "error": str(err)}))
"""


def _publisher(server: str, target: str, shift: float, mode: str, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", PUBLISHER, server, target, str(shift), mode],
        cwd=REPO,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_publishes_and_a_killed_publisher_on_a_real_server(server, tmp_path):
    from rl_reliable_logger.trackers.base.publishing import headline_metrics, report_hash
    from tests.support.reports import small_report

    client = mlflow.MlflowClient(server)
    exp = client.create_experiment("contract")
    parent = log_run(client, exp, "parent")

    # two publishers of different reports onto one parent at the same time: never a mix
    procs = [_publisher(server, parent, shift, "race", tmp_path) for shift in (0.0, 0.2)]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    assert all(o["ok"] for o in outcomes), outcomes  # the lease makes them take turns
    run = client.get_run(parent)
    tags = run.data.tags
    reports = {report_hash(small_report(shift=s)): small_report(shift=s) for s in (0.0, 0.2)}
    current = tags["rl_reliable.report_hash"]
    assert current in reports and tags["rl_reliable.publish_state"] == "complete"
    assert "rl_reliable.publish_lock" not in tags  # released
    assert tags["rl_reliable.current_report"] == f"rl_reliable/{current[:16]}"
    for key, value in headline_metrics(reports[current]).items():
        assert run.data.metrics[key] == value, key  # metrics, tags and files of one report only
    folders = {f.path for f in client.list_artifacts(parent, "rl_reliable")}
    assert tags["rl_reliable.current_report"] in folders
    bundle = {f.path for f in client.list_artifacts(parent, f"{tags['rl_reliable.current_report']}/bundle")}
    assert f"{tags['rl_reliable.current_report']}/bundle/manifest.json" in bundle

    # a publisher killed mid-upload leaves no run that looks complete; the next publish completes
    hung = _publisher(server, exp, 0.5, "hang", tmp_path)
    assert hung.stdout.readline().strip() == "uploading"
    hung.kill()
    hung.communicate(timeout=60)
    (killed,) = client.search_runs([exp], "tags.`rl_reliable.role` = 'analysis'")
    assert killed.info.status == "RUNNING" and killed.data.tags["rl_reliable.publish_state"] == "writing"
    assert "rl_reliable.report_hash" not in killed.data.tags
    result = publish_mlflow(
        small_report(shift=0.5), tracking_uri=server, experiment=exp, publishing=PublishOptions(figures=False)
    )
    assert result.created and result.target != killed.info.run_id
    assert client.get_run(result.target).info.status == "FINISHED"
