"""Stratified bootstrap engine, vectorised over replicates, in bounded-memory chunks.

Dimension key: R replicates (a chunk of them), M tasks, N_m runs of task m, K = Σ N_m runs of one
algorithm (all tasks concatenated), S task *slots* (M; with task resampling a slot holds a
resampled task).

One algorithm's data is a :class:`Cells` object: its runs concatenated task by task. A replicate
is described by which runs it drew: ``idx[r, s, n]`` indexes into the K runs, ``valid`` marks the
first N_{task(s)} positions of each slot. From the draws a :class:`Resample` derives, lazily,

* ``weights`` (R, K): the probability mass of each original run in each replicate's empirical
  distribution, where every task carries mass 1/M and each run of task m 1/(M·N_m) per draw; and
* ``task_means(values)`` (R, S): the mean of each slot.

Metrics are functions of a Resample (see ``metrics.py``). Because the draws do not depend on the
values, the same Resample evaluated on the scores at different training steps resamples *whole
runs* consistently across time.

Random numbers come from one numpy Generator per algorithm and analysis, as raw 32-bit words
(``bit_generator.random_raw``) consumed replicate by replicate, each replicate a whole number of 64-bit
words: the same inputs and seed give bit-identical draws whatever the chunk size, with or without task
resampling, and replicates [lo, hi) of a stream are those drawn after advancing a copy of it by
``lo * words_per_replicate`` raw words (:func:`words_per_replicate`, ``PCG64.advance``), so ranges of one
stream can be computed apart.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ..executors import Executor, resolve
from ..memory import DEFAULT_CHUNK_BYTES as DEFAULT_CHUNK_BYTES  # the budget of one chunk of replicates
from ..moved import moved


def as_generator(seed: int | np.random.Generator | np.random.SeedSequence | None) -> np.random.Generator:
    """A numpy Generator from an int, a SeedSequence, a Generator (used as is) or None (fresh entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


@dataclass(frozen=True)
class Cells:
    """One algorithm's runs, task by task, concatenated (ragged: each task keeps its own count)."""

    values: np.ndarray  # (K,) final scores, task-major
    sizes: np.ndarray  # (M,) runs per task
    offsets: np.ndarray  # (M,) index of each task's first run in ``values``
    task_of: np.ndarray  # (K,) task index of each run

    @classmethod
    def from_list(cls, per_task: Sequence[np.ndarray]) -> Cells:
        """Build from one 1-D array of run scores per task."""
        arrays = [np.asarray(a, dtype=float).ravel() for a in per_task]
        if not arrays:
            raise ValueError("no tasks")
        sizes = np.array([a.size for a in arrays], dtype=np.int64)
        if (sizes == 0).any():
            raise ValueError("every task needs at least one run")
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        task_of = np.repeat(np.arange(len(arrays)), sizes)
        return cls(np.concatenate(arrays), sizes, offsets, task_of)

    @classmethod
    def from_array(cls, scores: np.ndarray) -> Cells:
        """Build from rliable's rectangular ``(runs, tasks)`` array."""
        scores = np.asarray(scores, dtype=float)
        if scores.ndim == 1:
            scores = scores[:, None]
        return cls.from_list([scores[:, j] for j in range(scores.shape[1])])

    @property
    def n_tasks(self) -> int:
        return int(self.sizes.size)

    @property
    def n_runs(self) -> int:
        return int(self.values.size)

    @property
    def rectangular(self) -> bool:
        return bool((self.sizes == self.sizes[0]).all())

    @property
    def base_weights(self) -> np.ndarray:
        """Mass of each run in the original data: 1/(M·N_m)."""
        return 1.0 / (self.n_tasks * self.sizes[self.task_of])


class Layout(NamedTuple):
    """Runs given by index rather than drawn (the original data, leave-one-run-out replicates, or a Resample's
    indices carried over): ``idx`` (N, R, S), ``valid`` (None: every position), each slot's run count and each
    replicate's number of runs (None: derived as for draws)."""

    idx: np.ndarray | None = None
    valid: np.ndarray | None = None
    slot_sizes: np.ndarray | None = None
    run_total: np.ndarray | None = None


class Resample:
    """A batch of replicates (or the original data) of one algorithm, as draws of run indices.

    Layout: ``idx[n, r, s]`` is the n-th run drawn for task slot s of replicate r (run-major, so
    reductions over the runs of a slot are sums of whole contiguous (R, S) planes). ``values`` are
    the run scores the metrics read (the final scores, or one training step's).

    Drawn replicates are built from raw 32-bit uniforms (``uniforms``: (R, S, N_max)) and the task of
    each slot (``slot_tasks``: (R, S), None when slot s is task s); ``idx`` is derived from them on
    first use.
    """

    def __init__(
        self,
        cells: Cells,
        values: np.ndarray,
        *,
        layout: Layout = Layout(),
        uniforms: np.ndarray | None = None,
        slot_tasks: np.ndarray | None = None,
        cache: dict | None = None,
        workspace: dict | None = None,
    ) -> None:
        idx, valid, slot_sizes, run_total = layout
        self.cells = cells
        self.values = np.asarray(values, dtype=float)
        self.uniforms = uniforms
        self.slot_tasks = slot_tasks
        self._idx, self._valid = idx, valid
        if slot_sizes is None:
            slot_sizes = (cells.sizes[slot_tasks] if slot_tasks is not None else cells.sizes[None, :]).astype(float)
        self.slot_sizes = slot_sizes
        #: every slot holds its task's own run count (drawn replicates, the original data), so a run's mass is
        #: its draw count times 1/(S·N_m) -- not so for leave-one-run-out replicates, whose task lost a run
        self._task_sized = uniforms is not None or (
            slot_tasks is None and bool((np.asarray(slot_sizes) == cells.sizes[None, :]).all())
        )
        #: (R or 1,) number of runs in each replicate's data set: K for draws (each task slot is redrawn to
        #: its size), K - 1 for a leave-one-run-out replicate. The trimmed means cut ⌊p·K_r⌋/K_r of mass.
        self.run_total = np.array([float(cells.n_runs)]) if run_total is None else np.asarray(run_total, float)
        self._cache: dict = {} if cache is None else cache
        #: arrays a caller lends for the large per-replicate intermediates (see :meth:`buffer`)
        self._workspace = workspace
        if idx is None and uniforms is None:
            raise ValueError("a Resample needs run indices or uniforms")

    def _build_index(self) -> None:
        cells, u = self.cells, self.uniforms
        tasks = self.slot_tasks
        if tasks is None:
            sizes = cells.sizes[None, :, None]
            offsets = cells.offsets[None, :, None]
        else:
            sizes = cells.sizes[tasks][:, :, None]
            offsets = cells.offsets[tasks][:, :, None]
        assert u is not None  # a Resample without indices has uniforms (checked in __init__)
        local = multiply_shift(np.moveaxis(u, 2, 0), np.moveaxis(sizes, 2, 0))  # run-major: (N, R, S)
        idx = local.astype(np.int32 if cells.n_runs < 2**31 else np.int64)
        idx += np.moveaxis(offsets, 2, 0).astype(idx.dtype)
        pos = np.arange(u.shape[2])
        if tasks is None and cells.rectangular:
            valid = None
        elif tasks is None:
            valid = (pos[:, None] < cells.sizes[None, :])[:, None, :]
        else:
            valid = pos[:, None, None] < cells.sizes[tasks][None]
        if valid is not None:
            idx = np.where(valid, idx, 0)
        self._idx, self._valid = idx, valid

    @property
    def idx(self) -> np.ndarray:
        """(N_max, R, S) indices into the K runs."""
        if self._idx is None:
            self._build_index()
        return self._idx  # type: ignore[return-value]

    @property
    def valid(self) -> np.ndarray | None:
        """Which positions were drawn (None: all of them)."""
        if self._idx is None:
            self._build_index()
        return self._valid

    @property
    def n_reps(self) -> int:
        return int(self.uniforms.shape[0] if self._idx is None else self._idx.shape[1])  # type: ignore[union-attr]

    @property
    def n_slots(self) -> int:
        return int(self.uniforms.shape[1] if self._idx is None else self._idx.shape[2])  # type: ignore[union-attr]

    def buffer(self, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised array for an intermediate: from the caller's ``workspace`` when one was lent (reused
        from batch to batch, e.g. by ``plan``'s thousands of small experiments: no allocation and page faults per
        batch; the arrays of one Resample are then valid until the workspace's next Resample), else a new one."""
        if self._workspace is None:
            return np.empty(shape, dtype)
        size = math.prod(shape)
        buf = self._workspace.get(name)
        if buf is None or buf.size < size or buf.dtype != dtype:  # grown, never shrunk: a last, smaller chunk fits
            buf = self._workspace[name] = np.empty(size, dtype)
        return buf[:size].reshape(shape)

    def drawn_runs(self) -> np.ndarray | None:
        """(R, S, N) the run each draw picked (an index into the K runs), in the uniforms' own replicate-major
        layout, for draws without task resampling from rectangular cells (None otherwise): the draws of
        :attr:`idx` in another memory order, contiguous per replicate, so that per-replicate work (sorting,
        counting) reads them without a strided copy."""
        if self.uniforms is None or self.slot_tasks is not None or not self.cells.rectangular:
            return None
        if "drawn" not in self._cache:
            out = self.buffer("drawn", self.uniforms.shape, np.uint64)
            drawn = multiply_shift(self.uniforms, self.cells.sizes[0], out).view(np.int64)  # values < n: same bits
            # each task's first run: added along whole replicate rows (a (1, S, 1) broadcast loops over N-long rows)
            drawn.reshape(drawn.shape[0], -1)[...] += self.cells.offsets[self.cells.task_of]
            self._cache["drawn"] = drawn
        return self._cache["drawn"]

    def _same_draws(
        self, cells: Cells, values: np.ndarray, keep: tuple[str, ...], workspace: dict | None = None
    ) -> Resample:
        """A Resample with these draws on ``values`` (of ``cells``), carrying over the cached entries named in
        ``keep``: the one constructor of :meth:`with_values`, :meth:`on_cells` and :meth:`fresh`."""
        return Resample(
            cells,
            values,
            layout=Layout(self._idx, self._valid, self.slot_sizes, self.run_total),
            uniforms=self.uniforms,
            slot_tasks=self.slot_tasks,
            cache={k: v for k, v in self._cache.items() if k in keep},
            workspace=workspace,
        )

    def with_values(self, values: np.ndarray) -> Resample:
        """The same draws evaluated on other scores of the same runs (e.g. another training step)."""
        if self._idx is None:  # built once here, shared by every such Resample
            self._build_index()
        return self._same_draws(self.cells, values, ("counts", "drawn"))

    def on_cells(self, cells: Cells) -> Resample:
        """The same draws on another data set with the same layout (every task the same number of runs): only the
        draws carry over (run indices, :meth:`drawn_runs`, :meth:`counts`), so a metric sees what a new Resample of
        ``cells`` with these uniforms shows. ``plan`` evaluates a few synthetic experiments on one set of draws
        this way."""
        if cells.n_runs != self.cells.n_runs or not np.array_equal(cells.sizes, self.cells.sizes):
            raise ValueError("on_cells needs a data set with the same runs per task")
        return self._same_draws(cells, cells.values, ("drawn", "counts"), self._workspace)

    def fresh(self) -> Resample:
        """The same draws and values with only what depends on them alone carried over (draws, value order, sorted
        ranks, task means): what a metric sees on a new Resample, so that what one metric caches (run weights,
        whose last digits depend on the way they were made) never changes another's numbers."""
        shared: tuple[str, ...] = ("counts", "drawn", "order", "sorted_ranks", "task_means", "equal_weights")
        if self._task_sized:  # sorted run weights are exact count x weight products here, however they were made
            shared += ("sorted",)
        return self._same_draws(self.cells, self.values, shared)

    def with_columns(self, columns: np.ndarray) -> list[Resample]:
        """:meth:`with_values` for every column of ``columns`` (K, G) -- e.g. every step of a learning curve --
        with the work that depends on the values done for all columns at once: the task means (one gather of
        G-long rows) and, for equal-weights draws, the sorted ranks (one gather, one sort), else, for draws that keep
        each task's run count, the run weights (one count of the draws, each column taking them in its order).
        Each Resample gives the numbers ``with_values(columns[:, g])`` gives (same sums in the same order).
        Memory: about :func:`column_bytes` per column; pass a few columns at a time (:func:`column_groups`).
        """
        columns = np.asarray(columns, dtype=float)
        idx = self.idx
        gathered = np.take(columns, idx, axis=0)  # (N, R, S, G): whole rows of G values
        if self.valid is not None:
            gathered = np.where(self.valid[..., None], gathered, 0.0)
        means = gathered.sum(axis=0) / self.slot_sizes[..., None]  # per element, the N draws summed in order
        del gathered
        out = [self.with_values(columns[:, g]) for g in range(columns.shape[1])]
        for g, r in enumerate(out):
            r._cache["task_means"] = np.ascontiguousarray(means[..., g])
        if self.equal_weights:
            k = columns.shape[0]
            orders = np.argsort(columns, axis=0, kind="stable")  # each column's own stable order
            rank = np.empty((columns.shape[1], k), dtype=rank_dtype(k))
            np.put_along_axis(rank, orders.T, np.arange(k, dtype=rank.dtype)[None, :], axis=1)
            drawn = self.drawn_runs()
            src = (
                drawn.reshape(self.n_reps, -1) if drawn is not None else np.moveaxis(idx, 0, 1).reshape(self.n_reps, -1)
            )
            rows = np.take(np.ascontiguousarray(rank.T), src, axis=0)  # (R, S·N, G): rows of G ranks gathered
            ranks = np.ascontiguousarray(np.moveaxis(rows, 2, 0))  # (G, R, S·N)
            sort_ranks(ranks, axis=2)
            for g, r in enumerate(out):
                r._cache["order"] = orders[:, g]
                r._cache["sorted_ranks"] = ranks[g]
        elif self._task_sized:  # unequal runs per task: the run weights are shared, only their order is per column
            orders = np.argsort(columns, axis=0, kind="stable")
            weights = self.counts() * self.cells.base_weights[None, :]  # exact products: the bits of any other way
            for g, r in enumerate(out):
                order = orders[:, g]
                r._cache["order"] = order
                # counted once, not once per column; np.take keeps rows contiguous (as the bincount does): sums over
                # them add in the same order
                r._cache["sorted"] = (columns[order, g], np.take(weights, order, axis=1))
        return out

    def _per_draw_mass(self) -> np.ndarray:
        """(R or 1, S) mass of one draw in each slot: 1/(S·N_slot)."""
        return 1.0 / (self.n_slots * self.slot_sizes)

    def counts(self) -> np.ndarray:
        """(R, K) how often each original run was drawn (summed over slots) in each replicate."""
        if "counts" not in self._cache:
            drawn = self.drawn_runs()
            if drawn is None:
                self._cache["counts"] = self._bincount(self.idx)
            else:  # every position drawn: count the contiguous draws, replicate r's runs at r·K + run
                reps, k = self.n_reps, self.cells.n_runs
                flat = drawn + (np.arange(reps, dtype=np.int64) * k)[:, None, None]
                out = np.bincount(flat.ravel(), minlength=reps * k)
                self._cache["counts"] = out.reshape(reps, k).astype(float, copy=False)
        return self._cache["counts"]

    def small_counts(self) -> np.ndarray:
        """:meth:`counts` as unsigned integers, uint16 when every task has fewer than 65,536 runs (bounded memory)."""
        return self.counts().astype(np.uint16 if int(self.cells.sizes.max()) < 2**16 else np.uint32)

    def _bincount(self, index: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        reps, k = self.n_reps, self.cells.n_runs
        flat = index + (np.arange(reps, dtype=np.int64) * k)[None, :, None]
        if self.valid is not None:
            valid = np.broadcast_to(self.valid, index.shape)
            flat = flat[valid]
            if weights is not None:
                weights = np.broadcast_to(weights, index.shape)[valid]
        elif weights is not None:
            weights = np.broadcast_to(weights, index.shape).ravel()
        out = np.bincount(flat.ravel(), weights=weights, minlength=reps * k)
        return out.reshape(reps, k).astype(float, copy=False)

    @property
    def weights(self) -> np.ndarray:
        """(R, K) mass of each original run in each replicate; rows sum to 1, each slot to 1/S."""
        if "weights" not in self._cache:
            if self._task_sized:  # scale counts (by sums of per-draw masses the rounding would depend on the order)
                self._cache["weights"] = self.counts() * self.cells.base_weights[None, :]
            else:
                per_draw = np.broadcast_to(self._per_draw_mass()[None], self.idx.shape)
                self._cache["weights"] = self._bincount(self.idx, per_draw)
        return self._cache["weights"]

    def order(self) -> np.ndarray:
        """Permutation sorting ``values`` ascending (stable)."""
        if "order" not in self._cache:
            self._cache["order"] = self._value_order()[0]
        return self._cache["order"]

    def _value_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(order, the values in that order, the rank of each run): sorted once per bootstrap, not once per chunk,
        when the chunks share a workspace and their values (the same array)."""
        held = self._workspace.get("value_order") if self._workspace is not None else None
        if held is not None and held[0] is self.values:
            return held[1]
        order = self._cache["order"] if "order" in self._cache else np.argsort(self.values, kind="stable")
        k = order.size
        rank = np.empty(k, dtype=rank_dtype(k))
        rank[order] = np.arange(k, dtype=rank.dtype)
        found = (order, self.values[order], rank)
        if self._workspace is not None and "order" not in self._cache:
            self._workspace["value_order"] = (self.values, found)  # the array held: its identity stays its own
        return found

    def sorted_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Values ascending and each replicate's weights in that order: ((K,), (R, K))."""
        if "sorted" not in self._cache:
            order = self.order()
            if "weights" in self._cache or "counts" in self._cache:
                w = np.take(self.weights, order, axis=1)  # C order, like the bincount below
            else:  # draw straight into sorted positions: one bincount, no (R, K) gather
                rank = np.empty_like(order)
                rank[order] = np.arange(order.size)
                if self._task_sized:
                    w = self._bincount(rank[self.idx]) * self.cells.base_weights[order][None, :]
                else:
                    per_draw = np.broadcast_to(self._per_draw_mass()[None], self.idx.shape)
                    w = self._bincount(rank[self.idx], per_draw)
            self._cache["sorted"] = (self.values[order], w)
        return self._cache["sorted"]

    @property
    def equal_weights(self) -> bool:
        """True when every drawn run weighs the same (every slot of every replicate holds the same number of
        runs): enables the sorted fast path. False for leave-one-run-out replicates, whose shortened task
        weighs its runs more, and for one task's leave-one-run-out replicates, whose last position is not drawn."""
        if "equal_weights" not in self._cache:
            sizes = self.slot_sizes
            if not (self.cells.rectangular and (sizes == sizes.flat[0]).all()):
                equal = False
            elif self._idx is None:  # drawn replicates of rectangular cells: every position drawn (no index needed)
                equal = True
            else:
                valid = self.valid
                equal = valid is None or bool(valid.all())
            self._cache["equal_weights"] = equal
        return self._cache["equal_weights"]

    def sorted_ranks(self) -> np.ndarray:
        """(R, S·N) each replicate's resampled runs as ranks in :meth:`order`, ascending (equal-weights data only).

        Sorting small integer ranks instead of the scores themselves is several times faster; the ranks of
        :meth:`drawn_runs` are gathered contiguously, replicate by replicate, and sorted in place.
        """
        if "sorted_ranks" not in self._cache:
            if not self.equal_weights:
                raise ValueError("sorted_samples needs equal runs per task; use sorted_weights()")
            if "order" in self._cache:  # an order given with the values (with_columns): its own ranks
                order = self._cache["order"]
                rank = np.empty(order.size, dtype=rank_dtype(order.size))
                rank[order] = np.arange(order.size, dtype=rank.dtype)
            else:
                order, _, rank = self._value_order()
                self._cache["order"] = order
            drawn = self.drawn_runs()
            if drawn is not None:
                # indices < K by construction; mode="clip" lets take write into ``out`` directly ("raise" buffers it)
                ranks = np.take(rank, drawn, out=self.buffer("ranks", drawn.shape, rank.dtype), mode="clip")
                ranks = ranks.reshape(self.n_reps, -1)
            else:
                if self.valid is not None and not self.valid.all():
                    raise ValueError("sorted_samples needs every position drawn; use sorted_weights()")
                ranks = rank[np.moveaxis(self.idx, 0, 1)].reshape(self.n_reps, -1)  # a gather is (R, N, S) C-order
            sort_ranks(ranks, axis=1)
            self._cache["sorted_ranks"] = ranks
        return self._cache["sorted_ranks"]

    def sorted_samples(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """(R, S·N) each replicate's resampled scores in ascending order (equal-weights data only); with ``lo``
        and ``hi``, only positions ``[lo, hi)`` of each sorted row (a trimmed mean reads no more)."""
        if "sorted_samples" in self._cache:
            return self._cache["sorted_samples"][:, lo:hi]
        ranks = self.sorted_ranks()
        if lo == 0 and (hi is None or hi >= ranks.shape[1]):
            self._cache["sorted_samples"] = self.by_rank(self.sorted_values(), name="sorted_samples")
            return self._cache["sorted_samples"]
        return self.by_rank(self.sorted_values(), lo, hi, name="window")

    def sorted_values(self) -> np.ndarray:
        """(K,) ``values`` in ascending order (:meth:`order`)."""
        if "order" in self._cache and "ordered" not in self._cache:
            self._cache["ordered"] = self.values[self._cache["order"]]
        if "ordered" not in self._cache:
            order, ordered, _ = self._value_order()
            self._cache["order"], self._cache["ordered"] = order, ordered
        return self._cache["ordered"]

    def by_rank(self, table: np.ndarray, lo: int = 0, hi: int | None = None, *, name: str = "by_rank") -> np.ndarray:
        """(R, hi - lo) ``table[rank]`` for positions ``[lo, hi)`` of each replicate's :meth:`sorted_ranks` (equal-
        weights data only): ``table`` has one entry per rank, e.g. :meth:`sorted_values` (then these are
        :meth:`sorted_samples`) or a function of it, gathered once instead of computed on the gathered samples
        (the optimality gap's ``min(value, γ)``: the same numbers as clipping the sorted samples, one pass less).
        Written into a buffer of the workspace called ``name``: valid until the next Resample of the workspace."""
        window = self.sorted_ranks()[:, lo:hi]
        out = self.buffer(name, window.shape, np.asarray(table).dtype)
        return np.take(table, window, out=out, mode="clip")  # ranks < K by construction: clip writes out directly

    def drawn_values(self) -> np.ndarray | None:
        """(R, S, N) the score of every draw in :meth:`drawn_runs`' layout (None where that is None): one float64
        gather per chunk, read by the task means and the task variances."""
        if "drawn_values" not in self._cache:
            drawn = self.drawn_runs()
            if drawn is None:
                return None
            out = self.buffer("drawn_values", drawn.shape, np.float64)
            self._cache["drawn_values"] = np.take(self.values, drawn, out=out, mode="clip")  # indices < K
        return self._cache["drawn_values"]

    def task_means(self) -> np.ndarray:
        """(R, S) mean score of each task slot."""
        if "task_means" not in self._cache:
            drawn = self.drawn_values()
            if drawn is not None:  # summed along each slot's contiguous row
                self._cache["task_means"] = drawn.sum(axis=2) / self.slot_sizes
                return self._cache["task_means"]
            gathered = self.values[self.idx]
            if self.valid is not None:
                gathered = np.where(self.valid, gathered, 0.0)
            self._cache["task_means"] = gathered.sum(axis=0) / self.slot_sizes
        return self._cache["task_means"]

    @property
    def magnitude(self) -> float:
        """Largest finite |score| (1 when there is none or it is 0)."""
        return magnitude(self.values)

    @property
    def unit(self) -> float:
        """The unit :meth:`deviations` are in: 1, or a power of two near :attr:`magnitude` when the scores lie beyond
        2^±200, so that their squares neither overflow (scores near 1e200) nor underflow (near 1e-200). A power of two
        scales exactly: the deviations are the same numbers in any unit."""
        return exact_unit(self.magnitude)

    def drawn_mask(self) -> np.ndarray | None:
        """(N, R, S) which positions of :meth:`deviations` hold a draw (None: all of them)."""
        if self.drawn_runs() is not None:  # every position drawn (and no index to build)
            return None
        valid = self.valid
        if valid is None or bool(valid.all()):
            return None
        return np.broadcast_to(valid, self.idx.shape)

    def deviations(self, out: np.ndarray | None = None) -> np.ndarray:
        """(N, R, S) each draw's score less its slot's mean (:meth:`task_means`), in :attr:`unit`, 0 where a slot has
        no draw (:meth:`drawn_mask`), run-major as :attr:`idx` (the n-th draws of every slot of every replicate in one
        contiguous plane): the scores' own spread, read by every studentized standard error
        (:func:`.metrics.standard_errors`). One pass over the draws of the task means (:meth:`drawn_values`, turned
        run-major as the slot means are taken off; else gathered from :attr:`idx`), after which every pass over them
        is over whole planes: a slot's mean or limit applies to a plane at a time, and the sums over a slot's draws add
        planes, each slot's draws in their order (never along rows of N, whose per-row cost is several times the
        work for a few runs per task). Written into ``out`` when given, else the workspace buffer ``deviations``."""
        means = self.task_means()
        drawn = self.drawn_values()
        shape = (drawn.shape[2], self.n_reps, self.n_slots) if drawn is not None else self.idx.shape
        if out is None:
            out = self.buffer("deviations", shape, np.float64)
        if drawn is not None:
            dev = np.subtract(np.moveaxis(drawn, 2, 0), means, out=out)
        else:
            np.take(self.values, self.idx, out=out, mode="clip")  # indices < K by construction
            dev = np.subtract(out, means, out=out)
            mask = self.drawn_mask()
            if mask is not None:
                np.copyto(dev, 0.0, where=~mask)
        if self.unit != 1.0:
            dev /= self.unit  # a power of two: exact (its reciprocal overflows below 2^-1024, subnormal scores)
        return dev

    def padded_samples(self) -> np.ndarray:
        """(R, N_max, S) resampled scores, NaN-padded: the input of slow-path custom metrics."""
        gathered = self.values[self.idx]
        if self.valid is not None:
            gathered = np.where(self.valid, gathered, np.nan)
        return np.moveaxis(gathered, 0, 1)


def column_bytes(resample: Resample) -> int:
    """Bytes :meth:`Resample.with_columns` holds per column: the gathered values (8 bytes a draw), their task
    means, and the sorted ranks (up to 4 bytes a draw) or, with unequal runs per task, the sorted run weights
    (8 bytes a run and replicate, at most 8 a draw, made after the gathered values are freed)."""
    draws = int(np.prod(resample.idx.shape))
    return 12 * draws + 8 * resample.n_reps * resample.n_slots


def column_groups(resample: Resample, n_columns: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> list[tuple[int, int]]:
    """Half-open ranges of columns to give :meth:`Resample.with_columns` at once, so that one group's arrays stay
    near ``chunk_bytes`` (at least one column a group). Every grouping gives the same numbers."""
    step = max(1, int(chunk_bytes // max(column_bytes(resample), 1)))
    return [(lo, min(lo + step, n_columns)) for lo in range(0, n_columns, step)]


def exact_unit(size: float) -> float:
    """1 for a magnitude within 2^±200 (squares and sums of squares stay normal numbers), else the power of two
    nearest below ``size``: dividing by it is exact, so the numbers in that unit are the same up to the scale."""
    if 2.0**-200 <= size <= 2.0**200:
        return 1.0
    return math.ldexp(1.0, math.frexp(size)[1] - 1)


def magnitude(values: np.ndarray) -> float:
    """Largest finite |value|, or 1 when there is none or it is 0: a unit that keeps squares and cubes of
    the values (and of differences between them) inside floating-point range."""
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    top = float(v.max()) if v.size else 0.0
    return top if top > 0 else 1.0


def original(cells: Cells, values: np.ndarray | None = None) -> Resample:
    """The original data as a one-replicate Resample (for point estimates)."""
    n_max = int(cells.sizes.max())
    pos = np.arange(n_max)
    valid = pos[:, None] < cells.sizes[None, :]  # (N, M)
    idx = np.where(valid, cells.offsets[None, :] + pos[:, None], 0)[:, None, :]
    return Resample(
        cells,
        cells.values if values is None else values,
        layout=Layout(idx, None if valid.all() else valid[:, None, :], cells.sizes[None, :].astype(float)),
    )


def multiply_shift(words: np.ndarray, n: int | np.integer | np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Draws from ``n`` items, ⌊u·n / 2³²⌋ for raw 32-bit words ``u`` (multiply-shift, no rejection), as uint64.

    The one definition of a draw (:func:`draw`'s runs and tasks, profiles, ``plan``); ``n`` broadcasts against
    ``words``. Multiplied in uint64 on every numpy (``dtype=``: numpy 1.x multiplies a uint32 array by a uint64
    scalar in uint32, which wraps: every index 0).
    """
    out = np.multiply(words, np.asarray(n, dtype=np.uint64), out=out, dtype=np.uint64)
    np.right_shift(out, np.uint64(32), out=out)
    return out


def rank_dtype(k: int) -> type[np.unsignedinteger] | type[np.signedinteger]:
    """The integer type of ranks among ``k`` runs: uint16 below 65,536 runs (sorted by :func:`sort_ranks`), else
    int32."""
    return np.uint16 if k < 2**16 else np.int32


def sort_ranks(ranks: np.ndarray, axis: int = -1) -> None:
    """Sort integer ranks in place along ``axis``. uint16 ranks take the sort kind :func:`fastest_sort_kind` found
    fastest for rows of their length on this processor: numpy's radix sort (``kind="stable"``, linear in the row
    length) or its default sort (vectorised for 16-bit rows of up to 512 on AVX-512 processors: 0.5 ns an element
    against 2-4 for the radix sort there, 3-9 ns for longer rows; docs/performance.md). Integers sort to the same
    array by either kind, so the choice changes no number."""
    kind = fastest_sort_kind(ranks.dtype, ranks.shape[axis]) if ranks.dtype == np.uint16 else None
    ranks.sort(axis=axis, kind=kind)  # type: ignore[arg-type]


#: The sort kind measured fastest per (dtype, row-length class), once per process (:func:`fastest_sort_kind`).
_SORT_KINDS: dict[tuple[str, int], str | None] = {}


def fastest_sort_kind(dtype: Any, length: int) -> str | None:
    """``"stable"`` (numpy's radix sort for 16-bit integers) or None (numpy's default sort), whichever sorted rows
    of ``length`` ranks of ``dtype`` faster on this processor: measured once per process and per class of lengths
    (between consecutive powers of two), on 64 Ki random ranks, each kind's best of three (about a millisecond).
    Only the speed depends on it: integers sort to the same array by either kind."""
    key = (np.dtype(dtype).str, max(int(length) - 1, 0).bit_length())
    if key not in _SORT_KINDS:
        import time

        row = max(int(length), 1)
        sample = np.random.default_rng(0).integers(0, row, size=(max(1, 2**16 // row), row)).astype(dtype)
        spent: dict[str | None, float] = {}
        for kind in ("stable", None):
            best = math.inf
            for _ in range(3):
                block = sample.copy()
                start = time.thread_time()
                block.sort(axis=1, kind=kind)
                best = min(best, time.thread_time() - start)
            spent[kind] = best
        _SORT_KINDS[key] = min(spent, key=lambda k: spent[k])
    return _SORT_KINDS[key]


def uniform32(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Raw 32-bit uniforms from the generator's bit stream, ``shape[0]`` replicates in C order.

    Each replicate takes a whole number of 64-bit words (``⌈n/2⌉`` for its ``n`` draws; with ``n`` odd,
    the last word's upper half is unused), so replicate r always reads the same words, however the
    replicates are split into chunks.
    """
    reps = int(shape[0]) if shape else 1
    per_rep = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    words = (per_rep + 1) // 2
    raw = random_words(rng, reps * words).view(np.uint32).reshape(reps, 2 * words)
    return raw[:, :per_rep].reshape(shape)


def words_per_replicate(cells: Cells, task_bootstrap: TaskBootstrap = False) -> int:
    """Raw 64-bit words one replicate of :func:`draw` takes from its run stream (with ``task_bootstrap=True``
    its task draws included; a shared task SeedSequence's draws come from that stream instead)."""
    per_rep = cells.n_tasks * int(cells.sizes.max()) + (cells.n_tasks if task_bootstrap is True else 0)
    return (per_rep + 1) // 2


#: Below this many 64-bit words one thread generates them (threads cost more than they save).
_PARALLEL_WORDS = 2**19
_pool: list = []


def _threads() -> int:
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(8, os.cpu_count() or 1))


def random_words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``rng.bit_generator.random_raw(n)``, generated by several threads when the generator is a PCG64.

    PCG64 can jump ahead exactly (``advance(k)``: the state after k raw draws), so thread t fills its
    own block of the output from a copy advanced to the block's start, and the generator is left where
    one serial call leaves it (its buffered 32-bit half-word, which ``random_raw`` never touches, is
    kept). The words are bit-identical to the serial call's: only the wall time changes.
    """
    bg = rng.bit_generator
    if n < _PARALLEL_WORDS or type(bg) is not np.random.PCG64:
        return bg.random_raw(n)
    threads = _threads()
    if threads < 2:
        return bg.random_raw(n)
    from concurrent.futures import ThreadPoolExecutor

    if not _pool or _pool[0] != os.getpid():  # a forked child inherits the pool object but not its threads
        _pool[:] = [os.getpid(), ThreadPoolExecutor(threads, thread_name_prefix="rl-reliable-rng")]
    start = bg.state
    bounds = [n * t // threads for t in range(threads + 1)]
    copies = []
    for lo in bounds[:-1]:
        copy = np.random.PCG64()
        copy.state = start
        copy.advance(lo)
        copies.append(copy)
    out = np.empty(n, dtype=np.uint64)

    def fill(t: int) -> None:
        out[bounds[t] : bounds[t + 1]] = copies[t].random_raw(bounds[t + 1] - bounds[t])

    list(_pool[1].map(fill, range(threads)))
    end = np.random.PCG64()
    end.state = start
    end.advance(n)
    state = end.state
    state["has_uint32"], state["uinteger"] = start["has_uint32"], start["uinteger"]
    bg.state = state
    return out


#: ``task_bootstrap`` of :func:`replicates`: False, True (tasks drawn from the algorithm's own stream), or a
#: SeedSequence every algorithm shares, so that replicate r of every algorithm resamples the same tasks
#: (paired differences and probability of improvement; runs stay independent).
TaskBootstrap = bool | np.random.SeedSequence


def draw(
    cells: Cells,
    reps: int,
    rng: np.random.Generator,
    *,
    task_bootstrap: bool = False,
    task_rng: np.random.Generator | None = None,
    workspace: dict | None = None,
) -> Resample:
    """Draw ``reps`` stratified-bootstrap replicates of one algorithm.

    Runs are resampled with replacement within each task, each task keeping its own run count
    N_m. With ``task_bootstrap`` the M tasks are first resampled with replacement, and the runs of
    each drawn slot are then resampled independently (rliable's ``task_bootstrap=True``). The task
    draws come from ``task_rng`` when given (a stream shared by the algorithms being compared, so
    they resample the same tasks), otherwise from ``rng``.

    A draw from n items is ⌊u·n / 2³²⌋ for a raw 32-bit uniform u (multiply-shift, no rejection):
    every index has probability within n/2³² of 1/n (< 3·10⁻⁷ relative for n ≤ 1000), far below
    any Monte-Carlo error. Every stream is consumed replicate by replicate, each replicate a whole
    number of 64-bit words (with task resampling from ``rng``: its task draws, then its run draws),
    so the same seed gives the same replicates whatever the chunk size.

    ``workspace``: a dict whose arrays the Resample's large intermediates are written into (see
    :meth:`Resample.buffer`), so that the chunks of one bootstrap reuse their buffers.
    """
    n_tasks, n_max = cells.n_tasks, int(cells.sizes.max())
    if not task_bootstrap:
        return Resample(cells, cells.values, uniforms=uniform32(rng, (reps, n_tasks, n_max)), workspace=workspace)
    if task_rng is not None:
        u_tasks = uniform32(task_rng, (reps, n_tasks))
        runs = uniform32(rng, (reps, n_tasks, n_max))
    else:  # one block of words per replicate: its task draws, then its run draws
        u = uniform32(rng, (reps, n_tasks * (1 + n_max)))
        u_tasks = u[:, :n_tasks]
        runs = np.ascontiguousarray(u[:, n_tasks:]).reshape(reps, n_tasks, n_max)
    tasks = multiply_shift(u_tasks, n_tasks).astype(np.int64)
    return Resample(cells, cells.values, uniforms=runs, slot_tasks=tasks, workspace=workspace)


def task_stream(task_bootstrap: TaskBootstrap) -> np.random.Generator | None:
    """A fresh generator on a shared task SeedSequence (the same task draws for every caller), or None."""
    if isinstance(task_bootstrap, np.random.SeedSequence):
        return np.random.default_rng(task_bootstrap)
    return None


def chunk_sizes(reps: int, cells: Cells, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> Iterator[int]:
    """Split ``reps`` so that one chunk's arrays stay near ``chunk_bytes`` (≈ 4 (R,K)-sized float arrays), and
    below :func:`cache_chunk_bytes` (each array about the size of a core's L2 cache)."""
    draws = max(cells.n_runs, int(cells.sizes.max()) * cells.n_tasks)
    return chunks(reps, 8 * 4 * draws, cache_chunk_bytes(chunk_bytes))


#: Bytes of one per-draw float64 array of a chunk: about a core's L2 cache, so that each pass over a chunk's
#: arrays (gather, sum, sort, clip) reads what the previous one left in the cache instead of main memory, and the
#: buffers stay small enough to be reused from chunk to chunk (docs/performance.md: 0.25-16 MiB measured).
CACHE_BYTES = 2**20


def cache_chunk_bytes(chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """The budget :func:`chunk_sizes` splits replicates by: ``chunk_bytes`` (the memory bound), at most 4 arrays
    of :data:`CACHE_BYTES`."""
    return min(int(chunk_bytes), 4 * CACHE_BYTES)


def chunks(reps: int, bytes_per_rep: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> Iterator[int]:
    """Split ``reps`` into chunks of about ``chunk_bytes // bytes_per_rep`` replicates (at least one)."""
    step = max(1, int(chunk_bytes // max(bytes_per_rep, 1)))
    done = 0
    while done < reps:
        n = min(step, reps - done)
        yield n
        done += n


def replicates(
    cells: Cells,
    statistic: Callable[[Resample], np.ndarray],
    reps: int,
    rng: np.random.Generator,
    *,
    task_bootstrap: TaskBootstrap = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Bootstrap distribution of a batched ``statistic``: returns (reps, ...) stacked over chunks.

    ``task_bootstrap``: see :data:`TaskBootstrap`; pass the same SeedSequence for every algorithm whose
    replicates will be compared replicate by replicate (differences).
    """
    out = []
    task_rng = task_stream(task_bootstrap)
    workspace: dict = {}  # the chunks' large intermediates, reused from chunk to chunk
    for n in chunk_sizes(reps, cells, chunk_bytes):
        batch = draw(cells, n, rng, task_bootstrap=bool(task_bootstrap), task_rng=task_rng, workspace=workspace)
        out.append(np.array(statistic(batch)))  # a copy: a statistic may return a view of the workspace
        if progress is not None:
            progress(n)
    return np.concatenate(out, axis=0)


def _replicate_range(
    bounds: tuple[int, int],
    *,
    cells: Cells,
    statistic: Callable[[Resample], np.ndarray],
    state: Any,
    task_state: Any,
    words: int,
    task_bootstrap: bool,
    chunk_bytes: int,
) -> np.ndarray:
    """Replicates ``[lo, hi)`` of one stream (an executor unit): its start state advanced by ``lo * words``."""
    lo, hi = bounds

    def at(st: Any, skip: int) -> np.random.Generator:  # st: a PCG64 state dict
        gen = np.random.PCG64()
        gen.state = st
        gen.advance(skip)
        return np.random.Generator(gen)

    rng = at(state, lo * words)
    task_rng = None if task_state is None else at(task_state, lo * ((cells.n_tasks + 1) // 2))
    out: list[np.ndarray] = []
    workspace: dict = {}
    for n in chunk_sizes(hi - lo, cells, chunk_bytes):
        batch = draw(cells, n, rng, task_bootstrap=task_bootstrap, task_rng=task_rng, workspace=workspace)
        out.append(np.array(statistic(batch)))
    return np.concatenate(out, axis=0)


def replicate_ranges(
    cells: Cells,
    statistic: Callable[[Resample], np.ndarray],
    reps: int,
    rng: np.random.Generator,
    *,
    range_reps: int,
    executor: str | Executor | None = None,
    task_bootstrap: TaskBootstrap = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> np.ndarray:
    """:func:`replicates`, bit for bit, computed as ranges of ``range_reps`` replicates on ``executor``.

    Range ``[lo, hi)`` starts from ``rng``'s state advanced by ``lo * words_per_replicate`` raw words (numpy's
    public ``PCG64.advance``), so where a range runs and how long it is never change a replicate; ``rng`` is left
    where :func:`replicates` leaves it. A generator whose bit generator is not a PCG64 cannot be advanced: it
    is consumed serially, as by :func:`replicates`.
    """
    bg = rng.bit_generator
    if type(bg) is not np.random.PCG64 or range_reps >= reps:
        return replicates(cells, statistic, reps, rng, task_bootstrap=task_bootstrap, chunk_bytes=chunk_bytes)
    words = words_per_replicate(cells, task_bootstrap)
    task_rng = task_stream(task_bootstrap)
    start = bg.state
    fn = partial(
        _replicate_range,
        cells=cells,
        statistic=statistic,
        state=start,
        task_state=None if task_rng is None else task_rng.bit_generator.state,
        words=words,
        task_bootstrap=bool(task_bootstrap),
        chunk_bytes=chunk_bytes,
    )
    units = [(lo, min(lo + range_reps, reps)) for lo in range(0, reps, range_reps)]
    out = np.concatenate(resolve(executor).map(fn, units), axis=0)
    end = np.random.PCG64()
    end.state = start
    end.advance(reps * words)
    state = end.state
    state["has_uint32"], state["uinteger"] = start["has_uint32"], start["uinteger"]
    bg.state = state
    return out


def jackknife_resamples(cells: Cells, values: np.ndarray | None = None) -> Iterator[Resample]:
    """Leave-one-run-out replicates (one per run whose task has ≥ 2 runs), in small batches.

    Removing run k of task m leaves task m with N_m - 1 runs, so the task keeps equal total weight.
    """
    values = cells.values if values is None else values
    removable = np.flatnonzero(cells.sizes[cells.task_of] >= 2)
    n_max = int(cells.sizes.max())
    pos = np.arange(n_max)
    for start in range(0, removable.size, 256):
        drop = removable[start : start + 256]
        reps = drop.size
        task = cells.task_of[drop]
        sizes = np.broadcast_to(cells.sizes, (reps, cells.n_tasks)).copy()
        sizes[np.arange(reps), task] -= 1
        local = np.broadcast_to(pos[:, None, None], (n_max, reps, cells.n_tasks)).copy()
        drop_local = drop - cells.offsets[task]
        # in the dropped run's own task, positions at or after it shift by one
        local[:, np.arange(reps), task] += pos[:, None] >= drop_local[None, :]
        valid = pos[:, None, None] < sizes[None]
        idx = np.where(valid, cells.offsets[None, None, :] + local, 0)
        total = np.full(reps, float(cells.n_runs - 1))
        yield Resample(cells, values, layout=Layout(idx, valid, sizes.astype(float), total))


def jackknife_tasks(cells: Cells) -> np.ndarray:
    """Task of each leave-one-run-out value of :func:`jackknife` (its strata, for the BCa acceleration)."""
    return cells.task_of[cells.sizes[cells.task_of] >= 2]


def jackknife(
    cells: Cells, statistic: Callable[[Resample], np.ndarray], values: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-run-out values of a batched statistic: (J, ...)."""
    parts = [np.asarray(statistic(r)) for r in jackknife_resamples(cells, values)]
    if not parts:
        raise ValueError("BCa needs at least one task with two or more runs")
    return np.concatenate(parts, axis=0)


#: The interval formulas that lived here are in :mod:`.intervals.bounds` (issue 51); the old names forward there.
__getattr__ = moved(
    __name__,
    dict.fromkeys(
        (
            "expanded_level",
            "improvement_level",
            "improvement_variances",
            "task_levels",
            "student_t_task_intervals",
            "DEGENERATE_SHARE",
            "DEGENERATE_SE",
            "studentized_interval",
            "studentized_mean_interval",
            "acceleration",
        ),
        "rl_reliable_logger.stats.intervals.bounds",
    ),
)
