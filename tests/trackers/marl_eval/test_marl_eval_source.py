"""marl-eval JSON as a source (issue 46): Mava's real Matrax results (../shared/data/marl_eval_mava_matrax) written
back as the metrics.json files Mava's JsonLogger writes, one per experiment; the same scores give the CSV's tables,
and its two batches of seeds numbered from 0 are a duplicate until said to be more seeds."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import InputError, ScoreTable
from rl_reliable_logger.trackers.marl_eval import marl_eval_table
from tests.support.paths import SHARED_DATA
from tests.support.rl_logs import marl_eval_json, write_marl_eval
from tests.support.same_tables import assert_same_tables

MAVA = SHARED_DATA / "marl_eval_mava_matrax" / "final_absolute_metrics.csv"
METRIC = "mean_episode_return"


@pytest.fixture(scope="module")
def mava(tmp_path_factory):
    if not MAVA.exists():
        pytest.skip(f"the team's data sets are not here ({MAVA})")
    frame = pd.read_csv(MAVA)
    root = tmp_path_factory.mktemp("mava")
    for row in frame.itertuples(index=False):
        last = ast.literal_eval(row.last_step_mean_episode_return)
        run = {
            "env": row.env,
            "task": row.task,
            "algorithm": row.algorithm,
            "seed": row.seed,
            "steps": [(row.last_step_count // 2, [v - 1.0 for v in last]), (row.last_step_count, last)],
            "absolute": [row.absolute_mean_episode_return],
        }
        (root / row.source_dir).mkdir()
        write_marl_eval(root / row.source_dir / "metrics.json", marl_eval_json([run], METRIC))
    return frame, root


def test_two_batches_of_seeds_numbered_from_zero_are_a_duplicate_named_with_both_fixes(mava):
    _, root = mava
    with pytest.raises(InputError, match="duplicate seed seed_0") as err:
        marl_eval_table(root, metric=METRIC)
    assert "file" in str(err.value) and "`seeds_by_file=True`" in str(err.value)


def test_mava_results_give_the_tables_of_the_same_scores_in_a_csv(mava):
    frame, root = mava
    table = marl_eval_table(root, metric=METRIC, seeds_by_file=True)
    assert len(table.frame) == len(frame)
    frame = frame.sort_values("source_dir", ignore_index=True)  # the order the files are read in
    want = pd.DataFrame(
        {
            "algorithm": frame["algorithm"],
            "task": frame["task"],
            "seed": frame["source_dir"] + "/metrics.json:" + frame["seed"],
            "score": frame["absolute_mean_episode_return"],
        }
    )
    got = table.frame.set_index("seed")["score"]
    assert got.loc[want["seed"]].to_numpy() == pytest.approx(want["score"].to_numpy(), abs=0, rel=0)
    assert_same_tables(table, ScoreTable(want))


def test_last_step_and_score_rules_read_the_steps(mava):
    frame, root = mava
    last = marl_eval_table(root, metric=METRIC, seeds_by_file=True, last_step=True).frame
    means = frame.set_index(frame["source_dir"] + "/metrics.json:" + frame["seed"])[
        "last_step_mean_episode_return"
    ].map(lambda text: float(np.mean(ast.literal_eval(text))))
    assert last.set_index("seed")["score"].loc[means.index].to_numpy() == pytest.approx(means.to_numpy())
    two = marl_eval_table(root, metric=METRIC, seeds_by_file=True, score_rule="mean-last-2").frame
    assert two.set_index("seed")["score"].loc[means.index].to_numpy() == pytest.approx(means.to_numpy() - 0.5)


def test_curves_are_the_steps_at_their_step_count(tmp_path):
    runs = [
        {
            "env": "e",
            "task": t,
            "algorithm": a,
            "seed": f"seed_{s}",
            "steps": [(100, [1.0 + s]), (200, [2.0 + s])],
            "absolute": [3.0 + s],
        }
        for a in ("A", "B")
        for t in ("x", "y")
        for s in range(3)
    ]
    path = write_marl_eval(tmp_path / "metrics.json", marl_eval_json(runs, "return"))
    table = marl_eval_table(path, metric="return", curves=True)
    curves = table.frame.dropna(subset=["step"])
    assert sorted(curves["step"].unique()) == [100.0, 200.0]
    assert sorted(table.final().frame["score"].unique()) == [3.0, 4.0, 5.0]


def test_configurations_in_files_named_by_a_layout(tmp_path):
    for lr in ("0.1", "0.01"):
        runs = [
            {"env": "e", "task": "x", "algorithm": "A", "seed": s, "absolute": [float(s) + float(lr)]} for s in "012"
        ]
        (tmp_path / f"lr_{lr}").mkdir()
        write_marl_eval(tmp_path / f"lr_{lr}" / "metrics.json", marl_eval_json(runs, "return"))
    with pytest.raises(InputError, match="hyperparameter"):
        marl_eval_table(tmp_path, metric="return", layout="lr_{lr}/metrics.json")
    table = marl_eval_table(tmp_path, metric="return", layout="lr_{lr}/metrics.json", hyperparameter_keys=["lr"])
    assert sorted(map(str, table.frame["lr"].unique())) == ["0.01", "0.1"]


def test_success_counts_from_per_episode_outcomes(tmp_path):
    runs = [
        {"env": "e", "task": "x", "algorithm": "A", "seed": s, "absolute": [1, 0, 0, 1, int(s == "2")]} for s in "012"
    ]
    table = marl_eval_table(write_marl_eval(tmp_path / "m.json", marl_eval_json(runs, "success")), metric="success")
    assert table.frame.sort_values("seed")["successes"].tolist() == [2, 2, 3]
    assert set(table.frame["episodes"]) == {5}


def test_a_missing_metric_and_a_task_in_two_environments_are_named(tmp_path):
    runs = [{"env": env, "task": "x", "algorithm": "A", "seed": "0", "absolute": [1.0]} for env in ("e1", "e2")]
    path = write_marl_eval(tmp_path / "m.json", marl_eval_json(runs, "return"))
    with pytest.raises(InputError, match="task 'x' is in environments 'e1', 'e2'"):
        marl_eval_table(path, metric="return")
    one = write_marl_eval(tmp_path / "one.json", marl_eval_json(runs[:1], "return"))
    with pytest.raises(InputError, match="win_rate"):
        marl_eval_table(one, metric="win_rate")


def test_the_command(mava, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    _, root = mava
    argv = ["marl-eval", str(root), "--metric", METRIC, "--seeds-by-file", "--reps", "200", "--profile-reps", "20"]
    code = main([*argv, "--improvement-reps", "20", "--no-figures", "--out", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (tmp_path / "o" / "aggregates.csv").exists()


def test_per_episode_outcomes_give_success_tables(tmp_path):
    import warnings

    from rl_reliable_logger import evaluate

    runs = [
        {"env": "e", "task": t, "algorithm": a, "seed": s, "absolute": [0] * 4 if (a, t) == ("A", "x") else [1, 0, 1, 1]}
        for a in "AB" for t in "xy" for s in "012"
    ]  # fmt: skip
    table = marl_eval_table(write_marl_eval(tmp_path / "m.json", marl_eval_json(runs, "win")), metric="win")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(table, successes="successes", episodes="episodes", reps=300, profile_reps=50,
                          improvement_reps=50)  # fmt: skip
    rates = report.extra["success_rates"].set_index(["algorithm", "task"])
    assert rates.loc[("A", "x"), "rate"] == 0 and rates.loc[("A", "x"), "high"] > 0
    assert rates.loc[("B", "y"), "rate"] == pytest.approx(0.75)


def test_last_step_on_a_run_without_steps_is_named_not_scored_by_its_absolute_metric(tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    runs = [
        {"env": "e", "task": "t", "algorithm": a, "seed": f"seed_{s}", "steps": [(100, [1.0 + s])], "absolute": [9.0]}
        for a in ("ippo", "mappo")
        for s in range(3)
    ]
    runs[0]["steps"] = []
    path = write_marl_eval(tmp_path / "m.json", marl_eval_json(runs, METRIC))
    with pytest.raises(InputError, match=r"run e / t / ippo / seed_0 has no step_<k> entry, so `last_step=True`"):
        marl_eval_table(path, metric=METRIC, last_step=True)
    table = marl_eval_table(path, metric=METRIC, last_step=True, on_invalid="drop")
    assert len(table.frame) == 5 and 9.0 not in set(table.frame["score"])
    capsys.readouterr()
    code = main(["marl-eval", str(path), "--metric", METRIC, "--last-step", "--reps", "100", "--no-figures"])
    err = capsys.readouterr().err
    assert code == 2 and "so --last-step has no last step" in err and "Traceback" not in err, err
