"""Metric point values against hand-computed numbers and the published (rliable) definitions."""

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry
from rl_reliable_logger.stats.bootstrap import Cells, draw, original

# two tasks, four runs each; values chosen so that every metric is easy to do by hand
X = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0, 40.0])]


def point(metric, per_task=X):
    return float(registry.get_metric(metric)(original(Cells.from_list(per_task)))[0])


def test_hand_computed_values_on_tiny_input():
    assert point("mean") == pytest.approx((2.5 + 25.0) / 2)  # mean of per-task means
    assert point("median") == pytest.approx(13.75)  # two tasks: the median is their average
    assert point("iqm") == pytest.approx((3 + 4 + 10 + 20) / 4)  # 8 runs: cut 2 from each end
    assert point("dp25") == pytest.approx(1.5)  # bottom 2 of 8 runs: 1 and 2
    assert point("p_above_3") == pytest.approx(5 / 8)
    assert point("trimmed_mean_0.125") == pytest.approx((2 + 3 + 4 + 10 + 20 + 30) / 6)
    gap = registry.get_metric("optimality_gap", gamma=5.0)(original(Cells.from_list(X)))[0]
    assert gap == pytest.approx(5 - (1 + 2 + 3 + 4 + 5 * 4) / 8)


def test_unequal_runs_weigh_each_task_equally():
    ragged = [np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])]
    assert point("mean", ragged) == pytest.approx((2 + 15) / 2)
    # runs of task x weigh 1/6 each, of task y 1/4; K = 5 runs, so mass floor(1.25)/5 = 0.2 is cut
    # from each end: kept masses 2/15 (score 2), 1/6 (3), 1/4 (10), 1/20 (20), total 0.6
    assert point("iqm", ragged) == pytest.approx((2 * 2 / 15 + 3 / 6 + 10 / 4 + 20 / 20) / 0.6)
    assert point("iqm", ragged) == pytest.approx(64 / 9)
    # superhuman-style threshold: task x has 1/3 of its runs above 2.5... (1/3)/2 + 1/2
    assert point("p_above_2.5", ragged) == pytest.approx(0.5 * (1 / 3) + 0.5 * 1.0)


@pytest.mark.parametrize("shape", [(10, 26), (5, 7), (3, 1), (4, 4)])
def test_rectangular_equals_rliable_definitions(shape):
    rng = np.random.default_rng(sum(shape))
    scores = rng.lognormal(size=shape)  # rliable layout: (runs, tasks)
    cells = Cells.from_array(scores)
    o = original(cells)
    assert mt.iqm(o)[0] == pytest.approx(scipy.stats.trim_mean(scores, 0.25, axis=None), rel=1e-12)
    assert mt.mean(o)[0] == pytest.approx(np.mean(np.mean(scores, axis=0)), rel=1e-12)
    assert mt.median(o)[0] == pytest.approx(np.median(np.mean(scores, axis=0)), rel=1e-12)
    assert mt.optimality_gap(1.0)(o)[0] == pytest.approx(1 - np.mean(np.minimum(scores, 1.0)), rel=1e-12)


@pytest.mark.parametrize("task_bootstrap", [False, True])
def test_batched_metrics_equal_per_replicate_definitions(task_bootstrap):
    rng = np.random.default_rng(3)
    cells = Cells.from_array(rng.lognormal(size=(6, 5)))
    batch = draw(cells, 40, rng, task_bootstrap=task_bootstrap)
    samples = batch.padded_samples()  # (R, runs, tasks)
    np.testing.assert_allclose(mt.iqm(batch), [scipy.stats.trim_mean(s, 0.25, axis=None) for s in samples])
    np.testing.assert_allclose(mt.median(batch), [np.median(s.mean(axis=0)) for s in samples])
    np.testing.assert_allclose(mt.mean(batch), [s.mean() for s in samples])
    np.testing.assert_allclose(batch.weights.sum(axis=1), 1.0)


def test_ragged_batched_metrics_match_weighted_definition():
    rng = np.random.default_rng(4)
    per_task = [rng.normal(size=n) for n in (3, 7, 5)]
    batch = draw(Cells.from_list(per_task), 25, rng)
    samples = batch.padded_samples()
    expected_mean = [np.mean([np.nanmean(s[:, m]) for m in range(3)]) for s in samples]
    np.testing.assert_allclose(mt.mean(batch), expected_mean)
    expected_median = [np.median([np.nanmean(s[:, m]) for m in range(3)]) for s in samples]
    np.testing.assert_allclose(mt.median(batch), expected_median)


