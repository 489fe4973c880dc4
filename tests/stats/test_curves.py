"""Sample-efficiency curves: the alignment rule and whole-run resampling across steps."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.stats.curves import RunHistory, align, common_grid


def test_alignment_takes_last_value_at_or_before_each_step():
    run = RunHistory(("A", "x", "0"), np.array([0.0, 10.0, 25.0]), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(align(run, np.array([0.0, 5.0, 10.0, 24.9, 25.0])), [1, 1, 2, 2, 3])
    out = align(run, np.array([30.0]))
    assert np.isnan(out).all()  # never extrapolated past the run's last step


def test_grid_spans_common_range_and_reports_short_runs():
    runs = [
        RunHistory(("A", "x", "0"), np.array([0.0, 50.0, 100.0]), np.zeros(3)),
        RunHistory(("A", "x", "1"), np.array([5.0, 60.0]), np.zeros(2)),  # stops early
        RunHistory(("B", "x", "0"), np.array([0.0, 40.0, 90.0]), np.zeros(3)),
    ]
    grid, left_out = common_grid(runs, n_points=4)
    # starts at the latest first step (5); ends where every cell still has a run (B reaches 90)
    np.testing.assert_allclose(grid, np.linspace(5.0, 90.0, 4))
    assert left_out == [("A", "x", "1")]


def test_identical_step_sets_are_used_exactly():
    runs = [RunHistory(("A", "x", str(i)), np.array([0.0, 1e5, 2e5]), np.zeros(3)) for i in range(3)]
    grid, left_out = common_grid(runs)
    np.testing.assert_array_equal(grid, [0.0, 1e5, 2e5])
    assert left_out == []


def _shifted_curves(n_runs=6):
    """Each run's score rises by exactly 1 per step, so every statistic that follows whole runs
    rises by exactly 1 per step in every replicate."""
    rng = np.random.default_rng(0)
    rows = []
    for alg in ("A", "B"):
        for task in ("x", "y"):
            base = rng.lognormal(size=n_runs)
            for seed in range(n_runs):
                for step in range(4):
                    rows.append((alg, task, seed, step * 1000, base[seed] + step))
    return ScoreTable(pd.DataFrame(rows, columns=["algorithm", "task", "seed", "step", "score"]), step="step")


def test_whole_runs_are_resampled_consistently_across_steps():
    report = evaluate(
        _shifted_curves(), seed=0, curves=True, reps=200, profile_reps=100, improvement_reps=100, curve_reps=400
    )
    curves = report.curves
    for _, g in curves.groupby(["algorithm", "metric"]):
        g = g.sort_values("step")
        # the bootstrap distribution is shifted by exactly 1 per step: so are both interval ends
        np.testing.assert_allclose(np.diff(g["point"]), 1.0, atol=1e-9)
        np.testing.assert_allclose(np.diff(g["low"]), 1.0, atol=1e-9)
        np.testing.assert_allclose(np.diff(g["high"]), 1.0, atol=1e-9)
    assert set(curves["metric"]) == {"iqm", "mean"}


def test_curves_need_steps():
    table = ScoreTable(pd.DataFrame({"algorithm": ["A"] * 2, "task": ["x"] * 2, "seed": [0, 1], "score": [1.0, 2.0]}))
    with pytest.raises(Exception, match="step column"):
        evaluate(table, curves=True, reps=10, profile_reps=10, improvement_reps=10)
