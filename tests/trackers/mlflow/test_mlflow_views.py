"""What the MLflow UI shows at a glance (real SQLite store): names that differ early, the superseded mark in the
name column (only on our own analysis runs), the comparison chart in the bundle and the description, and the
console line when a publish ends an interrupted one."""

from __future__ import annotations

import json

import pytest

from rl_reliable_logger.trackers.base.publishing import SUPERSEDED_PREFIX, PublishOptions, report_hash, run_name
from rl_reliable_logger.trackers.mlflow.sink import CURRENT_RUN_TAG, NOTE_TAG, publish_mlflow
from tests.support.mlflow_store import convention, log_run, make_store, mlflow
from tests.support.reports import hand_report
from tests.trackers.mlflow.test_mlflow_current import _killed_publish

#: About how many characters of a run name MLflow's runs list shows (measured in a 1400-pixel window, for a run
#: nested under a parent run: 19 to 20).
SHOWN = 19


@pytest.fixture()
def store(tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("exp")
    runs = {}
    for alg, seed, score in (("PPO", 0, 0.6), ("PPO", 1, 0.8), ("DQN", 0, 0.2), ("DQN", 1, 0.4)):
        runs[(alg, seed)] = log_run(
            client, exp, f"{alg}-{seed}", tags=convention(alg, "Pong", seed), metrics={"rl_reliable_final_score": score}
        )
    return {"uri": uri, "client": client, "exp": exp, "runs": runs, "cwd": tmp_path}


def _publish(store, shift: float = 0.0):
    report = hand_report(store["runs"], (store["exp"], "exp"), shift=shift)
    return report, publish_mlflow(report, tracking_uri=store["uri"], experiment="exp")


def _name(store, run_id: str) -> str:
    return str(store["client"].get_run(run_id).info.run_name)


def _source_state(store) -> dict[str, tuple]:
    client = store["client"]
    return {
        rid: (run.info.run_name, run.info.status, dict(run.data.tags))
        for rid in store["runs"].values()
        for run in [client.get_run(rid)]
    }


def test_names_of_different_reports_differ_in_what_the_list_shows(store):
    report_a, a = _publish(store)
    report_b, b = _publish(store, shift=0.1)
    name_a, name_b = _name(store, a.target), _name(store, b.target)
    assert name_b.startswith(report_hash(report_b)[:8] + " · IQM ")
    assert name_a == SUPERSEDED_PREFIX + run_name(report_a, report_hash(report_a))
    assert name_a.endswith(" · rl-reliable · 4 runs · 2 algorithms × 1 task")
    assert name_a.removeprefix(SUPERSEDED_PREFIX)[:SHOWN] != name_b[:SHOWN]
    assert name_a[:SHOWN].startswith(SUPERSEDED_PREFIX + report_hash(report_a)[:8])  # mark and whole hash shown
    assert not name_b.startswith(SUPERSEDED_PREFIX)


def test_the_superseded_mark_follows_the_current_analysis_and_never_touches_a_source_run(store, capsys):
    client = store["client"]
    before = _source_state(store)
    _, a = _publish(store)
    _, b = _publish(store, shift=0.1)
    assert _name(store, a.target).startswith(SUPERSEDED_PREFIX)
    assert not _name(store, b.target).startswith(SUPERSEDED_PREFIX)

    _, again = _publish(store)  # the first report again: its run is current again, by name too
    assert not again.created and again.target == a.target
    assert not _name(store, a.target).startswith(SUPERSEDED_PREFIX)
    assert _name(store, b.target).startswith(SUPERSEDED_PREFIX)
    assert client.get_run(a.target).data.tags[CURRENT_RUN_TAG] == "true"
    _, same = _publish(store)  # and stays current when published once more
    assert same.target == a.target and not _name(store, a.target).startswith(SUPERSEDED_PREFIX)
    assert _name(store, b.target).count(SUPERSEDED_PREFIX) == 1  # marked once, never twice
    assert all(client.get_run(r).info.status == "FINISHED" for r in (a.target, b.target))

    assert _source_state(store) == before  # names, statuses and tags of the source runs unchanged
    assert "could not be renamed" not in capsys.readouterr().err


def test_a_name_that_cannot_be_changed_costs_one_line_not_the_publish(store, capsys, monkeypatch):
    from mlflow.exceptions import MlflowException

    _, a = _publish(store)

    def refuse(self, run_id, status=None, name=None):
        raise MlflowException("PERMISSION_DENIED: cannot rename")

    monkeypatch.setattr(mlflow.MlflowClient, "update_run", refuse)
    _, b = _publish(store, shift=0.1)
    assert b.created
    err = capsys.readouterr().err
    assert err.count(f"note: analysis run {a.target} could not be renamed") == 1
    assert "PERMISSION_DENIED" in err and CURRENT_RUN_TAG in err
    tags = store["client"].get_run(a.target).data.tags
    assert tags[CURRENT_RUN_TAG] == "false"  # the tags still say which run is current


def test_the_comparison_chart_is_in_the_bundle_uploaded_and_shown_in_the_description(store):
    report, result = _publish(store)
    client, folder = store["client"], f"rl_reliable/{report_hash(report)[:16]}/bundle"
    figures = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(result.target, f"{folder}/figures")}
    assert {"interval_estimates.png", "interval_estimates.svg"} <= figures  # the page's chart: SVG too
    assert {f for f in figures if f.endswith(".svg")} == {"interval_estimates.svg"}  # the others PNG only
    manifest = json.loads(
        (store["cwd"] / client.download_artifacts(result.target, f"{folder}/manifest.json", str(store["cwd"])))
        .read_text()
        .strip()
    )
    listed = json.dumps(manifest)
    assert "figures/interval_estimates.png" in listed  # part of the bundle, not a file beside it
    note = client.get_run(result.target).data.tags[NOTE_TAG]
    assert f"](get-artifact?path={folder.replace('/', '%2F')}%2Ffigures%2Finterval_estimates.svg" in note
    assert f"run_uuid={result.target})" in note


def test_no_figures_no_chart_in_the_description(store):
    report = hand_report(store["runs"], (store["exp"], "exp"))
    result = publish_mlflow(
        report, tracking_uri=store["uri"], experiment="exp", publishing=PublishOptions(figures=False)
    )
    assert "get-artifact" not in store["client"].get_run(result.target).data.tags[NOTE_TAG]


def test_ending_an_interrupted_publish_is_said_on_the_console(store, capsys):
    _killed_publish(store, 0.05)
    (orphan,) = store["client"].search_runs([store["exp"]], "tags.`rl_reliable.role` = 'analysis'")
    _, result = _publish(store)
    err = capsys.readouterr().err
    line = f"note: ended 1 interrupted MLflow publish (analysis run {orphan.info.run_id}, now marked failed)"
    assert err.count(line) == 1
    assert _name(store, orphan.info.run_id).startswith(SUPERSEDED_PREFIX)
    _publish(store, shift=0.1)  # nothing left to recover: no line
    assert "interrupted" not in capsys.readouterr().err
    assert result.created
