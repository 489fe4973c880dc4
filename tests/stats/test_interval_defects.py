"""Issue 23's defects at the engine: ties in the bias correction, degenerate bootstrap-t, BCa on one task."""

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import distributions, intervals, registry
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.aggregate import studentized_difference
from rl_reliable_logger.stats.intervals import bounds
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
    assert bounds.studentized_mean_interval(dist, mt.mean_se(bs.original(cells))[0]) is None
    notes: list[str] = []
    mean = registry.get_metric("mean")
    _, low, high, _ = aggregate_tuple(cells, [mean], 2000, np.random.default_rng(1), method="bootstrap-t", notes=notes)
    assert (low[0], high[0]) == pytest.approx((0.2, 0.9))
    assert len(notes) == 1 and "expanded" in notes[0]


def test_studentized_interval_is_kept_where_the_data_allow_it():
    rng = np.random.default_rng(2)
    cells = bs.Cells.from_list([rng.normal(size=5) for _ in range(6)])
    dist = bs.replicates(cells, mt.mean_se, 2000, np.random.default_rng(3))
    found = bounds.studentized_mean_interval(dist, mt.mean_se(bs.original(cells))[0])
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
    levels = bounds.task_levels(cells, 0.95)
    for n, level in zip((3, 6), levels[:2]):
        expected = distributions.norm_cdf(-np.sqrt(n / (n - 1)) * distributions.t_ppf(0.975, n - 1))
        assert level == pytest.approx(float(expected), rel=1e-12)
    assert levels[2] == pytest.approx(0.025)


def test_the_level_of_a_pair_pools_both_algorithms_cells():
    rng = np.random.default_rng(4)
    x = [rng.normal(size=3) for _ in range(4)]
    y = [rng.normal(size=4) * 2 for _ in range(4)]
    pair = bounds.expanded_level([bs.Cells.from_list(x), bs.Cells.from_list(y)])
    assert pair == pytest.approx(bounds.expanded_level(bs.Cells.from_list(x + y)), rel=1e-12)
    # wider than either algorithm's own plain percentile level
    assert pair < 0.025


def test_studentized_difference_is_the_bootstrap_t_of_the_difference():
    rng = np.random.default_rng(6)
    cx = bs.Cells.from_list([rng.lognormal(size=5) for _ in range(4)])
    cy = bs.Cells.from_list([rng.lognormal(size=6) for _ in range(4)])
    mean = [registry.get_metric("mean")]
    extras: list[dict] = [{}, {}]
    for cells, seed, out in ((cx, 1, extras[0]), (cy, 2, extras[1])):
        aggregate_tuple(cells, mean, 3000, np.random.default_rng(seed), method="bootstrap-t", se_replicates=out)
    low, high = studentized_difference(extras[0]["mean"], extras[1]["mean"], 0.95)
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
    low, high = bounds.student_t_task_intervals(bs.Cells.from_list(per_task), 0.9)
    for runs, lo, hi in zip(per_task[:2], low, high):
        ref = scipy.stats.t.interval(0.9, runs.size - 1, loc=runs.mean(), scale=scipy.stats.sem(runs))
        assert (lo, hi) == pytest.approx(ref, rel=1e-12)
    assert (low[2], high[2]) == (7.0, 7.0)


def _exact_zero_rule(dist: np.ndarray, point: np.ndarray, ci: float = 0.95) -> tuple[float, float] | None:
    """The rule before issue 43: only replicates whose standard error is exactly 0 counted as degenerate."""
    ok = dist[:, 1] > 0
    if point[1] == 0 or 1.0 - ok.mean() > bounds.DEGENERATE_SHARE:
        return None
    t = (dist[ok, 0] - point[0]) / dist[ok, 1]
    hi_t, lo_t = np.quantile(t, [1 - (1 - ci) / 2, (1 - ci) / 2])
    return point[0] - hi_t * point[1], point[0] - lo_t * point[1]


