"""Issue 23's defects at the engine: ties in the bias correction, degenerate bootstrap-t, BCa on one task."""

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import distributions, intervals, registry
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.aggregate import studentized_difference
from tests.support.intervals import aggregate_tuple


def _discrete():
    """Replicates of a statistic with many exact ties at the estimate (10%, as P(X > Y) of few runs has)."""
    rng = np.random.default_rng(0)
    point = np.array([4 / 9])
    dist = np.concatenate([rng.normal(0.5, 0.1, 3600), np.full(400, point[0])])[:, None]
    return rng.permutation(dist), point


@pytest.mark.parametrize("method", ["bc", "bca"])
def test_bias_correction_does_not_depend_on_the_estimates_rounding(method):
    dist, point = _discrete()
    jack = np.linspace(0.3, 0.6, 12)[:, None] ** 2
    ends = intervals.interval(dist, point, method=method, jackknife=jack)
    # the same estimate summed in another order: one ulp away
    for nudged in (np.nextafter(point, 1.0), np.nextafter(point, 0.0)):
        other = intervals.interval(dist, nudged, method=method, jackknife=jack)
        np.testing.assert_allclose(np.ravel(other), np.ravel(ends), rtol=1e-12)


@pytest.mark.parametrize("method", intervals.METHODS)
@pytest.mark.parametrize("factor", [3.0, 1e-7, 1e9])
def test_every_method_scales_with_the_scores(method, factor):
    dist, point = _discrete()
    cells = bs.Cells.from_list([np.arange(5.0), np.arange(4.0) ** 2])
    scaled_cells = bs.Cells.from_list([np.arange(5.0) * factor, np.arange(4.0) ** 2 * factor])
    jack = np.linspace(0.3, 0.6, 12)[:, None] ** 2
    ends = intervals.interval(dist, point, method=method, jackknife=jack, cells=cells)
    scaled = intervals.interval(
        dist * factor, point * factor, method=method, jackknife=jack * factor, cells=scaled_cells
    )
    np.testing.assert_allclose(np.ravel(scaled), factor * np.ravel(ends), rtol=1e-12)


def test_studentized_interval_of_one_task_of_two_runs_is_degenerate_and_falls_back():
    cells = bs.Cells.from_list([np.array([0.2, 0.9])])
    dist = bs.replicates(cells, mt.mean_se, 2000, np.random.default_rng(1))
    assert bs.studentized_mean_interval(dist, mt.mean_se(bs.original(cells))[0]) is None
    notes: list[str] = []
    mean = registry.get_metric("mean")
    _, low, high, _ = aggregate_tuple(cells, [mean], 2000, np.random.default_rng(1), method="bootstrap-t", notes=notes)
    assert (low[0], high[0]) == pytest.approx((0.2, 0.9))
    assert len(notes) == 1 and "expanded" in notes[0]


def test_studentized_interval_is_kept_where_the_data_allow_it():
    rng = np.random.default_rng(2)
    cells = bs.Cells.from_list([rng.normal(size=5) for _ in range(6)])
    dist = bs.replicates(cells, mt.mean_se, 2000, np.random.default_rng(3))
    found = bs.studentized_mean_interval(dist, mt.mean_se(bs.original(cells))[0])
    assert found is not None and found[1] > found[0]


@pytest.mark.parametrize("runs", [2, 3, 7])
def test_bca_works_on_one_task(runs):
    cells = bs.Cells.from_list([np.random.default_rng(runs).lognormal(size=runs)])
    metrics = [registry.get_metric(m) for m in ("iqm", "mean", "median", "optimality_gap")]
    point, low, high, _ = aggregate_tuple(cells, metrics, 1000, np.random.default_rng(0), method="bca")
    assert np.isfinite(low).all() and np.isfinite(high).all()
    assert (low <= point + 1e-12).all() and (point <= high + 1e-12).all()


def test_task_levels_are_hesterbergs_one_sample_levels():
    cells = bs.Cells.from_list([np.arange(3.0), np.arange(6.0), np.array([1.0])])
    levels = bs.task_levels(cells, 0.95)
    for n, level in zip((3, 6), levels[:2]):
        expected = distributions.norm_cdf(-np.sqrt(n / (n - 1)) * distributions.t_ppf(0.975, n - 1))
        assert level == pytest.approx(float(expected), rel=1e-12)
    assert levels[2] == pytest.approx(0.025)


def test_the_level_of_a_pair_pools_both_algorithms_cells():
    rng = np.random.default_rng(4)
    x = [rng.normal(size=3) for _ in range(4)]
    y = [rng.normal(size=4) * 2 for _ in range(4)]
    pair = bs.expanded_level([bs.Cells.from_list(x), bs.Cells.from_list(y)])
    assert pair == pytest.approx(bs.expanded_level(bs.Cells.from_list(x + y)), rel=1e-12)
    # wider than either algorithm's own plain percentile level
    assert pair < 0.025


def test_studentized_difference_is_the_bootstrap_t_of_the_difference():
    rng = np.random.default_rng(6)
    cx = bs.Cells.from_list([rng.lognormal(size=5) for _ in range(4)])
    cy = bs.Cells.from_list([rng.lognormal(size=6) for _ in range(4)])
    mean = [registry.get_metric("mean")]
    extras: list[dict] = [{}, {}]
    for cells, seed, out in ((cx, 1, extras[0]), (cy, 2, extras[1])):
        aggregate_tuple(cells, mean, 3000, np.random.default_rng(seed), method="bootstrap-t", mean_se=out)
    low, high = studentized_difference(extras[0], extras[1], 0.95)
    # by hand: the two algorithms' replicates drawn again from the same streams
    rx = bs.replicates(cx, mt.mean_se, 3000, np.random.default_rng(1))
    ry = bs.replicates(cy, mt.mean_se, 3000, np.random.default_rng(2))
    px, py = mt.mean_se(bs.original(cx))[0], mt.mean_se(bs.original(cy))[0]
    d, se = px[0] - py[0], np.sqrt(px[1] ** 2 + py[1] ** 2)
    t = (rx[:, 0] - ry[:, 0] - d) / np.sqrt(rx[:, 1] ** 2 + ry[:, 1] ** 2)
    hi_t, lo_t = np.quantile(t, [0.975, 0.025])
    assert (low, high) == pytest.approx((d - hi_t * se, d - lo_t * se), rel=1e-12)


def test_student_t_task_intervals_are_scipys_t_intervals():
    import scipy.stats

    per_task = [np.array([0.2, 0.9, 0.4]), np.array([1.0, 3.0, 2.0, 8.0, 5.0]), np.array([7.0])]
    low, high = bs.student_t_task_intervals(bs.Cells.from_list(per_task), 0.9)
    for runs, lo, hi in zip(per_task[:2], low, high):
        ref = scipy.stats.t.interval(0.9, runs.size - 1, loc=runs.mean(), scale=scipy.stats.sem(runs))
        assert (lo, hi) == pytest.approx(ref, rel=1e-12)
    assert (low[2], high[2]) == (7.0, 7.0)