def test_probability_of_improvement_counts_ties_half():
    assert mt.probability_of_improvement([np.array([2.0, 3.0])], [np.array([1.0, 3.0])]) == pytest.approx(0.625)
    same = [np.array([1.0, 2.0, 3.0])]
    assert mt.probability_of_improvement(same, same) == pytest.approx(0.5)
    # averaged over tasks; different run counts are fine
    p = mt.probability_of_improvement([np.array([5.0]), np.array([0.0, 0.0])], [np.array([1.0, 9.0]), np.array([1.0])])
    assert p == pytest.approx((0.5 + 0.0) / 2)


def test_probability_of_improvement_replicates_match_direct_computation():
    rng = np.random.default_rng(5)
    x_cells = Cells.from_list([rng.normal(size=4), rng.normal(size=3)])
    y_cells = Cells.from_list([rng.normal(size=5), rng.normal(size=3)])
    bx, by = draw(x_cells, 20, rng), draw(y_cells, 20, rng)
    got = mt.improvement_replicates(x_cells, bx.counts(), y_cells, by.counts())
    sx, sy = bx.padded_samples(), by.padded_samples()
    want = [
        mt.probability_of_improvement(
            [a[~np.isnan(a[:, m]), m] for m in range(2)], [b[~np.isnan(b[:, m]), m] for m in range(2)]
        )
        for a, b in zip(sx, sy)
    ]
    np.testing.assert_allclose(got, want)


def test_custom_metrics_fast_and_slow_path_agree():
    rng = np.random.default_rng(6)
    cells = Cells.from_array(rng.normal(size=(5, 4)))
    batch = draw(cells, 30, rng)
    fast = mt.batched(lambda r: r.task_means().max(axis=1), name="best_task")
    slow = registry.get_metric(lambda s: np.nanmax(np.nanmean(s, axis=0)))
    np.testing.assert_allclose(fast(batch), slow(batch))


def test_unknown_metric_names_the_choices():
    with pytest.raises(ValueError, match="iqm"):
        registry.get_metric("best")


def test_probability_of_improvement_rectangular_path_equals_per_task_loop():
    rng = np.random.default_rng(9)
    x_cells = Cells.from_array(np.round(rng.normal(size=(6, 5)), 1))  # rounding makes ties
    y_cells = Cells.from_array(np.round(rng.normal(size=(4, 5)), 1))
    bx, by = draw(x_cells, 30, rng), draw(y_cells, 30, rng)
    fast = mt.improvement_replicates(x_cells, bx.counts(), y_cells, by.counts())
    sx, sy = bx.padded_samples(), by.padded_samples()
    slow = [mt.probability_of_improvement(list(a.T), list(b.T)) for a, b in zip(sx, sy)]
    np.testing.assert_allclose(fast, slow, atol=1e-12)


def test_single_runs_draw_one_run_per_task_uniformly():
    from rl_reliable_logger.stats import bootstrap as bs
    from rl_reliable_logger.stats import profiles as pf

    cells = bs.Cells.from_list([np.array([1.0, 2.0, 3.0]), np.array([10.0]), np.array([5.0, 6.0])])
    draws = pf.single_runs(cells, 30_000, np.random.default_rng(0))
    assert draws.shape == (30_000, 3)
    assert set(np.unique(draws[:, 0])) == {1.0, 2.0, 3.0} and (draws[:, 1] == 10.0).all()
    np.testing.assert_allclose([np.mean(draws[:, 0] == v) for v in (1, 2, 3)], 1 / 3, atol=0.01)
    np.testing.assert_allclose(np.mean(draws[:, 2] == 5.0), 0.5, atol=0.01)


def test_probability_of_improvement_is_the_mean_over_all_pairs_without_the_pair_matrix():
    """Counted by binary search, P(X > Y) equals the mean of the (n_x, n_y) pair scores exactly, ties included."""
    from rl_reliable_logger.stats.metrics import probability_of_improvement

    rng = np.random.default_rng(0)
    for levels in (3, 0):
        xs = [rng.integers(0, levels, n).astype(float) if levels else rng.normal(size=n) for n in (7, 40, 1)]
        ys = [rng.integers(0, levels, n).astype(float) if levels else rng.normal(size=n) for n in (5, 33, 9)]
        pairs = [((x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])).mean() for x, y in zip(xs, ys)]
        assert probability_of_improvement(xs, ys) == float(np.mean(pairs))
