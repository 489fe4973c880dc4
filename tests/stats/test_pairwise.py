"""Issue 56 item 3: P(X > Y) of every pair at once (``stats.pairwise``) is each pair's own, bit for bit: the wins are
exact integers and halves, divided and averaged over tasks in the same order as one pair at a time."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import pairwise


def algorithms(rng: np.random.Generator, sizes: list[int], n_tasks: int = 12, *, ties: bool = True) -> list[bs.Cells]:
    """One Cells per algorithm, runs sorted within tasks (as evaluate() gives them); rounded scores tie often."""
    out = []
    for n in sizes:
        per_task = [np.sort(rng.normal(0.1 * m, 1.0, size=n)) for m in range(n_tasks)]
        out.append(bs.Cells.from_list([np.round(v, 1) if ties else v for v in per_task]))
    return out


def all_pairs(count: int) -> list[tuple[int, int]]:
    return [(x, y) for x in range(count) for y in range(count) if x != y]


@pytest.mark.parametrize("sizes", [[5, 5, 5, 5], [3, 7, 5, 7, 3], [1, 4, 2]])
@pytest.mark.parametrize("ties", [True, False])
def test_every_pair_at_once_is_each_pair_bit_for_bit(sizes: list[int], ties: bool) -> None:
    rng = np.random.default_rng(len(sizes) + 10 * ties)
    cells = algorithms(rng, sizes, ties=ties)
    pairs = all_pairs(len(cells))
    counts = [bs.draw(c, 301, rng).small_counts() for c in cells]
    want = np.column_stack([mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y]) for x, y in pairs])
    for block_bytes in (1, 10_000, pairwise.PAIR_BLOCK_BYTES):  # one pair at a time, a block of a few, all of them
        got = pairwise.improvement_pair_replicates(cells, counts, pairs, block_bytes=block_bytes)
        np.testing.assert_array_equal(got, want)
    runs = [[c.values[o : o + n] for o, n in zip(c.offsets, c.sizes)] for c in cells]
    points = [mt.probability_of_improvement(runs[x], runs[y]) for x, y in pairs]
    np.testing.assert_array_equal(pairwise.improvement_points(cells, pairs), points)


def test_unequal_runs_per_task_and_unsorted_runs_go_pair_by_pair() -> None:
    rng = np.random.default_rng(3)
    ragged = bs.Cells.from_list([np.array([0.5, 0.1, 0.9]), np.array([0.3, 0.3])])
    unsorted = bs.Cells.from_list([np.array([0.4, 0.2]), np.array([0.6, 0.3])])
    for cells in ([ragged, unsorted], [unsorted, algorithms(rng, [2], n_tasks=2)[0]]):
        pairs = all_pairs(2)
        counts = [bs.draw(c, 50, rng).counts() for c in cells]
        want = np.column_stack([mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y]) for x, y in pairs])
        np.testing.assert_array_equal(pairwise.improvement_pair_replicates(cells, counts, pairs), want)
    runs = [[ragged.values[:3], ragged.values[3:]], [unsorted.values[:2], unsorted.values[2:]]]
    np.testing.assert_array_equal(
        pairwise.improvement_points([ragged, unsorted], [(0, 1)]), [mt.probability_of_improvement(*runs)]
    )


def test_the_mean_over_tasks_adds_them_in_turn_as_the_task_major_reduction_did() -> None:
    """P(X > Y)'s replicates were the mean of a task-major (column-by-column) array: numpy added the tasks in turn.
    ``task_mean`` keeps that rounding on any layout; the row-wise (pairwise) sum of 26 values differs in the last bit
    for some rows, which would change a replicate and so an interval's end."""
    rng = np.random.default_rng(5)
    per_task = rng.integers(0, 100, size=(2000, 26)) / 49.0
    want = np.asfortranarray(per_task).mean(axis=1)
    np.testing.assert_array_equal(mt.task_mean(per_task), want)
    np.testing.assert_array_equal(mt.task_mean(np.ascontiguousarray(per_task)), want)
    assert not np.array_equal(np.ascontiguousarray(per_task).mean(axis=1), want)  # the order matters here
