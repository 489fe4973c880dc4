"""plan() on scores read from both trackers: a real MLflow SQLite store and real offline W&B runs (no mocks)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rl_reliable_logger import mlflow_table, plan, wandb_table
from tests.support.mlflow_store import convention, log_run, make_store, mlflow


def test_plan_from_mlflow_runs(tmp_path):
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("pilot")
    rng = np.random.default_rng(0)
    for alg, mu in (("PPO", 10.0), ("DQN", 14.0)):
        for task in ("Pong", "Breakout"):
            for seed in range(3):
                log_run(
                    client,
                    exp,
                    f"{alg}-{task}-{seed}",
                    tags=convention(alg, task, seed),
                    metrics={"rl_reliable_final_score": float(rng.normal(mu, 1.0))},
                )
    table = mlflow_table("pilot", client_kwargs={"tracking_uri": uri})
    result = plan(table, metric="mean", compare=("DQN", "PPO"), runs=[3, 6], trials=20, sim_reps=100, seed=0)
    rows = result.table
    assert set(rows[rows["kind"] == "algorithm"]["algorithm"]) == {"PPO", "DQN"}
    assert rows[rows["kind"] == "pair"]["p_separate"].between(0, 1).all()
    widths = rows[rows["kind"] == "algorithm"].set_index(["algorithm", "n_runs"])["expected_width"]
    assert widths[("PPO", 6)] < widths[("PPO", 3)]


WANDB_WRITER = r"""
import sys, wandb
from rl_reliable_logger import log_final_score
root = sys.argv[1]
for algorithm, mu in (("ucb", 1.0), ("gradient", 2.0)):
    for task in ("easy", "hard"):
        for seed in (0, 1, 2):
            run = wandb.init(project="pilot", dir=root)
            log_final_score(mu + 0.1 * seed + (task == "hard"), algorithm=algorithm, task=task, seed=seed)
            run.finish()
"""


def test_plan_from_offline_wandb_runs(tmp_path):
    pytest.importorskip("wandb")
    from tests.support.paths import REPO
    from tests.support.wandb_env import wandb_env

    env = wandb_env(tmp_path)
    env["PYTHONPATH"] = str(REPO)
    subprocess.run([sys.executable, "-c", WANDB_WRITER, str(tmp_path)], env=env, check=True, timeout=300)
    table = wandb_table(offline_dir=tmp_path)  # the log_final_score convention: no field arguments
    result = plan(table, metric="mean", target_width=0.5, runs=[3, 5], trials=10, sim_reps=100, seed=0)
    assert set(result.table["algorithm"]) == {"ucb", "gradient"}
    assert set(result.needed) == {"ucb", "gradient"}
    assert set(result.launch["task"]) == {"easy", "hard"}


def test_plan_does_not_depend_on_the_order_the_runs_come_in():
    """A tracker lists runs in its own order (by start time, by id): the plan must not change with it."""
    import pandas as pd

    from rl_reliable_logger import ScoreTable

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        [
            {"algorithm": a, "task": t, "seed": s, "score": float(rng.normal(mu, 1.0))}
            for a, mu in (("A", 0.0), ("B", 1.0))
            for t in ("x", "y")
            for s in range(4)
        ]
    )
    shuffled = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    shuffled["seed"] = shuffled.groupby(["algorithm", "task"]).cumcount()  # other run ids, too
    kwargs = dict(metric="iqm", compare=("A", "B"), runs=[4, 6], trials=10, sim_reps=100, seed=0)
    one = plan(ScoreTable(frame), **kwargs).table
    other = plan(ScoreTable(shuffled), **kwargs).table
    assert one.equals(other)
