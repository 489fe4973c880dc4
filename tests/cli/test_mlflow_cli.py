"""`rl-reliable mlflow`: same numbers as `rl-reliable evaluate` on the same scores, publishing, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import rl_reliable_logger
from rl_reliable_logger.cli import main as cli
from tests.support.mlflow_store import log_run, make_store, mlflow, use_store

# hand-written final scores of 2 algorithms x 2 tasks x 4 seeds
SCORES = {
    ("ucb1", "easy"): [0.80, 0.78, 0.76, 0.81],
    ("ucb1", "hard"): [0.17, 0.06, 0.30, 0.20],
    ("thompson", "easy"): [0.98, 0.97, 0.99, 0.96],
    ("thompson", "hard"): [0.78, 0.56, 0.65, 0.35],
}
FAST = ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--seed", "0", "--quiet"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Runs written the way a user would: the one-line call inside `mlflow.start_run()` (once per module)."""
    tmp_path = tmp_path_factory.mktemp("mlflow-cli")
    uri = make_store(tmp_path)
    with pytest.MonkeyPatch.context() as monkeypatch, use_store(uri, monkeypatch):
        mlflow.set_experiment("cli")
        for (alg, task), scores in SCORES.items():
            for seed, score in enumerate(scores):
                with mlflow.start_run(run_name=f"{alg}-{task}-{seed}"):
                    mlflow.log_param("lr", 0.1)
                    rl_reliable_logger.log_final_score(score, algorithm=alg, task=task, seed=seed)
        exp = mlflow.get_experiment_by_name("cli").experiment_id
    return {"uri": uri, "client": mlflow.MlflowClient(uri), "tmp": tmp_path, "exp": exp}


def test_out_equals_evaluate_on_the_same_scores_as_csv(store, capsys):
    tmp = store["tmp"]
    before = len(store["client"].search_runs([store["exp"]], ""))
    code = cli.main(
        [
            "mlflow",
            "--tracking-uri",
            store["uri"],
            "--experiment",
            "cli",
            *FAST,
            "--out",
            str(tmp / "from_mlflow"),
            "--no-figures",
            "--publish",
            "none",
        ]
    )
    assert code == 0, capsys.readouterr().err
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": v}
        for (a, t), scores in SCORES.items()
        for s, v in enumerate(scores)
    ]
    pd.DataFrame(rows).to_csv(tmp / "scores.csv", index=False)
    assert cli.main(["evaluate", str(tmp / "scores.csv"), *FAST, "--out", str(tmp / "from_csv"), "--no-figures"]) == 0
    for name in ("aggregates", "per_task", "improvement", "differences", "profiles", "ranks", "gap_curve"):
        a = pd.read_csv(tmp / "from_mlflow" / f"{name}.csv")
        b = pd.read_csv(tmp / "from_csv" / f"{name}.csv")
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)
    # same files as evaluate (the MLflow scores table has the run ids and names as extra columns)
    assert {p.name for p in (tmp / "from_mlflow").iterdir()} == {p.name for p in (tmp / "from_csv").iterdir()}
    scores = pd.read_csv(tmp / "from_mlflow" / "scores.csv")
    assert scores["tracker_run_id"].nunique() == 16 and set(scores["run_name"]) >= {"ucb1-easy-0", "thompson-hard-3"}
    prov = json.loads((tmp / "from_mlflow" / "provenance.json").read_text())
    assert prov["source"]["tracker"] == "mlflow" and prov["source"]["experiments"] == [
        {"id": store["exp"], "name": "cli"}
    ]
    # nothing was published
    assert len(store["client"].search_runs([store["exp"]], "")) == before


def test_publish_new_is_the_default_and_idempotent(store, capsys):
    args = ["mlflow", "--tracking-uri", store["uri"], "--experiment", "cli", *FAST, "--no-figures"]
    assert cli.main(args + ["--out", str(store["tmp"] / "out")]) == 0
    first_err = capsys.readouterr().err
    assert cli.main(args) == 0
    second_err = capsys.readouterr().err
    analysis = store["client"].search_runs([store["exp"]], "tags.`rl_reliable.role` = 'analysis'")
    assert len(analysis) == 1
    run_id = analysis[0].info.run_id
    assert run_id in first_err and run_id in second_err
    agg = pd.read_csv(store["tmp"] / "out" / "aggregates.csv")
    iqm = agg[(agg.metric == "iqm") & (agg.algorithm == "thompson")].iloc[0]
    metrics = analysis[0].data.metrics
    assert (metrics["iqm/thompson"], metrics["iqm_low/thompson"], metrics["iqm_high/thompson"]) == (
        iqm.point,
        iqm.low,
        iqm.high,
    )
    assert analysis[0].data.tags["rl_reliable.source.filter"] == "(none)"


def test_publish_onto_a_parent_run_and_skip_it_as_a_source(store, capsys):
    parent = log_run(store["client"], store["exp"], "my-parent", status=None)  # still running, no fields
    before = len(store["client"].search_runs([store["exp"]], ""))
    assert (
        cli.main(
            [
                "mlflow",
                "--tracking-uri",
                store["uri"],
                "--experiment",
                "cli",
                *FAST,
                "--no-figures",
                "--publish",
                parent,
            ]
        )
        == 0
    )
    run = store["client"].get_run(parent)
    assert run.info.status == "RUNNING"  # publishing does not end the user's run
    assert "iqm/ucb1" in run.data.metrics and "rl_reliable.report_hash" in run.data.tags
    assert len(store["client"].search_runs([store["exp"]], "")) == before


