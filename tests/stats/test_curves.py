"""Sample-efficiency curves: the alignment rule and whole-run resampling across steps."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.stats.curves import RunHistory, align, canonical_order, common_grid, segments

FAST = {"reps": 50, "profile_reps": 20, "improvement_reps": 20}


def test_alignment_takes_last_value_at_or_before_each_step():
    run = RunHistory(("A", "x", "0"), np.array([0.0, 10.0, 25.0]), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(align(run, np.array([0.0, 5.0, 10.0, 24.9, 25.0])), [1, 1, 2, 2, 3])
    out = align(run, np.array([30.0]))
    assert np.isnan(out).all()  # never extrapolated past the run's last step
    # ... unless the run reaches the curve's end (within tolerance): then carried up to that end only
    np.testing.assert_array_equal(align(run, np.array([25.0, 26.0]), reach=26.0), [3, 3])
    assert np.isnan(align(run, np.array([27.0]), reach=26.0)).all()


def test_grid_spans_common_range_and_short_runs_count_up_to_their_last_step():
    runs = [
        RunHistory(("A", "x", "0"), np.arange(0.0, 101.0, 10.0), np.zeros(11)),  # logs every 10
        RunHistory(("A", "x", "1"), np.arange(5.0, 31.0, 5.0), np.zeros(6)),  # stops early (30 < 90 - 10)
        RunHistory(("B", "x", "0"), np.arange(0.0, 81.0, 10.0), np.zeros(9)),  # B ends at 80 < 100 - 10
    ]
    shape = common_grid(runs, n_points=4)
    # starts at the latest first step (5); ends where every cell still has a run (B reaches 80)
    np.testing.assert_allclose(shape.grid, np.linspace(5.0, 80.0, 4))
    assert shape.short == {("A", "x", "1"): 30.0}
    assert shape.reach == {("A", "x", "0"): 80.0, ("A", "x", "1"): 30.0, ("B", "x", "0"): 80.0}


def test_runs_within_one_logging_interval_of_the_end_reach_it():
    """199M of 200M frames, logging every 1M, is the end: not a short run (the old rule dropped it)."""
    steps = np.arange(1, 201) * 1e6
    runs = [
        RunHistory(("A", "x", "0"), steps, np.arange(200.0)),
        RunHistory(("A", "x", "1"), steps[:-1], np.arange(199.0)),  # last at 199M
        RunHistory(("A", "x", "2"), steps[:-3], np.arange(197.0)),  # last at 197M: more than 1M short
        RunHistory(("B", "x", "0"), steps[:-1], np.arange(199.0)),  # B's longest run also ends at 199M
    ]
    shape = common_grid(runs, n_points=5)
    assert shape.grid[-1] == 200e6  # every cell is within its logging interval of 200M
    assert shape.short == {("A", "x", "2"): 197e6}
    assert align(runs[1], shape.grid, shape.reach[runs[1].key])[-1] == 198.0  # carried by its last value
    assert np.isnan(align(runs[2], shape.grid, shape.reach[runs[2].key])[-1])  # not carried: beyond tolerance


def test_budget_sets_the_end_and_the_tolerance_applies_to_it():
    steps = np.arange(0, 11) * 100.0
    runs = [
        RunHistory(("A", "x", "0"), steps, np.zeros(11)),
        RunHistory(("A", "x", "1"), steps[:7], np.zeros(7)),  # 600: more than one interval before 800
    ]
    shape = common_grid(runs, n_points=5, budget=800.0)
    assert shape.grid[-1] == 800.0 and shape.short == {("A", "x", "1"): 600.0}
    assert shape.stopped_before_budget == []
    later = common_grid(runs, n_points=5, budget=5000.0)  # nobody gets near: the grid stops at the longest run
    assert later.grid[-1] == 1000.0 and later.stopped_before_budget == [("A", "x")]


def test_identical_step_sets_are_used_exactly():
    runs = [RunHistory(("A", "x", str(i)), np.array([0.0, 1e5, 2e5]), np.zeros(3)) for i in range(3)]
    shape = common_grid(runs)
    np.testing.assert_array_equal(shape.grid, [0.0, 1e5, 2e5])
    assert shape.short == {}


def test_shared_steps_beyond_the_points_asked_for_give_evenly_spaced_points():
    """Runs sharing 100 logged steps: 25 grid points by default, never all 100 steps."""
    runs = [RunHistory(("A", "x", str(i)), np.arange(1.0, 101.0) * 1e4, np.zeros(100)) for i in range(3)]
    np.testing.assert_array_equal(common_grid(runs).grid, np.linspace(1e4, 1e6, 25))
    np.testing.assert_array_equal(common_grid(runs, n_points=100).grid, np.arange(1.0, 101.0) * 1e4)


def test_canonical_order_and_segments():
    values = np.array([[3.0, 4.0, np.nan], [1.0, 2.0, 2.0], [3.0, 1.0, np.nan]])
    order = canonical_order(values)
    assert order.tolist() == [1, 2, 0]  # longest first, then by value step by step
    assert canonical_order(values[[2, 0, 1]]).tolist() == [2, 0, 1]  # same runs whatever the input order
    assert segments(~np.isnan(values)) == [(0, 2), (2, 3)]


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
    assert (curves["n_runs"] == 12).all()


def test_curves_need_steps():
    table = ScoreTable(pd.DataFrame({"algorithm": ["A"] * 2, "task": ["x"] * 2, "seed": [0, 1], "score": [1.0, 2.0]}))
    with pytest.raises(Exception, match="step column"):
        evaluate(table, curves=True, reps=10, profile_reps=10, improvement_reps=10)
    with pytest.raises(Exception, match="budget"):
        evaluate(table, budget=10.0, reps=10, profile_reps=10, improvement_reps=10)


def test_a_finer_grid_repeats_the_logged_steps_numbers_between_them():
    """Grid steps between two logged steps carry the same values, so they get the same numbers as the logged
    step before them (each distinct column is evaluated once), and the logged steps' numbers do not depend on
    how fine the grid is."""
    rng = np.random.default_rng(3)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "step": step, "score": rng.normal(k + 0.5 * (a == "B"))}
        for a in ("A", "B")
        for t in ("x", "y", "z")
        for s in range(4)
        for k, step in enumerate(range(0, 70, 10))
    ]
    # one run also logs step 35 (repeating its step-30 value): the runs no longer share their steps, so both grids
    # are evenly spaced (7 points: the logged steps; 61 points: every step from 0 to 60)
    repeat = next(r for r in rows if (r["algorithm"], r["task"], r["seed"], r["step"]) == ("A", "x", 0, 30))
    table = ScoreTable(pd.DataFrame([*rows, {**repeat, "step": 35}]))
    cols = ["point", "low", "high"]
    coarse = evaluate(table, seed=0, curves=True, curve_points=7, curve_reps=300, **FAST).curves
    fine = evaluate(table, seed=0, curves=True, curve_points=61, curve_reps=300, **FAST).curves
    assert sorted(coarse["step"].unique()) == list(range(0, 70, 10))
    assert fine["step"].nunique() == 61
    for (alg, metric), g in fine.groupby(["algorithm", "metric"]):
        logged = coarse[(coarse["algorithm"] == alg) & (coarse["metric"] == metric)].set_index("step")
        for _, row in g.iterrows():
            before = logged.loc[10 * (row["step"] // 10), cols]  # the last logged step at or before this one
            np.testing.assert_array_equal(row[cols].to_numpy(float), before.to_numpy(float))


def test_the_grid_never_repeats_a_step():
    """A range narrower than the float spacing gives fewer points, never the same step twice (curves.csv would
    repeat its row); a range of a single step is no curve: NoCommonRange names the runs that start there."""
    from rl_reliable_logger.stats.curves import NoCommonRange

    big = 1e17  # floats 16 apart here: 25 points over a range of 32 round onto 3 steps
    runs = [
        RunHistory(("A", "x", "0"), np.array([big, big + 32]), np.zeros(2)),
        RunHistory(("A", "x", "1"), np.array([big, big + 16, big + 32]), np.zeros(3)),
    ]
    grid = common_grid(runs, n_points=25).grid
    assert np.unique(grid).size == grid.size and grid[0] == big and grid[-1] == big + 32
    one_step = [
        RunHistory(("A", "x", "0"), np.array([1000.0]), np.zeros(1)),  # starts where the others end
        RunHistory(("A", "x", "1"), np.arange(0.0, 1001.0, 100.0), np.zeros(11)),
    ]
    with pytest.raises(NoCommonRange) as err:
        common_grid(one_step, n_points=10)
    assert err.value.late == {("A", "x", "0"): 1000.0} and err.value.start == err.value.end == 1000.0
