"""Optional compiled kernels (numba): built-in aggregates, profiles, task means, draw counts, POI.

The numpy engine materialises index arrays and sorts every replicate; this kernel reads the same
raw 32-bit uniforms (so it draws exactly the same replicates) and, per replicate, accumulates the
task means and a histogram of the drawn runs in sorted-score order, from which every built-in
metric is one pass. It is used automatically when numba is installed (``pip install
rl_reliable_logger[fast]``) and every requested metric is built in; set the environment variable
``RL_RELIABLE_NO_NUMBA=1`` to force the numpy path. Both paths agree to rounding (tested).

Metric codes are :class:`~.registry.Statistic` (the kernel compares them as plain integers).
Which engine runs is decided by :mod:`.engine`; nothing outside ``stats/`` imports this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Spec, Statistic

numba: Any = None  # imported only when a kernel is first compiled (it takes ~0.5 s to import); see jit()

# the codes as plain integers: numba compiles module-level ints as constants
_MEAN = int(Statistic.MEAN)
_MEDIAN = int(Statistic.MEDIAN)
_TRIM = int(Statistic.TRIMMED_MEAN)
_GAP = int(Statistic.OPTIMALITY_GAP)
_TAIL = int(Statistic.LOWER_TAIL_MEAN)
_ABOVE = int(Statistic.FRACTION_ABOVE)
_TASKS_ABOVE = int(Statistic.TASKS_ABOVE)


def _kernel(
    u,
    slot_tasks,
    has_tasks,
    sizes,
    offsets,
    values,
    rank,
    sorted_values,
    sorted_weight,
    mass_points,
    index_points,
    codes,
    params,
    out,
    means_out,
    want_means,
):
    """Per replicate: slot means and a histogram of drawn runs in sorted order, then one walk.

    The walk records, at each requested cumulative mass t (``mass_points``, ascending), the
    weighted sum of the lowest mass t of the replicate (the boundary run counted in part), and at
    each requested sorted position (``index_points``, ascending) the mass and weighted sum of the
    runs before it. Every built-in metric is a closed form of those records.
    """
    reps, slots, _ = u.shape
    k_total = sorted_values.shape[0]
    n_mass = mass_points.shape[0]
    n_index = index_points.shape[0]
    n_metrics = codes.shape[0]
    need_sorted = False  # the fraction of tasks above a threshold searches the sorted means
    need_median = False
    for q in range(n_metrics):
        need_sorted = need_sorted or codes[q, 0] == _TASKS_ABOVE
        need_median = need_median or codes[q, 0] == _MEDIAN
    half = slots // 2
    n_blocks = min(reps, 64)
    for block in numba.prange(n_blocks):
        hist = np.zeros(k_total, dtype=np.int32)  # draw counts by sorted position (small: stays in cache)
        means = np.empty(slots)
        below_sum = np.empty(n_mass)
        at_mass = np.empty(n_index)
        at_sum = np.empty(n_index)
        start = block * reps // n_blocks
        stop = (block + 1) * reps // n_blocks
        for r in range(start, stop):
            total = 0.0
            for s in range(slots):
                t = np.int64(slot_tasks[r, s]) if has_tasks else np.int64(s)
                n = np.int64(sizes[t])
                off = np.int64(offsets[t])
                acc = 0.0
                for i in range(n):
                    j = off + np.int64((np.uint64(u[r, s, i]) * np.uint64(n)) >> np.uint64(32))
                    acc += values[j]
                    hist[rank[j]] += 1
                means[s] = acc / n
                total += means[s]
                if want_means:
                    means_out[r, s] = means[s]
            cum = 0.0
            wsum = 0.0
            mi = 0
            ii = 0
            for k in range(k_total):
                while ii < n_index and index_points[ii] == k:
                    at_mass[ii] = cum
                    at_sum[ii] = wsum
                    ii += 1
                # branch-free: about a third of the runs are not drawn, an unpredictable branch
                w = hist[k] * sorted_weight[k]  # each draw of a run of task m weighs 1/(S·N_m)
                hist[k] = 0
                v = sorted_values[k]
                new_cum = cum + w
                while mi < n_mass and mass_points[mi] <= new_cum:
                    below_sum[mi] = wsum + (mass_points[mi] - cum) * v
                    mi += 1
                cum = new_cum
                wsum += w * v
            while mi < n_mass:  # rounding: the total mass can fall a hair short of 1
                below_sum[mi] = wsum
                mi += 1
            while ii < n_index:
                at_mass[ii] = cum
                at_sum[ii] = wsum
                ii += 1
            median = 0.0
            if need_sorted:  # insertion sort: far cheaper than a general sort for tens of tasks
                for a in range(1, slots):
                    x = means[a]
                    b = a - 1
                    while b >= 0 and means[b] > x:
                        means[b + 1] = means[b]
                        b -= 1
                    means[b + 1] = x
            elif need_median:  # the middle order statistic(s) by selection (Hoare), no full sort
                lo = 0
                hi = slots - 1
                while lo < hi:
                    pivot = means[(lo + hi) // 2]
                    i = lo
                    j = hi
                    while i <= j:
                        while means[i] < pivot:
                            i += 1
                        while means[j] > pivot:
                            j -= 1
                        if i <= j:
                            x = means[i]
                            means[i] = means[j]
                            means[j] = x
                            i += 1
                            j -= 1
                    if half <= j:
                        hi = j
                    elif half >= i:
                        lo = i
                    else:
                        break
                if slots % 2 == 0:  # everything left of the middle is at most it: the lower middle is their max
                    lower = means[0]
                    for a in range(1, half):
                        lower = max(lower, means[a])
                    means[half - 1] = lower
            if need_sorted or need_median:
                median = means[half] if slots % 2 == 1 else 0.5 * (means[half - 1] + means[half])
            for q in range(n_metrics):
                code = codes[q, 0]
                a = codes[q, 1]
                b = codes[q, 2]
                if code == _MEAN:
                    out[r, q] = total / slots
                elif code == _MEDIAN:
                    out[r, q] = median
                elif code == _TRIM:  # trimmed mean: mass between points a and b
                    out[r, q] = (below_sum[b] - below_sum[a]) / (mass_points[b] - mass_points[a])
                elif code == _GAP:  # optimality gap: gamma - E[min(X, gamma)], runs below gamma end at index a
                    gamma = params[q]
                    out[r, q] = gamma - (at_sum[a] + gamma * (cum - at_mass[a]))
                elif code == _TAIL:  # lower-tail mean up to mass point a
                    out[r, q] = below_sum[a] / mass_points[a]
                elif code == _ABOVE:  # fraction strictly above a threshold: runs above start at index a
                    out[r, q] = cum - at_mass[a]
                else:  # fraction of task means strictly above a threshold (means are sorted)
                    out[r, q] = (slots - np.searchsorted(means, params[q], side="right")) / slots


_jitted: dict = {}


def jit(kernel):
    """The compiled form of ``kernel`` (numba is imported on first use; compiled code is cached on disk).

    A kernel refers to
    ``numba.prange`` through a module global ``numba`` that this sets (numba
    resolves globals at compile time), so modules holding kernels never import numba themselves.
    """
    if kernel not in _jitted:
        import numba as _numba

        kernel.__globals__["numba"] = _numba
        _jitted[kernel] = _numba.njit(parallel=True, cache=True, nogil=True)(kernel)
    return _jitted[kernel]


def fused_metrics(resample, specs: list[Spec], *, task_means: bool = False):
    """(R, len(specs)) built-in metrics of a drawn Resample, computed by the compiled kernel.

    With ``task_means`` also returns the (R, S) slot means: ``(values, means)``.
    """
    plan = _plan(resample.cells, resample.values, specs)
    cells = resample.cells
    rank, sorted_values, sorted_weight, mass_points, index_points, codes, params = plan
    tasks = resample.slot_tasks
    has_tasks = tasks is not None
    if tasks is None:
        tasks = np.zeros((1, 1), dtype=np.int64)
    out = np.empty((resample.n_reps, len(specs)))
    means_out = np.empty((resample.n_reps, resample.n_slots) if task_means else (1, 1))
    jit(_kernel)(
        resample.uniforms,
        np.ascontiguousarray(tasks, dtype=np.int64),
        has_tasks,
        cells.sizes.astype(np.int64),
        cells.offsets.astype(np.int64),
        resample.values,
        rank,
        sorted_values,
        sorted_weight,
        mass_points,
        index_points,
        codes,
        params,
        out,
        means_out,
        task_means,
    )
    return (out, means_out) if task_means else out


#: plans of recent (cells, values, metrics): every chunk of one algorithm's replicates reuses its plan
_plans: dict = {}


def _plan(cells, values: np.ndarray, specs: list[Spec]) -> tuple:
    """Sort order, weights and the walk's points for these runs and metrics (computed once per algorithm).

    Keyed by the identity of the cells and score arrays (which are never modified in place) and the metrics.
    """
    key = (id(cells), id(values), tuple((int(c), float(p)) for c, p in specs))
    hit = _plans.get(key)
    if hit is not None and hit[0] is cells and hit[1] is values:
        return hit[2]
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    rank = np.empty(order.size, dtype=np.int32)
    rank[order] = np.arange(order.size, dtype=np.int32)
    sorted_weight = 1.0 / (cells.n_tasks * cells.sizes[cells.task_of][order])  # 1/(S·N_m), sorted order
    n_runs = cells.n_runs
    mass: list[float] = []
    index: list[int] = []
    plan: list[tuple[Statistic, int, int, float]] = []
    for code, p in specs:
        code = Statistic(code)
        if code is Statistic.TRIMMED_MEAN:
            cut = np.floor(p * n_runs) / n_runs
            plan.append((code, _slot(mass, cut), _slot(mass, 1.0 - cut), 0.0))
        elif code is Statistic.LOWER_TAIL_MEAN:
            plan.append((code, _slot(mass, p), 0, 0.0))
        elif code is Statistic.OPTIMALITY_GAP:
            plan.append((code, _slot(index, int(np.searchsorted(sorted_values, p, side="left"))), 0, p))
        elif code is Statistic.FRACTION_ABOVE:
            plan.append((code, _slot(index, int(np.searchsorted(sorted_values, p, side="right"))), 0, p))
        elif code is Statistic.TASKS_ABOVE:
            plan.append((code, 0, 0, p))
        else:
            plan.append((code, 0, 0, 0.0))
    mass_points, remap_mass = _sorted_points(mass, float)
    index_points, remap_index = _sorted_points(index, np.int64)
    codes = np.zeros((len(plan), 3), dtype=np.int64)
    params = np.zeros(len(plan))
    for q, (code, a, b, p) in enumerate(plan):
        if code in (Statistic.TRIMMED_MEAN, Statistic.LOWER_TAIL_MEAN):
            a, b = remap_mass[a], remap_mass[b]
        elif code in (Statistic.OPTIMALITY_GAP, Statistic.FRACTION_ABOVE):
            a = remap_index[a]
        codes[q] = (int(code), a, b)
        params[q] = p
    prepared = (rank, sorted_values, sorted_weight, mass_points, index_points, codes, params)
    if len(_plans) >= 16:
        _plans.pop(next(iter(_plans)))
    _plans[key] = (cells, values, prepared)
    return prepared


def _slot(points: list, value) -> int:
    points.append(value)
    return len(points) - 1


def _sorted_points(points: list, dtype) -> tuple[np.ndarray, list[int]]:
    """Points ascending (as the walk needs them) and where each original point went."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    remap = [0] * len(points)
    for new, old in enumerate(order):
        remap[old] = new
    return np.array([points[i] for i in order], dtype=dtype).reshape(-1), remap


