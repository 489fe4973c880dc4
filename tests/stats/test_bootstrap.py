"""The resampling engine: stratification, reproducibility, chunking, interval methods."""

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals, registry
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import profiles as pf
from rl_reliable_logger.stats.intervals import bounds


def test_draws_stay_inside_their_task_and_keep_cell_sizes():
    cells = bs.Cells.from_list([np.arange(3.0), 100 + np.arange(5.0), 1000 + np.arange(2.0)])
    batch = bs.draw(cells, 200, np.random.default_rng(0))
    samples = batch.padded_samples()  # (R, N_max, tasks)
    assert np.isnan(samples[:, 3:, 0]).all() and np.isnan(samples[:, 2:, 2]).all()
    assert not np.isnan(samples[:, :5, 1]).any()
    assert ((samples[:, :3, 0] >= 0) & (samples[:, :3, 0] < 3)).all()
    assert ((samples[:, :2, 2] >= 1000) & (samples[:, :2, 2] < 1002)).all()
    # every run of a cell is drawn about equally often
    counts = batch.counts().sum(axis=0)
    np.testing.assert_allclose(counts[3:8] / counts[3:8].mean(), 1.0, atol=0.15)


def test_task_bootstrap_resamples_tasks():
    cells = bs.Cells.from_list([np.zeros(4), np.ones(4), 2 * np.ones(4)])
    means = bs.draw(cells, 500, np.random.default_rng(1), task_bootstrap=True).task_means()
    # slots hold whole tasks: a replicate can contain task 2 twice and task 0 never
    assert set(np.unique(means)) == {0.0, 1.0, 2.0}
    assert (np.sort(means, axis=1) != np.array([0.0, 1.0, 2.0])).any(axis=1).mean() > 0.5


def test_same_seed_gives_identical_results_and_other_seed_differs():
    cells = bs.Cells.from_array(np.random.default_rng(2).lognormal(size=(10, 8)))
    run = lambda seed, chunk: bs.replicates(cells, mt.iqm, 3000, np.random.default_rng(seed), chunk_bytes=chunk)
    assert np.array_equal(run(7, 2**20), run(7, 2**20))
    assert not np.array_equal(run(7, 2**20), run(8, 2**20))


def test_chunking_bounds_memory_without_changing_ragged_results():
    # ragged data draws one uniform double per run in replicate order: chunking cannot change it
    cells = bs.Cells.from_list([np.arange(3.0), np.arange(7.0), np.arange(5.0)])
    small = bs.replicates(cells, mt.mean, 1000, np.random.default_rng(3), chunk_bytes=10_000)
    large = bs.replicates(cells, mt.mean, 1000, np.random.default_rng(3), chunk_bytes=10**9)
    assert len(list(bs.chunk_sizes(1000, cells, 10_000))) > 5
    np.testing.assert_array_equal(small, large)


def test_percentile_and_basic_are_mirror_images():
    dist = np.random.default_rng(4).gamma(2.0, size=(5000, 1))
    point = np.array([1.5])
    plo, phi = intervals.interval(dist, point, method="percentile")
    blo, bhi = intervals.interval(dist, point, method="basic")
    assert blo[0] == pytest.approx(2 * 1.5 - phi[0]) and bhi[0] == pytest.approx(2 * 1.5 - plo[0])
    assert plo[0] == pytest.approx(np.quantile(dist, 0.025))


def test_bc_equals_percentile_when_estimate_is_the_bootstrap_median():
    dist = np.random.default_rng(5).normal(size=(20001, 1))
    point = np.median(dist, axis=0)
    np.testing.assert_allclose(
        intervals.interval(dist, point, method="bc"), intervals.interval(dist, point, method="percentile"), atol=1e-3
    )


