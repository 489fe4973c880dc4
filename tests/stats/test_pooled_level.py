"""The race's small-sample level (``stats/pooled_level.py``): pooled task spreads and Welch-Satterthwaite factors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import distributions
from rl_reliable_logger.stats import pooled_level as pl
from rl_reliable_logger.stats.intervals.bounds import expanded_level


def test_pooled_variances_weigh_each_configuration_by_its_degrees_of_freedom_and_are_scale_free() -> None:
    rng = np.random.default_rng(0)
    a = [rng.normal(0, 1, 3), rng.normal(5, 2, 2)]
    b = [rng.normal(1, 1, 5), rng.normal(5, 2, 1)]  # one run on task 2: no spread to pool there
    got = pl.pooled_variances([bs.Cells.from_list(a), bs.Cells.from_list(b)])
    unit = max(np.abs(np.concatenate(a + b)))
    want_1 = (2 * np.var(a[0], ddof=1) + 4 * np.var(b[0], ddof=1)) / 6
    assert got * unit**2 == pytest.approx([want_1, np.var(a[1], ddof=1)])
    huge = pl.pooled_variances([bs.Cells.from_list([x * 1e200 for x in a]), bs.Cells.from_list([x * 1e200 for x in b])])
    assert huge == pytest.approx(got) and np.isfinite(huge).all()  # in units of the largest |score|: no overflow
    with pytest.raises(ValueError, match="at least one configuration"):
        pl.pooled_variances([])


def test_tasks_that_spread_alike_give_the_expanded_level() -> None:
    """Every task's runs with the same variance: c and ν are the expanded percentile interval's (√(n/(n-1)) and
    Σ (n - 1)), and the tail probability is :func:`intervals.bounds.expanded_level`'s."""
    runs = [np.array([m - 1.0, m + 1.0, m]) for m in range(6)]  # each task's variance is 1
    cells = bs.Cells.from_list(runs)
    c, nu = pl.welch_factors([cells.sizes], pl.pooled_variances([cells]))
    assert c == pytest.approx(math.sqrt(1.5)) and nu == pytest.approx(12.0)
    tail = float(distributions.norm_cdf(-pl.multiplier(float(distributions.norm_ppf(0.975)), c, nu)))
    assert tail == pytest.approx(expanded_level(cells, 0.95))


def test_one_dominant_task_leaves_few_degrees_of_freedom_and_two_statistics_add_theirs() -> None:
    spreads = np.array([1.0] + [1e-4] * 9)
    one = pl.welch_factors([np.full(10, 2)], spreads)[1]
    assert one == pytest.approx(1.0, abs=0.01)  # the noisy task's one degree of freedom, not 10
    pair = pl.welch_factors([np.full(10, 2), np.full(10, 4)], spreads)[1]
    assert one < pair < 4.0  # the difference of two configurations: Welch over both sets of cells
    assert pl.welch_factors([np.ones(10, dtype=int)], spreads) == (1.0, math.inf)  # no cell with two runs


def test_the_multiplier_is_the_normal_critical_value_on_infinite_degrees_of_freedom() -> None:
    assert pl.multiplier(2.5, 1.0, math.inf) == 2.5
    assert pl.multiplier(2.5, 1.0, 10.0) > pl.multiplier(2.5, 1.0, 100.0) > 2.5
    assert pl.multiplier(2.5, math.sqrt(2.0), math.inf) == pytest.approx(2.5 * math.sqrt(2.0))
