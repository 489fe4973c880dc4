"""The W&B offline loop: real offline runs of integrations/wandb/train.py, ``rl-reliable watch wandb --offline-dir``,
the next runs taken from the grid of the ``sweep.yaml`` the look wrote, until the watch exits 0.

Every W&B step runs in a subprocess with ``WANDB_MODE=offline`` in a temp dir (wandb's process-wide settings never
leak into other tests); the training subprocess runs each grid point with the arguments ``wandb agent`` gives the
sweep's ``command`` (``--algorithm=ucb --task=bandit-easy --seed=3``).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support.paths import REPO
from tests.support.wandb_env import wandb_env

pytest.importorskip("wandb")
yaml = pytest.importorskip("yaml")

AGENT = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
sys.path.insert(0, os.path.join(os.environ["RL_REPO"], "integrations", "wandb"))
import train
for argv in json.loads(sys.argv[1]):
    train.main(argv + ["--steps", "120", "--project", "bandits"])
"""


def _agent(env: dict[str, str], grid: dict[str, list]) -> int:
    """Run every point of ``grid`` (parameter -> values) as ``wandb agent`` would: ``--name=value`` arguments."""
    names = list(grid)
    points = [[f"--{n}={v}" for n, v in zip(names, values)] for values in itertools.product(*grid.values())]
    subprocess.run([sys.executable, "-c", AGENT, json.dumps(points)], env=env, check=True, timeout=300)
    return len(points)


def _watch(env: dict[str, str], root: Path, state: Path, *more: str) -> subprocess.CompletedProcess:
    argv = ["watch", "wandb", "--offline-dir", str(root), "--state", str(state), "--looks", "2", "--max-runs", "6"]
    argv += ["--reps", "300", "--seed", "0", "--normalize", "already-normalized", "--publish", "group", "--no-figures"]
    return subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger.cli", *argv, *more],
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_offline_loop_runs_the_sweep_grids_until_the_watch_stops(tmp_path: Path) -> None:
    root, state = tmp_path / "runs", tmp_path / "watch"
    env = wandb_env(root)
    trained = _agent(env, {"algorithm": ["ucb", "gradient"], "task": ["bandit-hard"], "seed": [0, 1, 2]})
    codes = []
    while True:
        done = _watch(env, root, state)
        codes.append(done.returncode)
        assert done.returncode in (0, 3), done.stderr[-2000:]
        assert "published to W&B" in done.stderr, done.stderr[-2000:]
        if done.returncode == 0:
            break
        sweeps = sorted(state.glob("sweep*.yaml"))
        assert sweeps, "a look that needs runs writes the sweep grid"
        planned = pd.read_csv(state / "launch.csv")["add_runs"].sum()
        for path in sweeps:
            sweep = yaml.safe_load(path.read_text())
            assert sweep["method"] == "grid" and sweep["program"] == "train.py"
            assert set(sweep["parameters"]) == {"algorithm", "task", "seed"}  # the parameters train.py takes
            trained += _agent(env, {name: spec["values"] for name, spec in sweep["parameters"].items()})
            planned -= len(list(itertools.product(*(s["values"] for s in sweep["parameters"].values()))))
        assert planned == 0, "the grids hold exactly the listed runs"
        assert len(codes) < 3
    assert codes == [3, 0] and trained == 12  # look 1 at 3 runs per cell, look 2 at the maximum, 6
    decisions = pd.read_csv(state / "decisions.csv")
    assert list(decisions[["algorithm_x", "algorithm_y"]].iloc[0]) == ["gradient", "ucb"]
    assert "stop:" in done.stdout

    again = _watch(env, root, state)  # the same runs: the recorded look, and the same report (nothing new)
    assert again.returncode == 0 and "no look spent" in again.stdout
    assert "already published" in again.stderr, again.stderr[-2000:]
    # (a changed design through a tracker is refused before anything is recorded: the MLflow loop's test)