def test_bca_matches_scipy_on_a_single_skewed_sample():
    # one task = ordinary bootstrap; scipy's BCa uses the same leave-one-out jackknife
    sample = np.random.default_rng(6).lognormal(sigma=1.0, size=30)
    cells = bs.Cells.from_list([sample])
    dist = bs.replicates(cells, mt.mean, 40_000, np.random.default_rng(7))[:, None]
    jack = bs.jackknife(cells, mt.mean)[:, None]
    lo, hi = intervals.interval(dist, np.array([sample.mean()]), method="bca", jackknife=jack)
    ref = scipy.stats.bootstrap(
        (sample,), np.mean, n_resamples=40_000, method="BCa", random_state=8
    ).confidence_interval
    plo, phi = intervals.interval(dist, np.array([sample.mean()]), method="percentile")
    assert abs(lo[0] - ref.low) < 0.03 and abs(hi[0] - ref.high) < 0.06
    # and BCa really moved away from the percentile interval on this skewed sample (upper end up)
    assert hi[0] - phi[0] > 0.05


def test_jackknife_leaves_one_run_out_of_its_own_task():
    cells = bs.Cells.from_list([np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])])
    jack = bs.jackknife(cells, mt.mean)
    np.testing.assert_allclose(jack, [(2.5 + 15) / 2, (2 + 15) / 2, (1.5 + 15) / 2, (2 + 20) / 2, (2 + 10) / 2])


def test_interval_rejects_bad_arguments():
    with pytest.raises(ValueError, match="ci"):
        intervals.interval(np.zeros((10, 1)), np.zeros(1), ci=1.5)
    with pytest.raises(ValueError, match="percentile"):
        intervals.interval(np.zeros((10, 1)), np.zeros(1), method="norm")  # type: ignore[arg-type]


BUILT_IN = ["mean", "median", "iqm", "optimality_gap", "dp25", "trimmed_mean_0.1", "p_above_1"]


def _leave_one_out(per_task: list[np.ndarray]):
    """Brute force: every run of every task with >= 2 runs removed in turn, as a new data set."""
    for m, runs in enumerate(per_task):
        if runs.size < 2:
            continue
        for j in range(runs.size):
            yield m, [np.delete(r, j) if t == m else r for t, r in enumerate(per_task)]


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("name", BUILT_IN)
def test_jackknife_equals_brute_force_leave_one_run_out(name, ragged):
    rng = np.random.default_rng(31)
    sizes = (4, 7, 1, 5) if ragged else (5, 5, 5, 5)
    per_task = [np.sort(rng.lognormal(sigma=1.0, size=n)) for n in sizes]
    cells = bs.Cells.from_list(per_task)
    metric = registry.get_metric(name)
    jack = bs.jackknife(cells, metric)
    brute = [metric(bs.original(bs.Cells.from_list(data)))[0] for _, data in _leave_one_out(per_task)]
    np.testing.assert_allclose(jack, brute, rtol=1e-12, atol=1e-12)
    tasks = [m for m, _ in _leave_one_out(per_task)]
    np.testing.assert_array_equal(bs.jackknife_tasks(cells), tasks)


def _independent_bca(dist, point, jack, strata, ci=0.95):
    """Textbook BCa (Efron & Tibshirani 1993, eq. 14.10, 14.15 with the stratified acceleration)."""
    from scipy.stats import norm

    # ties: equal up to rounding (the estimate and the replicates are summed in different orders)
    tie = np.abs(dist - point) <= 1e-9 * max(np.abs(dist).max(), abs(point))
    z0 = norm.ppf((np.sum((dist < point) & ~tie) + 0.5 * np.sum(tie)) / dist.size)
    num = den = 0.0
    for task in sorted(set(strata)):
        theta = np.array([v for v, s in zip(jack, strata) if s == task])
        n = theta.size
        infl = (n - 1) * (theta.mean() - theta)
        num += np.sum(infl**3) / n**3
        den += np.sum(infl**2) / n**2
    a = num / (6 * den**1.5)
    ends = []
    for z in norm.ppf([(1 - ci) / 2, (1 + ci) / 2]):
        ends.append(np.quantile(dist, norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))))
    return ends, a


