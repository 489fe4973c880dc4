"""The speed paths compute exactly what the plain computations they replace compute (bit for bit)."""

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import engine
from rl_reliable_logger.stats import kernels as _kernels
from rl_reliable_logger.stats.registry import Statistic


@pytest.mark.parametrize("n", [7, bs._PARALLEL_WORDS, bs._PARALLEL_WORDS + 3, 3 * bs._PARALLEL_WORDS + 1])
def test_threaded_random_words_equal_one_serial_call_and_leave_the_same_state(n):
    a, b = np.random.default_rng(21), np.random.default_rng(21)
    # a buffered 32-bit half-word, which random_raw never touches, must survive too
    assert a.integers(0, 2**32, dtype=np.uint32) == b.integers(0, 2**32, dtype=np.uint32)
    words = bs.random_words(a, n)
    assert np.array_equal(words, b.bit_generator.random_raw(n))
    assert a.bit_generator.state == b.bit_generator.state
    assert a.integers(0, 2**32, dtype=np.uint32) == b.integers(0, 2**32, dtype=np.uint32)
    assert a.random() == b.random()


def test_random_words_of_other_bit_generators_are_the_serial_ones():
    a, b = np.random.Generator(np.random.Philox(3)), np.random.Generator(np.random.Philox(3))
    n = 2 * bs._PARALLEL_WORDS
    assert np.array_equal(bs.random_words(a, n), b.bit_generator.random_raw(n))


def test_uniform32_does_not_depend_on_how_replicates_are_split():
    rng = np.random.default_rng(5)
    whole = bs.uniform32(rng, (40_000, 13, 3))  # above the threaded threshold
    rng = np.random.default_rng(5)
    parts = np.concatenate([bs.uniform32(rng, (n, 13, 3)) for n in (1, 999, 15_000, 24_000)])
    assert np.array_equal(whole, parts)


@pytest.mark.parametrize("method", ["percentile", "basic", "expanded"])
def test_interval_bounds_equal_separate_quantiles(method):
    rng = np.random.default_rng(8)
    dist = rng.standard_t(3, size=(5_001, 6))
    point = np.median(dist, axis=0)
    cells = bs.Cells.from_list([rng.normal(size=n) for n in (4, 5)])
    low, high = bs.interval(dist, point, ci=0.9, method=method, cells=cells)
    tail = bs.expanded_level(cells, 0.9) if method == "expanded" else (1 - 0.9) / 2
    q_low, q_high = np.quantile(dist, tail, axis=0), np.quantile(dist, 1 - tail, axis=0)
    if method == "basic":
        q_low, q_high = 2 * point - q_high, 2 * point - q_low
    assert np.array_equal(low, q_low) and np.array_equal(high, q_high)


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
@pytest.mark.parametrize("n_tasks", [1, 2, 5, 8, 13, 26])
@pytest.mark.parametrize("with_sort", [False, True])
def test_kernel_median_is_the_median_of_its_own_task_means(n_tasks, with_sort):
    """Selection (median alone) and insertion sort (with the task profile) give np.median exactly, ties included."""
    rng = np.random.default_rng(n_tasks)
    cells = bs.Cells.from_list(
        [np.sort(rng.integers(0, 4, size=rng.integers(1, 6)).astype(float)) for _ in range(n_tasks)]
    )
    batch = bs.draw(cells, 500, np.random.default_rng(1))
    specs = [(Statistic.MEDIAN, 0.0)] + ([(Statistic.TASKS_ABOVE, 1.5)] if with_sort else [])
    values, means = _kernels.fused_metrics(batch, specs, task_means=True)
    assert np.array_equal(values[:, 0], np.median(means, axis=1))
    if with_sort:
        assert np.array_equal(values[:, 1], (means > 1.5).mean(axis=1))


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
def test_kernel_plan_cache_follows_the_scores_it_is_given():
    """The plan reused across chunks is keyed by the score array: other scores of the same runs get their own."""
    rng = np.random.default_rng(2)
    cells = bs.Cells.from_list([rng.normal(size=4) for _ in range(6)])
    batch = bs.draw(cells, 300, np.random.default_rng(3))
    specs = [(Statistic.TRIMMED_MEAN, 0.25), (Statistic.OPTIMALITY_GAP, 0.5)]
    first = _kernels.fused_metrics(batch, specs)
    other = batch.with_values(-cells.values)
    flipped = _kernels.fused_metrics(other, specs)
    _kernels._plans.clear()
    assert np.array_equal(_kernels.fused_metrics(other, specs), flipped)
    assert np.array_equal(_kernels.fused_metrics(batch, specs), first)
    assert not np.array_equal(first, flipped)


def test_random_words_work_in_a_forked_child():
    """A child forked after the thread pool started gets its own pool (the parent's threads do not exist there)."""
    import multiprocessing as mp

    n = 2 * bs._PARALLEL_WORDS
    bs.random_words(np.random.default_rng(0), n)  # the parent's pool exists
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_words_digest, (n,)).get(timeout=120)
    assert child == _words_digest(n)


