"""Stable-Baselines3 logs as a source (issue 46): evaluations.npz and monitor.csv written as SB3 writes them,
read through the layout, the score rules and curves; the same scores give the CSV's tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import InputError, ScoreTable
from rl_reliable_logger.trackers.sb3 import sb3_table
from tests.support.rl_logs import write_evaluations, write_monitor
from tests.support.same_tables import assert_same_tables

ALGORITHMS = ("PPO", "A2C")
TASKS = ("CartPole-v1", "Acrobot-v1")
SEEDS = (1, 2, 3, 4)
STEPS = (1000, 2000, 3000)


def _episodes(algorithm: str, task: str, seed: int, k: int) -> list[float]:
    """Five evaluation episodes' returns at evaluation k (irregular numbers: the mean is numpy's, as SB3's)."""
    base = (200.0 if task == "CartPole-v1" else -100.0) + (30.0 if algorithm == "PPO" else 0.0)
    rng = np.random.default_rng([ALGORITHMS.index(algorithm), TASKS.index(task), seed, k])
    return (base + 10.0 * k + rng.normal(0, 7, size=5)).tolist()


def _write_zoo(root, layout: str = "{algorithm}/{task}_{seed}") -> pd.DataFrame:
    """rl-zoo folders (``logs/ppo/CartPole-v1_1``) and the CSV rows of the same final scores."""
    rows = []
    for a in ALGORITHMS:
        for t in TASKS:
            for s in SEEDS:
                results = [_episodes(a, t, s, k) for k in range(len(STEPS))]
                successes = [[r > np.mean(row) for r in row] for row in results]
                folder = root / layout.format(algorithm=a, task=t, seed=s)
                write_evaluations(folder, STEPS, results, successes)
                write_monitor(folder, [1.0, 2.0], rank=0)  # beside the evaluations: not what is scored
                rows.append(
                    {
                        "algorithm": a,
                        "task": t,
                        "seed": s,
                        "score": float(np.mean(results[-1])),
                        "successes": int(np.sum(successes[-1])),
                        "episodes": 5,
                    }
                )
    # in the order the folders are read (sorted paths): the tables list algorithms in the order they first appear
    return pd.DataFrame(rows).sort_values(["algorithm", "task", "seed"], key=lambda c: c.astype(str), ignore_index=True)


def test_evaluations_give_the_tables_of_the_same_scores_in_a_csv(tmp_path):
    want = _write_zoo(tmp_path)
    table = sb3_table(tmp_path)
    got = table.frame.sort_values(["algorithm", "task", "seed"]).reset_index(drop=True)
    assert got["score"].tolist() == want.sort_values(["algorithm", "task", "seed"])["score"].tolist()
    assert got["successes"].tolist() == want.sort_values(["algorithm", "task", "seed"])["successes"].tolist()
    assert set(got["episodes"]) == {5}
    assert_same_tables(table, ScoreTable(want[["algorithm", "task", "seed", "score"]]))


def test_the_issue_layout_and_a_score_rule_over_evaluations(tmp_path):
    want = _write_zoo(tmp_path, layout="{algorithm}_{task}_{seed}")
    table = sb3_table(tmp_path, layout="{algorithm}_{task}_{seed}", score_rule="mean-last-2")
    frame = table.frame.set_index(["algorithm", "task", "seed"])["score"]
    for a, t, s in want[["algorithm", "task", "seed"]].itertuples(index=False):
        expected = np.mean([np.mean(_episodes(a, t, s, k)) for k in (1, 2)])
        assert frame[(a, t, str(s)) if isinstance(frame.index[0][2], str) else (a, t, s)] == pytest.approx(expected)


def test_curves_are_the_evaluations_at_their_timesteps(tmp_path):
    _write_zoo(tmp_path)
    table = sb3_table(tmp_path, curves=True)
    curves = table.frame.dropna(subset=["step"]) if "step" in table.frame else table.frame
    assert sorted(curves["step"].unique()) == list(STEPS)
    assert len(curves) == len(ALGORITHMS) * len(TASKS) * len(SEEDS) * len(STEPS)


def test_success_rate_and_length_are_scores_too(tmp_path):
    want = _write_zoo(tmp_path)
    table = sb3_table(tmp_path, score_key="success")
    got = table.frame.sort_values(["algorithm", "task", "seed"])["score"].to_numpy()
    assert got == pytest.approx((want.sort_values(["algorithm", "task", "seed"])["successes"] / 5).to_numpy())
    assert set(sb3_table(tmp_path, score_key="length").frame["score"]) == {102.0}  # lengths 100..104
    with pytest.raises(InputError, match="one of return, success, length"):
        sb3_table(tmp_path, score_key="reward")


