"""The skew diagnostic: each task's skewness, counted over tasks; the mean's interval flagged where most tasks'
runs are skewed, not where one task is extreme, and a pair on both algorithms' tails."""

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import diagnostics as dg


def _heavy(rng, tasks=26, runs=5):
    """Runs of lognormal(σ 1.5) tasks whose rare large run carries the mean: one such run in every task."""
    return bs.Cells.from_list([np.r_[rng.lognormal(0.0, 0.3, runs - 1), 40.0] for _ in range(tasks)])


def _normal(rng, tasks=26, runs=5):
    return bs.Cells.from_list([rng.normal(rng.normal(), 0.2, runs) for _ in range(tasks)])


def test_task_skewness_is_each_tasks_adjusted_sample_skewness():
    rng = np.random.default_rng(0)
    per_task = [rng.lognormal(size=n) for n in (3, 5, 10)] + [np.array([1.0, 2.0]), np.full(4, 7.5)]
    got = dg.task_skewness(bs.Cells.from_list(per_task))
    want = [scipy.stats.skew(r, bias=False) for r in per_task[:3]]
    np.testing.assert_allclose(got[:3], want, rtol=1e-10)
    # two runs have no third cumulant, constant runs no skewness: neither is read
    assert np.isnan(got[3:]).all()


@pytest.mark.parametrize("factor", [1e-150, 3.0, 1e150])
def test_task_skewness_is_scale_free(factor):
    rng = np.random.default_rng(1)
    per_task = [rng.lognormal(sigma=1.5, size=5) for _ in range(4)]
    base = dg.task_skewness(bs.Cells.from_list(per_task))
    scaled = dg.task_skewness(bs.Cells.from_list([r * factor for r in per_task]))
    np.testing.assert_allclose(scaled, base, rtol=1e-10)


def test_the_bar_rises_with_the_run_count():
    bars = dg.skew_threshold(np.array([3, 5, 10]))
    assert bars[0] < bars[1] < bars[2]
    # a task's maximal skewness (one run apart from the rest) clears its own bar at every run count
    for n, bar in zip((3, 5, 10), bars):
        assert dg.task_skewness(bs.Cells.from_list([np.r_[np.zeros(n - 1), 1.0]]))[0] > bar


def test_fires_on_heavy_tailed_runs_and_stays_quiet_on_normal_runs():
    rng = np.random.default_rng(2)
    heavy, calm = _heavy(rng), _normal(rng)
    assert dg.skewed_tasks(heavy) == (26, 26)
    assert dg.mean_untrusted([heavy])
    assert dg.skewed_tasks(calm).skewed < 13 and not dg.mean_untrusted([calm])


def test_one_extreme_task_alone_does_not_fire():
    rng = np.random.default_rng(3)
    per_task = [rng.normal(1.0, 0.1, 5) for _ in range(26)]
    per_task[0] = np.r_[np.full(4, 0.01), 1e6]  # one task with a huge spread and a single extreme run
    cells = bs.Cells.from_list(per_task)
    # the former pooled skewness is decided by that one task alone
    assert abs(dg.estimator_skewness([cells]) * np.sqrt(cells.n_runs)) > 2.9
    assert not dg.mean_untrusted([cells])


def test_a_pair_of_equally_heavy_tailed_algorithms_fires():
    rng = np.random.default_rng(4)
    x = _heavy(rng)
    y = bs.Cells.from_list([x.values[o : o + n].copy() for o, n in zip(x.offsets, x.sizes)])
    # the skewness of the difference cancels (the former rule's statistic is 0), both tails remain
    assert dg.estimator_skewness([x, y]) == pytest.approx(0.0, abs=1e-12)
    assert dg.mean_untrusted([x, y])
    assert not dg.mean_untrusted([_normal(rng), _normal(rng)])


def test_flagged_needs_the_share_and_two_tasks():
    assert dg.flagged(dg.SkewCount(13, 26)) == (13 >= dg.SKEWED_SHARE * 26)
    assert not dg.flagged(dg.SkewCount(1, 1)) and not dg.flagged(dg.SkewCount(0, 0))
    assert dg.SkewCount(0, 0).share == 0.0


def test_estimator_skewness_hand_formula_over_tasks_and_a_difference():
    rng = np.random.default_rng(0)
    x = [rng.lognormal(size=n) for n in (3, 5, 4)]
    y = [rng.lognormal(size=n) for n in (6, 3, 2)]
    k3 = lambda r: scipy.stats.kstat(r, 3) if r.size >= 3 else 0.0
    var = lambda r: np.var(r, ddof=1) if r.size >= 2 else 0.0
    num = sum(k3(r) / r.size**2 for r in x) - sum(k3(r) / r.size**2 for r in y)
    den = (sum(var(r) / r.size for r in x + y)) ** 1.5
    pair = dg.estimator_skewness([bs.Cells.from_list(x), bs.Cells.from_list(y)])
    assert pair == pytest.approx(num / den, rel=1e-10)
