"""``rl-reliable watch``: exit 3 while runs are needed, 0 when it stops, 2 with one line on a rewind or a new design."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "atari100k_scores.csv"


@pytest.fixture
def runs(tmp_path: Path) -> dict[int, Path]:
    """DER and DrQ with their first 3 and all 10 seeds (undecided after 3, DrQ > DER after 10)."""
    frame = pd.read_csv(EXAMPLE)
    frame = frame[frame["algorithm"].isin(["DER", "DrQ"])]
    out = {}
    for n in (3, 10):
        out[n] = tmp_path / f"scores{n}.csv"
        frame[frame["seed"] < n].sample(frac=1.0, random_state=n).to_csv(out[n], index=False)
    return out


def watch(path: Path, state: Path, *more: str) -> int:
    args = [str(path), "--state", str(state), "--max-runs", "10", "--reps", "300", "--normalize", "atari100k"]
    return main(["watch", *args, *(more or ("--looks", "2"))])


def test_a_look_lists_cells_then_replays_then_decides(runs: dict[int, Path], tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    assert watch(runs[3], state) == 3
    first = capsys.readouterr().out
    assert first.startswith("look 1 of 2;") and "DER - DrQ: undecided; repeated interval [" in first
    bounds = re.search(r"repeated interval \[(\S+), (\S+)\]", first).groups()
    assert [len(b.split(".")[1]) for b in bounds] == [3, 3], bounds  # the same digits for both ends (issue 45)
    assert "(repeated interval: of iqm(x) - iqm(y) for the pair x - y; it keeps its level over every look" in first
    assert "launch 364 more runs in 52 cells before look 2" in first  # 7 more in each cell of DER and DrQ
    assert "  DER: +7 in each of its 26 tasks\n  DrQ: +7 in each of its 26 tasks" in first
    launch = pd.read_csv(state / "launch.csv")
    assert list(launch.columns) == ["algorithm", "task", "add_runs"] and len(launch) == 52
    assert launch["add_runs"].sum() == 364

    assert watch(runs[3], state) == 3  # the same scores: the recorded look, no look spent
    again = capsys.readouterr().out
    assert "look 1 of 2 (the same scores as this recorded look: no look spent)" in again
    assert again.splitlines()[1:] == first.splitlines()[1:]

    assert watch(runs[10], state) == 0
    decided = capsys.readouterr().out
    assert decided.startswith("look 2 of 2;") and "DER - DrQ: DrQ > DER (look 2)" in decided
    assert "stop: every comparison is decided" in decided
    row = pd.read_csv(state / "decisions.csv").iloc[0]
    assert (row["decision"], row["look"]) == ("y>x", 2) and row["high"] < 0


def test_cells_that_need_different_runs_are_listed_one_by_one(runs: dict[int, Path], tmp_path: Path, capsys) -> None:
    frame = pd.read_csv(runs[3])
    short = frame.drop(frame[(frame["algorithm"] == "DER") & (frame["task"] == "Pong") & (frame["seed"] == 2)].index)
    short.to_csv(tmp_path / "short.csv", index=False)
    assert watch(tmp_path / "short.csv", tmp_path / "state") == 3
    out = capsys.readouterr().out
    assert "launch 365 more runs in 52 cells" in out and "  DrQ: +7 in each of its 26 tasks" in out
    assert "  DER  Alien  +7" in out and "... 6 more cells" in out  # DER's 26 cells, 20 shown
    assert (
        pd.read_csv(tmp_path / "state" / "launch.csv").set_index(["algorithm", "task"]).loc[("DER", "Pong")].add_runs
        == 8
    )


def test_fewer_runs_than_the_last_look_is_one_line(runs: dict[int, Path], tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    assert watch(runs[10], state, "--looks", "3") in (0, 3)
    capsys.readouterr()
    assert watch(runs[3], state, "--looks", "3") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cell ('DER', ") and "fewer than the 10 of look 1" in err
    assert len(err.strip().splitlines()) == 1


def test_a_changed_design_is_refused_in_flag_words(runs: dict[int, Path], tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    assert watch(runs[3], state) == 3
    capsys.readouterr()
    assert watch(runs[10], state, "--looks", "3") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: the watch design in {state} cannot change:") and "\n" not in err
    assert "looks" in err
    assert not (state / "looks.json").read_text().count('"look": 2')  # nothing recorded


def test_bad_design_values_name_their_flags(runs: dict[int, Path], tmp_path: Path, capsys) -> None:
    assert watch(runs[3], tmp_path / "s", "--looks", "2", "--alpha", "0.7") == 2
    assert "--alpha must be between 0 and 0.5" in capsys.readouterr().err
    assert watch(runs[3], tmp_path / "s", "--looks", "2", "--compare", "DER,PPO") == 2
    assert "--compare names 'PPO'" in capsys.readouterr().err
    assert watch(runs[3], tmp_path / "s", "--looks", "2", "--spending", "linear") == 2
    assert "--spending 'linear' is not a spending function" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_help_has_the_design_flags_and_the_frozen_analysis_flags(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["watch", "file", "--help"])
    text = capsys.readouterr().out
    for flag in (
        "--state",
        "--looks",
        "--max-runs",
        "--compare",
        "--alpha",
        "--metric",
        "--spending",
        "--reps",
        "--seed",
        "--normalize",
        "--gamma",
        "--task-bootstrap",
        "--budget",
        "--only-tasks",
        "examples:",
    ):
        assert flag in text
    assert "--only-algorithms" not in text and "--metrics" not in text


def test_every_tracker_has_a_watch_with_its_own_source_and_publishing_flags(capsys) -> None:
    """`watch mlflow|wandb` take the very source flags of the tracker commands (declared once by the plugins)."""
    from rl_reliable_logger.trackers import registry

    for plugin in registry.plugins():
        with pytest.raises(SystemExit):
            main(["watch", plugin.name, "--help"])
        text = capsys.readouterr().out
        with pytest.raises(SystemExit):
            main(["plan", plugin.name, "--help"])
        plan = capsys.readouterr().out
        source = plan.split(" source:", 1)[1].split("\n\n", 1)[0]  # the plugin's own source group
        assert source.strip() and source in text
        for flag in ("--state", "--looks", "--max-runs", "--launch-names", "--sweep-program", "--reps"):
            assert flag in text
        assert ("--force-publish" in text) == plugin.publishes
    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    assert "watch [-h] {INPUT | mlflow | wandb" in capsys.readouterr().out


def test_launch_names_come_from_the_field_keys_or_the_flag(runs: dict[int, Path], tmp_path: Path) -> None:
    frame = pd.read_csv(runs[3]).rename(columns={"algorithm": "algo", "task": "env"})
    frame.to_csv(tmp_path / "renamed.csv", index=False)
    args = ["--algorithm-key", "algo", "--task-key", "env", "--launch-names", "seed=run_seed"]
    assert watch(tmp_path / "renamed.csv", tmp_path / "state", "--looks", "2", *args) == 3
    runs_csv = pd.read_csv(tmp_path / "state" / "runs.csv")
    assert list(runs_csv.columns) == ["algo", "env", "run_seed"] and set(runs_csv["run_seed"]) == set(range(3, 10))
    assert (tmp_path / "state" / "mlflow-params.txt").read_text().startswith("-P algo=DER -P env=Alien -P run_seed=3\n")
    assert watch(tmp_path / "renamed.csv", tmp_path / "s2", "--looks", "2", "--launch-names", "seed=a b") == 2
    assert not (tmp_path / "s2").exists()
