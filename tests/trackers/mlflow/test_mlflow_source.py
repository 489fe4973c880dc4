"""MLflow source and end-of-training call, against a real SQLite store in a temp dir."""

from __future__ import annotations

import math
import socket
import time

import pytest

from rl_reliable_logger.errors import InputError, ScoreTableError, TrackerError
from rl_reliable_logger.trackers.base.retry import RetryPolicy
from rl_reliable_logger.trackers.mlflow import load_mlflow_runs, mlflow_table, write_final_score
from rl_reliable_logger.trackers.mlflow.source import MlflowSource
from tests.support.mlflow_store import convention, log_run, make_store, mlflow, use_store

# Hand-written final scores: (algorithm, task, seed) -> score
SCORES = {
    ("PPO", "Pong", 0): 10.0,
    ("PPO", "Pong", 1): 12.0,
    ("PPO", "Pong", 2): 11.0,
    ("PPO", "Breakout", 0): 40.0,
    ("PPO", "Breakout", 1): 44.0,
    ("PPO", "Breakout", 2): 42.0,
    ("DQN", "Pong", 0): 5.0,
    ("DQN", "Pong", 1): 7.0,
    ("DQN", "Pong", 2): 6.0,
    ("DQN", "Breakout", 0): 20.0,
    ("DQN", "Breakout", 1): 22.0,
    ("DQN", "Breakout", 2): 21.0,
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One SQLite store for the module; experiment ``grid`` holds SCORES plus noise runs."""
    uri = make_store(tmp_path_factory.mktemp("mlflow"))
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("grid")
    ids = {}
    for (alg, task, seed), score in SCORES.items():
        ids[(alg, task, seed)] = log_run(
            client,
            exp,
            f"{alg}-{task}-{seed}",
            tags={**convention(alg, task, seed), "sweep": "a"},
            metrics={"rl_reliable_final_score": score},
            history={"eval_return": [(100, score / 2), (200, score)]},
        )
    # a parent run with none of the fields, a crashed and a still-running run with all of them
    parent = log_run(client, exp, "grid-parent", tags={"kind": "parent"})
    failed = log_run(
        client,
        exp,
        "PPO-Pong-9",
        tags={**convention("PPO", "Pong", 9), "sweep": "a"},
        metrics={"rl_reliable_final_score": 99.0},
        status="FAILED",
    )
    running = log_run(
        client,
        exp,
        "DQN-Pong-9",
        tags={**convention("DQN", "Pong", 9), "sweep": "a"},
        metrics={"rl_reliable_final_score": 1.0},
        status=None,
    )
    # runs of another sweep, excluded by the filter
    other = None
    for seed in range(2):
        other = log_run(
            client,
            exp,
            f"PPO-Pong-b{seed}",
            tags={**convention("PPO", "Pong", 10 + seed), "sweep": "b"},
            metrics={"rl_reliable_final_score": 1000.0},
        )
    return {
        "uri": uri,
        "client": client,
        "exp": exp,
        "ids": ids,
        "parent": parent,
        "failed": failed,
        "running": running,
        "other": other,
    }


def test_table_holds_exactly_the_logged_scores(store):
    table = mlflow_table("grid", tracking_uri=store["uri"], filter_string="tags.sweep = 'a'")
    frame = table.frame
    got = {(r.algorithm, r.task, int(r.seed)): r.score for r in frame.itertuples()}
    assert got == SCORES
    # each row keeps its MLflow run id and name
    row = frame[(frame.algorithm == "PPO") & (frame.task == "Pong") & (frame.seed.astype(int) == 1)].iloc[0]
    assert row.tracker_run_id == store["ids"][("PPO", "Pong", 1)]
    assert row.run_name == "PPO-Pong-1"


def test_unfinished_runs_are_counted_and_listed_not_used(store):
    table = mlflow_table("grid", tracking_uri=store["uri"], filter_string="tags.sweep = 'a'")
    excluded = {e["run_id"]: e["state"] for e in table.source["excluded"]}
    assert excluded == {store["failed"]: "failed", store["running"]: "running"}
    assert 99.0 not in set(table.frame.score)
    assert any("unfinished" in w for w in table.warnings)

    with_all = mlflow_table(
        "grid", tracking_uri=store["uri"], filter_string="tags.sweep = 'a'", include_unfinished=True
    )
    assert len(with_all.frame) == len(SCORES) + 2
    assert set(with_all.frame.tracker_run_id) >= {store["failed"], store["running"]}


def test_filter_and_client_side_selection(store):
    everything = mlflow_table("grid", tracking_uri=store["uri"])
    assert len(everything.frame) == len(SCORES) + 2  # the two sweep-b runs join PPO/Pong
    # the parent run has none of the fields: skipped and listed, not an error
    assert [s["run_id"] for s in everything.source["skipped"]] == [store["parent"]]
    only = mlflow_table(
        "grid",
        tracking_uri=store["uri"],
        filter_string="tags.sweep = 'a'",
        algorithms=["DQN"],
        tasks=["Pong", "Breakout"],
    )
    assert set(only.frame.algorithm) == {"DQN"} and len(only.frame) == 6
    assert any(s["reason"] == "algorithm 'PPO' not selected" for s in only.source["skipped"])


def test_filter_with_or_is_a_clear_error(store):
    with pytest.raises(TrackerError, match="AND only"):
        mlflow_table("grid", tracking_uri=store["uri"], filter_string="tags.sweep = 'a' OR tags.sweep = 'b'")


def test_search_is_paged_never_one_request_per_run(store, monkeypatch):
    calls = {"search_runs": 0, "get_run": 0}
    for name in calls:
        real = getattr(mlflow.MlflowClient, name)

        def counted(self, *a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(self, *a, **k)

        monkeypatch.setattr(mlflow.MlflowClient, name, counted)
    records = load_mlflow_runs(["grid"], tracking_uri=store["uri"], page_size=4)
    n = len(SCORES) + 3 + 2
    assert len(records) == n
    assert n % 4 != 0 and calls == {"search_runs": math.ceil(n / 4), "get_run": 0}
    assert len({r.run_id for r in records}) == n
    rec = next(r for r in records if r.run_id == store["ids"][("DQN", "Breakout", 2)])
    assert rec.state == "finished" and rec.tags["rl_reliable_algorithm"] == "DQN"
    assert rec.metrics == {"rl_reliable_final_score": 21.0, "eval_return": 21.0}
    assert rec.attrs["experiment_name"] == "grid" and rec.source == "mlflow"


def test_curves_read_the_exact_metric_history(store):
    table = mlflow_table("grid", tracking_uri=store["uri"], filter_string="tags.sweep = 'a'", curve_key="eval_return")
    assert table.has_steps
    rows = table.frame[
        (table.frame.algorithm == "PPO") & (table.frame.task == "Breakout") & (table.frame.seed.astype(int) == 1)
    ].sort_values("step")
    assert rows.step.tolist() == [100, 200] and rows.score.tolist() == [22.0, 44.0]


def test_other_field_references(store, tmp_path):
    client, exp = store["client"], store["client"].create_experiment("by-params")
    for alg in ("a1", "a2"):
        for seed in range(2):
            log_run(client, exp, "env-x", params={"algo": alg, "seed": seed}, metrics={"ret": seed + (alg == "a2")})
    refs = {"algorithm": "params.algo", "task": "run.name", "seed": "params.seed", "score": "metrics.ret"}
    table = mlflow_table("by-params", tracking_uri=store["uri"], **refs, extra_fields={"algo_param": "params.algo"})
    assert sorted(table.frame.score.tolist()) == [0.0, 1.0, 1.0, 2.0]
    assert (table.frame.algo_param == table.frame.algorithm).all()
    assert set(table.frame.task) == {"env-x"}
    # a configuration key that no run has is a typo (issue 41), named with the keys the runs have
    with pytest.raises(InputError, match=r"names 'absent', which no run has \(the runs' params keys: algo, seed\)"):
        mlflow_table("by-params", tracking_uri=store["uri"], **refs, extra_fields={"absent": "params.nope"})


def test_runs_missing_the_score_are_named(store):
    client, exp = store["client"], store["client"].create_experiment("missing")
    ok = [
        log_run(client, exp, f"ok-{s}", tags=convention("PPO", "Pong", s), metrics={"rl_reliable_final_score": s})
        for s in range(2)
    ]
    bad = log_run(client, exp, "forgot-the-score", tags=convention("PPO", "Pong", 5))
    with pytest.raises(ScoreTableError) as err:
        mlflow_table("missing", tracking_uri=store["uri"])
    assert bad in str(err.value) and "forgot-the-score" in str(err.value)
    assert "metrics.rl_reliable_final_score" in str(err.value)
    assert ok[0] not in str(err.value)


def test_duplicate_seeds_name_both_runs(store):
    client, exp = store["client"], store["client"].create_experiment("dupes")
    for s in range(2):
        log_run(client, exp, f"x-{s}", tags=convention("PPO", "Pong", s), metrics={"rl_reliable_final_score": s})
    first = log_run(
        client, exp, "first-seed-7", tags=convention("PPO", "Pong", 7), metrics={"rl_reliable_final_score": 1}
    )
    second = log_run(
        client, exp, "second-seed-7", tags=convention("PPO", "Pong", 7), metrics={"rl_reliable_final_score": 2}
    )
    with pytest.raises(ScoreTableError) as err:
        mlflow_table("dupes", tracking_uri=store["uri"])
    assert first in str(err.value) and second in str(err.value)


def test_unknown_experiment_lists_the_existing_ones(store):
    with pytest.raises(TrackerError) as err:
        mlflow_table(["grid", "no-such-experiment"], tracking_uri=store["uri"])
    text = str(err.value)
    assert "'no-such-experiment'" in text and "'grid'" in text and "'Default'" in text


def test_experiments_by_id_and_several_at_once(store):
    client = store["client"]
    exp2 = client.create_experiment("grid-more")
    log_run(client, exp2, "SAC-Pong-0", tags=convention("PPO", "Pong", 3), metrics={"rl_reliable_final_score": 13.0})
    table = mlflow_table([store["exp"], "grid-more"], tracking_uri=store["uri"], filter_string="tags.sweep = 'a'")
    # the filter applies to both experiments: the untagged run of grid-more is filtered out
    assert len(table.frame) == len(SCORES)
    table = mlflow_table([store["exp"], "grid-more"], tracking_uri=store["uri"], algorithms=["PPO"], tasks=["Pong"])
    assert 13.0 in set(table.frame.score)
    assert [e["name"] for e in table.source["experiments"]] == ["grid", "grid-more"]


def test_missing_database_is_an_error_and_creates_nothing(tmp_path):
    path = tmp_path / "nowhere" / "mlflow.db"
    with pytest.raises(TrackerError, match="no MLflow database"):
        mlflow_table("x", tracking_uri=f"sqlite:///{path}")
    assert not path.exists()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_retries_then_names_the_uri(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_JITTER", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    uri = f"http://127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(TrackerError) as err:  # a budget above 0 waits for a server that is still starting
        MlflowSource("anything", retry=RetryPolicy(total=1.0), client_kwargs={"tracking_uri": uri}).table()
    assert time.monotonic() - start < 20
    text = str(err.value)
    assert uri in text and "MLFLOW_HTTP_REQUEST_MAX_RETRIES" in text and "Gave up after 1 attempt" in text
    assert "connection" in text and "timeout:" not in text


def test_a_zero_budget_is_one_attempt_that_says_the_connection_was_refused():
    # MLflow's defaults (7 HTTP retries, 120 s timeouts): the zero budget must not wait them out
    uri = f"http://127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(TrackerError) as err:
        mlflow_table("anything", client_kwargs={"tracking_uri": uri})  # the library's default: no retries
    assert time.monotonic() - start < 5
    text = str(err.value)
    assert uri in text and "connection refused" in text and "timeout" not in text


# ---------------------------------------------------------------- end of training
def test_log_final_score_writes_the_convention(store, monkeypatch):
    with use_store(store["uri"], monkeypatch):
        mlflow.set_experiment("callback")
        with mlflow.start_run() as run:
            mlflow.log_metric("loss", 0.5)
            returned = write_final_score(812.5, "PPO", "Hopper", 3)
        assert returned == run.info.run_id
        got = store["client"].get_run(run.info.run_id)
        assert got.data.metrics["rl_reliable_final_score"] == 812.5
        assert {k: got.data.tags[k] for k in convention("PPO", "Hopper", 3)} == convention("PPO", "Hopper", 3)
        # the run is found with no field flags
        table = mlflow_table("callback", tracking_uri=store["uri"], include_unfinished=True)
        assert table.frame.score.tolist() == [812.5]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "n/a"])
def test_log_final_score_refuses_non_finite_and_leaves_the_run_intact(store, monkeypatch, bad):
    with use_store(store["uri"], monkeypatch):
        mlflow.set_experiment("callback-bad")
        with mlflow.start_run() as run:
            mlflow.log_metric("loss", 0.5)
            with pytest.raises(ValueError, match="score"):
                write_final_score(bad, "PPO", "Hopper", 3)
            assert mlflow.active_run() is not None  # still running: the caller decides
        got = store["client"].get_run(run.info.run_id)
        assert got.info.status == "FINISHED"
        assert got.data.metrics == {"loss": 0.5}
        assert not any(k.startswith("rl_reliable") for k in got.data.tags)


def test_log_final_score_refuses_a_conflicting_algorithm(store, monkeypatch):
    with use_store(store["uri"], monkeypatch):
        mlflow.set_experiment("callback-conflict")
        with mlflow.start_run() as run:
            write_final_score(1.0, "PPO", "Hopper", 3)
            with pytest.raises(ValueError, match="already has"):
                write_final_score(2.0, "SAC", "Hopper", 3)
        got = store["client"].get_run(run.info.run_id)
        assert got.data.tags["rl_reliable_algorithm"] == "PPO" and got.data.metrics["rl_reliable_final_score"] == 1.0


def test_log_final_score_needs_a_run(store, monkeypatch):
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    with use_store(store["uri"], monkeypatch):
        with pytest.raises(TrackerError, match="no active MLflow run"):
            write_final_score(1.0, "PPO", "Hopper", 3)


def test_the_parent_of_analysed_runs_is_skipped_without_a_warning_and_an_unrelated_run_is_warned(tmp_path):
    """An MLproject grid's parent run carries none of the fields: expected there, so it is listed with its own
    reason and not warned about; a run that is nobody's parent and has none of the fields is still warned."""
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("project")
    parent = log_run(client, exp, "grid")
    for algorithm, score in (("A", 1.0), ("B", 2.0)):
        for seed in range(2):
            log_run(client, exp, f"{algorithm}{seed}", tags={**convention(algorithm, "t", seed),
                    "mlflow.parentRunId": parent}, metrics={"rl_reliable_final_score": score + seed})  # fmt: skip
    table = mlflow_table("project", tracking_uri=uri)
    reasons = {s["run_id"]: s["reason"] for s in table.source["skipped"]}
    assert reasons == {parent: "is the parent run of analysed runs (it carries none of the fields)"}
    assert not any("none of the fields" in w for w in table.warnings)

    stray = log_run(client, exp, "notes")
    table = mlflow_table("project", tracking_uri=uri)
    warned = [w for w in table.warnings if "none of the fields" in w]
    assert len(warned) == 1 and stray in warned[0] and parent not in warned[0]
