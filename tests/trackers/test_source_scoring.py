"""Final scores vs curves, score rules, fallback keys, sweeps and drop summaries, on a real MLflow SQLite store."""

from __future__ import annotations

import math

import pytest

from rl_reliable_logger.errors import ScoreTableError
from rl_reliable_logger.trackers.base.scoring import parse_score_rule
from rl_reliable_logger.trackers.mlflow.source import MlflowSource
from tests.support.mlflow_store import log_run, make_store, mlflow

LRS = ("0.1", "0.01")
TASKS = ("Pong", "Breakout")
SEEDS = (0, 1, 2)
FIELDS = dict(algorithm="params.algo", task="params.env", seed="params.seed")


def _final(lr: str, task: str, seed: int) -> float:
    return 1000.0 + 100 * LRS.index(lr) + 10 * TASKS.index(task) + seed


def _curve(lr: str, task: str, seed: int) -> list[tuple[int, float]]:
    # the curve never reaches the final score: a test that mixed them up would see it
    return [(step, float(step * (seed + 1) + LRS.index(lr))) for step in range(0, 50, 10)]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A grid sweep: lr x task, seeds 0..2 reused for every lr; final score and curve under separate keys."""
    uri = make_store(tmp_path_factory.mktemp("mlflow_sweep"))
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("sweep")
    ids = {}
    for lr in LRS:
        for task in TASKS:
            for seed in SEEDS:
                # mixed conventions: lr 0.01 wrote the score under the old name
                score_key = "rl_reliable_final_score" if lr == "0.1" else "final_score"
                ids[(lr, task, seed)] = log_run(
                    client,
                    exp,
                    f"ppo-{lr}-{task}-{seed}",
                    params={"algo": "PPO", "env": task, "seed": seed, "lr": lr},
                    metrics={score_key: _final(lr, task, seed)},
                    history={"eval": _curve(lr, task, seed)},
                )
    return {"uri": uri, "ids": ids}


def _source(sweep) -> MlflowSource:
    return MlflowSource("sweep", tracking_uri=sweep["uri"])


SCORE = "metrics.rl_reliable_final_score,metrics.final_score"


def test_curve_key_never_replaces_the_final_score(sweep):
    table = _source(sweep).table(**FIELDS, score=SCORE, curve_key="eval", extra_fields={"lr": "params.lr"})
    assert table.has_steps
    final = table.final().frame
    by_run = dict(zip(final.tracker_run_id, final.score))
    for (lr, task, seed), run_id in sweep["ids"].items():
        assert by_run[run_id] == _final(lr, task, seed)
    # the curve rows are the logged history
    rows = table.frame[table.frame.tracker_run_id == sweep["ids"][("0.1", "Pong", 2)]]
    assert sorted(zip(rows.step, rows.score)) == [(float(s), v) for s, v in _curve("0.1", "Pong", 2)]
    prov = table.source["score"]
    assert prov["keys"] == SCORE.split(",") and prov["curve_key"] == "eval"
    assert "learning curves only" in prov["final_scores_from"]
    assert prov["runs_per_key"] == {"metrics.rl_reliable_final_score": 6, "metrics.final_score": 6}
    assert any("several keys" in w for w in table.warnings)


def test_without_fallback_the_other_convention_is_named(sweep):
    with pytest.raises(ScoreTableError) as err:
        _source(sweep).table(**FIELDS, score="metrics.final_score", extra_fields={"lr": "params.lr"})
    text = str(err.value)
    assert "6 runs lack metrics.final_score" in text
    assert sweep["ids"][("0.1", "Pong", 0)] in text


@pytest.mark.parametrize(
    "rule, expected",
    [
        ("last", lambda pts: pts[-1][1]),
        ("mean-last-2", lambda pts: (pts[-1][1] + pts[-2][1]) / 2),
        ("at-budget:25", lambda pts: [v for s, v in pts if s <= 25][-1]),
        ("max", lambda pts: max(v for _, v in pts)),
    ],
)
def test_score_rules_read_the_score_key_history(sweep, rule, expected):
    table = _source(sweep).table(**FIELDS, score="metrics.eval", score_rule=rule, extra_fields={"lr": "params.lr"})
    got = dict(zip(table.frame.tracker_run_id, table.frame.score))
    for key, run_id in sweep["ids"].items():
        assert got[run_id] == pytest.approx(expected(_curve(*key)))
    assert table.source["score"]["rule"] == str(parse_score_rule(rule))
    assert any("maximisation" in w or "biased upwards" in w for w in table.warnings) == (rule == "max")


def test_at_budget_names_runs_short_of_it(sweep):
    with pytest.raises(ScoreTableError) as err:
        _source(sweep).table(
            **FIELDS, score="metrics.eval", score_rule="at-budget:100", extra_fields={"lr": "params.lr"}
        )
    text = str(err.value)
    assert "12 runs — stopped short of the budget step 100" in text
    assert sum(run_id in text for run_id in sweep["ids"].values()) == 10  # the first ten, then "..."


def test_bad_score_rule_is_an_input_error():
    for text in ("mean-last-0", "median", "at-budget:x", "at-budget:inf"):
        with pytest.raises(ValueError, match="score rule"):
            parse_score_rule(text)


def test_seeds_reused_across_configurations_are_not_duplicates(sweep):
    table = _source(sweep).table(**FIELDS, score=SCORE, extra_fields={"lr": "params.lr"})
    assert len(table.frame) == len(sweep["ids"])
    assert set(table.frame.run_id) == set(sweep["ids"].values())  # identity = tracker run id


def test_same_configuration_and_seed_twice_is_one_duplicate_line_naming_both(sweep):
    with pytest.raises(ScoreTableError) as err:
        _source(sweep).table(**FIELDS, score=SCORE)  # lr not named: configurations collapse
    text = str(err.value)
    line = next(ln for ln in text.splitlines() if "duplicate seed 0 for PPO / Pong" in ln)
    assert sweep["ids"][("0.1", "Pong", 0)] in line and sweep["ids"][("0.01", "Pong", 0)] in line
    assert text.count("duplicate seed 0 for PPO / Pong") == 1
    assert "`variant=`" in text


def test_variant_key_labels_each_configuration(sweep):
    table = _source(sweep).table(**FIELDS, score=SCORE, variant=["params.lr"])
    assert sorted(table.algorithms) == ["PPO lr=0.01", "PPO lr=0.1"]
    assert table.source["fields"]["variant"] == ["params.lr"]


def test_nan_final_score_is_named_and_drops_are_summarised(tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("nan")
    ids = {}
    for alg in ("A", "B"):
        for task in ("x", "y"):
            for seed in range(2):
                score = math.nan if (alg, task, seed) == ("B", "y", 1) else float(seed + 1)
                ids[(alg, task, seed)] = log_run(
                    client,
                    exp,
                    f"{alg}{task}{seed}",
                    params={"algo": alg, "env": task, "seed": seed},
                    metrics={"final": score},
                    history={"eval": [(0, 0.0), (5, 1.0)]},
                )
    src = MlflowSource("nan", tracking_uri=uri)
    bad = ids[("B", "y", 1)]
    with pytest.raises(ScoreTableError) as err:
        src.table(**FIELDS, score="metrics.final", curve_key="eval")
    assert "non-finite final score" in str(err.value) and bad in str(err.value)
    table = src.table(**FIELDS, score="metrics.final", curve_key="eval", on_invalid="drop")
    assert list(table.dropped.run_id) == [bad]  # the run id, not the seed
    summary = table.source["drop_summary"]
    assert summary[0].startswith("dropped 1 of 8 runs: non-finite final score") and "B (1)" in summary[0]
    assert "B / y (2 → 1)" in summary[1]
    assert all(line in table.warnings for line in summary)


FAST = ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--publish", "none", "--quiet"]


def _sweep_cli(sweep, score_key: str) -> list[str]:
    """``rl-reliable mlflow`` on the sweep store with its param fields, ``score_key`` and the fast settings."""
    return ["mlflow", "--experiment", "sweep", "--tracking-uri", sweep["uri"], "--algorithm-key", "params.algo",
            "--task-key", "params.env", "--seed-key", "params.seed", "--score-key", score_key, *FAST]  # fmt: skip


def test_cli_sweep_with_mixed_conventions_gives_the_tuning_view(sweep, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    out = tmp_path / "out"
    code = main(
        [
            *_sweep_cli(sweep, "metrics.rl_reliable_final_score,metrics.final_score"),
            "--hyperparameter-keys",
            "lr",
            "--out",
            str(out),
            "--no-figures",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    import pandas as pd

    tuning = pd.read_csv(out / "tuning.csv")
    assert not tuning.empty
    assert "several keys" in captured.err


def test_cli_drop_summary_on_stderr(sweep, capsys):
    from rl_reliable_logger.cli.main import main

    code = main([*_sweep_cli(sweep, "metrics.final_score"), "--variant-key", "params.lr", "--drop-invalid"])
    captured = capsys.readouterr()
    # lr 0.1 logged the other key: its 6 runs are dropped, its whole algorithm label disappears
    assert code == 0, captured.err
    assert "dropped 6 of 12 runs: missing field(s) metrics.final_score — algorithms PPO lr=0.1 (6)" in captured.err
    assert "2 cells fell below 2 runs after the drops: PPO lr=0.1 / Pong (3 → 0)" in captured.err


def test_only_algorithms_matches_base_names_and_sweep_labels(sweep):
    src = _source(sweep)
    both = src.table(**FIELDS, score=SCORE, variant=["params.lr"], algorithms=["PPO"])
    assert sorted(both.algorithms) == ["PPO lr=0.01", "PPO lr=0.1"]
    one = src.table(**FIELDS, score=SCORE, variant=["params.lr"], algorithms=["PPO lr=0.1"])
    assert one.algorithms == ["PPO lr=0.1"] and len(one.frame) == 6
    assert set(one.frame.tracker_run_id) == {v for (lr, _, _), v in sweep["ids"].items() if lr == "0.1"}
    with pytest.raises(
        ScoreTableError, match=r"'PPO lr=0\.5', which no run has; known algorithms: 'PPO', 'PPO lr=0\.01'"
    ):
        src.table(**FIELDS, score=SCORE, variant=["params.lr"], algorithms=["PPO lr=0.5"])


@pytest.mark.parametrize(
    ("only", "expected"), [("PPO", {"PPO lr=0.01", "PPO lr=0.1"}), ("PPO lr=0.01", {"PPO lr=0.01"})]
)
def test_cli_only_algorithms_with_variant_labels(sweep, tmp_path, capsys, only, expected):
    import json

    import pandas as pd

    from rl_reliable_logger.cli.main import main

    out = tmp_path / "out"
    args = ["mlflow", "--experiment", "sweep", "--tracking-uri", sweep["uri"], "--algorithm-key", "params.algo"]
    args += [
        "--task-key",
        "params.env",
        "--seed-key",
        "params.seed",
        "--score-key",
        SCORE,
        "--variant-key",
        "params.lr",
    ]
    code = main([*args, "--only-algorithms", only, *FAST, "--publish", "none", "--out", str(out), "--no-figures"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert set(pd.read_csv(out / "aggregates.csv")["algorithm"]) == expected
    prov = json.loads((out / "provenance.json").read_text())
    assert set(prov["options"]["only_algorithms"]) == expected
