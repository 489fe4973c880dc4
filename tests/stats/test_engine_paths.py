"""Issue 44: the engine's fast paths give the numbers of its general ones, bit for bit.

Drawn replicates of rectangular data read one index array of the drawn runs (``drawn_runs``), one float64 gather
of it (``drawn_values``), uint16 ranks radix-sorted and buffers reused from chunk to chunk; a Resample built from
the same run indices (``idx=``, the general path: leave-one-out replicates and the original data use it) must see
exactly the same statistics."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry

STATISTICS = {
    "task_means": lambda r: r.task_means(),
    "deviations": lambda r: r.deviations(),
    "standard_errors": lambda r: mt.standard_errors(r, [("mean", 0), ("trimmed_mean", 0.25), ("optimality_gap", 1.0)]),
    "sorted_samples": lambda r: r.sorted_samples(),
    "mean_se": mt.mean_se,
    **{name: registry.get_metric(name) for name in ("mean", "median", "iqm", "optimality_gap", "dp25")},
}


@pytest.mark.parametrize("shape", [(10, 26), (100, 57), (3, 5), (1, 4)])
def test_the_drawn_path_equals_the_index_path(shape):
    rng = np.random.default_rng(3)
    cells = bs.Cells.from_array(rng.lognormal(size=shape) * 1e3 - 200)
    fast = bs.draw(cells, 37, np.random.default_rng(9), workspace={})
    assert fast.drawn_runs() is not None
    general = bs.Resample(cells, cells.values, layout=bs.Layout(fast.idx, None, fast.slot_sizes))
    assert general.drawn_runs() is None
    for name, statistic in STATISTICS.items():
        np.testing.assert_array_equal(np.asarray(statistic(fast)), np.asarray(statistic(general)), err_msg=name)


def test_ranks_are_sorted_as_numbers_whatever_their_type():
    rng = np.random.default_rng(0)
    for k in (260, 5_700, 2**15 + 3, 2**16 + 3):  # uint16 up to 65,535 runs, then int32
        ranks = rng.integers(0, k, size=(4, 300)).astype(bs.rank_dtype(k))
        want = np.sort(ranks.astype(np.int64), axis=1)
        bs.sort_ranks(ranks, axis=1)
        np.testing.assert_array_equal(ranks, want)


def test_a_statistic_that_returns_a_view_of_the_workspace_is_copied_per_chunk():
    """The chunks of one bootstrap write into the same buffers: what a statistic returns must survive them."""
    cells = bs.Cells.from_array(np.random.default_rng(1).normal(size=(6, 4)))
    smallest = lambda r: r.sorted_samples()[:, 0]  # a view into the reused buffer
    chunked = bs.replicates(cells, smallest, 50, np.random.default_rng(2), chunk_bytes=1)
    whole = bs.replicates(cells, smallest, 50, np.random.default_rng(2), chunk_bytes=10**9)
    np.testing.assert_array_equal(chunked, whole)
    assert len(np.unique(chunked)) > 1


def test_values_sorted_once_per_bootstrap_are_those_of_each_chunk():
    """The order of the values is kept in the workspace for the chunks that share their values array, and
    recomputed for other values (plan evaluates new data sets on one workspace)."""
    rng = np.random.default_rng(4)
    a = bs.Cells.from_array(rng.normal(size=(5, 3)))
    b = bs.Cells.from_array(rng.normal(size=(5, 3)))
    space: dict = {}
    first = bs.Resample(a, a.values, uniforms=bs.uniform32(np.random.default_rng(0), (8, 3, 5)), workspace=space)
    np.testing.assert_array_equal(first.order(), np.argsort(a.values, kind="stable"))
    second = first.on_cells(b)
    np.testing.assert_array_equal(second.order(), np.argsort(b.values, kind="stable"))
    np.testing.assert_array_equal(second.sorted_samples(), np.sort(b.values[second.drawn_runs()].reshape(8, -1)))


@pytest.mark.parametrize("chunk_bytes", [2**16, bs.DEFAULT_CHUNK_BYTES])
def test_a_chunks_buffers_stay_within_what_the_memory_check_counts(chunk_bytes):
    """AnalysisOptions.memory_estimate counts 4 x chunk_bytes of chunk buffers; one chunk's workspace, every
    built-in statistic computed, holds at most 2 x the budget its replicates were split by (at most chunk_bytes,
    or one replicate's 32 bytes a draw when that is more)."""
    cells = bs.Cells.from_array(np.random.default_rng(5).normal(size=(100, 57)))
    reps = next(iter(bs.chunk_sizes(10_000, cells, chunk_bytes)))
    space: dict = {}
    resample = bs.draw(cells, reps, np.random.default_rng(0), workspace=space)
    for statistic in STATISTICS.values():
        statistic(resample)
    resample.counts()
    held = sum(a.nbytes for a in space.values() if isinstance(a, np.ndarray)) + resample.uniforms.nbytes
    budget = max(bs.cache_chunk_bytes(chunk_bytes), 32 * cells.n_runs)  # a chunk holds one replicate at least
    assert held <= 2 * budget


@pytest.mark.parametrize("scale", [5e-324, 1e-310, 1e-250, 1e250])
def test_deviations_are_the_same_numbers_in_their_unit_at_any_scale(scale):
    """Scores beyond 2^+-200 are scaled by a power of two, exactly. At subnormal scores (5e-324) the reciprocal of
    that unit overflowed (a RuntimeWarning the console printed, and inf * 0 = NaN deviations)."""
    runs = np.array([[1.0, 3.0, 2.0, 6.0], [4.0, 4.0, 1.0, 2.0]])
    draws = bs.draw(bs.Cells.from_array(runs), 20, np.random.default_rng(0))
    scaled = bs.draw(bs.Cells.from_array(runs * scale), 20, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = scaled.deviations().copy()
    assert np.isfinite(got).all()
    if scale >= 1e-300:  # normal numbers: the same deviations, scaled exactly (subnormal means are rounded)
        np.testing.assert_allclose(got, draws.deviations() * (scale / scaled.unit), rtol=1e-12, atol=0)
