"""Optional compiled kernels (numba): built-in aggregates, profiles, task means, draw counts, POI, and the
selection of interval quantiles.

The numpy engine materialises index arrays and sorts every replicate; this kernel reads the same
raw 32-bit uniforms (so it draws exactly the same replicates) and, per replicate, accumulates the
task means and a histogram of the drawn runs in sorted-score order, from which every built-in
metric is one pass. It is used automatically when numba is installed (``pip install
rl_reliable_logger[fast]``) and every requested metric is built in; set the environment variable
``RL_RELIABLE_NO_NUMBA=1`` to force the numpy path. Both paths agree to rounding (tested).

Metric codes are :class:`~.registry.Statistic` (the kernel compares them as plain integers).
Which engine runs is decided by :mod:`.engine` (the selection: by :mod:`.quantiles`, once a kernel is loaded);
nothing outside ``stats/`` imports this module.
"""

from __future__ import annotations

import math
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
    stream,
    words,
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

    The replicates' raw 32-bit uniforms are the rows of ``u`` (R, S·N_max), or, when ``stream`` holds a
    PCG64 state (``[state_hi, state_lo, inc_hi, inc_lo]``, else it is empty), generated here: replicate r
    reads the ``words`` 64-bit outputs that follow the first ``r·words`` (the same words, in the same
    order, that ``uniform32`` would have taken from that generator).

    The walk records, at each requested cumulative mass t (``mass_points``, ascending), the
    weighted sum of the lowest mass t of the replicate (the boundary run counted in part), and at
    each requested sorted position (``index_points``, ascending) the mass and weighted sum of the
    runs before it. Every built-in metric is a closed form of those records.
    """
    gen = stream.shape[0] == 4
    reps = out.shape[0]
    slots = sizes.shape[0] if not has_tasks else slot_tasks.shape[1]
    n_max = sizes.max() if gen else u.shape[1] // slots
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
        ub = np.empty(2 * words if gen else 1, dtype=np.uint32)  # a generated replicate's uniforms
        s_hi = np.uint64(0)
        s_lo = np.uint64(0)
        if gen:  # this block's replicates start start·words outputs into the stream
            s_hi, s_lo = _pcg_advance(stream[0], stream[1], stream[2], stream[3], np.uint64(start * words))
        for r in range(start, stop):
            if gen:  # each 64-bit word is two uniforms, its low half first (as numpy's uint32 view)
                for k in range(words):
                    s_hi, s_lo = _pcg_step(s_hi, s_lo, stream[2], stream[3])
                    word = _pcg_output(s_hi, s_lo)
                    ub[np.uint64(2 * k)] = np.uint32(word & np.uint64(0xFFFFFFFF))
                    ub[np.uint64(2 * k + 1)] = np.uint32(word >> np.uint64(32))
            src = ub if gen else u[r]
            total = 0.0
            for s in range(slots):
                t = np.int64(slot_tasks[r, s]) if has_tasks else np.int64(s)
                n = np.int64(sizes[t])
                off = np.int64(offsets[t])
                acc = 0.0
                row = s * n_max
                for i in range(n):  # (unsigned indices: no negative-index wraparound test in the hot loop)
                    j = np.uint64(off) + ((np.uint64(src[np.uint64(row + i)]) * np.uint64(n)) >> np.uint64(32))
                    acc += values[j]
                    hist[np.uint64(rank[j])] += 1
                means[s] = acc / n
                total += means[s]
                if want_means:
                    means_out[r, s] = means[s]
            cum = 0.0
            wsum = 0.0
            mi = 0
            ii = 0
            for k in range(k_total):
                while ii < n_index and index_points[np.uint64(ii)] == k:
                    at_mass[ii] = cum
                    at_sum[ii] = wsum
                    ii += 1
                uk = np.uint64(k)  # unsigned indices: no negative-index wraparound test in the hot loop
                # branch-free: about a third of the runs are not drawn, an unpredictable branch
                w = hist[uk] * sorted_weight[uk]  # each draw of a run of task m weighs 1/(S·N_m)
                hist[uk] = 0
                v = sorted_values[uk]
                new_cum = cum + w
                while mi < n_mass and mass_points[np.uint64(mi)] <= new_cum:
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

# PCG64 (numpy's default bit generator) inside the kernels, set by _install_pcg() when numba is imported
_pcg_step: Any = None
_pcg_output: Any = None
_pcg_advance: Any = None
#: PCG64's 128-bit LCG multiplier (numpy's PCG_DEFAULT_MULTIPLIER_128) as (high, low) 64-bit halves
_PCG_MULT = (0x2360ED051FC65DA4, 0x4385DF649FCCF645)


def _install_pcg(numba_module) -> None:
    """Compile numpy's PCG64 step, output and jump-ahead for the kernels (LLVM's native 128-bit integers).

    The step is ``state = state·MULT + inc (mod 2¹²⁸)`` and the output XSL-RR, as numpy's ``pcg64.h``
    (tested equal to ``random_raw``).
    """
    global _pcg_step, _pcg_output, _pcg_advance
    if _pcg_step is not None:
        return
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    u64 = types.uint64
    pair = types.UniTuple(u64, 2)

    def muladd128_typing(typingctx, a_hi, a_lo, b_hi, b_lo, c_hi, c_lo):
        """(a·b + c) mod 2¹²⁸ of 128-bit numbers given as (high, low) 64-bit halves."""

        def codegen(context, builder, signature, args):
            i128, i64 = ir.IntType(128), ir.IntType(64)
            shift = ir.Constant(i128, 64)
            wide = [builder.zext(x, i128) for x in args]
            a, b, c = (builder.or_(builder.shl(wide[k], shift), wide[k + 1]) for k in (0, 2, 4))
            res = builder.add(builder.mul(a, b), c)
            hi = builder.trunc(builder.lshr(res, shift), i64)
            return context.make_tuple(builder, pair, [hi, builder.trunc(res, i64)])

        return pair(u64, u64, u64, u64, u64, u64), codegen

    muladd128: Any = intrinsic(muladd128_typing)

    m_hi, m_lo = np.uint64(_PCG_MULT[0]), np.uint64(_PCG_MULT[1])
    zero, one = np.uint64(0), np.uint64(1)

    def step(s_hi, s_lo, inc_hi, inc_lo):
        return muladd128(s_hi, s_lo, m_hi, m_lo, inc_hi, inc_lo)

    def output(s_hi, s_lo):
        x = s_hi ^ s_lo
        rot = s_hi >> np.uint64(58)
        return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))

    def advance(s_hi, s_lo, inc_hi, inc_lo, delta):
        """The state ``delta`` steps on (Brown's O(log delta) LCG jump, as numpy's ``pcg64_advance``)."""
        am_hi, am_lo, ap_hi, ap_lo = zero, one, zero, zero
        cm_hi, cm_lo, cp_hi, cp_lo = m_hi, m_lo, inc_hi, inc_lo
        while delta > 0:
            if delta & one:
                am_hi, am_lo = muladd128(am_hi, am_lo, cm_hi, cm_lo, zero, zero)
                ap_hi, ap_lo = muladd128(ap_hi, ap_lo, cm_hi, cm_lo, cp_hi, cp_lo)
            t_hi, t_lo = muladd128(cm_hi, cm_lo, zero, one, zero, one)  # cur_mult + 1
            cp_hi, cp_lo = muladd128(t_hi, t_lo, cp_hi, cp_lo, zero, zero)
            cm_hi, cm_lo = muladd128(cm_hi, cm_lo, cm_hi, cm_lo, zero, zero)
            delta = delta >> one
        return muladd128(am_hi, am_lo, s_hi, s_lo, ap_hi, ap_lo)

    _pcg_step = numba_module.njit(inline="always", cache=True)(step)
    _pcg_output = numba_module.njit(inline="always", cache=True)(output)
    _pcg_advance = numba_module.njit(cache=True)(advance)


def loaded() -> bool:
    """True once a kernel has been compiled or loaded in this process (numba is imported, its cost paid)."""
    return bool(_jitted)


def jit(kernel):
    """The compiled form of ``kernel`` (numba is imported on first use; compiled code is cached on disk).

    A kernel refers to
    ``numba.prange`` through a module global ``numba`` that this sets (numba
    resolves globals at compile time), so modules holding kernels never import numba themselves.
    """
    if kernel not in _jitted:
        import numba as _numba

        kernel.__globals__["numba"] = _numba
        _install_pcg(_numba)
        _jitted[kernel] = _numba.njit(parallel=True, cache=True, nogil=True)(kernel)
    return _jitted[kernel]


def fused_metrics(resample, specs: list[Spec], *, task_means: bool = False):
    """(R, len(specs)) built-in metrics of a drawn Resample, computed by the compiled kernel.

    With ``task_means`` also returns the (R, S) slot means: ``(values, means)``.
    """
    u = resample.uniforms
    u = np.ascontiguousarray(u).reshape(u.shape[0], -1)
    return _run_kernel(
        resample.cells, resample.values, specs, u, _NO_STREAM, 0, resample.slot_tasks, resample.n_reps, task_means
    )


_NO_STREAM = np.zeros(0, dtype=np.uint64)


def is_pcg64(rng: np.random.Generator) -> bool:
    """True when the kernels can generate this generator's words themselves (numpy's PCG64)."""
    return type(rng.bit_generator) is np.random.PCG64


def fused_metrics_stream(
    cells, specs: list[Spec], reps: int, rng: np.random.Generator, *, task_means: bool = False
) -> np.ndarray:
    """(reps, len(specs)) built-in metrics of ``reps`` stratified replicates drawn from ``rng`` (a PCG64).

    The same numbers as ``fused_metrics(draw(cells, reps, rng), specs)``: the kernel generates the very words
    ``uniform32`` would take, without storing them, and ``rng`` is left where ``draw`` leaves it. With
    ``task_means`` it returns the (reps, M) task means instead.
    """
    words = (cells.n_tasks * int(cells.sizes.max()) + 1) // 2
    stream, start = _stream_state(rng)
    dummy = np.zeros((1, 2), dtype=np.uint32)
    out = _run_kernel(cells, cells.values, specs, dummy, stream, words, None, reps, task_means)
    if task_means:
        out = out[1]
    _advance(rng, start, reps * words)
    return out


def _stream_state(rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """A PCG64 generator's state and increment as the kernels read them, and its full state (for _advance)."""
    start: dict = dict(rng.bit_generator.state)
    state, inc = int(start["state"]["state"]), int(start["state"]["inc"])
    mask = (1 << 64) - 1
    return np.array([state >> 64, state & mask, inc >> 64, inc & mask], dtype=np.uint64), start


