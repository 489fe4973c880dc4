"""The files Stable-Baselines3 itself wrote (``real_logs/``: real PPO and A2C runs with ``EvalCallback`` and
``Monitor``, written by ``make_real_logs.py`` with stable-baselines3 2.9.2, gymnasium 1.4.0, torch 2.13.0 CPU),
read by the source and, independently, by numpy and pandas: the same scores, the CSV's tables, success counts."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.trackers.sb3 import sb3_table
from tests.support.same_tables import assert_same_tables

REAL = Path(__file__).resolve().parent / "real_logs"


def _independent() -> pd.DataFrame:
    """Each run's score read without the source: the last evaluation's mean from ``np.load``, or the mean of the
    last 100 monitor episodes from pandas (the header line skipped)."""
    rows = []
    for folder in sorted(p for p in REAL.glob("*/*") if p.is_dir()):
        algorithm, (task, seed) = folder.parent.name, folder.name.rsplit("_", 1)
        npz = folder / "evaluations.npz"
        if npz.exists():
            with np.load(npz, allow_pickle=False) as data:
                score, won, n = data["results"][-1].mean(), data["successes"][-1].sum(), data["results"].shape[1]
        else:
            episodes = pd.read_csv(folder / "0.monitor.csv", skiprows=1)
            last = episodes.tail(100)
            score, won, n = last["r"].mean(), last["is_success"].sum(), len(last)
        rows.append(
            {"algorithm": algorithm, "task": task, "seed": int(seed), "score": float(score), "won": int(won), "n": n}
        )
    return pd.DataFrame(rows)


def test_real_sb3_files_give_the_scores_numpy_reads_and_the_csvs_tables():
    want = _independent()
    table = sb3_table(REAL)
    got = table.frame.sort_values(["algorithm", "seed"]).reset_index(drop=True)
    assert len(got) == 7 and set(got["algorithm"]) == {"a2c", "ppo"}
    assert got["score"].tolist() == want.sort_values(["algorithm", "seed"])["score"].tolist()
    assert got["successes"].tolist() == want.sort_values(["algorithm", "seed"])["won"].tolist()
    assert any("a2c/CartPole-v1_9" in w and "no evaluations.npz" in w for w in table.warnings), table.warnings
    assert_same_tables(table, ScoreTable(want[["algorithm", "task", "seed", "score"]]))


def test_real_evaluations_as_curves_and_success_rates():
    table = sb3_table(REAL, curves=True)
    ppo = table.frame[(table.frame["run_id"] == "ppo/CartPole-v1_1")].dropna(subset=["step"])
    with np.load(REAL / "ppo" / "CartPole-v1_1" / "evaluations.npz", allow_pickle=False) as data:
        assert ppo["step"].tolist() == data["timesteps"].astype(float).tolist()
        assert ppo["score"].to_numpy() == pytest.approx(data["results"].mean(axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(
            sb3_table(REAL), successes="successes", episodes="episodes", reps=500, profile_reps=50, improvement_reps=50
        )
    rates = report.extra["success_rates"].set_index("algorithm")
    assert (rates["low"] <= rates["rate"]).all() and (rates["rate"] <= rates["high"]).all()
    assert rates.loc["a2c", "n_seeds"] == 4 and rates.loc["ppo", "episodes"] == 15
