"""A race's first look: 2 runs per cell is warned of (on bimodal scores it dropped the true best configuration in 7%
of small races, issue 54), and ``first_runs=`` (``--first-runs``) asks for a bigger first look, frozen with the
design."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger as rl
from rl_reliable_logger.errors import InputError
from tests.support.cli import run_cli

RACE = {"looks": 3, "max_runs": 9, "hyperparameter_keys": ["lr"], "reps": 200, "seed": 0}


def _sweep(runs: int) -> pd.DataFrame:
    rows = [
        {
            "algorithm": "ppo",
            "lr": lr,
            "task": task,
            "seed": s,
            "score": float(np.random.default_rng([ord(task), s]).normal()),
        }
        for lr in (0.1, 0.2, 0.3)
        for task in ("a", "b")
        for s in range(runs)
    ]
    return pd.DataFrame(rows)


def _notes(frame: pd.DataFrame, state: Path, **more: object) -> tuple[rl.RaceResult, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = rl.race(frame, state, **{**RACE, **more})
    return result, [str(w.message) for w in seen if issubclass(w.category, rl.ReliabilityWarning)]


def test_a_first_look_of_two_runs_per_cell_warns_and_names_the_option(tmp_path: Path) -> None:
    result, notes = _notes(_sweep(2), tmp_path / "race")
    assert result.look == 1
    said = [n for n in notes if "first look" in n]
    assert len(said) == 1 and "2 runs in 6 of its 6 cells" in said[0] and "7% of races" in said[0]
    assert "`first_runs=3`" in said[0]


def test_a_first_look_of_three_runs_says_nothing_of_it(tmp_path: Path) -> None:
    _, notes = _notes(_sweep(3), tmp_path / "race")
    assert not [n for n in notes if "first look" in n]


def test_first_runs_refuses_a_smaller_first_look_and_is_frozen_with_the_design(tmp_path: Path) -> None:
    state = tmp_path / "race"
    with pytest.raises(
        InputError, match=r"at least 3 runs per cell \(`first_runs=3`\), but cell \('ppo \[lr=0.1\]', 'a'\) has 2"
    ):
        rl.race(_sweep(2), state, **RACE, first_runs=3)
    assert not state.exists() or not any(state.iterdir())  # no look was spent
    result, notes = _notes(_sweep(3), state, first_runs=3)
    assert result.look == 1 and not [n for n in notes if "first look" in n]
    assert json.loads((state / "design.json").read_text())["first_runs"] == 3
    with pytest.raises(InputError, match="`first_runs=` was 3 at the first look, now 2"):
        rl.race(_sweep(3), state, **RACE)


@pytest.mark.parametrize(("value", "match"), [(1, "at least 2"), (10, "more than `max_runs=9`"), (2.5, "integer")])
def test_first_runs_is_checked_by_its_declaration(tmp_path: Path, value: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        rl.race(_sweep(3), tmp_path / "race", **RACE, first_runs=value)


def test_the_flag_comes_from_the_declaration(tmp_path: Path, capsys) -> None:
    scores = tmp_path / "sweep.csv"
    _sweep(2).to_csv(scores, index=False)
    flags = ["--looks", "3", "--max-runs", "9", "--hyperparameter-keys", "lr", "--reps", "200"]
    with pytest.raises(SystemExit):
        run_cli(capsys, "race", "file", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert "--first-runs N" in out and "7% of small races" in out and "(default: 2)" in out
    code, _, err = run_cli(capsys, "race", scores, "--state", tmp_path / "a", *flags, "--first-runs", "3")
    assert code == 2 and "(`first_runs=3`)" not in err and "--first-runs 3" in err
    code, out, err = run_cli(capsys, "race", scores, "--state", tmp_path / "b", *flags)
    assert code == 3 and "--first-runs 3" in out + err
