"""What the MLflow UI shows of a publish: params, dataset input, nesting, stepped curves, links, rounding.

Each test publishes to a real SQLite store and reads the run back with MlflowClient.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rl_reliable_logger.trackers.base.publishing import report_hash
from rl_reliable_logger.trackers.mlflow.sink import NOTE_MARK, publish_mlflow
from tests.support.mlflow_store import convention, log_run, make_store, mlflow
from tests.support.reports import hand_report as _report


@pytest.fixture(scope="module")
def store_uri(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("mlflow-present"))


def _sources(client, exp, parent=None):
    runs = {}
    for alg, score in (("PPO", 0.6), ("PPO", 0.8), ("DQN", 0.2), ("DQN", 0.4)):
        seed = len([k for k in runs if k[0] == alg])
        tags = {**convention(alg, "Pong", seed)}
        if parent:
            tags["mlflow.parentRunId"] = parent
        runs[(alg, seed)] = log_run(client, exp, f"{alg}-{seed}", tags=tags, metrics={"rl_reliable_final_score": score})
    return runs


@pytest.fixture()
def env(store_uri, request):
    client = mlflow.MlflowClient(store_uri)
    name = request.node.name
    exp = client.create_experiment(name)
    return {"uri": store_uri, "client": client, "exp": exp, "name": name}


def test_options_are_params_and_scores_are_a_dataset_input(env, tmp_path):
    client = env["client"]
    runs = _sources(client, env["exp"])
    report = _report(runs, (env["exp"], env["name"]))
    report.aggregates.loc[0, "point"] = 0.123456789123
    run = client.get_run(publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target)

    params = run.data.params
    assert params["rl_reliable.reps"] == "200" and params["rl_reliable.method"] == "percentile"
    assert params["rl_reliable.seed"] == "0" and params["rl_reliable.source.filter"] == "tags.sweep = 'a'"
    assert params["rl_reliable.source.algorithm_key"] == "tags.rl_reliable_algorithm"
    assert params["rl_reliable.n_runs"] == "4"

    inputs = run.inputs.dataset_inputs
    assert len(inputs) == 1
    ds = inputs[0].dataset
    assert ds.name == "rl-reliable-scores" and ds.source_type == "code"
    assert json.loads(ds.source)["tags"]["filter"] == "tags.sweep = 'a'"
    assert json.loads(ds.profile)["num_rows"] == len(report.scores)
    assert {t.key: t.value for t in inputs[0].tags}["mlflow.data.context"] == "scores"

    # "Source" and "Created by"
    assert run.data.tags["mlflow.source.name"].startswith("rl_reliable_logger ")
    assert run.data.tags["mlflow.user"]

    # the table view is rounded, the bundle's CSV keeps every digit
    folder = run.data.tags["rl_reliable.current_report"]
    table = json.loads(
        open(client.download_artifacts(run.info.run_id, f"{folder}/tables/aggregates.json", str(tmp_path))).read()
    )
    assert table["data"][0][2] == 0.123457
    csv = pd.read_csv(client.download_artifacts(run.info.run_id, f"{folder}/bundle/aggregates.csv", str(tmp_path)))
    assert csv["point"].iloc[0] == 0.123456789123
    # the headline metric is exact too
    assert run.data.metrics["iqm/PPO"] == 0.123456789123


def test_description_links_every_source_run(env):
    client = env["client"]
    runs = _sources(client, env["exp"])
    report = _report(runs, (env["exp"], env["name"]))
    run = client.get_run(publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target)
    note = run.data.tags["mlflow.note.content"]
    for rid in runs.values():
        assert f"(#/experiments/{env['exp']}/runs/{rid})" in note


def test_analysis_run_is_nested_under_the_sources_shared_parent(env):
    client = env["client"]
    parent = log_run(client, env["exp"], "grid")
    runs = _sources(client, env["exp"], parent=parent)
    report = _report(runs, (env["exp"], env["name"]))
    run = client.get_run(publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target)
    assert run.data.tags["mlflow.parentRunId"] == parent
    children = client.search_runs([env["exp"]], f"tags.mlflow.parentRunId = '{parent}'")
    assert run.info.run_id in {r.info.run_id for r in children}


def test_no_nesting_when_the_sources_have_different_parents(env):
    client = env["client"]
    runs = _sources(client, env["exp"])
    other = log_run(client, env["exp"], "elsewhere")
    client.set_tag(runs[("PPO", 0)], "mlflow.parentRunId", other)
    report = _report(runs, (env["exp"], env["name"]))
    run = client.get_run(publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target)
    assert "mlflow.parentRunId" not in run.data.tags


def test_curves_are_stepped_metrics(env):
    client = env["client"]
    runs = _sources(client, env["exp"])
    report = _report(runs, (env["exp"], env["name"]))
    report.curves = pd.DataFrame(
        {
            "algorithm": ["PPO", "PPO", "PPO", "DQN", "DQN", "DQN"],
            "metric": ["iqm"] * 6,
            "step": [0, 1000, 2000, 0, 1000, 2000],
            "point": [0.1, 0.5, 0.7, 0.05, 0.2, 0.3],
            "low": [0.0, 0.4, 0.6, 0.0, 0.1, 0.2],
            "high": [0.2, 0.6, 0.8, 0.1, 0.3, 0.4],
        }
    )
    run_id = publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target
    hist = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "curve_iqm/PPO"))
    assert hist == [(0, 0.1), (1000, 0.5), (2000, 0.7)]
    low = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "curve_iqm_low/DQN"))
    assert low == [(0, 0.0), (1000, 0.1), (2000, 0.2)]


def test_parent_run_gets_the_description_after_its_own(env):
    client = env["client"]
    runs = _sources(client, env["exp"])
    parent = log_run(client, env["exp"], "grid-parent", tags={"mlflow.note.content": "My sweep of PPO vs DQN."})
    report = _report(runs, (env["exp"], env["name"]))
    publish_mlflow(report, tracking_uri=env["uri"], parent_run_id=parent)
    note = client.get_run(parent).data.tags["mlflow.note.content"]
    assert (
        note.startswith("My sweep of PPO vs DQN.") and NOTE_MARK in note and "| PPO&emsp;&emsp; |" in note
    )  # the headline table, its columns spaced
    # a changed report replaces our part only, once; a changed option keeps the first param value
    newer = _report(runs, (env["exp"], env["name"]), shift=0.05)
    newer.provenance["reps"] = newer.provenance["options"]["reps"] = 500
    publish_mlflow(newer, tracking_uri=env["uri"], parent_run_id=parent)
    run = client.get_run(parent)
    note = run.data.tags["mlflow.note.content"]
    assert note.count(NOTE_MARK) == 1 and note.startswith("My sweep of PPO vs DQN.") and "0.800" in note
    assert (
        run.data.params["rl_reliable.reps"] == "200" and "rl_reliable.reps" in run.data.tags["rl_reliable.params_kept"]
    )
    assert run.data.tags["rl_reliable.reps"] == "500" and run.data.tags["rl_reliable.report_hash"] == report_hash(newer)


def test_every_option_that_shapes_the_results_is_a_param(env):
    """A real analysis with non-default options: every option provenance records, execution settings aside, is a
    param of the analysis run (two analyses that differ in any of them differ in the run comparison view)."""
    from rl_reliable_logger import ScoreTable, evaluate
    from rl_reliable_logger.analysis.options import published_options, recorded_options

    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": s * 0.1 + (a == "B") + (t == "y")}
        for a in ("A", "B")
        for t in ("x", "y")
        for s in range(4)
    ]
    table = ScoreTable(pd.DataFrame(rows))
    chosen = dict(reps=300, profile_reps=100, improvement_reps=100, task_bootstrap=True, gamma=0.5)
    chosen.update(rank_by="task-means", metrics=["iqm", "median"], only_tasks=["x", "y"], jordan=True, jordan_reps=50)
    chosen.update(comparisons=True, seed=7)
    report = evaluate(table, **chosen, chunk_bytes=2**20)
    run = env["client"].get_run(publish_mlflow(report, tracking_uri=env["uri"], experiment=env["name"]).target)
    params = run.data.params
    recorded = published_options(report.provenance["options"])
    assert {"task_bootstrap", "gamma", "rank_by", "curve_points", "profile_reps", "jordan_delta"} <= set(recorded)
    assert set(recorded_options(report.provenance["options"])) | {"ci_label"} <= set(recorded)
    missing = [name for name in recorded if f"rl_reliable.{name}" not in params]
    assert not missing
    assert params["rl_reliable.ci_label"] == "95%"
    assert params["rl_reliable.task_bootstrap"] == "True" and params["rl_reliable.gamma"] == "0.5"
    assert params["rl_reliable.rank_by"] == "task-means" and params["rl_reliable.seed"] == "7"
    assert params["rl_reliable.metrics"] == "iqm, median" and params["rl_reliable.only_tasks"] == "x, y"
    assert params["rl_reliable.budget"] == "(none)"
    # execution settings change no number: neither a param nor part of the report hash
    assert not {"rl_reliable.chunk_bytes", "rl_reliable.executor", "rl_reliable.progress"} & set(params)
    assert report_hash(report) == report_hash(evaluate(table, **chosen, chunk_bytes=2**21, executor="serial"))


def test_long_param_values_are_cut_with_the_hash_of_the_whole(env):
    from rl_reliable_logger.trackers.mlflow.presentation import _MAX_PARAM, _fitted

    long_a, long_b = "x" * 600 + "a", "x" * 600 + "b"
    assert len(_fitted(long_a)) == _MAX_PARAM and _fitted(long_a) != _fitted(long_b)
    assert _fitted(long_a) == _fitted(long_a) and _fitted("short") == "short"
