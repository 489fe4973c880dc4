"""P(X > Y) of many pairs of algorithms at once: every pair's estimate and bootstrap replicates in one array operation
per block of pairs, instead of one call per pair (the all-pairs table of a sweep is quadratic in its configurations:
1,596 pairs at 57).

Every algorithm's runs of a task are pooled and sorted once, and each run is found in the pool by ``np.searchsorted``:
each algorithm's running count over the pool there says how many of its runs lie below the run and up to it (a win,
and half of each tie), for every pair at once. A replicate's wins of a block of pairs are then one gather of the
running sums of Y's draw counts at those positions, weighted by X's draw counts. The counts are exact
integers and halves, and they are divided and averaged over tasks as :func:`.metrics.probability_of_improvement` and
:func:`.metrics.improvement_replicates` do, pair by pair: the numbers are theirs, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from . import metrics as mt
from .bootstrap import Cells

#: Bytes of the gathered wins of one block of pairs (three arrays of them are alive at once).
PAIR_BLOCK_BYTES = 32 * 2**20


def improvement_points(cells: Sequence[Cells], pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """(P,) P(X > Y) of each pair ``(x, y)`` (indices into ``cells``, one per algorithm over the same tasks):
    :func:`.metrics.probability_of_improvement` of each, bit for bit.

    Example:
        >>> a = Cells.from_list([np.array([2.0, 3.0]), np.array([1.0, 5.0])])
        >>> b = Cells.from_list([np.array([1.0, 3.0]), np.array([2.0, 2.0])])
        >>> improvement_points([a, b], [(0, 1), (1, 0)]).tolist()
        [0.5625, 0.4375]
    """
    if not _pooled(cells, PAIR_BLOCK_BYTES):  # one pair at a time
        return np.array([_point(cells[x], cells[y]) for x, y in pairs])
    out = np.empty(len(pairs))
    ones = [np.ones((1, c.n_runs), dtype=np.uint16) for c in cells]  # every run once: the estimate
    for block, per_task in _task_values(cells, ones, pairs, PAIR_BLOCK_BYTES):
        out[block] = np.ascontiguousarray(per_task[0]).mean(axis=1)  # each pair's tasks in a row, as np.mean's
    return out


def _point(x: Cells, y: Cells) -> float:
    return mt.probability_of_improvement(_runs(x), _runs(y))


def _runs(c: Cells) -> list[np.ndarray]:
    return [c.values[o : o + n] for o, n in zip(c.offsets, c.sizes)]


def improvement_pair_replicates(
    cells: Sequence[Cells],
    counts: Sequence[np.ndarray],
    pairs: Sequence[tuple[int, int]],
    block_bytes: int = PAIR_BLOCK_BYTES,
) -> np.ndarray:
    """(R, P) the bootstrap replicates of P(X > Y) of each pair ``(x, y)`` from each algorithm's independent draw
    counts ``counts[a]`` (R, K_a) (:meth:`..bootstrap.Resample.counts` or ``small_counts``):
    :func:`.metrics.improvement_replicates` of each pair, bit for bit. With equal runs per task (every algorithm its
    own number), sorted, the pairs of one X are computed a block of ``block_bytes`` at a time, every task of every
    pair of the block in one gather; else (or where the pooled runs' counts would take more than ``4 block_bytes``)
    one pair at a time.

    Example:
        >>> a = Cells.from_list([np.array([2.0, 3.0]), np.array([1.0, 5.0])])
        >>> b = Cells.from_list([np.array([1.0, 3.0]), np.array([2.0, 2.0])])
        >>> counts = [np.array([[2, 0, 1, 1], [1, 1, 0, 2]]), np.array([[1, 1, 2, 0], [0, 2, 1, 1]])]
        >>> improvement_pair_replicates([a, b], counts, [(0, 1), (1, 0)]).tolist()
        [[0.5, 0.5], [0.625, 0.375]]
    """
    reps = int(counts[0].shape[0]) if len(counts) else 0
    out = np.empty((reps, len(pairs)))
    if not _pooled(cells, block_bytes):  # one pair at a time
        for p, (x, y) in enumerate(pairs):
            out[:, p] = mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y])
        return out
    for block, per_task in _task_values(cells, counts, pairs, block_bytes):
        out[:, block] = mt.task_mean(per_task)  # tasks added in turn, as one pair's replicates add them
    return out


def _task_values(
    cells: Sequence[Cells], counts: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]], block_bytes: int
) -> Iterator[tuple[list[int], np.ndarray]]:
    """Blocks of pairs (their positions in ``pairs``) with their (R, G, M) P(X > Y) of each task of each pair in
    each replicate, for algorithms with equal runs per task, sorted."""
    reps = int(counts[0].shape[0])
    n_tasks = cells[0].n_tasks
    sizes = [int(c.sizes[0]) for c in cells]
    # every algorithm's running sums of its draw counts over its sorted runs, side by side: (R, Σ_a M (n_a + 1))
    starts = np.concatenate([[0], np.cumsum([n_tasks * (n + 1) for n in sizes])]).astype(np.int64)
    cum = np.zeros((reps, int(starts[-1])))
    for a, n in enumerate(sizes):
        part = cum[:, starts[a] : starts[a + 1]].reshape(reps, n_tasks, n + 1)
        np.cumsum(np.asarray(counts[a]).reshape(reps, n_tasks, n), axis=2, out=part[:, :, 1:], dtype=float)
    below_all, upto_all = _counts_below(cells)
    groups: dict[tuple[int, int], list[int]] = {}  # the pairs of each X and size of Y: X's counts broadcast
    for p, (x, y) in enumerate(pairs):
        groups.setdefault((x, sizes[y]), []).append(p)
    tasks = np.arange(n_tasks)[None, :, None]
    for (x, ny), members in groups.items():
        nx = sizes[x]
        weights = np.asarray(counts[x]).reshape(reps, 1, n_tasks * nx)  # each run of X as often as it was drawn
        own = below_all.columns[x] + np.arange(nx)  # X's runs among every algorithm's
        step = max(1, int(block_bytes // max(1, 8 * reps * n_tasks * nx)))
        for lo in range(0, len(members), step):
            block = members[lo : lo + step]
            ys = np.array([pairs[p][1] for p in block])[:, None, None]
            at = starts[ys] + tasks * (ny + 1)  # (G, M, 1): where Y's running sums of task m start
            below = (at + below_all.counts[tasks, ys, below_all.position[tasks, own]]).ravel()
            upto = (at + upto_all.counts[tasks, ys, upto_all.position[tasks, own]]).ravel()
            wins = np.take(cum, below, axis=1).reshape(reps, len(block), n_tasks * nx)  # Y's draws below each run
            if not np.array_equal(below, upto):  # and half of those equal to it (where none: + 0, skipped)
                wins += 0.5 * (np.take(cum, upto, axis=1).reshape(wins.shape) - wins)
            wins *= weights
            yield block, wins.reshape(reps, len(block), n_tasks, nx).sum(axis=3) / (nx * ny)


def _pooled(cells: Sequence[Cells], block_bytes: int) -> bool:
    """Whether the pairs can be computed together: equal runs per task, sorted, and every algorithm's running count
    over each task's pooled runs (tasks x algorithms x pooled runs, 8 bytes each) within ``4 block_bytes``."""
    if not all(c.rectangular and _sorted_runs(c) for c in cells):
        return False
    pooled = sum(int(c.sizes[0]) for c in cells) + 1
    return 8 * cells[0].n_tasks * len(cells) * pooled <= 4 * block_bytes


def _sorted_runs(c: Cells) -> bool:
    """Whether every task's runs are in ascending order (``evaluate()`` sorts them; the pair-at-a-time path sorts)."""
    n = int(c.sizes[0])
    return bool((np.diff(c.values.reshape(c.n_tasks, n), axis=1) >= 0).all())


class _Below(NamedTuple):
    """How many runs of each algorithm lie below (or up to) each run of any algorithm, task by task: the count of
    algorithm ``a``'s runs of task ``m`` below run ``j`` of the pooled runs is ``counts[m, a, position[m, j]]``
    (``columns[a]``: algorithm a's first pooled column)."""

    counts: np.ndarray  # (M, A, L + 1) running counts of each algorithm's runs over the task's sorted pooled runs
    position: np.ndarray  # (M, L) each pooled run's position among them (searchsorted, left or right)
    columns: np.ndarray  # (A,) each algorithm's first column of the pooled runs


def _counts_below(cells: Sequence[Cells]) -> tuple[_Below, _Below]:
    """Each run's count of every algorithm's runs of its task below it, and up to it (ties included): every
    algorithm's runs of a task pooled and sorted once, each run found in them by ``np.searchsorted`` (the runs below
    it, and up to it), and each algorithm's running count over the sorted pool read there: per task, not per pair."""
    n_tasks, sizes = cells[0].n_tasks, [int(c.sizes[0]) for c in cells]
    pooled = np.concatenate([c.values.reshape(n_tasks, n) for c, n in zip(cells, sizes)], axis=1)  # (M, L)
    owner = np.repeat(np.arange(len(cells)), sizes)
    order = np.argsort(pooled, axis=1, kind="stable")
    ordered = np.take_along_axis(pooled, order, axis=1)
    counts = np.zeros((n_tasks, len(cells), pooled.shape[1] + 1), dtype=np.int64)
    np.cumsum(owner[order][:, None, :] == np.arange(len(cells))[None, :, None], axis=2, out=counts[:, :, 1:])
    columns = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    found = [
        np.stack([np.searchsorted(ordered[m], pooled[m], side=side) for m in range(n_tasks)])
        for side in ("left", "right")
    ]
    return _Below(counts, found[0], columns), _Below(counts, found[1], columns)
