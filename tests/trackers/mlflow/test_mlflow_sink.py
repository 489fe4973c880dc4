"""Publishing a Report to MLflow: new analysis run or parent run, idempotent, source runs untouched."""

from __future__ import annotations

import json

import pytest

from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.base.publishing import report_hash
from rl_reliable_logger.trackers.mlflow.sink import HASH_TAG, publish_mlflow
from tests.support.mlflow_store import convention, log_run, make_store, mlflow, snapshot, use_store
from tests.support.reports import hand_report as _report


@pytest.fixture(scope="module")
def store_uri(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("mlflow-sink"))


@pytest.fixture()
def setup(store_uri, request):
    """A fresh experiment (named after the test) with four source runs, in the module's store."""
    uri = store_uri
    client = mlflow.MlflowClient(uri)
    name = request.node.name
    exp = client.create_experiment(name)
    runs = {}
    for alg, score in (("PPO", 0.6), ("PPO", 0.8), ("DQN", 0.2), ("DQN", 0.4)):
        seed = len([k for k in runs if k[0] == alg])
        runs[(alg, seed)] = log_run(
            client,
            exp,
            f"{alg}-{seed}",
            tags={**convention(alg, "Pong", seed), "sweep": "a"},
            metrics={"rl_reliable_final_score": score},
        )
    return {"uri": uri, "client": client, "exp": exp, "runs": runs, "report": _report(runs, (exp, name)), "name": name}


def _download_json(client, run_id, path, tmp_path):
    return json.loads(open(client.download_artifacts(run_id, path, str(tmp_path))).read())


def test_new_analysis_run_holds_tables_metrics_and_tags(setup, tmp_path, monkeypatch):
    client, report = setup["client"], setup["report"]
    before = snapshot(client, list(setup["runs"].values()))
    result = publish_mlflow(report, tracking_uri=setup["uri"], experiment=setup["name"])
    assert result.created and result.tracker == "mlflow" and result.report_hash == report_hash(report)
    run_id = result.target

    run = client.get_run(run_id)
    n = report.counts().runs
    iqm = report.headline("iqm").set_index("algorithm")["point"]
    shown = ", ".join(f"{alg} {value:.3f}" for alg, value in iqm.items())
    assert (
        run.info.run_name == f"{report_hash(report)[:8]} · IQM {shown} · rl-reliable · {n} runs · 2 algorithms × 1 task"
    )
    assert run.info.status == "FINISHED"
    assert run.info.experiment_id == setup["exp"]
    assert run.data.metrics["iqm/PPO"] == 0.75 and run.data.metrics["iqm_low/PPO"] == 0.60
    assert run.data.metrics["iqm_high/PPO"] == 0.90 and run.data.metrics["mean/DQN"] == 0.30
    tags = run.data.tags
    assert tags["rl_reliable.role"] == "analysis" and tags[HASH_TAG] == report_hash(report)
    assert tags["rl_reliable.source.filter"] == "tags.sweep = 'a'"
    assert "iqm" in tags["mlflow.note.content"]

    # tables: MLflow's table JSON, registered so the UI shows them as tables, readable by load_table
    folder = tags["rl_reliable.current_report"]
    assert folder == f"rl_reliable/{report_hash(report)[:16]}" and tags["rl_reliable.publish_state"] == "complete"
    table = _download_json(client, run_id, f"{folder}/tables/aggregates.json", tmp_path)
    assert table["columns"] == ["algorithm", "metric", "point", "low", "high"]
    assert table["data"][0] == ["PPO", "iqm", 0.75, 0.6, 0.9]
    registered = json.loads(tags["mlflow.loggedArtifacts"])
    assert {"path": f"{folder}/tables/aggregates.json", "type": "table"} in registered
    with use_store(setup["uri"], monkeypatch):  # load_table searches through the fluent API
        loaded = client.load_table(setup["exp"], f"{folder}/tables/per_task.json", run_ids=[run_id])
    assert loaded["mean"].tolist() == pytest.approx([0.7, 0.3])  # MLflow's reader parses floats loosely
    # the report bundle (manifest files only) and provenance
    files = {f.path for f in client.list_artifacts(run_id, f"{folder}/bundle")}
    assert {f"{folder}/bundle/aggregates.csv", f"{folder}/bundle/provenance.json"} <= files
    assert f"{folder}/bundle/manifest.json" in files
    prov = _download_json(client, run_id, f"{folder}/bundle/provenance.json", tmp_path)
    assert prov["reps"] == 200 and prov["warnings"] == ["2 runs per cell: intervals are wide"]

    # the source runs are exactly as before
    assert snapshot(client, list(setup["runs"].values())) == before


