"""Several seeds in one MLflow run (``metrics.eval/return_seed{seed}``): one row per seed, the CSV's tables.

A real SQLite store; each run logs ``eval/return_seed0..2`` for one (algorithm, task), as JAX training that
vmaps over seeds does. The expected tables are those of the same scores written as a one-row-per-seed CSV.
"""

from __future__ import annotations

import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.mlflow.source import MlflowSource
from tests.support.cli import run_cli
from tests.support.mlflow_store import log_run, make_store, mlflow, use_store
from tests.support.same_tables import assert_same_tables

SEEDS = (0, 1, 2)
CELLS = [("ppo", "pong"), ("ppo", "breakout"), ("dqn", "pong"), ("dqn", "breakout")]
KEY = "metrics.eval/return_seed{seed}"


def _score(i: int, seed: int, step: int = 3) -> float:
    return round(0.1 * i + 0.37 * seed + 0.05 * step + 0.013 * (i * seed % 5), 6)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("mlflow_multi_seed")
    uri = make_store(root)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("vmapped", artifact_location=str(root / "artifacts"))
    rows = []
    for i, (algorithm, task) in enumerate(CELLS):
        history = {f"eval/return_seed{s}": [(step, _score(i, s, step)) for step in (1, 2, 3)] for s in SEEDS}
        log_run(
            client, exp, f"{algorithm}-{task}", params={"algo": algorithm, "env": task}, metrics={}, history=history
        )
        rows += [
            {"algorithm": algorithm, "task": task, "seed": s, "step": step, "score": _score(i, s, step)}
            for s in SEEDS
            for step in (1, 2, 3)
        ]
    frame = pd.DataFrame(rows)
    final = frame[frame.step == 3].drop(columns="step")
    final.to_csv(root / "final.csv", index=False)
    frame.to_csv(root / "curves.csv", index=False)
    return {"uri": uri, "root": root, "client": client, "exp": exp}


def _source(store: dict) -> MlflowSource:
    return MlflowSource("vmapped", tracking_uri=store["uri"])


def test_each_seed_of_a_run_is_one_row_and_the_tables_are_the_csvs(store):
    table = _source(store).table(algorithm="params.algo", task="params.env", score=KEY)
    frame = table.frame
    assert len(frame) == len(CELLS) * len(SEEDS)
    assert sorted(set(frame.seed)) == ["0", "1", "2"]
    assert frame.run_id.nunique() == len(frame)  # identity = run id + seed
    assert set(frame.score_key) == {f"metrics.eval/return_seed{s}" for s in SEEDS}
    assert table.source["score"]["runs_per_key"] == {KEY: len(CELLS) * len(SEEDS)}
    assert_same_tables(table, ScoreTable.from_file(store["root"] / "final.csv"))


def test_curve_key_with_the_placeholder_reads_each_seeds_history(store):
    table = _source(store).table(algorithm="params.algo", task="params.env", score=KEY, curve_key=KEY)
    assert len(table.frame) == len(CELLS) * len(SEEDS) * 3
    want = ScoreTable.from_file(store["root"] / "curves.csv", step="step")
    assert_same_tables(table, want)


def test_score_rule_over_the_placeholder_history(store):
    table = _source(store).table(algorithm="params.algo", task="params.env", score=KEY, score_rule="mean-last-2")
    got = table.frame.sort_values(["algorithm", "task", "seed"]).reset_index(drop=True)
    i = CELLS.index(("ppo", "pong"))
    row = got[(got.algorithm == "ppo") & (got.task == "pong") & (got.seed == "1")].iloc[0]
    assert row.score == pytest.approx((_score(i, 1, 2) + _score(i, 1, 3)) / 2)


def test_a_run_where_the_placeholder_matches_nothing_is_named(store, tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("mixed", artifact_location=str(tmp_path / "a"))
    log_run(client, exp, "good", params={"algo": "ppo", "env": "pong"}, metrics={"eval/return_seed0": 1.0})
    bad = log_run(client, exp, "other-key", params={"algo": "ppo", "env": "pong"}, metrics={"eval/return": 2.0})
    source = MlflowSource("mixed", tracking_uri=uri)
    with pytest.raises(InputError, match=rf"lacks metrics\.eval/return_seed\{{seed\}}: {bad} \(other-key\)"):
        source.table(algorithm="params.algo", task="params.env", score=KEY)
    table = source.table(algorithm="params.algo", task="params.env", score=KEY, on_invalid="drop")
    assert list(table.frame.seed) == ["0"]
    assert list(table.dropped.run_id) == [bad]


def test_seed_key_and_the_placeholder_together_is_one_sentence(store):
    with pytest.raises(InputError, match=r"`seed=` 'params.seed' and the \{seed\} placeholder in `score=`") as err:
        _source(store).table(algorithm="params.algo", task="params.env", seed="params.seed", score=KEY)
    assert "\n" not in str(err.value)


def test_cli_reads_the_seeds_and_writes_the_csvs_aggregates(store, capsys, monkeypatch, tmp_path):
    flags = ["--reps", 200, "--seed", 0, "--no-figures"]
    with use_store(store["uri"], monkeypatch):
        code, _, err = run_cli(
            capsys,
            "mlflow",
            "--experiment",
            "vmapped",
            "--algorithm-key",
            "params.algo",
            "--task-key",
            "params.env",
            "--score-key",
            KEY,
            "--out",
            tmp_path / "mlflow",
            *flags,
        )
        assert code == 0, err
        code, _, err = run_cli(
            capsys,
            "mlflow",
            "--experiment",
            "vmapped",
            "--algorithm-key",
            "params.algo",
            "--task-key",
            "params.env",
            "--seed-key",
            "params.seed",
            "--score-key",
            KEY,
            "--out",
            tmp_path / "both",
        )
        assert code == 2
        assert "--seed-key" in err and "--score-key" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "evaluate", store["root"] / "final.csv", "--out", tmp_path / "csv", *flags)
    assert code == 0, err
    got = pd.read_csv(tmp_path / "mlflow" / "aggregates.csv")
    want = pd.read_csv(tmp_path / "csv" / "aggregates.csv")
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=1e-12)


def test_placeholder_in_a_middle_path_segment(tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("mid", artifact_location=str(tmp_path / "a"))
    log_run(
        client,
        exp,
        "r",
        params={"algo": "ppo", "env": "pong"},
        metrics={
            "seed_a/eval/return": 1.0,
            "seed_17/eval/return": 2.0,
            "seed_007/eval/return": 3.0,
            "seed_1/y/eval/return": 9.0,
        },
    )
    table = MlflowSource("mid", tracking_uri=uri).table(
        algorithm="params.algo", task="params.env", score="metrics.seed_{seed}/eval/return"
    )
    assert dict(zip(table.frame.seed, table.frame.score)) == {"17": 2.0, "007": 3.0}  # whole numbers, as written
