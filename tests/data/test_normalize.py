"""Normalisation: packaged tables, tolerant names, clear errors for unknown tasks."""

import pandas as pd
import pytest

from rl_reliable_logger.data.normalize import canonical_task_name, get_normalizer, normalize
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import ReliabilityWarning, ScoreTableError
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


def _small() -> pd.DataFrame:
    """The tester's small.csv: 2 algorithms x 3 tasks x 5 seeds, scores between 0.5 and 2."""
    return pd.DataFrame(
        [
            {"algorithm": a, "task": t, "seed": s, "score": 0.5 + 0.5 * i + 0.2 * j + 0.05 * s}
            for i, a in enumerate("AB")
            for j, t in enumerate(("t1", "t2", "t3"))
            for s in range(5)
        ]
    )


def test_a_reference_range_too_narrow_for_the_scores_is_refused_naming_the_task(tmp_path):
    """n_tiny.csv: t1's range is 1e-300 wide, so its normalised scores reach 1e300, whose variances overflow: refused
    like raw scores that large (one bound, ``magnitude_limit``), naming the task and its range, never a numpy
    warning or means of 1e299 with zero-width intervals."""
    import warnings

    (tmp_path / "n_tiny.csv").write_text("task,low,high\nt1,0,1e-300\nt2,0,1\nt3,0,1\n")
    with warnings.catch_warnings():
        # no "overflow encountered" on the way (a library's own DeprecationWarning, e.g. pandas 2.1 on numpy 1.26, is
        # not ours to refuse)
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ScoreTableError) as err:
            normalize(ScoreTable(_small()), tmp_path / "n_tiny.csv")
    text = str(err.value)
    assert "\n" not in text and text.startswith("normalised scores too large: task 't1' reaches 1.2e+300"), text
    assert "low=0, high=1e-300" in text and "'n_tiny.csv' reference table" in text and "overflow" in text, text
    assert "'t2'" not in text and "'t3'" not in text
    with pytest.raises(ScoreTableError, match="task 't1' reaches inf"):  # beyond float64 itself: said the same way
        normalize(
            ScoreTable(_small().assign(score=lambda d: d["score"] * 1e10)),
            {"t1": (0, 1e-300), "t2": (0, 1), "t3": (0, 1)},
        )


def test_raw_and_normalised_scores_get_one_bound_that_keeps_the_analysis_finite():
    """The bound that refuses raw scores (the old one, float64's maximum / 4 rows, let 1e300 through: variances
    overflowed) is the one normalised scores get; just below it every interval is finite and nothing overflows."""
    import warnings

    import numpy as np

    from rl_reliable_logger import evaluate

    huge = _small()
    huge.loc[huge["task"] == "t1", "score"] *= 1e300
    with pytest.raises(ScoreTableError, match=r"scores up to 1\.2e\+300 in magnitude.*rescale or normalise"):
        ScoreTable(huge)  # was accepted: means of 1e299 and a numpy overflow warning

    from rl_reliable_logger.data.scores import magnitude_limit

    limit = magnitude_limit(30)
    with pytest.raises(ScoreTableError, match="normalised scores too large: task 't1'"):
        normalize(ScoreTable(_small()), {"t1": (0, 1.2 / limit / 1.01), "t2": (0, 1), "t3": (0, 1)})
    near = normalize(ScoreTable(_small()), {"t1": (0, 1.2 / limit * 1.01), "t2": (0, 1), "t3": (0, 1)})
    assert near.frame["score"].abs().max() == pytest.approx(limit / 1.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", ReliabilityWarning)  # the raw-scale notes this made-up table earns
        report = evaluate(near, reps=200, profile_reps=50, improvement_reps=50, seed=0)
    assert np.isfinite(report.aggregates[["point", "low", "high"]].to_numpy(float)).all()
