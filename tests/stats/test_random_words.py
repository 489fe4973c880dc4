"""Raw words: threaded generation equals one serial ``random_raw`` call, and replicate ranges can be drawn apart."""

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals
from rl_reliable_logger.stats.intervals import bounds


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
    low, high = intervals.interval(dist, point, ci=0.9, method=method, cells=cells)
    tail = bounds.expanded_level(cells, 0.9) if method == "expanded" else (1 - 0.9) / 2
    q_low, q_high = np.quantile(dist, tail, axis=0), np.quantile(dist, 1 - tail, axis=0)
    if method == "basic":
        q_low, q_high = 2 * point - q_high, 2 * point - q_low
    assert np.array_equal(low, q_low) and np.array_equal(high, q_high)


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


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("sizes", [(5,) * 13, (3, 4, 5)])
def test_a_replicate_range_is_drawn_by_advancing_a_copy_of_the_stream(sizes, task_bootstrap):
    """Replicates [lo, hi) equal those drawn from a copy of the stream advanced by ``lo`` replicates' words: ranges
    of one stream can be computed apart (e.g. on other machines) and give the replicates of one long run."""
    rng = np.random.default_rng(7)
    cells = bs.Cells.from_list([rng.lognormal(size=n) for n in sizes])
    whole = bs.draw(cells, 50, np.random.default_rng(3), task_bootstrap=task_bootstrap).padded_samples()
    lo, hi = 17, 41
    part = np.random.default_rng(3)
    part.bit_generator.advance(lo * bs.words_per_replicate(cells, task_bootstrap))
    piece = bs.draw(cells, hi - lo, part, task_bootstrap=task_bootstrap).padded_samples()
    np.testing.assert_array_equal(piece, whole[lo:hi])
