"""The engine's shared draw helper, its contiguous draws, and metrics over many columns (curve steps) at once:
the same numbers as the one-column-at-a-time definitions, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import registry

METRICS = ["iqm", "mean", "median", "optimality_gap", "dp25", "p_above_1"]


def test_multiply_shift_is_the_high_word_of_the_product_for_every_size():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**32, size=(7, 5), dtype=np.uint32)
    words[0, 0], words[0, 1] = 2**32 - 1, 0
    for n in (1, 2, 3, 10, 1000, 2**20 + 7):
        got = bs.multiply_shift(words, n)
        assert got.dtype == np.uint64
        want = [[(int(u) * n) >> 32 for u in row] for row in words]
        np.testing.assert_array_equal(got, want)
        assert int(got.max()) < n
    sizes = np.array([1, 4, 9, 16, 25])  # one size per column, broadcast
    want = [[(int(u) * int(s)) >> 32 for u, s in zip(row, sizes)] for row in words]
    np.testing.assert_array_equal(bs.multiply_shift(words, sizes[None, :]), want)


def _cells(rng: np.random.Generator, sizes: list[int]) -> bs.Cells:
    return bs.Cells.from_list([rng.lognormal(0.0, 1.0, k) for k in sizes])


@pytest.mark.parametrize("sizes", [[5, 5, 5, 5], [3, 7, 1, 4]])
def test_contiguous_draws_give_the_counts_and_sorted_samples_of_the_index(sizes):
    rng = np.random.default_rng(1)
    cells = _cells(rng, sizes)
    batch = bs.draw(cells, 64, np.random.default_rng(2))
    fresh = bs.draw(cells, 64, np.random.default_rng(2))
    drawn = batch.drawn_runs()
    assert (drawn is None) == (len(set(sizes)) > 1)  # only rectangular draws have them
    # counts from the contiguous draws equal those of the run-major index, counted here replicate by replicate
    idx, valid = fresh.idx, fresh.valid
    want = [
        np.bincount(
            idx[:, r][valid[:, 0 if valid.shape[1] == 1 else r]] if valid is not None else idx[:, r].ravel(),
            minlength=cells.n_runs,
        )
        for r in range(64)
    ]
    np.testing.assert_array_equal(batch.counts(), want)
    if drawn is not None:
        by_index = np.sort(
            np.argsort(np.argsort(cells.values, kind="stable"))[np.moveaxis(fresh.idx, 0, 1)].reshape(64, -1)
        )
        np.testing.assert_array_equal(batch.sorted_ranks(), by_index)
        np.testing.assert_array_equal(
            batch.sorted_samples(), np.sort(cells.values[np.moveaxis(fresh.idx, 0, 1)].reshape(64, -1))
        )
        np.testing.assert_array_equal(batch.sorted_samples(3, 11), batch.sorted_samples()[:, 3:11])


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("sizes", [[6, 6, 6], [2, 6, 4], [1, 3, 3]])
def test_metrics_over_columns_equal_one_column_at_a_time(sizes, task_bootstrap):
    rng = np.random.default_rng(3)
    cells = _cells(rng, sizes)
    columns = rng.lognormal(0.0, 1.0, (cells.n_runs, 9))
    columns[:, 4] = columns[:, 3]  # a repeated column, and ties within one
    columns[:2, 5] = columns[2, 5]
    batch = bs.draw(cells, 50, np.random.default_rng(4), task_bootstrap=task_bootstrap)
    for metric in map(registry.get_metric, METRICS):
        want = np.stack([metric(batch.with_values(columns[:, g])) for g in range(9)], axis=1)
        steps = batch.with_columns(columns)
        got = np.stack([metric(step.fresh()) for step in steps], axis=1)
        np.testing.assert_array_equal(got, want, err_msg=metric.name)
        # and the original data (the point estimates)
        point = bs.original(cells)
        want = [metric(point.with_values(columns[:, g]))[0] for g in range(9)]
        np.testing.assert_array_equal([metric(s.fresh())[0] for s in point.with_columns(columns)], want)


def test_column_groups_cover_every_column_once_within_the_budget():
    cells = _cells(np.random.default_rng(5), [4, 4, 4])
    batch = bs.draw(cells, 100, np.random.default_rng(6))
    per_column = bs.column_bytes(batch)
    for budget, n in ((1, 25), (per_column * 3, 25), (2**30, 25), (per_column * 7, 3)):
        groups = bs.column_groups(batch, n, budget)
        assert [c for lo, hi in groups for c in range(lo, hi)] == list(range(n))
        assert all(hi - lo == 1 or (hi - lo) * per_column <= budget for lo, hi in groups)


def test_on_cells_is_a_new_resample_of_the_other_data_set_on_the_same_draws():
    """plan's shared draws: what a metric sees on ``on_cells`` is what it sees on a new Resample of the other data
    set built from the same uniforms, even after the first data set's intermediates were computed and reused."""
    rng = np.random.default_rng(3)
    first, second = _cells(rng, [4, 4, 4]), _cells(rng, [4, 4, 4])
    workspace: dict = {}
    u = bs.uniform32(np.random.default_rng(4), (50, 3, 4))
    base = bs.Resample(first, first.values, uniforms=u, workspace=workspace)
    for name in METRICS:
        registry.get_metric(name)(base)
    for name in METRICS:
        metric = registry.get_metric(name)
        want = metric(bs.Resample(second, second.values, uniforms=u))
        np.testing.assert_array_equal(metric(base.on_cells(second)), want)
        assert not np.array_equal(want, metric(bs.Resample(first, first.values, uniforms=u)))
    with pytest.raises(ValueError, match="same runs per task"):
        base.on_cells(_cells(rng, [4, 4, 3]))