@pytest.mark.parametrize("ragged", [False, True])
def test_bca_interval_matches_an_independent_implementation_on_skewed_tasks(ragged):
    rng = np.random.default_rng(32)
    sizes = (3, 6, 4, 8, 5) if ragged else (6,) * 5
    per_task = [rng.lognormal(mean=t * 0.3, sigma=1.2, size=n) for t, n in enumerate(sizes)]
    cells = bs.Cells.from_list(per_task)
    for name in ("iqm", "mean", "optimality_gap"):
        metric = registry.get_metric(name)
        point = metric(bs.original(cells))
        dist = bs.replicates(cells, metric, 20_000, np.random.default_rng(33))[:, None]
        brute = [metric(bs.original(bs.Cells.from_list(d)))[0] for _, d in _leave_one_out(per_task)]
        strata = [m for m, _ in _leave_one_out(per_task)]
        (lo_ref, hi_ref), a = _independent_bca(dist[:, 0], point[0], np.array(brute), strata)
        jack = bs.jackknife(cells, metric)[:, None]
        np.testing.assert_allclose(bounds.acceleration(jack, bs.jackknife_tasks(cells)), [a], rtol=1e-10, atol=1e-14)
        lo, hi = intervals.interval(dist, point, method="bca", jackknife=jack, strata=bs.jackknife_tasks(cells))
        np.testing.assert_allclose([lo[0], hi[0]], [lo_ref, hi_ref], rtol=1e-10, atol=1e-12)


def test_multi_sample_acceleration_reduces_to_one_sample_for_one_task():
    jack = np.random.default_rng(3).normal(size=(9, 2))
    c = jack.mean(axis=0) - jack
    expected = (c**3).sum(axis=0) / (6 * ((c**2).sum(axis=0)) ** 1.5)
    np.testing.assert_allclose(bounds.acceleration(jack), expected, rtol=1e-12)
    np.testing.assert_allclose(bounds.acceleration(jack, np.zeros(9, int)), expected, rtol=1e-12)


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("sizes", [(5,) * 13, (3, 4, 5), (1, 2, 3, 5, 7)])
def test_draws_do_not_depend_on_chunk_size(sizes, task_bootstrap):
    """Odd draw counts per replicate (13 x 5 = 65 uniforms) once lost half a word per chunk; weighted sums once
    went through BLAS, whose summation order depends on the replicates in the chunk."""
    rng = np.random.default_rng(41)
    cells = bs.Cells.from_list([rng.lognormal(size=n) for n in sizes])
    metrics = [registry.get_metric(n) for n in BUILT_IN]
    gammas = np.linspace(0.2, 3.0, 7)
    stat = lambda r: np.concatenate(
        [np.stack([m(r) for m in metrics], axis=1), mt.mean_se(r), pf.profile_curves(r, gammas, gammas)], axis=1
    )

    def run(chunk_bytes):
        return bs.replicates(
            cells, stat, 101, np.random.default_rng(5), task_bootstrap=task_bootstrap, chunk_bytes=chunk_bytes
        )

    whole = run(bs.DEFAULT_CHUNK_BYTES)
    per_rep = 8 * 4 * max(cells.n_runs, max(sizes) * len(sizes))
    for chunk_bytes in (1, 3 * per_rep, 7 * per_rep):  # 1, 3 and 7 replicates per chunk
        np.testing.assert_array_equal(run(chunk_bytes), whole)


def test_expanded_level_is_hesterbergs_for_one_cell():
    from scipy import special, stats

    for n in (3, 5, 10):
        cells = bs.Cells.from_list([np.random.default_rng(n).normal(size=n)])
        expected = special.ndtr(-np.sqrt(n / (n - 1)) * stats.t.ppf(0.975, n - 1))
        assert bounds.expanded_level(cells, 0.95) == pytest.approx(expected, rel=1e-12)