def test_standard_errors_zero_up_to_rounding_are_degenerate():
    """Issue 43: 2 tasks x 3 runs gave ``0.427 [-3.568, 5.97e13]``: replicates that copy one run in every task have
    standard errors that are rounding (1e-17), not 0, and their t* reach 1e15. Here a task whose runs all score 0.1
    (their mean, (0.1 + 0.1 + 0.1) / 3, is 0.1 + 1 ulp): every replicate that copies one run of the other task."""
    x = np.random.default_rng(7).standard_normal((3, 2))
    x[:, 0] = 0.1
    cells = bs.Cells.from_array(x)
    dist = bs.replicates(cells, mt.mean_se, 2000, np.random.default_rng(0))
    point = mt.mean_se(bs.original(cells))[0]
    assert not (dist[:, 1] == 0).any() and (dist[:, 1] < 1e-12 * point[1]).mean() > 0.05  # rounding, not zero
    old = _exact_zero_rule(dist, point)
    assert old is not None and old[1] - old[0] > 1e6 * np.ptp(x)  # what the exact-zero test let through
    assert bounds.studentized_interval(dist, point) is None  # now: degenerate, so the caller falls back and warns
    notes: list[str] = []
    _, low, high, _ = aggregate_tuple(
        cells, [registry.get_metric("mean")], 2000, np.random.default_rng(0), method="bootstrap-t", notes=notes
    )
    assert x.min() <= low[0] <= high[0] <= x.max() and len(notes) == 1 and "expanded" in notes[0]


def test_random_two_by_three_tables_get_sane_mean_intervals():
    """The audit's setting (2 tasks x 3 runs of N(0, 1), 30 data sets): every mean interval stays near the runs."""
    for seed in range(30):
        x = np.random.default_rng(seed).standard_normal((3, 2))
        point, low, high, _ = aggregate_tuple(
            bs.Cells.from_array(x), [registry.get_metric("mean")], 2000, np.random.default_rng(seed),
            method="bootstrap-t",
        )  # fmt: skip
        assert low[0] <= point[0] <= high[0] and high[0] - low[0] <= 2 * np.ptp(x) / bounds.DEGENERATE_SE


def test_the_degenerate_rule_is_scale_free():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3))
    found = []
    for scale in (1e-150, 1.0, 1e150):
        cells = bs.Cells.from_array(x * scale)
        dist = bs.replicates(cells, mt.mean_se, 2000, np.random.default_rng(1))
        ends = bounds.studentized_interval(dist, mt.mean_se(bs.original(cells))[0])
        found.append(None if ends is None else np.array(ends) / scale)
    assert all(f is None for f in found) or all(f is not None for f in found)
    if found[0] is not None:
        np.testing.assert_allclose(found[0], found[1], rtol=1e-9)
        np.testing.assert_allclose(found[2], found[1], rtol=1e-9)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    tasks=st.integers(1, 4),
    runs=st.integers(2, 5),
    scale=st.floats(-6, 6),
    offset=st.floats(-1e3, 1e3),
    seed=st.integers(0, 2**32 - 1),
    heavy=st.booleans(),
)
def test_no_bootstrap_t_interval_is_absurd(tasks, runs, scale, offset, seed, heavy):
    """Random small tables (the ones where studentized replicates degenerate): every bootstrap-t interval of the
    mean, the IQM and the optimality gap is finite, holds its estimate and lies within ``range / DEGENERATE_SE`` of it (the bound the
    rule gives: ``|t*| se <= |stat* - stat| / DEGENERATE_SE``), whether studentized or fallen back."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_t(2, (runs, tasks)) if heavy else rng.standard_normal((runs, tasks))) * 10.0**scale + offset
    if rng.random() < 0.2:  # a constant task (e.g. a game every run scores 0 on)
        x[:, 0] = x[0, 0]
    cells = bs.Cells.from_array(x)
    metrics = [registry.get_metric(name) for name in ("mean", "iqm", "optimality_gap")]
    point, low, high, _ = aggregate_tuple(cells, metrics, 500, np.random.default_rng(seed), method="bootstrap-t")
    spread = float(np.ptp(x))
    assert np.isfinite(low).all() and np.isfinite(high).all()
    tol = 1e-9 * max(spread, abs(offset), 1e-300)
    assert (low <= point + tol).all() and (point - tol <= high).all()
    bound = spread / bounds.DEGENERATE_SE + tol
    assert (point - low <= bound).all() and (high - point <= bound).all()