def test_a_run_without_evaluations_is_scored_from_its_monitor_episodes_and_named(tmp_path):
    _write_zoo(tmp_path)
    folder = tmp_path / "PPO" / "CartPole-v1_9"
    returns = list(np.arange(150.0))
    write_monitor(folder, returns[:80], [20] * 80, rank=0, t_start=0.0, info={"is_success": [1, 0] * 40})
    write_monitor(folder, returns[80:], [20] * 70, rank=1, t_start=100.0, info={"is_success": [1] * 70})
    table = sb3_table(tmp_path)
    row = table.frame[table.frame["run_id"] == "PPO/CartPole-v1_9"].iloc[0]
    assert row["score"] == pytest.approx(np.mean(returns[50:]))  # the last 100 episodes, in time order
    assert row["successes"] == 30 // 2 + 70 and row["episodes"] == 100
    assert any("no evaluations.npz" in w and "CartPole-v1_9" in w for w in table.warnings), table.warnings


def test_a_damaged_evaluations_file_names_the_file(tmp_path):
    _write_zoo(tmp_path)
    victim = tmp_path / "A2C" / "Acrobot-v1_2" / "evaluations.npz"
    victim.write_bytes(victim.read_bytes()[:100])
    with pytest.raises(InputError, match="Acrobot-v1_2/evaluations.npz"):
        sb3_table(tmp_path)
    table = sb3_table(tmp_path, on_invalid="drop")
    assert len(table.frame) == len(ALGORITHMS) * len(TASKS) * len(SEEDS) - 1
    assert "A2C/Acrobot-v1_2" in set(table.dropped["run_id"])


def test_a_retrained_run_is_a_duplicate_not_a_seed(tmp_path):
    """SB3 writes ``PPO_2`` beside ``PPO_1`` when a run is trained again into the same folder."""
    for run in (1, 2):
        for seed in SEEDS[:3]:
            write_evaluations(tmp_path / "CartPole-v1" / f"seed_{seed}" / f"PPO_{run}", STEPS, [[1.0], [2.0], [3.0]])
    with pytest.raises(InputError, match="duplicate seed"):
        sb3_table(tmp_path, layout="{task}/seed_{seed}/{algorithm}_{run}")


def test_the_command(tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    _write_zoo(tmp_path / "logs", layout="{algorithm}_{task}_{seed}")
    argv = ["sb3", str(tmp_path / "logs"), "--layout", "{algorithm}_{task}_{seed}", "--reps", "200"]
    code = main(
        [*argv, "--profile-reps", "20", "--improvement-reps", "20", "--no-figures", "--out", str(tmp_path / "o")]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (tmp_path / "o" / "aggregates.csv").exists()


def test_success_counts_give_success_intervals_that_see_the_seeds(tmp_path, capsys):
    """A task where every evaluation episode of every seed failed: its interval reaches above 0 (and the task where
    all succeeded stays below 1), through the source's successes / episodes columns."""
    import warnings

    from rl_reliable_logger import evaluate
    from rl_reliable_logger.cli.main import main

    for a in ALGORITHMS:
        for t, outcome in (("Reacher", False), ("Pusher", True)):
            for s in SEEDS:
                results = [[1.0] * 5 for _ in STEPS]
                successes = [[outcome or (a == "PPO" and k == 2 and s == 1)] * 5 for k in range(len(STEPS))]
                write_evaluations(tmp_path / a / f"{t}_{s}", STEPS, results, successes)
    table = sb3_table(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(table, successes="successes", episodes="episodes", reps=500, profile_reps=50,
                          improvement_reps=50)  # fmt: skip
    rates = report.extra["success_rates"].set_index(["algorithm", "task"])
    never, always = rates.loc[("A2C", "Reacher")], rates.loc[("A2C", "Pusher")]
    assert (never["rate"], never["low"]) == (0.0, 0.0) and never["high"] > 0
    assert (always["rate"], always["high"]) == (1.0, 1.0) and always["low"] < 1
    assert rates.loc[("PPO", "Reacher"), "successes"] == 5 and rates.loc[("PPO", "Reacher"), "episodes"] == 20
    argv = ["sb3", str(tmp_path), "--successes", "successes", "--episodes", "episodes", "--reps", "500"]
    code = main(
        [*argv, "--profile-reps", "50", "--improvement-reps", "50", "--no-figures", "--out", str(tmp_path / "o")]
    )
    assert code == 0, capsys.readouterr().err
    written = pd.read_csv(tmp_path / "o" / "success_rates.csv", keep_default_na=False)
    assert written["high"].min() > 0 and written["low"].max() < 1
