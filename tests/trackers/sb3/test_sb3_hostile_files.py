"""Stable-Baselines3 files no SB3 writes (issue 54): each is one sentence naming the file, exit status 2, never a
library's exception (zipfile's "password required", numpy's ufunc errors, csv's field limit, json's recursion),
and never a score: a NaN timestep, a column named twice. The files are written with numpy's own ``np.savez`` and
SB3's monitor format (tests/support/rl_logs.py), then altered as an attacker or a damaged disk would."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.trackers.sb3 import read_evaluations, read_monitor, sb3_table
from tests.support.deep import nested
from tests.support.rl_logs import flag_zip_entries, write_evaluations, write_monitor

FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures"]


def _cli(argv, capsys) -> tuple[int, str]:
    from rl_reliable_logger.cli.main import main

    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _grid(root: Path) -> None:
    for algorithm in ("ppo", "a2c"):
        for seed in (1, 2, 3):
            write_evaluations(root / algorithm / f"CartPole-v1_{seed}", [1000, 2000], [[1.0, 2.0], [3.0, 4.0 + seed]])


@pytest.mark.parametrize(
    "kind, says", [("encrypted", "is marked encrypted"), ("method", "uses zip compression method 99")]
)
def test_zip_entries_numpy_never_writes_are_one_sentence_without_a_password_word(tmp_path, capsys, kind, says):
    _grid(tmp_path)
    victim = tmp_path / "ppo" / "CartPole-v1_1" / "evaluations.npz"
    flag_zip_entries(victim, encrypted=kind == "encrypted", method=99 if kind == "method" else None)
    with pytest.raises(InputError, match=says):
        read_evaluations(victim)
    code, err = _cli(["sb3", str(tmp_path), *FAST], capsys)
    line = _one_line(err)
    assert code == 2 and says in line and "evaluations.npz" in line and "***" not in line, line


def test_two_arrays_of_one_name_are_refused(tmp_path):
    path = write_evaluations(tmp_path, [1000], [[1.0]])
    with zipfile.ZipFile(path, "a") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("results.npy", archive.read("results.npy"))
    with pytest.raises(InputError, match="holds 2 arrays named 'results'"):
        read_evaluations(path)


@pytest.mark.parametrize(
    "array, value, says",
    [
        ("ep_lengths", np.array([["a", "b"], ["c", "d"]]), r"array 'ep_lengths' holds text \(<U1\)"),
        ("results", np.array([[1 + 1j, 2], [3, 4]]), r"array 'results' holds complex numbers"),
        ("timesteps", np.array([1000, 2000], dtype="timedelta64[s]"), r"array 'timesteps' holds time spans"),
        ("ep_lengths", np.array([["2026-01-01"] * 2] * 2, dtype="datetime64[D]"), r"'ep_lengths' holds dates"),
        ("successes", np.array([[1.5, 0], [0, 1]]), "successes must be true/false per episode"),
        ("timesteps", np.array([1000.0, np.nan]), "timesteps holds values that are not finite numbers"),
        ("ep_lengths", np.array([[10.0, np.inf], [1, 2]]), "ep_lengths holds values that are not finite numbers"),
    ],
    ids=["text-lengths", "complex", "timedelta", "dates", "fractional-successes", "nan-timestep", "inf-length"],
)
def test_arrays_of_no_real_numbers_are_refused(tmp_path, array, value, says):
    arrays = {
        "timesteps": np.array([1000, 2000]),
        "results": np.array([[1.0, 2.0], [3.0, 4.0]]),
        "ep_lengths": np.array([[10, 10], [10, 10]]),
    }
    arrays[array] = value
    np.savez(tmp_path / "evaluations", **arrays)
    with pytest.raises(InputError, match=says):
        read_evaluations(tmp_path / "evaluations.npz")


@pytest.mark.parametrize("rule", ["max", "mean-last-2"])
def test_a_nan_timestep_is_never_scored(tmp_path, capsys, rule):
    _grid(tmp_path)
    np.savez(
        tmp_path / "ppo" / "CartPole-v1_1" / "evaluations",
        timesteps=np.array([1000.0, np.nan]),
        results=np.array([[1.0], [9.0]]),
        ep_lengths=np.array([[10], [10]]),
    )
    code, err = _cli(["sb3", str(tmp_path), "--score-rule", rule, *FAST], capsys)
    line = _one_line(err)
    assert code == 2 and "timesteps holds values that are not finite numbers" in line, line


def _monitor(folder: Path, header: str, rows: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "monitor.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    "header, rows, says",
    [
        ('#{"t_start": 1.0}', ["r,l,t,r", "1,10,0.5,9"], r"column 'r' appears twice in the header \(columns 1 and 4\)"),
        ('#{"t_start": ' + "1" * 400 + "}", ["r,l,t", "1,10,0.5"], r"the integer 1111.* \(400 digits\) is too large"),
        ('#{"t_start": ' + "1" * 4400 + "}", ["r,l,t", "1,10,0.5"], r"\(4,400 digits\) is too large"),
        ("#" + "[" * 100_000 + "]" * 100_000, ["r,l,t", "1,10,0.5"], "nested too deeply"),
        ('#{"t_start": 1.0, "t_start": 2.0}', ["r,l,t", "1,10,0.5"], "key 't_start' appears twice"),
        ('#{"t_start": 1.0}', ["r,l,t", "x" * 131_073 + ",10,0.5"], r"line 3 has a field longer than 131,072"),
        ('#{"t_start": 1.0}', ["r,l,t", "1,10"], r"row 0 \(line 3\) has 2 field\(s\)"),
    ],
    ids=[
        "column-twice",
        "400-digit-t_start",
        "4400-digit-t_start",
        "deep-header",
        "key-twice",
        "huge-field",
        "short-row",
    ],
)
def test_a_monitor_file_no_sb3_writes_is_named(tmp_path, capsys, header, rows, says):
    path = _monitor(tmp_path / "ppo" / "CartPole-v1_1", header, rows)
    with pytest.raises(InputError, match=says):
        read_monitor([path])
    for seed in (2, 3):
        write_monitor(tmp_path / "ppo" / f"CartPole-v1_{seed}", [1.0, 2.0])
    code, err = _cli(["sb3", str(tmp_path), *FAST], capsys)
    assert code == 2 and "monitor.csv" in _one_line(err), err


def test_1100_nested_folders_are_read_without_a_recursion_error(tmp_path, capsys):
    with nested(tmp_path, 1100) as here:
        write_evaluations(here, [1000], [[1.0]])
        code, err = _cli(["sb3", str(tmp_path), *FAST], capsys)
    assert code == 2 and "fits the layout" in _one_line(err), err


def test_a_run_killed_early_is_found_without_curves_and_refused_by_strict(tmp_path, capsys):
    """PPO seed 1 killed at 4,000 of 6,000 steps: the same budget.short_runs with or without --curves, and
    methods.md no longer says the budgets were not checked."""
    for algorithm in ("ppo", "a2c"):
        for seed in (1, 2, 3, 4):
            n = 4 if (algorithm, seed) == ("ppo", 1) else 6
            steps = [1000 * (i + 1) for i in range(n)]
            write_evaluations(
                tmp_path / algorithm / f"CartPole-v1_{seed}", steps, [[10.0 * i + seed] for i in range(n)]
            )
    table = sb3_table(tmp_path)
    assert dict(zip(table.frame["run_id"], table.frame["last_step"]))["ppo/CartPole-v1_1"] == 4000.0
    for extra in ([], ["--curves"]):
        code, err = _cli(["sb3", str(tmp_path), *extra, *FAST, "--out", str(tmp_path / f"out{len(extra)}")], capsys)
        assert (
            code == 0
            and "protocol warning: 1 run stops before the budget of their cell" in err
            and "[budget.short_runs;" in err
        ), err
        assert "ppo/CartPole-v1_1 (4000 of 6000)" in err, err
        methods = (tmp_path / f"out{len(extra)}" / "methods.md").read_text()
        assert "Not checked: training budgets" not in methods and "training budgets" in methods.split("Not checked")[0]
    code, err = _cli(["sb3", str(tmp_path), "--strict", *FAST], capsys)
    assert code == 2 and "budget.short_runs" in _one_line(err), err


def test_a_string_score_in_a_history_is_named_not_raised(tmp_path):
    """A history value that is text (what a hostile result file gives) under max and mean-last-N."""
    from rl_reliable_logger.trackers.base.records import RunRecord, records_to_table

    run = RunRecord("r", None, "finished", config={"a": "A", "t": "x", "s": 0}, summary={"v": 1.0})
    run.history = {"v": [(1.0, 1.0), (2.0, "9.5")]}
    for rule in ("max", "mean-last-2"):
        with pytest.raises(InputError, match=r"non-numeric value '9\.5' logged at step 2"):
            records_to_table(
                [run], algorithm="config.a", task="config.t", seed="config.s", score="summary.v", score_rule=rule
            )
    run.history = {"v": [(1.0, 1.0), (float("nan"), 2.0)]}
    with pytest.raises(InputError, match="a logged step is nan, not a finite number"):
        records_to_table(
            [run], algorithm="config.a", task="config.t", seed="config.s", score="summary.v", score_rule="max"
        )


def test_header_json_is_read_by_the_strict_reader():
    assert json.loads('{"t_start": 1.5}')  # the format SB3 writes, for contrast with the cases above
