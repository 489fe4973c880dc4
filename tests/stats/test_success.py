"""Success-rate intervals (``stats.success``) against independent definitions, at the boundary and on ragged seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rl_reliable_logger.stats import success as su

Z = float(stats.norm.ppf(0.975))


def scipy_wilson(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


@pytest.mark.parametrize("k", [0, 1, 7, 19, 20])
def test_one_seed_is_scipys_wilson_interval(k):
    res = su.task_intervals([[k]], [[20]])
    assert (res.low[0], res.high[0]) == pytest.approx(scipy_wilson(k, 20), abs=1e-12)
    assert res.n_eff[0] == 20


def test_seeds_that_agree_pool_their_episodes():
    # identical seeds show no seed-to-seed variance: the Wilson interval of all 30 episodes
    res = su.task_intervals([[4, 4, 4]], [[10, 10, 10]])
    assert (res.low[0], res.high[0]) == pytest.approx(scipy_wilson(12, 30), abs=1e-12)


def test_seeds_that_disagree_shrink_the_effective_episodes_by_the_design_effect():
    k, n = np.array([[0.0, 10.0, 2.0]]), np.full((1, 3), 10.0)
    rates = k[0] / n[0]
    p, s2 = rates.mean(), rates.var(ddof=1)
    t = stats.t.ppf(0.975, 2)
    deff = (t / Z) ** 2 * (s2 / 3) / (p * (1 - p) / 30)
    res = su.task_intervals(k, n)
    assert res.n_eff[0] == pytest.approx(30 / deff)
    # Wilson's formula at that n, written out
    m = 30 / deff
    centre = (p + Z**2 / (2 * m)) / (1 + Z**2 / m)
    half = Z / (1 + Z**2 / m) * np.sqrt(p * (1 - p) / m + Z**2 / (4 * m * m))
    assert (res.low[0], res.high[0]) == pytest.approx((centre - half, centre + half))
    pooled = scipy_wilson(12, 30)
    assert res.high[0] - res.low[0] > 2 * (pooled[1] - pooled[0])


@pytest.mark.parametrize("seeds, episodes", [(3, 5), (5, 20), (10, 50), (1, 1)])
def test_all_failures_are_not_a_point_and_all_successes_mirror_them(seeds, episodes):
    n = np.full((1, seeds), episodes)
    zero = su.task_intervals(np.zeros((1, seeds)), n)
    one = su.task_intervals(n, n)
    big_n = seeds * episodes
    assert zero.low[0] == 0 and zero.high[0] == pytest.approx(Z**2 / (big_n + Z**2))
    assert zero.high[0] > 0
    assert one.high[0] == 1 and one.low[0] == pytest.approx(1 - zero.high[0]) and one.low[0] < 1


def test_intervals_are_symmetric_under_swapping_successes_and_failures():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 30, size=(50, 4)).astype(float)
    k = np.floor(rng.random((50, 4)) * (n + 1))
    a, b = su.task_intervals(k, n), su.task_intervals(n - k, n)
    assert a.low == pytest.approx(1 - b.high)
    assert a.high == pytest.approx(1 - b.low)
    assert np.all((a.low <= a.point) & (a.point <= a.high))


def test_ragged_seeds_use_only_present_seeds():
    k = np.array([[3, 5, np.nan], [3, 5, 4]])
    n = np.array([[10, 10, np.nan], [10, 10, 10]])
    res = su.task_intervals(k, n)
    alone = su.task_intervals([[3, 5]], [[10, 10]])
    assert res.seeds.tolist() == [2, 3]
    assert (res.low[0], res.high[0]) == (alone.low[0], alone.high[0])


def test_unequal_episodes_weigh_seeds_equally():
    res = su.task_intervals([[1, 90]], [[10, 100]])
    assert res.point[0] == pytest.approx((0.1 + 0.9) / 2)


@pytest.mark.parametrize(
    "k, n, words",
    [
        ([[1, 2]], [[1, 2, 3]], "one shape"),
        ([[1.5]], [[3]], "whole numbers from 0"),
        ([[4]], [[3]], "whole numbers from 0"),
        ([[0]], [[0]], "at least 1"),
        ([[np.nan, 1]], [[3, 3]], "same seeds"),
        ([[np.nan]], [[np.nan]], "at least one seed"),
    ],
)
def test_bad_counts_are_named(k, n, words):
    with pytest.raises(ValueError, match=words):
        su.task_intervals(np.array(k, dtype=float), np.array(n, dtype=float))


def test_difference_is_newcombes_mover_over_the_wilson_limits():
    kx, ky, n = 7, 2, 20
    res = su.difference_intervals([[kx]], [[n]], [[ky]], [[n]])
    (lx, ux), (ly, uy) = scipy_wilson(kx, n), scipy_wilson(ky, n)
    px, py = kx / n, ky / n
    d = px - py
    assert res.point[0] == pytest.approx(d)
    assert res.low[0] == pytest.approx(d - np.sqrt((px - lx) ** 2 + (uy - py) ** 2))
    assert res.high[0] == pytest.approx(d + np.sqrt((ux - px) ** 2 + (py - ly) ** 2))


def test_difference_of_two_zero_tasks_is_an_interval_around_zero():
    n = np.full((1, 3), 10)
    res = su.difference_intervals(np.zeros((1, 3)), n, np.zeros((1, 3)), n)
    upper = Z**2 / (30 + Z**2)
    assert (res.point[0], res.low[0], res.high[0]) == pytest.approx((0.0, -upper, upper))


def test_bootstrap_keeps_tasks_seeds_and_padding_and_is_reproducible():
    k = np.array([[0, 3, np.nan], [5, 5, 5]])
    n = np.array([[5, 5, np.nan], [5, 5, 5]])
    a = su.bootstrap_rates(k, n, 2500, seed=4)
    assert a.shape == (2500, 2, 3)
    assert np.all(np.isnan(a[:, 0, 2])) and not np.any(np.isnan(a[:, :, :2]))
    assert np.array_equal(a, su.bootstrap_rates(k, n, 2500, seed=4), equal_nan=True)
    # every rate is a count of the drawn seed's episodes
    assert np.allclose(a[:, :, :2] * 5, np.round(a[:, :, :2] * 5))
    # a task with every episode a success still varies (the half count), below 1
    assert a[:, 1].min() < 1


def test_bootstrap_variance_is_the_seeds_variance_not_twice_the_episode_noise():
    # 10 seeds of 40 episodes that differ far beyond their binomial noise: the replicates' variance of the
    # task mean is the seeds' unbiased variance over s (the seed draw alone gives (s-1)/s of it; a binomial
    # step at the raw rates would add their episode noise again)
    rates = np.linspace(0.1, 0.9, 10)
    k, n = np.round(rates * 40)[None], np.full((1, 10), 40.0)
    dist = np.nanmean(su.bootstrap_rates(k, n, 20000, seed=1), axis=2)[:, 0]
    expected = (k[0] / 40).var(ddof=1) / 10
    assert dist.var() == pytest.approx(expected, rel=0.05)


def test_aggregate_of_all_failures_is_zero_to_above_zero_and_of_all_successes_mirrors_it():
    n = np.full((5, 3), 10)
    zero = su.aggregate_interval(np.zeros((5, 3)), n, reps=1000)
    one = su.aggregate_interval(n, n, reps=1000)
    assert zero.point == 0 and zero.low == 0 and 0 < zero.high < 0.05
    assert one.point == 1 and one.high == 1 and 0.95 < one.low < 1
    assert zero.method == "score"


def test_aggregate_mean_point_is_the_mean_of_task_rates_and_other_statistics_are_percentile():
    k = np.array([[1, 2, 3], [8, 9, 10], [5, 5, np.nan]])
    n = np.array([[10, 10, 10], [10, 10, 10], [10, 10, np.nan]])
    res = su.aggregate_interval(k, n, reps=500)
    assert res.point == pytest.approx(np.mean([0.2, 0.9, 0.5]))
    assert res.low < res.point < res.high
    best = lambda r: np.nanmax(np.nanmean(r, axis=-1), axis=-1)
    other = su.aggregate_interval(k, n, statistic=best, reps=500)
    assert other.method == "percentile" and other.point == pytest.approx(0.9)
    assert other.low == pytest.approx(np.quantile(other.replicates, 0.025)) or other.low == other.point


def test_aggregate_difference_of_zero_suites_straddles_zero():
    n = np.full((4, 3), 20)
    res = su.aggregate_difference((np.zeros((4, 3)), n), (np.zeros((4, 3)), n), reps=500)
    assert res.point == 0 and res.low < 0 < res.high


def test_warnings_flag_rates_near_the_boundary():
    k = np.array([[0, 0, 1], [5, 5, 5], [10, 9, 10]])
    assert su.coverage_warnings(k, np.full((3, 3), 10)).tolist() == [True, False, True]


def test_coverage_of_a_mid_rate_with_heterogeneous_seeds():
    """500 simulated tasks (5 seeds x 20 episodes, beta-binomial rho = 0.1, mu = 0.5); the study's 4,000-trial
    cell is 0.959 (docs/validation.md). Band: 3 SE of 500 trials around the target."""
    rng = np.random.default_rng(46)
    p = rng.beta(0.5 * 9, 0.5 * 9, size=(500, 5))
    k = rng.binomial(20, p)
    res = su.task_intervals(k, np.full(k.shape, 20))
    coverage = np.mean((res.low <= 0.5) & (0.5 <= res.high))
    assert 0.92 <= coverage <= 0.985


def test_the_docs_page_example_runs():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "success-rates.md"
    result = doctest.testfile(str(page), module_relative=False)
    assert result.attempted > 0 and result.failed == 0
