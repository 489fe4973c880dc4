"""``rl-reliable race INPUT``: a first look at 2 runs per cell exits 3 with a launch list; the loop on its launch
files ends with exit 0 and a selection; bad flags are one line and exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.cli import run_cli

LRS = (0.0001, 0.0003, 0.001, 0.003, 0.01)
SHIFT = {0.0001: -0.3, 0.0003: -0.05, 0.001: 0.0, 0.003: -0.15, 0.01: -1.5}


def _score(lr: float, task: str, seed: int) -> float:
    rng = np.random.default_rng([int(lr * 1e5), int(task[1:]), seed])
    return float(1.0 + 0.3 * int(task[1:]) + SHIFT[lr] + 0.3 * rng.standard_normal())


def _rows(runs: pd.DataFrame) -> pd.DataFrame:
    return runs.assign(score=[_score(r.lr, r.task, int(r.seed)) for r in runs.itertuples(index=False)])


FLAGS = ["--looks", "5", "--max-runs", "10", "--hyperparameter-keys", "lr", "--delta", "0.1", "--reps", "600"]


def _same_decimals(out: str) -> None:
    """Every interval bound of a look prints with the same number of decimals (issue 45: consistent digits)."""
    bounds = re.findall(r"\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]", out)
    decimals = {len(b.partition(".")[2]) for pair in bounds for b in pair}
    assert bounds and len(decimals) == 1, (decimals, out)


def test_a_first_look_at_two_runs_exits_3_and_the_loop_ends_with_a_selection(tmp_path: Path, capsys) -> None:
    first = pd.DataFrame(
        [{"algorithm": "ppo", "lr": lr, "task": f"t{m}", "seed": s} for lr in LRS for m in range(6) for s in range(2)]
    )
    scores, state = tmp_path / "sweep.csv", tmp_path / "state"
    frame = _rows(first)
    frame.to_csv(scores, index=False)
    code, out, err = run_cli(capsys, "race", scores, "--state", state, *FLAGS)
    assert code == 3, err
    assert out.startswith("look 1 of 5; iqm, delta 0.1, alpha 0.05 over all looks")
    assert "eliminated at look 1: lr=0.01" in out and "launch " in out and "lr=0.001: +2 in each of its 6 tasks" in out
    named = out.splitlines()[-2:]  # the console names every file the look wrote that a user opens next
    assert named[0].startswith("launch files: ") and named[1].startswith("race tables: ")
    for name in ("runs.csv", "sweep.yaml", "mlflow-params.txt", "selected.csv", "alive.csv", "eliminated.csv"):
        assert str(state / name) in "\n".join(named) and (state / name).is_file(), name
    _same_decimals(out)
    launched = pd.read_csv(state / "runs.csv")
    assert list(launched.columns) == ["algorithm", "lr", "task", "seed"] and set(launched["seed"]) == {2, 3}
    for _ in range(4):
        frame = pd.concat([frame, _rows(pd.read_csv(state / "runs.csv"))], ignore_index=True)
        frame.to_csv(scores, index=False)
        code, out, err = run_cli(capsys, "race", "file", scores, "--state", state, *FLAGS)
        if code != 3:
            break
    assert code == 0, err
    assert "selected lr=0.001" in out and "valid after selection" in out
    assert "stop: every algorithm's race selected a configuration" in out
    assert out.rstrip().splitlines()[-1].startswith(f"race tables: {state / 'selected.csv'} (")
    _same_decimals(out)
    assert pd.read_csv(state / "selected.csv")["lr"].tolist() == [0.001]
    code, out, _ = run_cli(capsys, "race", scores, "--state", state, *FLAGS)  # the same scores: replayed
    assert code == 0 and "no look spent" in out


def test_bad_flags_are_one_line_with_exit_2(tmp_path: Path, capsys) -> None:
    scores = tmp_path / "sweep.csv"
    _rows(
        pd.DataFrame([{"algorithm": "ppo", "lr": lr, "task": "t1", "seed": s} for lr in LRS for s in range(2)])
    ).to_csv(scores, index=False)
    code, _, err = run_cli(capsys, "race", scores, "--state", tmp_path / "s", "--looks", "5", "--max-runs", "10")
    assert code == 2 and err.count("\n") == 1 and "--hyperparameter-keys is required" in err
    code, _, err = run_cli(capsys, "race", scores, "--state", tmp_path / "s", *FLAGS[:-4], "--delta", "-1")
    assert code == 2 and err.count("\n") == 1 and "--delta" in err and "`delta=`" not in err
    code, _, err = run_cli(
        capsys, "race", scores, "--state", tmp_path / "s", *FLAGS[:4], "--hyperparameter-keys", "gamma"
    )
    assert code == 2 and err.count("\n") == 1 and "'gamma'" in err
    assert not (tmp_path / "s").exists()


def test_a_race_that_no_runs_can_change_stops_for_futility_and_says_it_is_not_within_delta(
    tmp_path: Path, capsys
) -> None:
    """Issue 55: a leader well ahead of four equal rivals that cannot overtake it and are unlikely to be shown
    within δ by the last look: the race stops at its first look (exit 0), selects the leader and says why and that
    its bound is not within delta."""
    base = np.random.default_rng(3).normal(0.0, 0.5, (5, 4))
    base -= base.mean(axis=1, keepdims=True)  # every configuration's runs the same, shifted: its IQM is its shift
    shifts = {1: 0.0, 2: -0.4, 3: -0.4, 4: -0.4, 5: -0.4}
    rows = [
        {"algorithm": "ppo", "lr": lr, "task": f"t{m}", "seed": s, "score": float(m + base[m, s] + shift)}
        for lr, shift in shifts.items()
        for m in range(5)
        for s in range(4)
    ]
    scores = tmp_path / "sweep.csv"
    pd.DataFrame(rows).to_csv(scores, index=False)
    flags = ["--looks", "3", "--max-runs", "12", "--hyperparameter-keys", "lr", "--delta", "0.01", "--reps", "2000"]
    code, out, err = run_cli(capsys, "race", scores, "--state", tmp_path / "state", *flags)
    assert code == 0, err
    line = next(x for x in out.splitlines() if "selected lr=1" in x)
    assert "(futility, look 1)" in line and "no more runs could change it: at most " in line
    assert line.split("no more runs could change it: at most ")[1].split(" below the best, not within delta")[0]
    assert pd.read_csv(tmp_path / "state" / "selected.csv")["reason"].tolist() == ["futility"]
