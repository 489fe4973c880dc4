"""End to end on a real MLflow store (SQLite): tune epsilon-greedy's exploration rate by racing. Train the first
look's seeds of every rate x task with the integrations/mlflow bandits, run ``rl-reliable race mlflow``, train
exactly the runs of its ``mlflow-params.txt``, and loop (``integrations/mlflow/watch_loop.run_loop``, the
project's ``race`` step's loop) until it exits 0 with a selection.

The training runs are the project's own learner called in this process (what ``mlflow run -e train -P ...``
runs, without a process per run). Each look is published as a new analysis run, which the next look's source
skips; no source run is ever written to.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

import rl_reliable_logger
from rl_reliable_logger.trackers.mlflow.source import ANALYSIS_ROLE, ROLE_TAG
from tests.support.mlflow_store import REPO, make_store, mlflow, use_store

PROJECT = REPO / "integrations" / "mlflow"
RATES, TASKS = ("0.01", "0.05", "0.2", "0.5"), ("bernoulli-10", "gaussian-5")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"mlflow_bandits_{name}", PROJECT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    uri = make_store(tmp_path)
    monkeypatch.chdir(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("bandits")
        yield uri


def _artifacts(client, run_id: str, path: str) -> list[str]:
    out = []
    for f in client.list_artifacts(run_id, path):
        out += _artifacts(client, run_id, f.path) if f.is_dir else [f.path]
    return out


def _argv(uri: str, state: Path, *more: str) -> list[str]:
    return [
        "race", "mlflow", "--tracking-uri", uri, "--experiment", "bandits", "--state", str(state),
        "--looks", "3", "--max-runs", "8", "--hyperparameter-keys", "params.epsilon", "--delta", "0.2",
        "--reps", "500", "--seed", "0", "--normalize", "already-normalized", "--publish", "new", "--no-figures", *more,
    ]  # fmt: skip


@pytest.mark.slow
def test_the_race_loop_trains_races_launches_and_selects(store: str, tmp_path: Path, capsys) -> None:
    import yaml

    train = _module("train")
    run_loop = _module("watch_loop").run_loop
    entry = yaml.safe_load((PROJECT / "MLproject").read_text())["entry_points"]
    state = tmp_path / "race"

    def launch(params: dict[str, str]) -> None:
        """What `mlflow run integrations/mlflow -e train -P ...` does, in this process."""
        assert set(params) == {"algorithm", "epsilon", "task", "seed"} <= set(entry["train"]["parameters"])
        seed, epsilon = int(float(params["seed"])), float(params["epsilon"])
        score, _ = train.run_bandit(params["algorithm"], params["task"], seed, 300, epsilon=epsilon)
        with mlflow.start_run(run_name=f"eps{params['epsilon']}-{params['task']}-s{seed}"):
            mlflow.log_params({**params, "steps": 300})
            rl_reliable_logger.log_final_score(score, algorithm=params["algorithm"], task=params["task"], seed=seed)

    for rate in RATES:
        for task in TASKS:
            for seed in range(3):  # the first look's planned runs: ⌈8 / 3⌉
                launch({"algorithm": "epsilon_greedy", "epsilon": rate, "task": task, "seed": str(seed)})
    launched: list[dict[str, str]] = []

    def recorded(params: dict[str, str]) -> None:
        launched.append(params)
        launch(params)

    code = run_loop(_argv(store, state), recorded, state=str(state), rounds=3)
    out = capsys.readouterr()
    looks = [line for line in out.out.splitlines() if line.startswith("look ")]
    assert code == 0 and 1 <= len(looks) <= 3, out.err
    assert out.err.count("published to MLflow") == len(looks)  # every look, as an analysis run
    assert "stop: every algorithm's race selected a configuration" in out.out
    selected = pd.read_csv(state / "selected.csv")
    assert selected["algorithm"].tolist() == ["epsilon_greedy"] and selected["params.epsilon"].tolist()[0] in (
        0.01,
        0.05,
        0.2,
    )  # within 0.2 of the best rate (0.01 and 0.05 score about 0.85 and 0.81, 0.2 0.76, 0.5 0.53)
    assert 0.5 in set(pd.read_csv(state / "eliminated.csv")["params.epsilon"])
    if len(looks) > 1:  # the runs launched between looks: new seeds of configurations still racing
        assert (
            launched and all(int(p["seed"]) >= 3 for p in launched) and {p["epsilon"] for p in launched} <= set(RATES)
        )
    # the same runs again: the recorded look, nothing spent, the same report (nothing new published)
    assert rl_reliable_logger.cli.main.main(_argv(store, state)) == 0
    again = capsys.readouterr()
    assert "no look spent" in again.out and "already published to MLflow" in again.err
    client = mlflow.MlflowClient(store)
    exp = client.get_experiment_by_name("bandits").experiment_id
    analysis = client.search_runs([exp], f"tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}'", order_by=["start_time DESC"])
    assert len(analysis) == len(looks)
    # the last look's report: the selected rate's runs, labelled as tuned by the race, and the race's tables
    files = _artifacts(client, analysis[0].info.run_id, "rl_reliable")
    assert any(p.endswith("/race.csv") for p in files) and any(p.endswith("/race_eliminated.csv") for p in files)
    aggregates = next(p for p in files if p.endswith("/aggregates.csv"))
    published = pd.read_csv(client.download_artifacts(analysis[0].info.run_id, aggregates, str(tmp_path)))
    rate = selected["params.epsilon"].iat[0]
    assert set(published["algorithm"]) == {f"epsilon_greedy (tuned by race: params.epsilon={rate:g})"}
    # the race's frozen design is a param of the analysis run, beside the options (delta changes the selection)
    params = analysis[0].data.params
    assert params["rl_reliable.design.kind"] == "race" and params["rl_reliable.design.delta"] == "0.2"
    assert params["rl_reliable.design.keys"] == "params.epsilon" and params["rl_reliable.design.looks"] == "3"
    assert params["rl_reliable.reps"] == "500"
    sources = client.search_runs([exp], "tags.rl_reliable_algorithm != ''", max_results=1000)
    assert len(sources) == 24 + len(launched)  # no run was added or written to but the trained ones