def test_expanded_level_pools_cells_and_widens_the_percentile_interval():
    from scipy import special, stats

    rng = np.random.default_rng(4)
    cells = bs.Cells.from_list([rng.normal(size=5) for _ in range(8)])  # equal runs: c^2 = n/(n-1), df = 8 x 4
    expected = special.ndtr(-np.sqrt(5 / 4) * stats.t.ppf(0.975, 32))
    assert bounds.expanded_level(cells) == pytest.approx(expected, rel=1e-12)
    dist = bs.replicates(cells, mt.mean, 4000, np.random.default_rng(1))[:, None]
    point = mt.mean(bs.original(cells))
    lo_p, hi_p = intervals.interval(dist, point, method="percentile")
    lo_e, hi_e = intervals.interval(dist, point, method="expanded", cells=cells)
    np.testing.assert_allclose([lo_e[0], hi_e[0]], np.quantile(dist[:, 0], [expected, 1 - expected]))
    assert lo_e[0] < lo_p[0] and hi_e[0] > hi_p[0]
    with pytest.raises(ValueError, match="cells"):
        intervals.interval(dist, point, method="expanded")


def test_bootstrap_t_interval_follows_the_skew():
    sample = np.random.default_rng(9).lognormal(sigma=1.0, size=12)
    cells = bs.Cells.from_list([sample])
    point = mt.mean_se(bs.original(cells))[0]
    assert point[1] == pytest.approx(sample.std(ddof=1) / np.sqrt(12))
    dist = bs.replicates(cells, mt.mean_se, 8000, np.random.default_rng(2))
    t = (dist[:, 0] - point[0]) / dist[:, 1]
    lo, hi = bounds.studentized_mean_interval(dist, point)
    assert lo == pytest.approx(point[0] - np.quantile(t, 0.975) * point[1])
    assert hi == pytest.approx(point[0] - np.quantile(t, 0.025) * point[1])
    assert hi - point[0] > point[0] - lo  # right-skewed data: the interval reaches further up


def test_shared_task_draws_pair_the_differences():
    """X and a copy shifted by a constant: with one shared task draw per replicate the difference interval is
    no wider than without task resampling (the task effect cancels); with independent task draws it is."""
    rng = np.random.default_rng(51)
    per_task = [rng.normal(10.0 * t, 1.0, size=5) for t in range(8)]  # very different task levels, similar spread
    x, y = bs.Cells.from_list(per_task), bs.Cells.from_list([v + 3.0 for v in per_task])
    seq = np.random.SeedSequence(7)
    gx, gy = np.random.default_rng(1), np.random.default_rng(2)

    def width(task_x, task_y):
        dx = bs.replicates(x, mt.mean, 4000, np.random.default_rng(1), task_bootstrap=task_x)
        dy = bs.replicates(y, mt.mean, 4000, np.random.default_rng(2), task_bootstrap=task_y)
        lo, hi = np.quantile(dx - dy, [0.025, 0.975])
        return hi - lo

    runs_only = width(False, False)
    paired = width(seq, seq)
    unpaired = width(True, True)
    assert paired <= runs_only * 1.05
    assert unpaired > 2 * runs_only
    # the shared stream gives both algorithms the same tasks, chunking included
    bx = bs.draw(x, 50, gx, task_bootstrap=True, task_rng=bs.task_stream(seq))
    by = bs.draw(y, 50, gy, task_bootstrap=True, task_rng=bs.task_stream(seq))
    np.testing.assert_array_equal(bx.slot_tasks, by.slot_tasks)


def test_improvement_with_shared_task_draws_equals_brute_force():
    rng = np.random.default_rng(52)
    x = bs.Cells.from_list([np.round(rng.normal(size=n), 1) for n in (3, 5, 4)])
    y = bs.Cells.from_list([np.round(rng.normal(0.2, size=n), 1) for n in (4, 2, 6)])
    seq = np.random.SeedSequence(3)
    bx = bs.draw(x, 30, np.random.default_rng(1), task_bootstrap=True, task_rng=bs.task_stream(seq))
    by = bs.draw(y, 30, np.random.default_rng(2), task_bootstrap=True, task_rng=bs.task_stream(seq))
    got = mt.improvement_task_slots(bx, by)
    for r in range(30):
        per_slot = []
        for s in range(x.n_tasks):
            m = bx.slot_tasks[r, s]
            xs = x.values[bx.idx[: x.sizes[m], r, s]]
            ys = y.values[by.idx[: y.sizes[m], r, s]]
            per_slot.append(mt.probability_of_improvement([xs], [ys]))
        assert got[r] == pytest.approx(np.mean(per_slot), abs=1e-12)
    with pytest.raises(ValueError, match="same task draws"):
        mt.improvement_task_slots(bx, bs.draw(y, 30, np.random.default_rng(2), task_bootstrap=True))