def _words_digest(n: int) -> int:
    return int(bs.random_words(np.random.default_rng(4), n)[::997].sum(dtype=np.uint64))


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
@pytest.mark.parametrize("shape", [(10, 26), (3, 5), (1, 1), (7, 1), None])
@pytest.mark.parametrize("reps", [1, 5, 300])
def test_kernel_generating_its_own_words_draws_the_replicates_of_draw(shape, reps):
    """The in-kernel PCG64 reads exactly the words ``draw`` takes (odd word counts, ragged cells) and leaves the
    generator where ``draw`` leaves it, its buffered 32-bit half-word included."""
    from rl_reliable_logger.stats import metrics as mt

    rng = np.random.default_rng(0)
    if shape is None:
        cells = bs.Cells.from_list([rng.lognormal(size=n) for n in (3, 8, 2, 5)])
    else:
        cells = bs.Cells.from_array(rng.lognormal(size=shape))
    specs = [mt.get_metric(m).spec for m in ("mean", "median", "iqm", "optimality_gap", "dp25")]
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    a.integers(0, 2**32, dtype=np.uint32), b.integers(0, 2**32, dtype=np.uint32)
    expected = _kernels.fused_metrics(bs.draw(cells, reps, a), specs)
    assert np.array_equal(_kernels.fused_metrics_stream(cells, specs, reps, b), expected)
    assert a.bit_generator.state == b.bit_generator.state
    assert a.integers(0, 2**32, dtype=np.uint32) == b.integers(0, 2**32, dtype=np.uint32)


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
def test_aggregate_replicates_equal_the_generic_replicates_in_any_split():
    from rl_reliable_logger.stats import metrics as mt

    rng = np.random.default_rng(1)
    cells = bs.Cells.from_list([rng.normal(size=n) for n in (4, 9, 6)])
    objs = [mt.get_metric(m) for m in ("mean", "iqm")]
    generic = bs.replicates(cells, engine.aggregates(objs), 25_001, np.random.default_rng(2), chunk_bytes=10_000)
    fast = engine.aggregate_replicates(cells, objs, 25_001, np.random.default_rng(2))
    assert np.array_equal(fast, generic)


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
def test_improvement_pair_plan_follows_the_cells_it_is_given():
    """The per-pair plan reused across chunks belongs to that pair: other cells (even equal-shaped) get their own."""
    from rl_reliable_logger.stats import metrics as mt

    rng = np.random.default_rng(4)
    x = bs.Cells.from_list([rng.normal(size=n) for n in (4, 6)])
    ys = [bs.Cells.from_list([rng.normal(size=n) for n in (5, 3)]) for _ in range(3)]
    cx = bs.draw(x, 50, rng).counts().astype(np.uint16)
    for _ in range(2):  # the second round hits the cached plans
        for y in ys:
            cy = bs.draw(y, 50, np.random.default_rng(9)).counts().astype(np.uint16)
            np.testing.assert_allclose(
                _kernels.improvement(x, cx, y, cy), mt.improvement_replicates(x, cx, y, cy), atol=1e-12
            )


@pytest.mark.skipif(not engine.compiled(), reason="numba not installed")
@pytest.mark.parametrize("sizes", [(4, 9, 6), (5, 5, 5, 5, 5, 5, 5)])
def test_profile_task_mean_and_count_replicates_equal_the_generic_ones_and_leave_the_same_state(sizes):
    """Profiles, per-task means and probability-of-improvement draw counts generated in the kernel are the
    replicates of ``bs.replicates``/``bs.draw``, and the generator ends where those leave it (per-task means
    are followed by the rank draws on the same stream)."""
    rng = np.random.default_rng(1)
    cells = bs.Cells.from_list([rng.normal(size=n) for n in sizes])
    taus, gammas = np.linspace(-1, 1, 11), np.linspace(0, 1, 4)
    reps = 12_345  # more than one of the kernel's progress parts

    def pair():
        a, b = np.random.default_rng(2), np.random.default_rng(2)
        a.random(), b.random()  # not at a word boundary of 32-bit draws: the buffered half-word must survive
        a.integers(0, 2**32, dtype=np.uint32), b.integers(0, 2**32, dtype=np.uint32)
        return a, b

    def same_state(a, b):
        assert a.bit_generator.state == b.bit_generator.state
        assert a.integers(0, 2**32, dtype=np.uint32) == b.integers(0, 2**32, dtype=np.uint32)

    a, b = pair()
    generic = bs.replicates(cells, engine.profile_curves(taus, gammas), reps, a, chunk_bytes=100_000)
    done = []
    fast = engine.profile_replicates(cells, taus, gammas, reps, b, progress=done.append)
    assert np.array_equal(fast, generic) and sum(done) == reps
    same_state(a, b)

    a, b = pair()
    generic = bs.replicates(cells, engine.task_means(), reps, a, chunk_bytes=100_000)
    assert np.array_equal(engine.task_mean_replicates(cells, reps, b), generic)
    same_state(a, b)

    a, b = pair()
    generic = np.concatenate([engine.draw_counts(bs.draw(cells, n, a)) for n in (1, 999, reps - 1000)])
    fast = np.concatenate([engine.draw_count_replicates(cells, n, b) for n in (reps - 1, 1)])
    assert fast.dtype == generic.dtype and np.array_equal(fast, generic)
    same_state(a, b)
    assert engine.draw_count_replicates(cells, 0, b).shape == (0, cells.n_runs)
