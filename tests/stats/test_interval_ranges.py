"""A bound outside its statistic's hard range (the values its estimand can take whatever the data) is moved to the
range's edge, and the move is recorded; an unbounded statistic's interval is untouched."""

from __future__ import annotations

import numpy as np

from rl_reliable_logger.stats import aggregate, intervals
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.intervals.bounds import expanded_level

# the tester's probe (one algorithm, one task, 5 runs); seed 8 draws replicates whose bootstrap-t interval reaches
# below 0, as the probe's `rl-reliable evaluate --reps 1000 --seed 2` did ([-0.218, 3.691])
GAP_RUNS = np.array([0.8, 0.2, -1.6, -1.2, 0.9])


def _aggregates(metric: mt.Metric, runs: np.ndarray, seed: int = 8) -> tuple[bs.Cells, aggregate.AlgorithmAggregates]:
    cells = bs.Cells.from_list([runs])
    request = intervals.ResamplingRequest("bootstrap-t", 0.95, {"aggregates": 1000})
    return cells, aggregate.aggregate_intervals(cells, [metric], request, np.random.default_rng(seed))


def _with_range(
    metric: mt.Metric, cells: bs.Cells, found: aggregate.AlgorithmAggregates, *, ranged: bool = True
) -> intervals.IntervalResult:
    """The same interval as :func:`aggregate.aggregate_intervals`, from its replicates, with the metric's range (or
    without any, ``ranged=False``)."""
    se = found.standard_errors or {}
    sample = intervals.Sample(
        level=lambda ci: expanded_level(cells, ci),
        runs=cells,
        standard_errors=(lambda kind: (se[kind]["dist"], se[kind]["point"])) if se else None,
        hard_range=mt.hard_ranges([metric]) if ranged else None,
    )
    request = intervals.ResamplingRequest("bootstrap-t", 0.95, {"aggregates": 1000})
    kinds = [aggregate.statistic_kind(metric)]
    return intervals.estimate(request, "aggregates", found.replicates, found.point, sample, kinds=kinds)


def test_the_optimality_gaps_studentized_interval_is_moved_into_its_range_and_the_move_recorded():
    gap = mt.Metric("optimality_gap", mt.optimality_gap(1.0))
    cells, found = _aggregates(gap, GAP_RUNS)
    raw = _with_range(gap, cells, found, ranged=False)
    assert raw.low[0] < 0 and raw.clipped == ()  # the bootstrap-t interval extrapolates below 0, where no gap can be
    result = _with_range(gap, cells, found)
    assert result.low[0] == 0.0 and result.high[0] == raw.high[0]  # the upper end (above γ: scores < 0) stays
    assert result.clipped == (intervals.Clip(0, 1),) and result.methods == raw.methods
    assert found.low[0] == 0.0 and found.result.clipped == result.clipped  # aggregate_intervals passes the range
    assert "1 bound outside" in intervals.clip_note("the optimality_gap", result.clipped[0].moved)
    assert found.point[0] > 1.0 and mt.Metric("g", mt.optimality_gap(1.0)).hard_range == (0.0, np.inf)


def test_an_unbounded_metrics_interval_is_untouched():
    mean = mt.Metric("mean", mt.mean)
    cells, found = _aggregates(mean, GAP_RUNS - 10.0)
    result = _with_range(mean, cells, found)
    assert mean.hard_range == (-np.inf, np.inf)
    assert result.low[0] == found.low[0] < -10 and result.high[0] == found.high[0] and result.clipped == ()


def test_probability_of_improvement_bounds_stay_in_zero_one():
    # the basic interval (2 x estimate - a quantile) of P(X > Y) replicates near 1 reaches past 1
    rng = np.random.default_rng(0)
    dist = np.clip(rng.normal(0.97, 0.03, size=(500, 1)), 0.0, 1.0)
    point = np.array([0.97])
    request = intervals.ResamplingRequest("basic", 0.95)
    plain = intervals.estimate(request, "improvement", dist, point)
    assert plain.high[0] > 1.0 and plain.clipped == ()
    sample = intervals.Sample(hard_range=mt.IMPROVEMENT_RANGE)
    result = intervals.estimate(request, "improvement", dist, point, sample)
    assert 0.0 <= result.low[0] <= result.high[0] == 1.0 and result.clipped == (intervals.Clip(0, 1),)
    assert result.low[0] == plain.low[0]


def test_stacked_intervals_are_clipped_as_one_at_a_time_whatever_the_chunk():
    rng = np.random.default_rng(1)
    dists = [np.clip(rng.normal(m, 0.05, size=(400, 2)), 0.0, 1.0) for m in (0.03, 0.5, 0.98)]
    points = [d.mean(axis=0) for d in dists]
    samples = [intervals.Sample(hard_range=mt.FRACTION_RANGE) for _ in dists]

    def fill(i: int, out: np.ndarray) -> None:
        out[...] = dists[i]

    one = [intervals.estimate(intervals.ResamplingRequest("basic", 0.95), "profiles", d, p, s) for d, p, s in
           zip(dists, points, samples)]  # fmt: skip
    for chunk in (1, 400 * 2 * 8 * 2, 2**30):
        request = intervals.ResamplingRequest("basic", 0.95, chunk_bytes=chunk)
        stacked = intervals.estimate_stacked(request, "profiles", (3, 400, 2), fill, points, samples)
        for a, b in zip(one, stacked):
            assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high) and a.clipped == b.clipped
    assert one[0].clipped and one[2].clipped and not one[1].clipped
    assert all(0.0 <= v <= 1.0 for r in one for v in (*r.low, *r.high))