@pytest.mark.parametrize("method", intervals.METHODS)
def test_aggregate_intervals_every_method(method):
    from tests.support.intervals import aggregate_tuple

    rng = np.random.default_rng(61)
    cells = bs.Cells.from_list([rng.lognormal(size=n) for n in (4, 6, 5)])
    metrics = [registry.get_metric(n) for n in ("iqm", "mean")]
    point, low, high, dist = aggregate_tuple(cells, metrics, 3000, np.random.default_rng(2), method=method)
    assert dist.shape == (3000, 2) and (low <= high).all()
    same = bs.replicates(cells, lambda r: np.stack([m(r) for m in metrics], axis=1), 3000, np.random.default_rng(2))
    np.testing.assert_allclose(dist, same, rtol=1e-12, atol=1e-12)  # the same replicates whatever the method
    if method == "bootstrap-t":
        se = bs.replicates(cells, mt.mean_se, 3000, np.random.default_rng(2))
        lo, hi = bounds.studentized_mean_interval(se, mt.mean_se(bs.original(cells))[0])
        assert (low[1], high[1]) == pytest.approx((lo, hi))
        # the IQM is studentized too, with its winsorized standard error
        iqm_se = mt.trimmed_mean_se(0.25)
        se = bs.replicates(cells, iqm_se, 3000, np.random.default_rng(2))
        lo, hi = bounds.studentized_interval(se, iqm_se(bs.original(cells))[0])
        assert (low[0], high[0]) == pytest.approx((lo, hi))


@pytest.mark.parametrize("scale", [1e200, 1e-200])
@pytest.mark.parametrize("method", ["bca", "expanded", "bootstrap-t"])
def test_intervals_of_huge_and_tiny_scores_are_the_scaled_unit_intervals(scale, method):
    """Issue 12: the BCa acceleration cubed the jackknife values (1e600 overflowed to NaN, 1e-600 underflowed to 0)."""
    from tests.support.intervals import aggregate_tuple

    rng = np.random.default_rng(71)
    per_task = [rng.lognormal(sigma=1.0, size=n) for n in (4, 6, 5, 7)]
    metrics = [registry.get_metric(n) for n in ("iqm", "mean", "median")]
    unit = aggregate_tuple(bs.Cells.from_list(per_task), metrics, 2000, np.random.default_rng(4), method=method)
    scaled = aggregate_tuple(
        bs.Cells.from_list([v * scale for v in per_task]), metrics, 2000, np.random.default_rng(4), method=method
    )
    for u, s in zip(unit[:3], scaled[:3]):
        assert np.isfinite(s).all()
        np.testing.assert_allclose(s / scale, u, rtol=1e-9)
    jack = bs.jackknife(bs.Cells.from_list(per_task), mt.mean)[:, None]
    strata = bs.jackknife_tasks(bs.Cells.from_list(per_task))
    np.testing.assert_allclose(bounds.acceleration(jack * scale, strata), bounds.acceleration(jack, strata), rtol=1e-9)


def test_a_last_jackknife_batch_of_one_replicate_keeps_its_shortened_task():
    """257 removable runs: the last batch holds one leave-one-run-out replicate, whose task lost a run (its
    weights once came from the full task sizes)."""
    rng = np.random.default_rng(12)
    per_task = [rng.normal(size=n) for n in (250, 3, 4)]  # 257 runs, all removable; unequal: weighted paths
    cells = bs.Cells.from_list(per_task)
    for name in ("iqm", "optimality_gap", "dp25", "p_above_1"):
        metric = registry.get_metric(name)
        jack = bs.jackknife(cells, metric)
        assert jack.shape == (257,)
        brute = np.array([metric(bs.original(bs.Cells.from_list(d)))[0] for _, d in _leave_one_out(per_task)])
        np.testing.assert_allclose(jack, brute, rtol=1e-12, atol=1e-14)


def _mann_whitney(x, y):
    return ((x[:, None] > y[None]) + 0.5 * (x[:, None] == y[None])).mean()


