"""The resampling engine: stratification, reproducibility, chunking, interval methods."""

import numpy as np
import pytest
import scipy.stats

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt


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
    plo, phi = bs.interval(dist, point, method="percentile")
    blo, bhi = bs.interval(dist, point, method="basic")
    assert blo[0] == pytest.approx(2 * 1.5 - phi[0]) and bhi[0] == pytest.approx(2 * 1.5 - plo[0])
    assert plo[0] == pytest.approx(np.quantile(dist, 0.025))


def test_bc_equals_percentile_when_estimate_is_the_bootstrap_median():
    dist = np.random.default_rng(5).normal(size=(20001, 1))
    point = np.median(dist, axis=0)
    np.testing.assert_allclose(
        bs.interval(dist, point, method="bc"), bs.interval(dist, point, method="percentile"), atol=1e-3
    )


def test_bca_matches_scipy_on_a_single_skewed_sample():
    # one task = ordinary bootstrap; scipy's BCa uses the same leave-one-out jackknife
    sample = np.random.default_rng(6).lognormal(sigma=1.0, size=30)
    cells = bs.Cells.from_list([sample])
    dist = bs.replicates(cells, mt.mean, 40_000, np.random.default_rng(7))[:, None]
    jack = bs.jackknife(cells, mt.mean)[:, None]
    lo, hi = bs.interval(dist, np.array([sample.mean()]), method="bca", jackknife=jack)
    ref = scipy.stats.bootstrap(
        (sample,), np.mean, n_resamples=40_000, method="BCa", random_state=8
    ).confidence_interval
    plo, phi = bs.interval(dist, np.array([sample.mean()]), method="percentile")
    assert abs(lo[0] - ref.low) < 0.03 and abs(hi[0] - ref.high) < 0.06
    # and BCa really moved away from the percentile interval on this skewed sample (upper end up)
    assert hi[0] - phi[0] > 0.05


def test_jackknife_leaves_one_run_out_of_its_own_task():
    cells = bs.Cells.from_list([np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])])
    jack = bs.jackknife(cells, mt.mean)
    np.testing.assert_allclose(jack, [(2.5 + 15) / 2, (2 + 15) / 2, (1.5 + 15) / 2, (2 + 20) / 2, (2 + 10) / 2])


def test_interval_rejects_bad_arguments():
    with pytest.raises(ValueError, match="ci"):
        bs.interval(np.zeros((10, 1)), np.zeros(1), ci=1.5)
    with pytest.raises(ValueError, match="percentile"):
        bs.interval(np.zeros((10, 1)), np.zeros(1), method="norm")  # type: ignore[arg-type]
