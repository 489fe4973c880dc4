"""``race()``: a race recorded in a state folder, with the watch's ledger, replay, refusals and launch files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rl_reliable_logger import InputError, race
from rl_reliable_logger.store.kinds import BundleError
from rl_reliable_logger.trackers.mlflow.launch import read_mlflow_lines

LRS = (0.0003, 0.001, 0.003, 0.01)
SHIFT = {0.0003: -0.25, 0.001: 0.0, 0.003: -0.1, 0.01: -2.0}
TASKS = ("ant", "hopper", "walker")


def _pool(seed: int = 0) -> dict[tuple[float, str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        (lr, t): 1.0 + 0.4 * m + SHIFT[lr] + 0.3 * rng.standard_normal(12) for lr in LRS for m, t in enumerate(TASKS)
    }


def _frame(pool, runs: pd.DataFrame) -> pd.DataFrame:
    scores = [float(pool[(r.lr, r.task)][int(r.seed)]) for r in runs.itertuples(index=False)]
    return runs.assign(algorithm="ppo", score=scores)[["algorithm", "lr", "task", "seed", "score"]]


def _first(pool, n: int = 2) -> pd.DataFrame:
    runs = pd.DataFrame([{"lr": lr, "task": t, "seed": s} for lr in LRS for t in TASKS for s in range(n)])
    return _frame(pool, runs)


ARGS = {"looks": 5, "max_runs": 10, "hyperparameter_keys": ["lr"], "delta": 0.2, "reps": 400}


def test_a_race_loops_on_its_launch_files_until_it_selects(tmp_path: Path) -> None:
    pool, state = _pool(), tmp_path / "race"
    frame = _first(pool)
    first = race(frame, state, **ARGS)
    assert first.look == 1 and not first.stop and first.best is None
    assert {"design.json", "looks.json", "launch.csv", "runs.csv", "mlflow-params.txt", "sweep.yaml"} <= {
        p.name for p in state.iterdir()
    }
    runs = pd.read_csv(state / "runs.csv")
    assert list(runs.columns) == ["algorithm", "lr", "task", "seed"] and set(runs["seed"]) == {2, 3}
    assert 0.01 not in set(runs["lr"])  # the diverged rate was eliminated at the first look
    sets = read_mlflow_lines((state / "mlflow-params.txt").read_text().splitlines())
    assert {tuple(sorted(s)) for s in sets} == {("algorithm", "lr", "seed", "task")} and len(sets) == len(runs)
    grids = [yaml.safe_load(p.read_text()) for p in sorted(state.glob("sweep*.yaml"))]
    listed = {
        (float(lr), t, int(s))
        for g in grids
        for lr in g["parameters"]["lr"]["values"]
        for t in g["parameters"]["task"]["values"]
        for s in g["parameters"]["seed"]["values"]
    }
    assert listed == {(float(r.lr), r.task, int(r.seed)) for r in runs.itertuples()}  # exactly the listed runs
    result = first
    while not result.stop:
        frame = pd.concat([frame, _frame(pool, pd.read_csv(state / "runs.csv"))], ignore_index=True)
        result = race(frame, state, **ARGS)
    assert result.best == {"algorithm": "ppo", "lr": 0.001}
    sel = result.selected.iloc[0]
    assert sel["low"] <= sel["point"] <= sel["high"] and sel["regret"] <= 0.2 or sel["reason"] == "last look"
    assert len(json.loads((state / "looks.json").read_text())) == result.look
    assert pd.read_csv(state / "selected.csv")["lr"].tolist() == [0.001]
    # the same scores again: the recorded look, nothing spent
    again = race(frame, state, **ARGS)
    assert again.replayed and again.look == result.look


def test_the_design_cannot_change_and_a_watch_folder_is_no_race_state(tmp_path: Path) -> None:
    from rl_reliable_logger import ScoreTable, watch

    pool = _pool(1)
    frame = _first(pool, 3)
    race(frame, tmp_path / "race", **ARGS)
    with pytest.raises(InputError, match="cannot change: `delta=` was 0.2 at the first look, now 0.1"):
        race(frame, tmp_path / "race", **{**ARGS, "delta": 0.1})
    with pytest.raises(InputError, match="cannot change: the configurations changed since the first look"):
        race(frame[frame["lr"] != 0.0003], tmp_path / "race", **ARGS)
    watched = frame.assign(algorithm=frame["lr"].astype(str)).drop(columns="lr")
    watch(ScoreTable(watched), tmp_path / "watch", looks=3, max_runs=9, reps=200)
    with pytest.raises(BundleError, match="is not a race state folder"):
        race(frame, tmp_path / "watch", **ARGS)
    with pytest.raises(InputError, match="launch parameter name"):
        race(frame, tmp_path / "new", **ARGS, launch_parameters={"lr": "learning rate"})
    assert not (tmp_path / "new").exists()


def test_a_race_ledger_whose_looks_were_emptied_is_refused(tmp_path: Path) -> None:
    """An emptied history (manifest re-hashed to match) is never read as a new race: look 1 again would spend alpha
    twice."""
    import hashlib

    frame = _first(_pool(2), 3)
    race(frame, tmp_path / "race", **ARGS)
    looks, manifest = tmp_path / "race" / "looks.json", tmp_path / "race" / "manifest.json"
    data = b"[]\n"
    looks.write_bytes(data)
    entries = json.loads(manifest.read_text())
    for entry in entries["files"]:
        if entry["path"] == "looks.json":
            entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    manifest.write_text(json.dumps(entries, indent=1) + "\n")
    with pytest.raises(BundleError, match="holds no look; the race state was edited, start a new state folder"):
        race(frame, tmp_path / "race", **ARGS)