def test_improvement_variances_are_the_bootstraps_exact_and_an_unbiased_estimate():
    import itertools

    x, y = np.array([0.1, 0.4, 0.4, 0.9]), np.array([0.4, 0.2, 1.0])  # ties across and within samples
    unbiased, plugin, part_x, part_y = bounds.improvement_variances(x, y)
    # the bootstrap's variance: every resample of x and y enumerated
    values = [
        _mann_whitney(x[list(i)], y[list(j)])
        for i in itertools.product(range(4), repeat=4)
        for j in itertools.product(range(3), repeat=3)
    ]
    assert plugin == pytest.approx(np.var(values), rel=1e-12)
    wins = (x[:, None] > y[None]) + 0.5 * (x[:, None] == y[None])
    assert part_x == pytest.approx(np.var(wins.mean(axis=1), ddof=1) / 4, rel=1e-12)  # DeLong's S10 / n
    assert part_y == pytest.approx(np.var(wins.mean(axis=0), ddof=1) / 3, rel=1e-12)
    # unbiased: its mean over every sample (with replacement) of small populations is Var U, exactly
    pop_x, pop_y = np.array([0.0, 1.0, 2.0]), np.array([0.5, 1.0, 1.0, 3.0])
    samples = [
        (pop_x[list(i)], pop_y[list(j)])
        for i in itertools.product(range(3), repeat=2)
        for j in itertools.product(range(4), repeat=3)
    ]
    u = np.array([_mann_whitney(a, b) for a, b in samples])
    estimates = np.array([bounds.improvement_variances(a, b)[0] for a, b in samples])
    assert estimates.mean() == pytest.approx(u.var(), rel=1e-9)


def test_improvement_level_is_milder_than_the_mean_differences_and_invariant_to_scale_and_order():
    rng = np.random.default_rng(12)
    x = [rng.normal(0.2, 1.0, 3) for _ in range(10)]
    y = [rng.normal(0.0, 1.0, 3) for _ in range(10)]
    cx, cy = bs.Cells.from_list(x), bs.Cells.from_list(y)
    level = bounds.improvement_level(cx, cy)
    # wider than the percentile interval, narrower than the expansion for a difference of means
    assert bounds.expanded_level([cx, cy]) < level < 0.025
    shuffled = [bs.Cells.from_list([7.0 * t[::-1] for t in g]) for g in (x, y)]
    assert bounds.improvement_level(*shuffled) == pytest.approx(level, rel=1e-12)
    # every pair separated in every task: no bootstrap variance, the plain level
    apart = bs.Cells.from_list([t + 100.0 for t in x])
    assert bounds.improvement_level(apart, cy) == (1 - 0.95) / 2
    # tasks with one run of either algorithm are left out
    lone = bs.Cells.from_list([t[:1] for t in x])
    assert bounds.improvement_level(lone, cy) == (1 - 0.95) / 2


def test_bootstrap_t_gives_the_median_the_normal_interval_at_the_expanded_level():
    from scipy import special

    from tests.support.intervals import aggregate_tuple

    rng = np.random.default_rng(62)
    cells = bs.Cells.from_list([rng.normal(m, 0.3, 3) for m in rng.normal(size=10)])
    metrics = [registry.get_metric(n) for n in ("median", "dp25")]
    point, low, high, dist = aggregate_tuple(cells, metrics, 2000, np.random.default_rng(3), method="bootstrap-t")
    tail = bounds.expanded_level(cells)
    half = -special.ndtri(tail) * dist[:, 0].std(ddof=1)
    assert (low[0], high[0]) == pytest.approx((point[0] - half, point[0] + half), rel=1e-12)
    _, low_e, high_e, _ = aggregate_tuple(cells, metrics, 2000, np.random.default_rng(3), method="expanded")
    assert (low[1], high[1]) == (low_e[1], high_e[1])  # the other metrics keep the expanded interval
    assert (low_e[0], high_e[0]) == pytest.approx(tuple(np.quantile(dist[:, 0], [tail, 1 - tail])), rel=1e-12)