def _advance(rng: np.random.Generator, start: dict, n: int) -> None:
    """Leave ``rng`` ``n`` words past ``start``, where ``random_raw(n)`` would have left it."""
    end = np.random.PCG64()
    end.state = start  # type: ignore[assignment]
    end.advance(n)
    moved: dict = dict(end.state)  # advance() clears the buffered 32-bit half-word, which random_raw never touches
    moved["has_uint32"], moved["uinteger"] = start["has_uint32"], start["uinteger"]
    rng.bit_generator.state = moved


def _run_kernel(cells, values, specs, u, stream, words, tasks, reps, task_means):
    plan = _plan(cells, values, specs)
    rank, sorted_values, sorted_weight, mass_points, index_points, codes, params = plan
    has_tasks = tasks is not None
    if tasks is None:
        tasks = np.zeros((1, 1), dtype=np.int64)
    out = np.empty((reps, len(specs)))
    means_out = np.empty((reps, tasks.shape[1] if has_tasks else cells.n_tasks) if task_means else (1, 1))
    jit(_kernel)(
        u,
        stream,
        words,
        np.ascontiguousarray(tasks, dtype=np.int64),
        has_tasks,
        cells.sizes.astype(np.int64),
        cells.offsets.astype(np.int64),
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
            for m in range(n_tasks):  # unsigned indices: no negative-index wraparound tests
                ny = y_sizes[m]
                oy = np.uint64(y_offsets[m])
                for b in range(ny):
                    ub = np.uint64(b)
                    cum[ub + np.uint64(1)] = cum[ub] + cy[r, oy + ub]
                nx = x_sizes[m]
                ox = np.uint64(x_offsets[m])
                acc = 0.0
                for a in range(nx):
                    xa = ox + np.uint64(a)
                    lo = cum[np.uint64(below[xa])]
                    acc += cx[r, xa] * (lo + 0.5 * (cum[np.uint64(upto[xa])] - lo))
                total += acc / (nx * ny)
            out[r] = total / n_tasks


def improvement(cells_x, counts_x: np.ndarray, cells_y, counts_y: np.ndarray) -> np.ndarray:
    """Compiled :func:`~rl_reliable_logger.stats.metrics.improvement_replicates` (same numbers)."""
    perm, below, upto = _pair_plan(cells_x, cells_y)
    if perm is not None:
        counts_y = np.ascontiguousarray(counts_y[:, perm])
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


#: plans of recent (x, y) pairs: every chunk of a pair's replicates reuses its plan
_pair_plans: dict = {}


def _pair_plan(cells_x, cells_y) -> tuple:
    """y's sort permutation (None when already sorted) and, for each run of x, y's runs below and up to it.

    The kernel walks y's runs in ascending order within each task (evaluate() stores them so). Keyed by the
    identity of the two cells objects (never modified in place), like :func:`_plan`.
    """
    key = (id(cells_x), id(cells_y))
    hit = _pair_plans.get(key)
    if hit is not None and hit[0] is cells_x and hit[1] is cells_y:
        return hit[2]
    perm = np.lexsort((cells_y.values, cells_y.task_of))
    y_sorted = cells_y.values[perm]
    below = np.empty(cells_x.n_runs, dtype=np.int64)
    upto = np.empty(cells_x.n_runs, dtype=np.int64)
    for m in range(cells_x.n_tasks):
        sx = slice(cells_x.offsets[m], cells_x.offsets[m] + cells_x.sizes[m])
        y = y_sorted[cells_y.offsets[m] : cells_y.offsets[m] + cells_y.sizes[m]]
        below[sx] = np.searchsorted(y, cells_x.values[sx], side="left")
        upto[sx] = np.searchsorted(y, cells_x.values[sx], side="right")
    prepared = (perm if (perm != np.arange(perm.size)).any() else None, below, upto)
    if len(_pair_plans) >= 64:
        _pair_plans.pop(next(iter(_pair_plans)))
    _pair_plans[key] = (cells_x, cells_y, prepared)
    return prepared


def _counts_kernel(u, sizes, offsets, out):
    reps, slots, _ = u.shape
    for r in numba.prange(reps):
        for s in range(slots):
            n = np.uint64(sizes[s])
            off = np.uint64(offsets[s])
            for i in range(n):  # unsigned indices: no negative-index wraparound tests
                out[r, off + ((np.uint64(u[r, s, i]) * n) >> np.uint64(32))] += 1


def draw_counts(resample) -> np.ndarray:
    """(R, K) uint16 draw counts of a drawn Resample without task resampling (same as ``counts()``)."""
    if resample.slot_tasks is not None or resample.uniforms is None:
        raise ValueError("draw_counts needs fresh draws without task resampling")
    cells = resample.cells
    dtype = np.uint16 if int(cells.sizes.max()) < 2**16 else np.uint32
    out = np.zeros((resample.n_reps, cells.n_runs), dtype=dtype)
    jit(_counts_kernel)(resample.uniforms, cells.sizes.astype(np.int64), cells.offsets.astype(np.int64), out)
    return out


def _counts_stream_kernel(stream, words, n_max, sizes, offsets, out):
    """:func:`_counts_kernel` generating each replicate's words from the PCG64 ``stream`` (as ``_kernel``)."""
    reps = out.shape[0]
    slots = sizes.shape[0]
    n_blocks = min(reps, 64)
    for block in numba.prange(n_blocks):
        start = block * reps // n_blocks
        stop = (block + 1) * reps // n_blocks
        ub = np.empty(2 * words, dtype=np.uint32)
        s_hi, s_lo = _pcg_advance(stream[0], stream[1], stream[2], stream[3], np.uint64(start * words))
        for r in range(start, stop):
            for k in range(words):  # each 64-bit word is two uniforms, its low half first
                s_hi, s_lo = _pcg_step(s_hi, s_lo, stream[2], stream[3])
                word = _pcg_output(s_hi, s_lo)
                ub[np.uint64(2 * k)] = np.uint32(word & np.uint64(0xFFFFFFFF))
                ub[np.uint64(2 * k + 1)] = np.uint32(word >> np.uint64(32))
            for s in range(slots):
                n = np.uint64(sizes[s])
                off = np.uint64(offsets[s])
                row = np.uint64(s * n_max)
                for i in range(n):  # unsigned indices: no negative-index wraparound tests
                    out[r, off + ((np.uint64(ub[row + np.uint64(i)]) * n) >> np.uint64(32))] += 1


def draw_counts_stream(cells, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``draw_counts(draw(cells, reps, rng))`` with the kernel generating the words (``rng`` a PCG64), which
    leaves ``rng`` where ``draw`` leaves it."""
    n_max = int(cells.sizes.max())
    words = (cells.n_tasks * n_max + 1) // 2
    stream, start = _stream_state(rng)
    dtype = np.uint16 if n_max < 2**16 else np.uint32
    out = np.zeros((reps, cells.n_runs), dtype=dtype)
    if reps:
        jit(_counts_stream_kernel)(
            stream, words, n_max, cells.sizes.astype(np.int64), cells.offsets.astype(np.int64), out
        )
    _advance(rng, start, reps * words)
    return out


#: rows of at least this many replicates are selected through a sample's bands (smaller: whole-row select)
_SAMPLED_FROM = 512
#: at most this many replicates are sampled (evenly spaced) to place the bands; at least 64, about 1 in 16
_SAMPLE = 1024


def _select_kernel(dist, width, ranks, out, unusual):
    """Order statistics ``ranks`` (ascending, repeats allowed) of every column of every part of ``dist`` (P, B, C)
    into ``out`` (T, P·C), column ``c`` of part ``p`` at ``p·C + c``.

    Columns are taken ``width`` at a time (in parallel), gathered row by row into contiguous copies. Per column (Floyd and Rivest's idea): sort an evenly spaced sample of the replicates and take, around
    each wanted rank, a band of sample values wide enough to hold it (about 4 standard deviations of a sample
    quantile's rank; overlapping bands merge). Branch-free counts give the replicates below and inside each band;
    when every rank falls in a band (almost always), each band's replicates are copied out and the rank is
    selected (Wirth) there, a few percent of the column. Otherwise the column is done again as one band holding
    everything. A column holding a NaN or a negative zero is only flagged in ``unusual``: where it sits among equal
    values decides which one a selection returns, so the caller leaves those columns to numpy.
    """
    n_parts, n, n_cols = dist.shape
    n_ranks = ranks.shape[0]
    s = min(_SAMPLE, max(64, n // 16)) if n >= _SAMPLED_FROM else 0
    per_part = (n_cols + width - 1) // width
    n_groups = n_parts * per_part
    n_blocks = min(n_groups, 64)
    for block in numba.prange(n_blocks):
        low = np.empty(n_ranks)  # band bounds (merged bands: the first nb entries)
        high = np.empty(n_ranks)
        below = np.empty(n_ranks, dtype=np.int64)  # replicates below each band
        size = np.empty(n_ranks, dtype=np.int64)  # ... and inside it
        start = np.empty(n_ranks, dtype=np.int64)  # each band's offset in the buffer
        band = np.empty(n_ranks, dtype=np.int64)  # the band of each rank, and its rank there
        local = np.empty(n_ranks, dtype=np.int64)
        sample = np.empty(max(s, 1))
        buf = np.empty(n + 1)  # the bands' replicates (with one slot of slack for branch-free copying)
        columns = np.empty((width, n))
        for group in range((block * n_groups) // n_blocks, ((block + 1) * n_groups) // n_blocks):
            part = group // per_part
            first_col = (group % per_part) * width
            w = min(width, n_cols - first_col)
            for i in range(n):  # gather the group's columns (each row's values are adjacent)
                for q in range(w):
                    columns[q, i] = dist[part, i, first_col + q]
            for q in range(w):
                c = part * n_cols + first_col + q
                row = columns[q]
                odd = 0
                for i in range(n):  # a NaN or a negative zero anywhere (branch-free: vectorised)
                    x = row[i]
                    odd += (x != x) | ((x == 0.0) & (math.copysign(1.0, x) < 0.0))
                if odd:
                    unusual[c] = True
                    continue
                sampled = s > 0
                while True:
                    nb = 0
                    if sampled:
                        for i in range(s):
                            sample[i] = row[(i * n) // s]
                        sample.sort()
                        for t in range(n_ranks):
                            pos = (ranks[t] + 0.5) * s / n
                            sd = math.sqrt(pos * max(1.0 - pos / s, 0.0))
                            a = int(math.floor(pos - 4.0 * sd)) - 2
                            b = int(math.ceil(pos + 4.0 * sd)) + 2
                            lo_v = -np.inf if a < 0 else sample[a]
                            hi_v = np.inf if b >= s else sample[b]
                            if nb > 0 and lo_v <= high[nb - 1]:
                                high[nb - 1] = max(high[nb - 1], hi_v)
                            else:
                                low[nb] = lo_v
                                high[nb] = hi_v
                                nb += 1
                    else:
                        nb = 1
                        low[0] = -np.inf
                        high[0] = np.inf
                    for j in range(nb):  # replicates below and up to each band (branch-free: vectorised)
                        under = 0
                        upto = 0
                        lo_v = low[j]
                        hi_v = high[j]
                        for i in range(n):
                            x = row[i]
                            under += x < lo_v
                            upto += x <= hi_v
                        below[j] = under
                        size[j] = upto - under
                    ok = True
                    for t in range(n_ranks):  # the band of each rank; bands are disjoint and ascending
                        r = ranks[t]
                        found = False
                        for j in range(nb):
                            if below[j] <= r < below[j] + size[j]:
                                band[t] = j
                                local[t] = r - below[j]
                                found = True
                                break
                        ok = ok and found
                    if ok or not sampled:
                        break
                    sampled = False  # a rank between bands (rare): one band holding everything
                total = 0
                for j in range(nb):  # copy each band's replicates: write every one, advance past those inside
                    start[j] = total
                    p = total
                    lo_v = low[j]
                    hi_v = high[j]
                    for i in range(n):
                        x = row[i]
                        buf[p] = x
                        p += (x >= lo_v) & (x <= hi_v)
                    total += size[j]
                done = -1  # the band whose smallest values are in place up to position ``first``
                first = 0
                for t in range(n_ranks):
                    j = band[t]
                    base = start[j]
                    k = base + local[t]
                    if j != done:
                        done = j
                        first = base
                    if k < first:  # a repeated rank: already in place
                        out[t, c] = buf[k]
                        continue
                    end = base + size[j] - 1
                    if k == first:  # the minimum of the rest
                        m = first
                        for i in range(first + 1, end + 1):
                            if buf[i] < buf[m]:
                                m = i
                        x = buf[m]
                        buf[m] = buf[first]
                        buf[first] = x
                    else:
                        lo = first
                        hi = end
                        rounds = 0
                        while lo < hi:
                            rounds += 1
                            if rounds > 100:  # pathological pivots: finish by sorting what is left
                                buf[lo : hi + 1] = np.sort(buf[lo : hi + 1])
                                break
                            a_v = buf[lo]
                            b_v = buf[(lo + hi) // 2]
                            d_v = buf[hi]  # median of three
                            pivot = max(min(a_v, b_v), min(max(a_v, b_v), d_v))
                            i = lo
                            jj = hi
                            while i <= jj:
                                while buf[i] < pivot:
                                    i += 1
                                while buf[jj] > pivot:
                                    jj -= 1
                                if i <= jj:
                                    x = buf[i]
                                    buf[i] = buf[jj]
                                    buf[jj] = x
                                    i += 1
                                    jj -= 1
                            if k <= jj:
                                hi = jj
                            elif k >= i:
                                lo = i
                            else:
                                break
                    out[t, c] = buf[k]
                    first = k + 1


def select_ranks(dist: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order statistics ``ranks`` (ascending) of every column of a float array ``dist``, (B, C) or parts of
    replicates (P, B, C): ``(len(ranks), C)`` or ``(len(ranks), P·C)`` (part by part), and which columns were left
    out (a NaN or a negative zero among them, see :func:`_select_kernel`)."""
    dist = np.ascontiguousarray(dist, dtype=np.float64)  # (a copy unless row-major)
    if dist.ndim == 2:
        dist = dist[None]
    ranks = np.ascontiguousarray(ranks, dtype=np.int64)
    if dist.ndim != 3 or (ranks.size and (ranks[0] < 0 or ranks[-1] >= dist.shape[1] or (np.diff(ranks) < 0).any())):
        raise ValueError("select_ranks needs a 2-D or 3-D array and ascending ranks within its replicates")
    n_cols = dist.shape[2]
    # 8 adjacent values: one cache line per row; at least two groups to share between threads
    width = max(1, min(8, (dist.shape[0] * n_cols) // 2, n_cols))
    out = np.empty((ranks.size, dist.shape[0] * n_cols))
    unusual = np.zeros(dist.shape[0] * n_cols, dtype=np.bool_)
    jit(_select_kernel)(dist, width, ranks, out, unusual)
    return out, unusual
