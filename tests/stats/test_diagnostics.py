"""The skew diagnostic: the estimated skewness of the mean over tasks (or of a difference of two means)."""

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import diagnostics as dg


def test_one_task_gives_the_sample_skewness_over_root_n():
    runs = np.array([0.1, 0.2, 0.4, 3.0, 0.3])
    cells = bs.Cells.from_list([runs])
    g1 = scipy.stats.skew(runs, bias=False)  # k3 / s^3
    assert dg.estimator_skewness([cells]) == pytest.approx(g1 / np.sqrt(runs.size), rel=1e-12)


def test_hand_formula_over_tasks_and_a_difference():
    rng = np.random.default_rng(0)
    x = [rng.lognormal(size=n) for n in (3, 5, 4)]
    y = [rng.lognormal(size=n) for n in (6, 3, 2)]
    k3 = lambda r: scipy.stats.kstat(r, 3) if r.size >= 3 else 0.0
    var = lambda r: np.var(r, ddof=1) if r.size >= 2 else 0.0
    num = sum(k3(r) / r.size**2 for r in x) - sum(k3(r) / r.size**2 for r in y)
    den = (sum(var(r) / r.size for r in x + y)) ** 1.5
    pair = dg.estimator_skewness([bs.Cells.from_list(x), bs.Cells.from_list(y)])
    assert pair == pytest.approx(num / den, rel=1e-10)
    swapped = dg.estimator_skewness([bs.Cells.from_list(y), bs.Cells.from_list(x)])
    assert swapped == pytest.approx(-pair, rel=1e-12)


@pytest.mark.parametrize("factor", [1e-150, 3.0, 1e150])
def test_scale_free_and_zero_for_symmetric_or_constant_runs(factor):
    rng = np.random.default_rng(1)
    per_task = [rng.lognormal(sigma=1.5, size=5) for _ in range(4)]
    base = dg.estimator_skewness([bs.Cells.from_list(per_task)])
    scaled = dg.estimator_skewness([bs.Cells.from_list([r * factor for r in per_task])])
    assert scaled == pytest.approx(base, rel=1e-10)
    symmetric = bs.Cells.from_list([np.array([-1.0, 0.0, 1.0]) * factor, np.array([2.0, 3.0, 4.0]) * factor])
    assert dg.estimator_skewness([symmetric]) == pytest.approx(0.0, abs=1e-12)
    assert dg.estimator_skewness([bs.Cells.from_list([np.full(4, factor)])]) == 0.0


def test_tail_skewness_is_the_pooled_skewness_of_the_runs():
    rng = np.random.default_rng(3)
    per_task = [rng.lognormal(size=6) for _ in range(4)]
    k3 = np.mean([scipy.stats.kstat(r, 3) for r in per_task])
    var = np.mean([np.var(r, ddof=1) for r in per_task])
    assert dg.tail_skewness([bs.Cells.from_list(per_task)]) == pytest.approx(k3 / var**1.5, rel=1e-10)


def test_fires_on_a_heavy_tail_and_not_on_normal_runs():
    rng = np.random.default_rng(2)
    # one task's rare huge run carries the mean, as with lognormal(σ 1.5) tasks of unequal scales
    heavy = bs.Cells.from_list([np.r_[rng.lognormal(sigma=0.3, size=4), 200.0]] + [rng.lognormal(size=5)] * 3)
    calm = bs.Cells.from_list([rng.normal(size=5) for _ in range(4)])
    assert dg.mean_untrusted([heavy]) and not dg.mean_untrusted([calm])
