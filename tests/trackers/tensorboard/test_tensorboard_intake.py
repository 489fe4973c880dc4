"""TensorBoard run folders through the one intake (issue 41): names as written, layout fields that are no
configuration never pool runs, reserved fields refused, and messages that name only flags the command has."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.tensorboard import tensorboard_table
from rl_reliable_logger.trackers.tensorboard.layout import parse_layout

tensorboardX = pytest.importorskip("tensorboardX")
pytest.importorskip("tensorboard")

FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures", "--quiet"]


def _write(folder: Path, value: float) -> None:
    writer = tensorboardX.SummaryWriter(str(folder))
    for step in (1, 2):
        writer.add_scalar("score", value - 0.1 * (2 - step), step)
    writer.close()


def test_path_parts_stay_as_written():
    layout = parse_layout("{algorithm}/{task}/seed_{seed}/lr_{lr}")
    got = layout.match("007/\u0660\u0660\u0667/seed_007/lr_0.001")
    assert got == {"algorithm": "007", "task": "\u0660\u0660\u0667", "seed": "007", "lr": 0.001}
    assert (
        layout.match("PPO/x/seed_3/lr_\u0661")["seed"] == 3 and layout.match("PPO/x/seed_3/lr_\u0661")["lr"] == "\u0661"
    )


@pytest.mark.parametrize("field", ["step", "score", "run_id"])
def test_a_layout_field_that_would_replace_a_column_is_refused(field):
    with pytest.raises(InputError, match=rf"has the field \{{{field}\}}, a column every run's row has of its own"):
        parse_layout(f"{{algorithm}}/{{task}}/{{seed}}/{{{field}}}")


def test_sb3_runs_trained_twice_are_refused_naming_the_fix(tmp_path, capsys):
    """``PPO_1`` beside ``PPO_2`` read with ``{algorithm}_{task}_{seed}/{run}``: not a second seed 0."""
    for algorithm, shift in (("PPO", 0.0), ("A2C", 0.3)):
        for seed in range(3):
            _write(tmp_path / f"{algorithm}_Pong_{seed}" / "1", shift + 0.1 * seed)
    _write(tmp_path / "PPO_Pong_0" / "2", 5.0)
    layout = "{algorithm}_{task}_{seed}/{run}"
    with pytest.raises(InputError, match=r"duplicate seed 0 for PPO / Pong: runs PPO_Pong_0/1, PPO_Pong_0/2"):
        tensorboard_table(tmp_path, layout=layout, score_key="score")
    assert main(["tensorboard", str(tmp_path), "--layout", layout, "--score-key", "score", *FAST]) == 2
    err = capsys.readouterr().err
    assert "these runs differ in run" in err and "--hyperparameter-keys run" in err and err.count("\n") == 1, err
    for flag in ("--algorithm-key", "--filter", "--variant-key", "--run-key"):  # flags rl-reliable tensorboard lacks
        assert flag not in err, err


def test_a_tag_no_run_has_names_only_the_commands_flags(tmp_path, capsys):
    for algorithm in ("A", "B"):
        for seed in range(2):
            _write(tmp_path / algorithm / "x" / f"seed_{seed}", 1.0)
    assert main(["tensorboard", str(tmp_path), "--score-key", "eval/nope", *FAST]) == 2
    err = capsys.readouterr().err
    assert "--layout" in err and "--score-key" in err and "--algorithm-key" not in err and "--seed-key" not in err, err


def test_a_fifo_named_like_an_event_file_is_refused(tmp_path, capsys):
    for algorithm in ("A", "B"):
        for seed in range(2):
            _write(tmp_path / algorithm / "x" / f"seed_{seed}", 1.0 + seed)
    fifo = tmp_path / "A" / "x" / "seed_1" / "events.out.tfevents.0.fifo"
    os.mkfifo(fifo)
    assert main(["tensorboard", str(tmp_path), "--score-key", "score", *FAST]) == 2
    err = capsys.readouterr().err
    assert "is a FIFO (named pipe), not a regular file" in err and str(fifo) in err and err.count("\n") == 1, err
    table = tensorboard_table(tmp_path, score_key="score", on_invalid="drop")
    assert table.dropped["run_id"].tolist() == ["A/x/seed_1"]
