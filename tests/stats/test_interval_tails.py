"""One interval package (issue 51): ``tail=`` bounds one side at the level asked, ``IntervalResult`` carries
scipy.stats.bootstrap's names, the registry loads no numpy, and the rliable drop-in's intervals are the shared
formulas with arch's quirks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.rliable import intervals as arch
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.intervals import bounds
from tests.support.imports import modules_loaded

RNG = np.random.default_rng(7)
CELLS = bs.Cells.from_list([RNG.normal(size=5) + 0.3 * m for m in range(4)])


def _replicates() -> tuple[np.ndarray, np.ndarray]:
    point = mt.mean_se(bs.original(CELLS))[0]
    return bs.replicates(CELLS, mt.mean_se, 2000, np.random.default_rng(0)), point


@pytest.mark.parametrize("method", ["percentile", "basic", "bc", "expanded"])
@pytest.mark.parametrize("tail", ["less", "greater"])
def test_a_one_sided_bound_is_the_end_of_the_two_sided_interval_at_twice_the_tail(method, tail):
    dist, point = _replicates()
    low, high = intervals.interval(dist[:, :1], point[:1], ci=0.9, method=method, cells=CELLS, tail=tail)
    two_low, two_high = intervals.interval(dist[:, :1], point[:1], ci=0.8, method=method, cells=CELLS)
    if tail == "less":  # (-inf, high]: the statistic is at most high with probability 0.9
        assert low[0] == -np.inf and high[0] == pytest.approx(two_high[0], rel=1e-12)
    else:
        assert high[0] == np.inf and low[0] == pytest.approx(two_low[0], rel=1e-12)


def test_a_one_sided_percentile_bound_is_the_replicates_quantile_at_the_level():
    dist = np.random.default_rng(1).normal(size=(4001, 3))
    point = dist.mean(axis=0)
    _, high = intervals.interval(dist, point, ci=0.9, tail="less")
    low, _ = intervals.interval(dist, point, ci=0.9, tail="greater")
    np.testing.assert_allclose(high, np.quantile(dist, 0.9, axis=0), rtol=1e-12)
    np.testing.assert_allclose(low, np.quantile(dist, 0.1, axis=0), rtol=1e-12)


def test_estimate_bounds_one_side_for_every_kind_of_statistic():
    dist, point = _replicates()
    request = intervals.ResamplingRequest("bootstrap-t", 0.95, {"aggregates": 2000})
    se = {"mean": (dist, point)}
    sample = intervals.Sample(level=lambda ci: bounds.expanded_level(CELLS, ci), standard_errors=se.__getitem__)
    both = intervals.estimate(request, "aggregates", dist[:, :1], point[:1], sample, kinds=["mean"])
    upper = intervals.estimate(request, "aggregates", dist[:, :1], point[:1], sample, kinds=["mean"], tail="less")
    assert upper.methods == both.methods == ("bootstrap-t",)
    assert upper.low[0] == -np.inf and point[0] < upper.high[0] < both.high[0]  # one side: a closer bound
    expected = bounds.studentized_interval(dist, point, 0.9)  # the upper end of the two-sided 90% interval
    assert expected is not None and upper.high[0] == pytest.approx(expected[1], rel=1e-12)


def test_a_bad_tail_or_a_one_sided_level_below_a_half_is_refused():
    dist, point = np.zeros((10, 1)), np.zeros(1)
    with pytest.raises(ValueError, match="tail must be one of 'two-sided', 'less', 'greater', got 'lower'"):
        intervals.interval(dist, point, tail="lower")
    with pytest.raises(ValueError, match="one-sided interval needs a level between 0.5 and 1, got 0.4"):
        intervals.interval(dist, point, ci=0.4, tail="less")


def test_the_result_has_scipys_names_and_values():
    """``confidence_interval``, ``bootstrap_distribution`` and ``standard_error`` as scipy.stats.bootstrap names them
    (the replicates on the first axis here, the last there), the standard error with scipy's ``ddof=1``."""
    data = np.random.default_rng(3).normal(size=12)
    theirs = scipy.stats.bootstrap((data,), np.mean, n_resamples=999, random_state=0, method="percentile")
    dist = np.asarray(theirs.bootstrap_distribution)[:, None]
    ours = intervals.estimate(intervals.ResamplingRequest("percentile", 0.95), "aggregates", dist, data.mean()[None])
    for name in ("confidence_interval", "bootstrap_distribution", "standard_error"):
        assert hasattr(theirs, name) and hasattr(ours, name), name
    assert ours.bootstrap_distribution is dist
    assert ours.standard_error[0] == pytest.approx(theirs.standard_error, rel=1e-12)
    assert (ours.low[0], ours.high[0]) == pytest.approx(tuple(theirs.confidence_interval), rel=1e-9)


def test_the_registry_and_the_package_import_no_numpy():
    code = "from rl_reliable_logger.stats import intervals\nwords = intervals.rule_words('bootstrap-t')"
    assert modules_loaded(code, ("numpy", "scipy"), timeout=60) == []


def test_the_drop_in_reads_the_shared_formulas_with_arch_quirks():
    results = np.random.default_rng(5).normal(size=(500, 2))
    base = np.array([0.1, -0.2])
    got = arch.conf_int(results, base, method="basic", size=0.9)
    pct = arch.conf_int(results, base, method="percentile", size=0.9)
    np.testing.assert_array_equal(got, np.vstack(bounds.reflect(base, pct[0], pct[1])))
    lower_only = arch.conf_int(results, base, method="percentile", size=0.9, tail="lower")  # arch: bounded below
    assert np.all(lower_only[1] == np.inf)
    np.testing.assert_allclose(lower_only[0], np.percentile(results, 10.0, axis=0), rtol=1e-12)
    jack = np.random.default_rng(6).normal(size=(9, 2))
    u = jack.mean() - jack  # arch: centred on the grand mean, not each output's
    expected = (u**3).sum(axis=0) / (6 * ((u**2).sum(axis=0)) ** 1.5)
    np.testing.assert_array_equal(arch.acceleration(jack)[:, 0], expected)
    assert np.isnan(arch.acceleration(np.ones((4, 1)))[0, 0])  # arch divides 0 by 0
