"""End to end on a real MLflow store (SQLite): train k seeds per cell with the integrations/mlflow bandits, watch,
launch the listed runs from ``mlflow-params.txt``, and loop until ``rl-reliable watch mlflow`` exits 0 (decided).

The training runs are the project's own ``train`` entry point, called in this process (the same code
``mlflow run -e train -P ...`` runs, without a process per run). Each look is published as a new analysis
run in the experiment, which the next look's source skips; no source run is ever written to.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import rl_reliable_logger
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.mlflow.launch import read_mlflow_lines
from rl_reliable_logger.trackers.mlflow.source import ANALYSIS_ROLE, ROLE_TAG
from tests.support.mlflow_store import REPO, make_store, mlflow, use_store

PROJECT = REPO / "integrations" / "mlflow"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"mlflow_bandits_{name}", PROJECT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mlproject_train_parameters() -> set[str]:
    import yaml

    project = yaml.safe_load((PROJECT / "MLproject").read_text())
    return set(project["entry_points"]["train"]["parameters"])


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    uri = make_store(tmp_path)
    monkeypatch.chdir(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("bandits")
        yield uri


def _watch(uri: str, state: Path, *more: str) -> int:
    return main(_argv(uri, state, *more))


def _argv(uri: str, state: Path, *more: str) -> list[str]:
    return [
        "watch",
        "mlflow",
        "--tracking-uri",
        uri,
        "--experiment",
        "bandits",
        "--state",
        str(state),
        "--looks",
        "3",
        "--max-runs",
        "9",
        "--reps",
        "400",
        "--seed",
        "0",
        "--normalize",
        "already-normalized",
        "--publish",
        "new",
        "--no-figures",
        *more,
    ]


def _source_runs(uri: str) -> pd.DataFrame:
    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name("bandits").experiment_id
    runs = client.search_runs([exp], "tags.rl_reliable_algorithm != ''", max_results=1000)
    return pd.DataFrame(
        [{"id": r.info.run_id, "params": dict(r.data.params), "metrics": dict(r.data.metrics)} for r in runs]
    )


def test_the_loop_trains_watches_launches_and_stops_when_decided(store: str, tmp_path: Path, capsys) -> None:
    train, watch_loop = _module("train"), _module("watch_loop")
    state = tmp_path / "watch"

    def launch(params: dict[str, str]) -> None:
        """What `mlflow run integrations/mlflow -e train -P ...` does, in this process: the project's learner, then
        the one-line call (train.py also logs a 20-point curve, which the watch does not read)."""
        assert set(params) <= _mlproject_train_parameters()
        algorithm, task, seed = params["algorithm"], params["task"], int(float(params["seed"]))
        score, _ = train.run_bandit(algorithm, task, seed, 300)
        with mlflow.start_run(run_name=f"{algorithm}-{task}-s{seed}"):
            mlflow.log_params({**params, "steps": 300})
            rl_reliable_logger.log_final_score(score, algorithm=algorithm, task=task, seed=seed)

    for algorithm in ("ucb1", "thompson"):
        for task in ("bernoulli-10", "gaussian-5"):
            for seed in range(3):
                launch({"algorithm": algorithm, "task": task, "seed": str(seed)})

    launched: list[dict[str, str]] = []

    def recorded(params: dict[str, str]) -> None:
        launched.append(params)
        launch(params)

    code = watch_loop.run_loop(_argv(store, state), recorded, state=str(state), rounds=4)  # the example's loop
    out = capsys.readouterr()
    looks = [line for line in out.out.splitlines() if line.startswith("look ")]
    assert code == 0 and 2 <= len(looks) <= 3 and launched  # runs were launched between the looks
    assert out.err.count("published to MLflow") == len(looks)  # every look, as an analysis run
    assert all(int(p["seed"]) >= 3 for p in launched)  # new seeds only
    decided = pd.read_csv(state / "decisions.csv")
    assert list(decided["decision"]) == ["x>y"]  # thompson > ucb1 (pairs in name order: thompson - ucb1)
    assert "stop: every comparison is decided" in out.out

    # the same runs again: the recorded look, nothing spent, and the same report (nothing new published)
    runs_before = _source_runs(store)
    assert _watch(store, state) == 0
    again = capsys.readouterr()
    assert "no look spent" in again.out and "already published to MLflow" in again.err
    # a changed design is refused with one sentence, and nothing is recorded
    looks = (state / "looks.json").read_bytes()
    assert _watch(store, state, "--alpha", "0.1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot change" in err and "--alpha" in err
    assert (state / "looks.json").read_bytes() == looks
    # a source run as the publishing target is refused before a look is taken (nothing recorded)
    first = str(runs_before["id"].iloc[0])
    assert _watch(store, tmp_path / "other", "--publish", first) == 2
    assert "refusing to publish onto run" in capsys.readouterr().err and not (tmp_path / "other").exists()
    # publishing never wrote onto a source run; the analysis runs hold the decisions as a table
    after = _source_runs(store)
    assert sorted(after["id"]) == sorted(runs_before["id"])
    client = mlflow.MlflowClient(store)
    exp = client.get_experiment_by_name("bandits").experiment_id
    analysis = client.search_runs([exp], f"tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}'")
    assert analysis, "every look was published as an analysis run"
    files = _artifacts(client, analysis[0].info.run_id, "rl_reliable")
    assert any(p.endswith("/watch.csv") for p in files) and any(p.endswith("/watch_launch.csv") for p in files), files
    # the frozen design that made the decisions is a param of the analysis run, beside the options
    params = analysis[0].data.params
    design = {k.removeprefix("rl_reliable.design."): v for k, v in params.items() if ".design." in k}
    assert design["kind"] == "watch" and design["looks"] == "3" and design["alpha"] == "0.05", design
    assert {"max_runs", "metric", "spending", "futility"} <= set(design) and "tasks" not in design


def _artifacts(client, run_id: str, path: str) -> list[str]:
    out = []
    for f in client.list_artifacts(run_id, path):
        out += _artifacts(client, run_id, f.path) if f.is_dir else [f.path]
    return out


def test_launch_files_quote_untrusted_names(tmp_path: Path) -> None:
    """Names with quotes, spaces and YAML syntax survive `mlflow run -P` lines and the sweep YAML unchanged."""
    import yaml

    from rl_reliable_logger.looks.launch import launch_files

    names = ["it's; rm -rf ~", "a: [b, c] # d", "$(touch x)"]
    scores = pd.DataFrame({"algorithm": names, "task": ["t"] * 3, "seed": [0, 0, 0]})
    launch = pd.DataFrame({"algorithm": names, "task": ["t"] * 3, "add_runs": [2, 2, 2]})
    files = launch_files(scores, launch, {"algorithm": "algo"}, program="train.py")
    sets = read_mlflow_lines(files["mlflow-params.txt"].splitlines())
    assert sorted({s["algo"] for s in sets}) == sorted(names) and {s["seed"] for s in sets} == {"1", "2"}
    for line in files["mlflow-params.txt"].splitlines():  # what a shell loop passes to `mlflow run`
        echoed = subprocess.run(["bash", "-c", f"printf '%s\\n' {line}"], cwd=tmp_path, capture_output=True, text=True)
        assert echoed.stdout.splitlines() == shlex.split(line) and shlex.split(line)[0] == "-P"
    sweep = yaml.safe_load(files["sweep.yaml"])
    assert sweep["method"] == "grid" and sweep["program"] == "train.py"
    assert sweep["parameters"] == {
        "algo": {"values": sorted(names)},
        "task": {"values": ["t"]},
        "seed": {"values": [1, 2]},
    }
    assert not os.path.exists(tmp_path / "x")
