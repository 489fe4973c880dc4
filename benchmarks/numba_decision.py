"""Issue 22: is numba worth keeping under the rules? (numpy-drawn indices, no re-implemented RNG, no second
definition of a statistic).

Under those rules a compiled path may only do the statistic-free part of a replicate: from the run indices numpy
drew (``Resample.idx``), lay out each replicate's sorted samples and task means. The statistics themselves stay the
registered numpy definitions (``registry.get_metric``), fed with that layout. This script times, interleaved,

* ``numpy``: the package as it is (draws, layout and statistics in numpy);
* ``numba``: the same draws and the same statistic functions, the layout computed by a numba kernel reading the
  numpy-drawn index array (the kernel below is the only compiled code, and it exists only here),

on the paper-default aggregates (mean, median, IQM, optimality gap; 50,000 replicates) at the main job's size
(26 tasks x 10 runs) and at the scale case's (57 x 100), for one algorithm. numba is not a dependency: install
it in a scratch venv to run this. Keep numba only if ``numpy / numba >= 2`` on the scale workloads.

    python benchmarks/numba_decision.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import registry

METRICS = [registry.get_metric(m) for m in ("mean", "median", "iqm", "optimality_gap")]


@numba.njit(parallel=True, cache=True)
def _layout(idx, rank, sorted_values, values, runs_per_task, out_sorted, out_means):  # pragma: no cover
    """From run indices ``idx`` (N, R, S): each replicate's samples in ascending order and its task means."""
    n, reps, slots = idx.shape
    k = rank.size
    for r in numba.prange(reps):
        counts = np.zeros(k, np.int64)
        for s in range(slots):
            acc = 0.0
            for j in range(n):
                run = idx[j, r, s]
                counts[rank[run]] += 1
                acc += values[run]
            out_means[r, s] = acc / runs_per_task
        p = 0
        for q in range(k):
            for _ in range(counts[q]):
                out_sorted[r, p] = sorted_values[q]
                p += 1


def numba_statistic(cells: bs.Cells):
    order = np.argsort(cells.values, kind="stable")
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    sorted_values = cells.values[order]
    n = float(cells.sizes[0])

    def stat(r: bs.Resample) -> np.ndarray:
        ss = np.empty((r.n_reps, cells.n_runs))
        tm = np.empty((r.n_reps, r.n_slots))
        _layout(r.idx, rank, sorted_values, cells.values, n, ss, tm)
        r._cache["sorted_samples"], r._cache["task_means"] = ss, tm  # the layout the numpy metrics would build
        return np.stack([m(r) for m in METRICS], axis=1)

    return stat


def numpy_statistic(r: bs.Resample) -> np.ndarray:
    return np.stack([m(r) for m in METRICS], axis=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=50_000)
    args = p.parse_args()
    print(f"numpy {np.__version__}, numba {numba.__version__}; medians of {args.rounds} interleaved rounds")
    for label, tasks, runs in (("main job size 26 x 10", 26, 10), ("scale case size 57 x 100", 57, 100)):
        rng = np.random.default_rng(0)
        cells = bs.Cells.from_list([rng.lognormal(0.0, 1.0 + m % 3, runs) for m in range(tasks)])
        fast = numba_statistic(cells)
        bs.replicates(cells, fast, 10, np.random.default_rng(0))  # compile / load the kernel
        times: dict[str, list[float]] = {"numba": [], "numpy": []}
        out = {}
        for _ in range(args.rounds):
            for name, stat in (("numba", fast), ("numpy", numpy_statistic)):
                t0 = time.perf_counter()
                out[name] = bs.replicates(cells, stat, args.reps, np.random.default_rng(1))
                times[name].append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(
            f"{label}, {args.reps} replicates: numba layout {med['numba']:.2f} s, numpy {med['numpy']:.2f} s, "
            f"numpy / numba {med['numpy'] / med['numba']:.2f}x; max |difference| "
            f"{np.abs(out['numba'] - out['numpy']).max():.1e}"
        )


if __name__ == "__main__":
    main()
