"""A look taken when runs the look before listed never arrived (a race after a kill; a watch when the user did not
launch what it asked): it says how many are missing, per configuration and task, and a race does not stop on such
a look unless asked (``stop_on_missing=True``, ``--stop-on-missing``)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger as rl
from rl_reliable_logger.errors import InputError
from tests.support.cli import run_cli

RACE = {"max_runs": 6, "hyperparameter_keys": ["lr"], "delta": 0.0, "reps": 200, "seed": 0}


def _score(lr: float, task: str, seed: int) -> float:
    rng = np.random.default_rng([ord(task), seed])  # the same noise for both: neither is shown worse early
    return float(1.0 + 0.001 * (lr == 0.1) + rng.standard_normal())


def _sweep(seeds: dict[float, range]) -> pd.DataFrame:
    rows = [
        {"algorithm": "ppo", "lr": lr, "task": task, "seed": s, "score": _score(lr, task, s)}
        for lr, kept in seeds.items()
        for task in ("a", "b")
        for s in kept
    ]
    return pd.DataFrame(rows)


def _look(frame: pd.DataFrame, state: Path, looks: int, **more: object) -> tuple[rl.RaceResult, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = rl.race(frame, state, looks=looks, **RACE, **more)
    return result, [str(w.message) for w in seen if issubclass(w.category, rl.ReliabilityWarning)]


def _first(state: Path, looks: int) -> rl.RaceResult:
    first, _ = _look(_sweep({0.1: range(3), 0.2: range(3)}), state, looks)
    assert not first.stop and set(first.launch["add_runs"]) == {3 if looks == 2 else 1}
    return first


def test_a_race_does_not_stop_on_a_look_that_lacks_listed_runs_unless_asked(tmp_path: Path) -> None:
    state = tmp_path / "race"
    _first(state, looks=2)  # the last look (2) stops every race
    lacking = _sweep({0.1: range(5), 0.2: range(6)})  # lr=0.1 got 2 of its 3 listed runs per task
    with pytest.raises(InputError) as err:
        _look(lacking, state, looks=2)
    message = str(err.value)
    assert "look 2 would stop the race of 'ppo'" in message and "stop_on_missing=True" in message
    assert "2 runs look 1 listed are missing at look 2: 'ppo [lr=0.1]' 2 ('a' 1, 'b' 1)" in message
    result, notes = _look(lacking, state, looks=2, stop_on_missing=True)
    assert result.stop and result.look == 2 and result.record["missing"] == {"ppo [lr=0.1]": {"a": 1, "b": 1}}
    assert any(
        "2 runs look 1 listed are missing at look 2" in n and "killed, failed or never launched" in n for n in notes
    )
    again, notes = _look(lacking, state, looks=2)  # a replay says it again, and needs no permission
    assert again.replayed and any("missing at look 2" in n for n in notes)


def test_a_look_that_does_not_stop_goes_on_and_says_what_is_missing(tmp_path: Path) -> None:
    state = tmp_path / "race"
    _first(state, looks=3)
    result, notes = _look(_sweep({0.1: range(4), 0.2: range(3)}), state, looks=3)
    assert result.look == 2 and not result.stop
    assert result.record["missing"] == {"ppo [lr=0.2]": {"a": 1, "b": 1}}
    assert [n for n in notes if "missing" in n] == [
        "2 runs look 1 listed are missing at look 2: 'ppo [lr=0.2]' 2 ('a' 1, 'b' 1) (killed, failed or never "
        "launched); the look used the runs that arrived, and its launch list counts from them"
    ]


def test_every_listed_run_arrived_says_nothing(tmp_path: Path) -> None:
    state = tmp_path / "race"
    _first(state, looks=3)
    result, notes = _look(_sweep({0.1: range(4), 0.2: range(4)}), state, looks=3)
    assert "missing" not in result.record and not [n for n in notes if "missing" in n]


def test_stop_on_missing_is_checked_by_its_declaration(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="stop_on_missing"):
        _look(_sweep({0.1: range(3), 0.2: range(3)}), tmp_path / "race", looks=2, stop_on_missing="yes")


def test_the_command_line_flag_lets_a_race_stop_on_a_look_that_lacks_runs(tmp_path: Path, capsys) -> None:
    state, scores = tmp_path / "race", tmp_path / "sweep.csv"
    flags = ["--looks", "2", "--max-runs", "6", "--hyperparameter-keys", "lr", "--reps", "200"]
    _sweep({0.1: range(3), 0.2: range(3)}).to_csv(scores, index=False)
    code, _, err = run_cli(capsys, "race", scores, "--state", state, *flags)
    assert code == 3, err
    _sweep({0.1: range(5), 0.2: range(6)}).to_csv(scores, index=False)
    code, _, err = run_cli(capsys, "race", scores, "--state", state, *flags)
    assert code == 2 and "--stop-on-missing" in err and "'ppo [lr=0.1]' 2" in err
    code, out, err = run_cli(capsys, "race", scores, "--state", state, *flags, "--stop-on-missing")
    assert code == 0, err
    assert "2 runs look 1 listed are missing at look 2" in out + err


def _watch_scores(runs: dict[str, int]) -> pd.DataFrame:
    rows = [
        (a, f"t{t}", k, float(np.random.default_rng([ord(a), t, k]).normal(t, 1.0)))
        for a, n in runs.items()
        for t in range(2)
        for k in range(n)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def test_a_watch_says_which_listed_runs_never_arrived(tmp_path: Path) -> None:
    design = {"looks": 3, "max_runs": 9, "reps": 200, "seed": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rl.ReliabilityWarning)
        first = rl.watch(_watch_scores({"A": 3, "B": 3}), state=tmp_path / "w", **design)
    assert not first.stop and set(first.launch["add_runs"]) == {3}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        second = rl.watch(_watch_scores({"A": 6, "B": 4}), state=tmp_path / "w", **design)
    assert second.record["missing"] == {"B": {"t0": 2, "t1": 2}}
    notes = [str(w.message) for w in seen if "missing" in str(w.message)]
    assert notes and notes[0].startswith("4 runs look 1 listed are missing at look 2: 'B' 4 ('t0' 2, 't1' 2)")
