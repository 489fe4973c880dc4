"""Rank distributions: the paper's single-run definition by default, task means as an option."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate


def _table() -> ScoreTable:
    # X: runs {0, 0, 4} (mean 4/3); Y: one run scoring 1 on the same task
    rows = [("X", "t", s, v) for s, v in enumerate([0.0, 0.0, 4.0])] + [("Y", "t", 0, 1.0)]
    return ScoreTable(pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]))


def _p_first(report) -> float:
    r = report.ranks
    return float(r[(r["algorithm"] == "X") & (r["task"] == "t") & (r["rank"] == 1)]["probability"].iloc[0])


def test_default_ranks_single_runs_as_in_the_paper():
    """One random run of X beats Y's run with probability 1/3; X's bootstrapped mean beats it with 1 - (2/3)^3."""
    kw = dict(reps=100, profile_reps=20_000, improvement_reps=10, seed=0)
    runs = evaluate(_table(), **kw)
    assert runs.provenance["rank_by"] == "runs"
    assert _p_first(runs) == pytest.approx(1 / 3, abs=0.015)
    means = evaluate(_table(), rank_by="task-means", **kw)
    assert _p_first(means) == pytest.approx(1 - (2 / 3) ** 3, abs=0.015)
    # the choice does not touch the per-task intervals
    pd.testing.assert_frame_equal(runs.per_task, means.per_task)
    with pytest.raises(ValueError, match="rank_by"):
        evaluate(_table(), rank_by="medians", **kw)
    assert np.isclose(runs.ranks.groupby(["algorithm", "task"])["probability"].sum(), 1).all()
