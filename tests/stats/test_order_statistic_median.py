"""The median's order-statistic interval: [median of per-task lower bounds, median of per-task upper bounds]."""

import numpy as np
import pytest

from rl_reliable_logger.stats import aggregate as agg
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry
from rl_reliable_logger.stats.intervals import bounds
from tests.support.intervals import aggregate_tuple


def _cells(rng, m=9, n=4):
    return bs.Cells.from_list([rng.normal(rng.normal(0, 1), 0.5, n) for _ in range(m)])


def test_by_hand_odd_and_even_task_counts():
    assert agg.order_statistic_median([0.0, 2.0, 1.0], [5.0, 3.0, 4.0]) == (1.0, 4.0)
    assert agg.order_statistic_median([0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 9.0]) == (1.5, 5.5)


def test_contains_the_median_estimate():
    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 10, 26):
        cells = _cells(rng, m=m, n=int(rng.integers(2, 6)))
        low, high = agg.median_order_statistic_interval(cells, 0.95)
        point = float(mt.median(bs.original(cells))[0])
        assert low <= point <= high
        assert low < high


def test_monotone_in_every_per_task_bound():
    rng = np.random.default_rng(4)
    for _ in range(200):
        m = int(rng.integers(1, 12))
        low = rng.normal(0, 1, m)
        high = low + rng.exponential(1, m)
        base = agg.order_statistic_median(low, high)
        j, step = int(rng.integers(m)), float(rng.exponential(1))
        up_low, up_high = low.copy(), high.copy()
        up_low[j] += step
        up_high[j] += step
        moved = agg.order_statistic_median(up_low, up_high)
        assert moved[0] >= base[0] and moved[1] >= base[1]
        down = agg.order_statistic_median(low - (np.arange(m) == j) * step, high)
        assert down[0] <= base[0] and down[1] == base[1]


def test_covers_whenever_every_task_interval_covers():
    rng = np.random.default_rng(5)
    for _ in range(500):
        m = int(rng.integers(1, 15))
        truth = rng.normal(0, 1, m)
        low, high = truth - rng.exponential(0.5, m), truth + rng.exponential(0.5, m)
        lo, hi = agg.order_statistic_median(low, high)
        assert lo <= np.median(truth) <= hi


def test_built_from_the_student_t_task_intervals_and_wider_with_the_level():
    cells = _cells(np.random.default_rng(6))
    low, high = bounds.student_t_task_intervals(cells, 0.95)
    assert agg.median_order_statistic_interval(cells, 0.95) == (float(np.median(low)), float(np.median(high)))
    narrow = agg.median_order_statistic_interval(cells, 0.5)
    wide = agg.median_order_statistic_interval(cells, 0.99)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]


@pytest.mark.parametrize("method", ["percentile", "bootstrap-t"])
def test_aggregate_intervals_replaces_the_median_only(method):
    cells = _cells(np.random.default_rng(7))
    metrics = [registry.get_metric(m) for m in ("mean", "median", "iqm")]
    plain = aggregate_tuple(cells, metrics, 400, np.random.default_rng(1), method=method)
    ordered = aggregate_tuple(
        cells, metrics, 400, np.random.default_rng(1), method=method, median_interval="order-statistic"
    )
    np.testing.assert_array_equal(plain[0], ordered[0])
    np.testing.assert_array_equal(plain[3], ordered[3])
    for k in (1, 2):
        np.testing.assert_array_equal(plain[k][[0, 2]], ordered[k][[0, 2]])
    assert (ordered[1][1], ordered[2][1]) == agg.median_order_statistic_interval(cells, 0.95)
    assert ordered[2][1] - ordered[1][1] > plain[2][1] - plain[1][1]  # conservative: wider on these data


def test_an_unknown_median_interval_is_refused():
    cells = _cells(np.random.default_rng(8))
    with pytest.raises(ValueError, match="median_interval must be one of auto, method, order-statistic"):
        aggregate_tuple(cells, [registry.get_metric("median")], 50, 0, median_interval="order")