def test_publishing_the_same_report_twice_adds_nothing(setup):
    client, report = setup["client"], setup["report"]
    first = publish_mlflow(report, tracking_uri=setup["uri"], experiment=setup["name"]).target
    state = snapshot(client, [first])
    second = publish_mlflow(report, tracking_uri=setup["uri"], experiment=setup["exp"])
    assert second.target == first and not second.created
    assert snapshot(client, [first]) == state
    analysis = client.search_runs([setup["exp"]], "tags.`rl_reliable.role` = 'analysis'")
    assert len(analysis) == 1
    # a different report is a new run
    third = publish_mlflow(_report(setup["runs"], (setup["exp"], setup["name"]), shift=0.01), tracking_uri=setup["uri"])
    assert third.created and third.target != first and client.get_run(third.target).data.metrics["iqm/PPO"] == 0.76


def test_publish_to_a_parent_run_is_idempotent_and_keeps_its_status(setup, tmp_path):
    client, report = setup["client"], setup["report"]
    parent = log_run(client, setup["exp"], "grid-parent", tags={"kind": "parent"})
    before_sources = snapshot(client, list(setup["runs"].values()))
    assert publish_mlflow(report, tracking_uri=setup["uri"], parent_run_id=parent).target == parent
    once = snapshot(client, [parent])
    again = publish_mlflow(report, tracking_uri=setup["uri"], parent_run_id=parent)
    assert again.target == parent and not again.created
    assert snapshot(client, [parent]) == once
    run = client.get_run(parent)
    assert run.info.status == "FINISHED" and run.data.tags["kind"] == "parent"
    assert "rl_reliable.role" not in run.data.tags  # the user's run is not relabelled
    assert [m.value for m in client.get_metric_history(parent, "iqm/PPO")] == [0.75]
    registered = json.loads(run.data.tags["mlflow.loggedArtifacts"])
    assert len(registered) == len({json.dumps(r, sort_keys=True) for r in registered}) == 4
    # an updated report replaces the old one: one current folder, registry and metrics of the new one only
    old_folder = run.data.tags["rl_reliable.current_report"]
    newer = _report(setup["runs"], (setup["exp"], setup["name"]), shift=0.05)
    replacing = publish_mlflow(newer, tracking_uri=setup["uri"], parent_run_id=parent)
    assert replacing.created and replacing.replaced == (f"report {report_hash(report)[:8]} on the same run",)
    assert "; it replaces report " in replacing.message()  # the console says so
    run = client.get_run(parent)
    folder = run.data.tags["rl_reliable.current_report"]
    assert folder != old_folder
    assert json.loads(run.data.tags["mlflow.loggedArtifacts"]) == [
        {"path": r["path"].replace(old_folder, folder), "type": "table"} for r in registered
    ]
    assert run.data.metrics["iqm/PPO"] == 0.80 and run.data.tags[HASH_TAG] == report_hash(newer)
    table = _download_json(client, parent, f"{folder}/tables/aggregates.json", tmp_path)
    assert len(table["data"]) == 4 and table["data"][0][2] == 0.80
    assert {f.path for f in client.list_artifacts(parent, "rl_reliable")} == {folder}  # the old report is gone
    assert len(client.search_runs([setup["exp"]], "")) == 5  # no run was created
    assert snapshot(client, list(setup["runs"].values())) == before_sources


def test_refuses_to_publish_onto_a_source_run(setup):
    source = setup["runs"][("PPO", 0)]
    before = snapshot(setup["client"], [source])
    with pytest.raises(TrackerError, match="never changes source runs"):
        publish_mlflow(setup["report"], tracking_uri=setup["uri"], parent_run_id=source)
    assert snapshot(setup["client"], [source]) == before


def test_unknown_parent_run_is_a_clear_error(setup):
    with pytest.raises(TrackerError, match="parent run 'deadbeef' not found"):
        publish_mlflow(setup["report"], tracking_uri=setup["uri"], parent_run_id="deadbeef")
