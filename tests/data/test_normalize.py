"""Normalisation: packaged tables, tolerant names, clear errors for unknown tasks."""

import pandas as pd
import pytest

from rl_reliable_logger.data.normalize import canonical_task_name, get_normalizer, normalize
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import ScoreTableError
from tests.support.paths import REPO


@pytest.mark.parametrize("name", ["ALE/Pong-v5", "PongNoFrameskip-v4", "pong", "Pong", "PongDeterministic-v4"])
def test_pong_spellings_are_one_game(name):
    assert canonical_task_name(name) == "pong"


def test_atari_human_normalised_score_by_hand():
    # Pong: random -20.7, human 14.6 (rliable's table) → human score gives 1, random gives 0
    df = pd.DataFrame({"algorithm": "A", "task": ["ALE/Pong-v5", "bankheist"], "seed": 0, "score": [14.6, 14.2]})
    out = normalize(ScoreTable(df), "atari")
    assert out.frame["score"].tolist() == pytest.approx([1.0, 0.0])
    assert out.frame["raw_score"].tolist() == [14.6, 14.2]


def test_unknown_tasks_are_all_listed_with_close_names():
    df = pd.DataFrame({"algorithm": "A", "task": ["Pong", "airraid", "montezuma"], "seed": 0, "score": 1.0})
    with pytest.raises(ScoreTableError) as err:
        normalize(ScoreTable(df), "atari")
    text = str(err.value)
    assert "2 tasks" in text and "airraid" in text and "montezuma (closest: MontezumaRevenge)" in text
    assert "task,low,high" in text


def test_user_csv_and_dmc_range(tmp_path):
    (tmp_path / "refs.csv").write_text("task,low,high\nwalker,0,200\n")
    df = pd.DataFrame({"algorithm": "A", "task": ["walker"], "seed": 0, "score": [50.0]})
    assert normalize(ScoreTable(df), tmp_path / "refs.csv").frame["score"].tolist() == [0.25]
    assert normalize(ScoreTable(df), "dmc").frame["score"].tolist() == [0.05]
    (tmp_path / "bad.csv").write_text("game,min,max\nwalker,0,1\n")
    with pytest.raises(ScoreTableError, match="task,low,high"):
        get_normalizer(tmp_path / "bad.csv")


def test_unknown_normaliser_lists_choices():
    with pytest.raises(ScoreTableError, match="atari100k"):
        get_normalizer("mujoco")


def test_packaged_tables_match_shared_reference():
    shared = pd.read_csv(REPO / "rl_reliable_logger/data/references/atari57.csv")
    assert len(shared) == 57
    assert get_normalizer("atari100k").bounds(["Breakout"]) == {"Breakout": (1.7, 30.5)}
    assert get_normalizer("procgen").bounds(["procgen-coinrun-v0"]) == {"procgen-coinrun-v0": (5.0, 10.0)}
