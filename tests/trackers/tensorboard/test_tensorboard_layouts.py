"""The folder layouts RL libraries write, read as docs/tensorboard.md gives them (issue 45): ``*`` skips text
within a folder name (a whole level, or a part), Stable-Baselines3's ``PPO_1`` is its run counter (never a seed),
CleanRL's time stamp is skipped, Ray Tune's trial folders are named by no layout, and what was read is said in
TensorBoard's words (a tag, a layout field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.request import ROW_COLUMNS
from rl_reliable_logger.trackers.tensorboard import tensorboard_table
from rl_reliable_logger.trackers.tensorboard.layout import parse_layout

tensorboardX = pytest.importorskip("tensorboardX")
pytest.importorskip("tensorboard")

FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures", "--quiet"]
DOCS = (Path(__file__).resolve().parents[3] / "docs" / "tensorboard.md").read_text(encoding="utf-8")


def _write(folder: Path, tag: str, value: float) -> None:
    writer = tensorboardX.SummaryWriter(str(folder))
    for step in (100, 200):
        writer.add_scalar(tag, value - 0.5 * (200 - step) / 100, step)
    writer.close()


SB3 = "{algorithm}/{task}/seed_{seed}/*"
CLEANRL = "{task}__{algorithm}__{seed}__*"


def test_the_documented_layouts_are_the_ones_tested():
    for layout in (SB3, CLEANRL):
        assert f"`{layout}`" in DOCS, layout
    assert "run counter" in DOCS and "`rl-reliable raytune`" in DOCS


def test_a_stable_baselines3_layout_with_a_skipped_level_reads_one_run_per_seed(tmp_path, capsys):
    """``tensorboard_log=f"logs/{algo}/{env}/seed_{seed}"``: SB3 writes into ``.../seed_0/PPO_1`` (``tb_log_name``
    and its run counter); ``*`` skips that level, so each seed is one run and nothing else becomes a column."""
    for algorithm, shift in (("PPO", 0.0), ("A2C", 1.0)):
        for seed in range(3):
            _write(
                tmp_path / algorithm / "CartPole-v1" / f"seed_{seed}" / f"{algorithm}_1",
                "rollout/ep_rew_mean",
                shift + seed,
            )
    table = tensorboard_table(tmp_path, layout=SB3, score_key="rollout/ep_rew_mean")
    frame = table.frame
    assert len(frame) == 6 and sorted(frame["seed"].unique()) == [0, 1, 2]
    assert frame.groupby(["algorithm", "task"]).size().to_dict() == {
        ("A2C", "CartPole-v1"): 3,
        ("PPO", "CartPole-v1"): 3,
    }
    assert set(frame.columns) <= {"algorithm", "task", "seed", "score", "step", *ROW_COLUMNS}  # no layout column
    # what was read, in TensorBoard's words: a tag and layout fields, not W&B's summary.* / config.*
    assert table.source["fields"] == {
        "algorithm": "layout {algorithm}",
        "task": "layout {task}",
        "seed": "layout {seed}",
        "score": "tag rollout/ep_rew_mean",
    }
    assert table.source["score"]["final_scores_from"] == "tag rollout/ep_rew_mean (last)"
    out = tmp_path.parent / (tmp_path.name + "-out")
    assert (
        main(
            [
                "tensorboard",
                str(tmp_path),
                "--layout",
                SB3,
                "--score-key",
                "rollout/ep_rew_mean",
                *FAST,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "summary." not in (out / "provenance.json").read_text(encoding="utf-8")

    # trained again into the same folder: PPO_2 beside PPO_1 is not a second seed 0
    _write(tmp_path / "PPO" / "CartPole-v1" / "seed_0" / "PPO_2", "rollout/ep_rew_mean", 9.0)
    with pytest.raises(
        InputError, match=r"duplicate seed 0 for PPO / CartPole-v1: runs PPO/CartPole-v1/seed_0/PPO_1, "
    ):
        tensorboard_table(tmp_path, layout=SB3, score_key="rollout/ep_rew_mean")


def test_a_cleanrl_layout_skips_the_time_stamp(tmp_path):
    """CleanRL: ``runs/{env_id}__{exp_name}__{seed}__{int(time.time())}``, score tag ``charts/episodic_return``."""
    for i, (exp, seed) in enumerate((e, s) for e in ("ppo", "dqn") for s in (1, 2, 3)):
        _write(tmp_path / f"CartPole-v1__{exp}__{seed}__{1764340000 + i}", "charts/episodic_return", 100.0 * seed)
    table = tensorboard_table(tmp_path, layout=CLEANRL, score_key="charts/episodic_return")
    assert sorted(map(tuple, table.frame[["algorithm", "seed"]].values.tolist())) == [
        ("dqn", 1),
        ("dqn", 2),
        ("dqn", 3),
        ("ppo", 1),
        ("ppo", 2),
        ("ppo", 3),
    ]
    assert set(table.frame["task"]) == {"CartPole-v1"}


def test_ray_tune_trial_folders_are_no_layout():
    """A Tune trial folder (Ray 2.60's own name) holds its config summary, shortened, with ``_`` inside values: a
    layout over it fits in two ways and is refused, never read with a wrong task; the docs send Tune experiments to
    ``rl-reliable raytune``, which reads each trial's exact config."""
    trial = "train_CartPole-v1_61aa3_00000_0_lr=0.1000,seed=0_2026-11-28_16-11-34"
    with pytest.raises(InputError, match="fits layout .* in two ways"):
        parse_layout("{algorithm}/train_{task}_*seed={seed}_*").match(f"PPO/{trial}")


@pytest.mark.parametrize(
    "layout", ["{algorithm}*/{task}/{seed}", "{algorithm}/{task}/{seed}*", "*{algorithm}/{task}/{seed}"]
)
def test_a_field_next_to_a_star_is_refused(layout):
    with pytest.raises(InputError, match="a field next to '\\*'"):
        parse_layout(layout)


def test_a_star_is_read_as_nothing():
    layout = parse_layout("*/{algorithm}/{task}/run_*_seed_{seed}")
    assert layout.fields == ("algorithm", "task", "seed") and layout.hyperparameters == ()
    assert layout.match("2026-11-28/PPO/Pong/run_a_b_seed_3") == {"algorithm": "PPO", "task": "Pong", "seed": 3}
    assert layout.match("PPO/Pong/run_a_seed_3") is None  # a '*' level is a folder of its own


def test_a_name_that_spells_a_field_reference_stays_as_written(tmp_path):
    """The source's words replace field references that are parts of a message, never text: a task folder named
    ``config.task`` (W&B's spelling of the layout field ``task``) is named as it is in every warning, while
    provenance says the fields read in TensorBoard's words."""
    for seed in range(4):
        _write(tmp_path / "PPO" / "config.task" / f"seed_{seed}" / "PPO_1", "ret", float("nan") if seed == 3 else 1.0)
    table = tensorboard_table(tmp_path, layout=SB3, score_key="ret", on_invalid="drop")
    assert set(table.frame["task"]) == {"config.task"}
    said = "\n".join(table.warnings)
    assert "PPO / config.task (3)" in said and "tasks config.task (1)" in said, said
    assert "layout {task}" not in said, said
    assert table.source["fields"]["task"] == "layout {task}" and table.source["score"]["keys"] == ["tag ret"]
