"""A results bundle's own scores.csv, evaluated again: never normalised twice, and the raw scores reproduce it."""

from __future__ import annotations

import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.options import OptionError
from rl_reliable_logger.cli import main as cli
from tests.support.paths import REPO

FAST = ["--reps", "300", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--no-figures", "--quiet"]
TABLES = ("aggregates", "per_task", "improvement", "differences", "profiles", "ranks", "gap_curve")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    frame = pd.read_csv(REPO / "examples" / "atari100k_scores.csv")
    frame = frame[frame["algorithm"].isin(["DER", "SPR"]) & frame["task"].isin(sorted(set(frame["task"]))[:8])]
    folder = tmp_path_factory.mktemp("rt")
    frame.to_csv(folder / "scores_in.csv", index=False)
    out = folder / "results"
    assert (
        cli.main(["evaluate", str(folder / "scores_in.csv"), "--normalize", "atari100k", *FAST, "--out", str(out)]) == 0
    )
    return out


def test_normalising_a_bundles_scores_again_is_refused_in_one_line(bundle, capsys):
    status = cli.main(["evaluate", str(bundle / "scores.csv"), "--normalize", "atari100k", *FAST])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "already normalised (atari100k)" in err and "--score-key 'raw_score'" in err and "--normalize" in err
    with pytest.raises(OptionError, match="leave out `normalize=`"):
        evaluate(ScoreTable.from_file(bundle / "scores.csv"), normalize="atari100k", reps=100)


def test_the_raw_scores_with_the_recorded_options_reproduce_every_table(bundle, tmp_path):
    again = tmp_path / "again"
    args = ["evaluate", str(bundle / "scores.csv"), "--score-key", "raw_score", "--normalize", "atari100k", *FAST]
    assert cli.main([*args, "--out", str(again)]) == 0
    for name in TABLES:
        assert (again / f"{name}.csv").read_bytes() == (bundle / f"{name}.csv").read_bytes(), name


def test_the_normalised_scores_as_they_are_give_the_same_numbers(bundle, tmp_path):
    plain = tmp_path / "plain"
    assert cli.main(["evaluate", str(bundle / "scores.csv"), *FAST, "--out", str(plain)]) == 0
    a, b = pd.read_csv(plain / "aggregates.csv"), pd.read_csv(bundle / "aggregates.csv")
    pd.testing.assert_frame_equal(a[["algorithm", "metric", "point"]], b[["algorithm", "metric", "point"]])