def _improvement_kernel(cx, cy, x_sizes, x_offsets, y_sizes, y_offsets, below, upto, out):
    """P(X > Y) per replicate from draw counts; y runs sorted within each task."""
    reps = cx.shape[0]
    n_tasks = x_sizes.shape[0]
    max_ny = 0
    for m in range(n_tasks):
        max_ny = max(max_ny, y_sizes[m])
    n_blocks = min(reps, 64)
    for block in numba.prange(n_blocks):
        cum = np.zeros(max_ny + 1)
        for r in range(block * reps // n_blocks, (block + 1) * reps // n_blocks):
            total = 0.0
            for m in range(n_tasks):
                ny = y_sizes[m]
                oy = y_offsets[m]
                for b in range(ny):
                    cum[b + 1] = cum[b] + cy[r, oy + b]
                nx = x_sizes[m]
                ox = x_offsets[m]
                acc = 0.0
                for a in range(nx):
                    lo = cum[below[ox + a]]
                    acc += cx[r, ox + a] * (lo + 0.5 * (cum[upto[ox + a]] - lo))
                total += acc / (nx * ny)
            out[r] = total / n_tasks


def improvement(cells_x, counts_x: np.ndarray, cells_y, counts_y: np.ndarray) -> np.ndarray:
    """Compiled :func:`~rl_reliable_logger.stats.metrics.improvement_replicates` (same numbers)."""
    # the kernel walks y's runs in ascending order within each task (evaluate() stores them so)
    perm = np.lexsort((cells_y.values, cells_y.task_of))
    if (perm != np.arange(perm.size)).any():
        counts_y = np.ascontiguousarray(counts_y[:, perm])
    y_sorted = cells_y.values[perm]
    below = np.empty(cells_x.n_runs, dtype=np.int64)
    upto = np.empty(cells_x.n_runs, dtype=np.int64)
    for m in range(cells_x.n_tasks):
        sx = slice(cells_x.offsets[m], cells_x.offsets[m] + cells_x.sizes[m])
        y = y_sorted[cells_y.offsets[m] : cells_y.offsets[m] + cells_y.sizes[m]]
        below[sx] = np.searchsorted(y, cells_x.values[sx], side="left")
        upto[sx] = np.searchsorted(y, cells_x.values[sx], side="right")
    out = np.empty(counts_x.shape[0])
    jit(_improvement_kernel)(
        counts_x,
        counts_y,
        cells_x.sizes.astype(np.int64),
        cells_x.offsets.astype(np.int64),
        cells_y.sizes.astype(np.int64),
        cells_y.offsets.astype(np.int64),
        below,
        upto,
        out,
    )
    return out


def _counts_kernel(u, sizes, offsets, out):
    reps, slots, _ = u.shape
    for r in numba.prange(reps):
        for s in range(slots):
            n = np.int64(sizes[s])
            off = np.int64(offsets[s])
            for i in range(n):
                out[r, off + np.int64((np.uint64(u[r, s, i]) * np.uint64(n)) >> np.uint64(32))] += 1


def draw_counts(resample) -> np.ndarray:
    """(R, K) uint16 draw counts of a drawn Resample without task resampling (same as ``counts()``)."""
    if resample.slot_tasks is not None or resample.uniforms is None:
        raise ValueError("draw_counts needs fresh draws without task resampling")
    cells = resample.cells
    dtype = np.uint16 if int(cells.sizes.max()) < 2**16 else np.uint32
    out = np.zeros((resample.n_reps, cells.n_runs), dtype=dtype)
    jit(_counts_kernel)(resample.uniforms, cells.sizes.astype(np.int64), cells.offsets.astype(np.int64), out)
    return out
