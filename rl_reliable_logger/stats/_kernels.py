"""Optional compiled kernel (numba) for the built-in aggregate metrics.

The numpy engine materialises index arrays and sorts every replicate; this kernel reads the same
raw 32-bit uniforms (so it draws exactly the same replicates) and, per replicate, accumulates the
task means and a histogram of the drawn runs in sorted-score order, from which every built-in
metric is one pass. It is used automatically when numba is installed (``pip install
rl_reliable_logger[fast]``) and every requested metric is built in; set the environment variable
``RL_RELIABLE_NO_NUMBA=1`` to force the numpy path. Both paths agree to rounding (tested).

Metric codes: 0 mean, 1 median, 2 trimmed mean (param = proportion cut from each end; mass
⌊p·K⌋/K), 3 optimality gap (param = γ), 4 lower-tail mean (param = fraction), 5 fraction above
(param = threshold).
"""
from __future__ import annotations

import os

import numpy as np

import importlib.util

# numba is optional and imported only when the kernel first runs (it takes ~0.5 s to import)
AVAILABLE = importlib.util.find_spec("numba") is not None and not os.environ.get("RL_RELIABLE_NO_NUMBA")
numba = None

CODES = {"mean": 0, "median": 1, "trim": 2, "gap": 3, "tail": 4, "above": 5}


def _kernel(u, slot_tasks, has_tasks, sizes, offsets, values, rank, sorted_values, n_runs, codes, params, out):
    reps, slots, _ = u.shape
    k_total = sorted_values.shape[0]
    n_metrics = codes.shape[0]
    n_blocks = min(reps, 64)
    cuts = np.empty(n_metrics)
    for q in range(n_metrics):
        cuts[q] = np.floor(params[q] * n_runs) / n_runs
    for block in numba.prange(n_blocks):
        hist = np.zeros(k_total)
        means = np.empty(slots)
        num = np.empty(n_metrics)
        den = np.empty(n_metrics)
        start = block * reps // n_blocks
        stop = (block + 1) * reps // n_blocks
        for r in range(start, stop):
            total = 0.0
            for s in range(slots):
                t = np.int64(slot_tasks[r, s]) if has_tasks else np.int64(s)
                n = np.int64(sizes[t])
                off = np.int64(offsets[t])
                weight = 1.0 / (slots * n)
                acc = 0.0
                for i in range(n):
                    j = off + np.int64((np.uint64(u[r, s, i]) * np.uint64(n)) >> np.uint64(32))
                    acc += values[j]
                    hist[rank[j]] += weight
                means[s] = acc / n
                total += means[s]
            num[:] = 0.0
            den[:] = 0.0
            # one walk over the sorted runs serves every distribution metric (and clears the histogram)
            cum = 0.0
            for k in range(k_total):
                w = hist[k]
                if w == 0.0:
                    continue
                hist[k] = 0.0
                lo = cum
                cum += w
                v = sorted_values[k]
                for q in range(n_metrics):
                    code = codes[q]
                    if code == 2:
                        kept = min(cum, 1.0 - cuts[q]) - max(lo, cuts[q])
                        if kept > 0.0:
                            num[q] += kept * v
                            den[q] += kept
                    elif code == 3:
                        num[q] += w * min(v, params[q])
                    elif code == 4:
                        kept = min(cum, params[q]) - lo
                        if kept > 0.0:
                            num[q] += kept * v
                            den[q] += kept
                    elif code == 5:
                        if v > params[q]:
                            num[q] += w
            median = 0.0
            for q in range(n_metrics):
                if codes[q] == 1:
                    means.sort()
                    half = slots // 2
                    median = means[half] if slots % 2 == 1 else 0.5 * (means[half - 1] + means[half])
                    break
            for q in range(n_metrics):
                code = codes[q]
                if code == 0:
                    out[r, q] = total / slots
                elif code == 1:
                    out[r, q] = median
                elif code == 2 or code == 4:
                    out[r, q] = num[q] / den[q]
                elif code == 3:
                    out[r, q] = params[q] - num[q]
                else:
                    out[r, q] = num[q]


_compiled = None


def _get():
    global _compiled, numba
    if _compiled is None:
        import numba as _numba

        numba = _numba  # the kernel's global name, resolved at compile time
        _compiled = numba.njit(parallel=True, cache=True, fastmath=False, nogil=True)(_kernel)
    return _compiled


def fused_metrics(resample, specs: list[tuple[str, float]]) -> np.ndarray:
    """(R, len(specs)) built-in metrics of a drawn Resample, computed by the compiled kernel."""
    cells = resample.cells
    order = np.argsort(resample.values, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    tasks = resample.slot_tasks
    has_tasks = tasks is not None
    if tasks is None:
        tasks = np.zeros((1, 1), dtype=np.int64)
    out = np.empty((resample.n_reps, len(specs)))
    _get()(
        resample.uniforms,
        np.ascontiguousarray(tasks, dtype=np.int64),
        has_tasks,
        cells.sizes.astype(np.int64),
        cells.offsets.astype(np.int64),
        resample.values,
        rank,
        resample.values[order],
        float(cells.n_runs),
        np.array([CODES[c] for c, _ in specs], dtype=np.int64),
        np.array([p for _, p in specs], dtype=float),
        out,
    )
    return out
