"""A state whose ``looks.json`` was edited and its manifest rewritten to match (a consistent edit, not a corrupt
file): every recorded look's cells must be the design's, else the one-line refusal (exit 2), never a KeyError or a
look taken on a history that no longer says what ran."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger as rl
from rl_reliable_logger.errors import InputError
from tests.support.cli import run_cli
from tests.support.ledger_edits import edit_looks

WATCH = ["--looks", "3", "--max-runs", "9", "--reps", "200"]
RACE = {"looks": 3, "max_runs": 9, "hyperparameter_keys": ["lr"], "reps": 200, "seed": 0}


def _scores(path: Path, runs: int) -> Path:
    rows = [
        (a, f"t{t}", k, float(np.random.default_rng([ord(a), t, k]).normal(t, 1.0)))
        for a in "AB"
        for t in range(2)
        for k in range(runs)
    ]
    pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]).to_csv(path, index=False)
    return path


def _edit(state: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    edit_looks(state, lambda looks: edit(looks[-1]))


EDITS = {
    "counts emptied": (lambda look: look.update(counts={}), "look 1's counts do not hold the cell ('A', 't0')"),
    "a cell's count": (lambda look: look["counts"]["B"].update(t1=1), "look 1's count of the cell ('B', 't1') is 1"),
    "a cell's runs": (lambda look: look["runs"]["A"].update(t0=[]), "look 1's runs of the cell ('A', 't0') are not"),
    "a count as text": (lambda look: look["counts"]["A"].update(t0="3"), "look 1's count of the cell ('A', 't0')"),
    "runs emptied": (lambda look: look.update(runs={"A": 1}), "look 1's runs do not hold the cell ('A', 't0')"),
    "a launch row": (lambda look: look["launch"].append({"task": "t9"}), "look 1's launch list has a row"),
}


@pytest.mark.parametrize("name", EDITS)
def test_a_watch_state_with_edited_cells_is_refused_in_one_line(tmp_path: Path, capsys, name: str) -> None:
    state = tmp_path / "state"
    code, _, err = run_cli(capsys, "watch", _scores(tmp_path / "one.csv", 3), "--state", state, *WATCH)
    assert code == 3, err
    edit, problem = EDITS[name]
    _edit(state, edit)
    code, out, err = run_cli(capsys, "watch", _scores(tmp_path / "two.csv", 6), "--state", state, *WATCH)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: {state / 'looks.json'}: {problem}"), err
    assert err.endswith("; the watch state was edited, start a new state folder\n"), err


def _sweep(runs: int) -> pd.DataFrame:
    rows = [
        {
            "algorithm": "ppo",
            "lr": lr,
            "task": t,
            "seed": s,
            "score": float(np.random.default_rng([ord(t), s]).normal()),
        }
        for lr in (0.1, 0.2)
        for t in "ab"
        for s in range(runs)
    ]
    return pd.DataFrame(rows)


def test_a_race_state_with_its_counts_emptied_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "race"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rl.ReliabilityWarning)
        first = rl.race(_sweep(3), state, **RACE)
        assert not first.stop
        _edit(state, lambda look: look.update(counts={}))
        with pytest.raises(
            InputError, match=r"looks.json: look 1's counts do not hold the cell \('ppo \[lr=0.1\]', 'a'\)"
        ):
            rl.race(_sweep(4).iloc[1:], state, **RACE)  # fewer runs than look 1 in one cell: never taken as a look
