"""Issue 43 item 6: a declared normalisation that the scores contradict gets one warning that says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.data.normalize import get_normalizer
from tests.support.cli import run_cli

FAST = {"reps": 200, "profile_reps": 40, "improvement_reps": 40}


def _returns(low: float = 150.0, high: float = 420.0) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(a, t, s, rng.uniform(low, high)) for a in ("A", "B") for t in ("x", "y", "z") for s in range(5)]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def _about_normalization(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "normalis" in w or "optimality gap" in w]


def test_raw_returns_declared_normalised_get_one_warning_saying_so():
    report = evaluate(ScoreTable(_returns()), normalize="already-normalized", seed=0, **FAST)
    found = _about_normalization(report.warnings)
    assert len(found) == 1  # not also the optimality gap's "about 0 for every algorithm"
    assert report.warnings == found  # nor its studentized interval's fallback: every replicate is 0, as the point
    assert "look like raw returns" in found[0] and "median |score| is" in found[0] and "`normalize=`" in found[0]
    assert (report.headline("optimality_gap")["point"] == 0).all()  # what the warning explains


@pytest.mark.parametrize("normalize", ["already-normalized", "atari100k"])
def test_normalised_scores_are_not_warned_about(normalize):
    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "examples" / "atari100k_scores.csv")
    frame = frame[frame["algorithm"].isin(["DER", "SPR"])]
    if normalize == "already-normalized":  # human-normalised beforehand, then declared so
        frame = get_normalizer("atari100k").apply(ScoreTable(frame)).frame[["algorithm", "task", "seed", "score"]]
    report = evaluate(ScoreTable(frame), normalize=normalize, seed=0, **FAST)
    assert not [w for w in report.warnings if "look like raw returns" in w]


def test_the_command_line_says_it_once_in_flag_words(tmp_path, capsys):
    path = tmp_path / "returns.csv"
    _returns().to_csv(path, index=False)
    code, out, err = run_cli(capsys, "evaluate", path, "--normalize", "already-normalized", "--reps", "200",
                             "--profile-reps", "40", "--improvement-reps", "40")  # fmt: skip
    assert code == 0
    text = out + err
    assert text.count("look like raw returns") == 1 and "--normalize" in text
    assert text.count("warning:") == 1
