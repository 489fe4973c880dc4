"""plan() on scores read from a tracker: a real MLflow SQLite store (no mocks)."""

from __future__ import annotations

import numpy as np

from rl_reliable_logger import plan
from rl_reliable_logger.trackers.mlflow.adapter import mlflow_table
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
    table = mlflow_table("pilot", tracking_uri=uri)
    result = plan(table, metric="mean", compare=("DQN", "PPO"), runs=[3, 6], trials=20, sim_reps=100, seed=0)
    rows = result.table
    assert set(rows[rows["kind"] == "algorithm"]["algorithm"]) == {"PPO", "DQN"}
    assert rows[rows["kind"] == "pair"]["p_separate"].between(0, 1).all()
    widths = rows[rows["kind"] == "algorithm"].set_index(["algorithm", "n_runs"])["expected_width"]
    assert widths[("PPO", 6)] < widths[("PPO", 3)]