def test_several_experiments_need_an_explicit_publish(store, capsys):
    other = store["client"].create_experiment("cli-empty")
    analysis = "tags.`rl_reliable.role` = 'analysis'"
    before = len(store["client"].search_runs([store["exp"], other], analysis))
    code = cli.main(
        ["mlflow", "--tracking-uri", store["uri"], "--experiment", "cli", "--experiment", other, *FAST, "--no-figures"]
    )
    assert code == 0
    assert "not published" in capsys.readouterr().err
    assert len(store["client"].search_runs([store["exp"], other], analysis)) == before


def test_errors_are_short_and_name_the_problem(store, capsys):
    code = cli.main(["mlflow", "--tracking-uri", store["uri"], "--experiment", "nope", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "'nope'" in err and "'cli'" in err and "Traceback" not in err

    exp = store["client"].create_experiment("cli-bad")
    for seed in range(2):
        for alg in ("a", "b"):
            log_run(
                store["client"],
                exp,
                f"{alg}-{seed}",
                metrics={"rl_reliable_final_score": seed},
                tags={"rl_reliable_algorithm": alg, "rl_reliable_task": "t", "rl_reliable_seed": str(seed)},
            )
    bad = log_run(
        store["client"],
        exp,
        "no-score",
        tags={"rl_reliable_algorithm": "a", "rl_reliable_task": "t", "rl_reliable_seed": "9"},
    )
    code = cli.main(["mlflow", "--tracking-uri", store["uri"], "--experiment", "cli-bad", *FAST, "--publish", "none"])
    err = capsys.readouterr().err
    assert code == 2 and bad in err and "no-score" in err and "--drop-invalid" in err

    code = cli.main(
        [
            "mlflow",
            "--tracking-uri",
            store["uri"],
            "--experiment",
            "cli-bad",
            *FAST,
            "--publish",
            "none",
            "--drop-invalid",
        ]
    )
    assert code == 0, capsys.readouterr().err


def test_a_publish_that_replaces_an_analysis_says_so(store, capsys, monkeypatch):
    """Another analysis of the same runs (here: another seed) replaces the current one: the console names the run it
    replaced, and that run's description names the one that replaced it (issue 45)."""
    with use_store(store["uri"], monkeypatch):
        mlflow.set_experiment("cli-replace")
        for (alg, task), scores in SCORES.items():
            for seed, score in enumerate(scores):
                with mlflow.start_run(run_name=f"{alg}-{task}-{seed}"):
                    rl_reliable_logger.log_final_score(score, algorithm=alg, task=task, seed=seed)
    args = ["mlflow", "--tracking-uri", store["uri"], "--experiment", "cli-replace", *FAST[:-3], "--no-figures"]
    assert cli.main([*args, "--seed", "0"]) == 0
    first = capsys.readouterr().err
    assert "it replaces" not in first
    assert cli.main([*args, "--seed", "1"]) == 0
    second = capsys.readouterr().err
    exp = mlflow.MlflowClient(store["uri"]).get_experiment_by_name("cli-replace").experiment_id
    old, new = sorted(
        store["client"].search_runs([exp], "tags.`rl_reliable.role` = 'analysis'"), key=lambda r: r.info.start_time
    )
    assert f"it replaces analysis run {old.info.run_id} (no longer current)" in second, second
    note = store["client"].get_run(old.info.run_id).data.tags["mlflow.note.content"]
    assert note.startswith("**Superseded**") and new.info.run_id in note


def test_a_missing_parent_run_is_refused_before_any_run_is_read(store, capsys, monkeypatch):
    from rl_reliable_logger.trackers.mlflow.client import Tracker

    def no_reading(*args, **kwargs):
        raise AssertionError("runs were read before the --publish run was checked")

    monkeypatch.setattr(Tracker, "search", no_reading)
    out = store["tmp"] / "never-written"
    args = ["mlflow", "--tracking-uri", store["uri"], "--experiment", "cli", *FAST, "--out", str(out)]
    code = cli.main([*args, "--publish", "0123456789abcdef"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "'0123456789abcdef'" in err and "not found" in err and "--publish RUN_ID" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1

    deleted = log_run(store["client"], store["exp"], "deleted-parent")
    store["client"].delete_run(deleted)
    code = cli.main([*args, "--publish", deleted])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and f"run {deleted!r}" in err and "is deleted" in err


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_a_database_uri_without_its_driver_is_exit_2_without_the_password(scheme, capsys):
    import importlib.util

    module = {"postgresql": "psycopg", "mysql": "MySQLdb"}[scheme]
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    uri = f"{scheme}://bob:S3CRET@127.0.0.1:1/db"
    code = cli.main(["mlflow", "--tracking-uri", uri, "--experiment", "exp", "--publish", "none"])
    err = capsys.readouterr().err
    assert code == 2 and "driver" in err and "pip install" in err and "S3CRET" not in err
    assert len(err.strip().splitlines()) == 1


def test_retry_for_0_is_one_fast_attempt_naming_the_refused_connection(capsys):
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    code = cli.main(
        ["mlflow", "--tracking-uri", f"http://127.0.0.1:{port}", "--experiment", "exp", "--publish", "none"]
        + ["--retry-for", "0"]
    )
    err = capsys.readouterr().err
    assert time.monotonic() - start < 5
    assert code == 2 and "connection refused" in err and "timeout" not in err and "urllib3" not in err
