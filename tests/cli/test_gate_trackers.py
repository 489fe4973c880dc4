"""A gate stream on a tracker: ``rl-reliable gate mlflow|wandb`` reads the candidate's and the incumbent's runs with
the tracker's source flags and publishes each look as an analysis run whose name says the verdict and whose tables
hold the stream (candidates, verdicts, intervals) — on a real MLflow SQLite store and real W&B offline runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.paths import REPO


def _score(name: str, seed: int) -> float:
    shift = {"lr-3e-4": 3.0, "base": 0.0}[name]
    return float(10 + shift + np.random.default_rng([seed, len(name)]).normal(0, 0.5))


# ----------------------------------------------------------------------------- MLflow
def test_a_gate_look_on_mlflow_is_published_with_the_stream(tmp_path: Path, monkeypatch, capsys) -> None:
    from rl_reliable_logger import log_final_score
    from rl_reliable_logger.cli.main import main
    from rl_reliable_logger.trackers.mlflow.source import ANALYSIS_ROLE, ROLE_TAG
    from tests.support.mlflow_store import make_store, mlflow, use_store

    uri = make_store(tmp_path)
    monkeypatch.chdir(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("loop")
        for name in ("lr-3e-4", "base"):
            for seed in range(3):
                with mlflow.start_run(run_name=f"{name}-s{seed}"):
                    log_final_score(_score(name, seed), algorithm=name, task="cartpole", seed=seed)
        argv = ["gate", "mlflow", "--tracking-uri", uri, "--experiment", "loop", "--incumbent", "base",
                "--name", "lr-3e-4", "--state", str(tmp_path / "gate"), "--min-effect", "0.5", "--publish", "new",
                "--no-figures"]  # fmt: skip
        code = main(argv)
        out = capsys.readouterr()
        assert code == 3, out.err[-2000:]
        assert out.out.startswith("run_more: lr-3e-4 against base") and "published to MLflow" in out.err
        client = mlflow.MlflowClient(uri)
        exp = client.get_experiment_by_name("loop").experiment_id
        (analysis,) = client.search_runs([exp], f"tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}'")
        assert "run_more · lr-3e-4" in analysis.info.run_name  # the verdict at a glance in the runs list
        files = _artifacts(client, analysis.info.run_id, "rl_reliable")
        table = next(p for p in files if p.endswith("/bundle/gate.csv"))
        local = client.download_artifacts(analysis.info.run_id, table, str(tmp_path / "dl"))
        stream = pd.read_csv(local)
        assert list(stream["name"]) == ["lr-3e-4"] and list(stream["verdict"]) == ["run_more"]
        params = analysis.data.params
        design = {k.removeprefix("rl_reliable.design."): v for k, v in params.items() if ".design." in k}
        assert design["kind"] == "gate" and design["min_effect"] == "0.5" and design["max_seeds"] == "10", design
        # the next look's source skips the analysis run; the same runs again replay the verdict
        assert main(argv) == 3
        assert "the same scores as a recorded look" in capsys.readouterr().out


def _artifacts(client, run_id: str, path: str) -> list[str]:
    out = []
    for f in client.list_artifacts(run_id, path):
        out += _artifacts(client, run_id, f.path) if f.is_dir else [f.path]
    return out


# ----------------------------------------------------------------------------- W&B offline
LOG = r"""
import os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import wandb
from rl_reliable_logger import log_final_score
for name, seed, score in [tuple(x.split(":")) for x in sys.argv[1:]]:
    run = wandb.init(project="loop", name=f"{name}-s{seed}", config={"algorithm": name, "seed": int(seed)})
    log_final_score(float(score), algorithm=name, task="cartpole", seed=int(seed))
    run.finish()
"""


def test_a_gate_look_on_wandb_offline_runs_is_published_with_the_stream(tmp_path: Path) -> None:
    pytest.importorskip("wandb")
    from rl_reliable_logger.trackers.wandb import offline as off
    from tests.support.wandb_env import wandb_env

    root = tmp_path / "runs"
    env = wandb_env(root)
    runs = [f"{n}:{s}:{_score(n, s)}" for n in ("lr-3e-4", "base") for s in range(3)]
    subprocess.run([sys.executable, "-c", LOG, *runs], env=env, check=True, timeout=300, capture_output=True)
    argv = ["gate", "wandb", "--offline-dir", str(root), "--incumbent", "base", "--name", "lr-3e-4", "--state",
            str(tmp_path / "gate"), "--min-effect", "0.5", "--publish", "group", "--no-figures", "--json"]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "rl_reliable_logger.cli", *argv], env={**env, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 3, done.stderr[-2000:]
    assert json.loads(done.stdout)["verdict"] == "run_more" and "published to W&B" in done.stderr
    published = [r for r in off.read_offline_runs(root) if any(k.startswith("tables/gate") for k in r.summary)]
    assert published, "the analysis run logs the stream's table"
    run = published[0]
    assert "run_more · lr-3e-4" in str(run.name)
    design = {k.removeprefix("rl_reliable.design."): v for k, v in run.config.items() if ".design." in k}
    assert design["kind"] == "gate" and design["min_effect"] == 0.5, design
