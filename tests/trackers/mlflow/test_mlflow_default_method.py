"""The default interval method reaches MLflow: a default evaluate() published to a real SQLite store records
``rl_reliable.method`` = bootstrap-t (issue 33), and an explicit percentile analysis records percentile."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import PublishOptions, ScoreTable, evaluate
from rl_reliable_logger.trackers.mlflow.sink import publish_mlflow
from tests.support.mlflow_store import make_store, mlflow


@pytest.fixture(scope="module")
def store_uri(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("mlflow-default-method"))


def _table() -> ScoreTable:
    rng = np.random.default_rng(3)
    rows = [
        {"algorithm": alg, "task": task, "seed": s, "score": float(a + rng.normal(0, 0.3))}
        for a, alg in enumerate(("PPO", "DQN"))
        for task in ("Pong", "Breakout")
        for s in range(3)
    ]
    return ScoreTable(pd.DataFrame(rows))


@pytest.mark.parametrize(("extra", "expected"), [({}, "bootstrap-t"), ({"method": "percentile"}, "percentile")])
def test_the_method_param_is_the_one_the_analysis_used(store_uri, request, extra, expected):
    report = evaluate(_table(), reps=200, profile_reps=50, improvement_reps=50, seed=0, **extra)
    assert report.provenance["intervals"]["aggregates"]["method"] == expected
    name = request.node.name
    run_id = publish_mlflow(
        report, tracking_uri=store_uri, experiment=name, publishing=PublishOptions(figures=False)
    ).target
    params = mlflow.MlflowClient(store_uri).get_run(run_id).data.params
    assert params["rl_reliable.method"] == expected
