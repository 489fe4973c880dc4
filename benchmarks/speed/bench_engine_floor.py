"""Issue 44: the bootstrap engine against a plain-numpy floor of the same computation, in one run.

The workload is rliable's README aggregates (median, IQM, mean, optimality gap, 95% percentile intervals) of
10 algorithms x 57 tasks x 100 runs at 10,000 replicates, through the public rliable-style API
(``rl_reliable_logger.rliable.library.get_interval_estimates`` with the README's ``aggregate_func`` lambda).

The floor is written here, independently of the package, with public numpy only and the *same random streams*
(the API's seeding: ``RandomState(seed)`` gives each key a 63-bit seed of ``default_rng``; a replicate takes
⌈S·N/2⌉ whole 64-bit words of ``bit_generator.random_raw``, and a draw from n runs is ⌊u·n / 2³²⌋ of a 32-bit
half-word). Per chunk of replicates (sized to the L2 cache, buffers reused across chunks) it builds one index
array, gathers the drawn scores once as float64 (task means, mean, median; the gap clipped in place), and
sorts int16 ranks for the IQM. Its replicates must equal the engine's to ~1e-15 (checked and printed).

CPU time is ``time.process_time()`` of this process (every thread), the floor, the engine through the API and the
engine without it (``stats.bootstrap.replicates`` of the same metrics) interleaved (A B C C B A ...), medians over
``--repeats``; the ratios printed are engine / floor and API / engine without it. The retired numba engine's
figure is quoted from docs/performance.md and issue 44 (it is not run: numba is no dependency).

Run:  nice python benchmarks/speed/bench_engine_floor.py [--reps 10000] [--repeats 3] [--algorithms 10]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

import _paths  # noqa: F401  (this checkout's package first on the import path)
import numpy as np

from rl_reliable_logger.rliable import library, metrics
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import registry

#: The retired numba engine (last at commit eb4d925), quoted: issue 44 measured the four aggregates with
#: percentile intervals at 10 x 57 x 100 and 50,000 replicates: numba 6.5 s CPU, a plain-numpy floor 14.0 s.
NUMBA_FIGURE = (6.5, 14.0, 50_000)

L2_BYTES = 1 * 2**20  # the per-core L2 of the machines measured here (lscpu)


def aggregate_func(x):
    """rliable's README lambda."""
    return np.array(
        [
            metrics.aggregate_median(x),
            metrics.aggregate_iqm(x),
            metrics.aggregate_mean(x),
            metrics.aggregate_optimality_gap(x),
        ]
    )


def synthetic(algorithms: int, tasks: int, runs: int, seed: int = 7) -> dict[str, np.ndarray]:
    """Normalised-score-like data: per-task lognormal levels, a share of failed runs (rectangular)."""
    rng = np.random.default_rng(seed)
    out = {}
    for a in range(algorithms):
        level = rng.lognormal(-0.5 + 0.05 * a, 0.8, size=tasks)
        scores = level[None, :] * rng.lognormal(0.0, 0.4, size=(runs, tasks))
        scores[rng.random((runs, tasks)) < 0.1] = 0.0
        out[f"alg{a:02d}"] = scores
    return out


# ------------------------------------------------------------------------------------------------ the floor
def floor_replicates(scores: np.ndarray, reps: int, seed: int, gamma: float = 1.0) -> np.ndarray:
    """(reps, 4) median, IQM, mean, optimality gap of the stratified bootstrap of (runs, tasks) ``scores``."""
    n, m = scores.shape
    k = n * m
    values = np.ascontiguousarray(scores.T).ravel()  # task-major: task t's runs at [t*n, (t+1)*n)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    rank = np.empty(k, dtype=np.uint16)  # k < 65,536 here
    rank[order] = np.arange(k, dtype=np.uint16)
    offsets = (np.arange(m, dtype=np.int64) * n)[:, None]
    words = (k + 1) // 2
    cut = math.floor(0.25 * k)
    bit_gen = np.random.default_rng(seed).bit_generator
    step = max(1, L2_BYTES // (k * 8))
    out = np.empty((reps, 4))
    idx = np.empty((step, m, n), dtype=np.uint64)
    gathered = np.empty((step, m, n))
    ranks = np.empty((step, k), dtype=np.uint16)
    window = np.empty((step, k - 2 * cut))
    done = 0
    while done < reps:
        r = min(step, reps - done)
        u = bit_gen.random_raw(r * words).view(np.uint32).reshape(r, 2 * words)[:, :k].reshape(r, m, n)
        ix = np.multiply(u, np.uint64(n), out=idx[:r], dtype=np.uint64)
        np.right_shift(ix, np.uint64(32), out=ix)
        ix = ix.view(np.int64)
        ix += offsets
        g = np.take(values, ix, out=gathered[:r])
        task_means = g.sum(axis=2) / n
        np.minimum(g, gamma, out=g)
        rk = np.take(rank, ix.reshape(r, k), out=ranks[:r])
        rk.sort(axis=1, kind="stable")  # numpy's radix sort of 16-bit integers: the fastest sort of them here
        block = out[done : done + r]
        block[:, 0] = np.median(task_means, axis=1)
        block[:, 1] = np.take(ordered, rk[:, cut : k - cut], out=window[:r]).mean(axis=1)
        block[:, 2] = task_means.mean(axis=1)
        block[:, 3] = gamma - g.reshape(r, k).mean(axis=1)
        done += r
    return out


def floor_intervals(score_dict: dict[str, np.ndarray], reps: int, seed: int) -> dict[str, np.ndarray]:
    """(2, 4) percentile intervals of every key, each key seeded as the API seeds it."""
    source = np.random.RandomState(seed)
    out = {}
    for key, scores in score_dict.items():
        key_seed = int(source.randint(0, 2**63 - 1, dtype=np.int64))
        dist = floor_replicates(scores, reps, key_seed)
        out[key] = np.percentile(dist, [2.5, 97.5], axis=0)
    return out


def engine_intervals(score_dict: dict[str, np.ndarray], reps: int, seed: int) -> dict[str, np.ndarray]:
    _, found = library.get_interval_estimates(score_dict, aggregate_func, reps=reps, random_state=seed)
    return found


def direct_intervals(score_dict: dict[str, np.ndarray], reps: int, seed: int) -> dict[str, np.ndarray]:
    """The engine without the API: ``stats.bootstrap.replicates`` of the registered metrics, each key seeded as the
    API seeds it (what the traced ``func`` should cost nothing over)."""
    source = np.random.RandomState(seed)
    metric_objs = [registry.get_metric(name) for name in ("median", "iqm", "mean", "optimality_gap")]
    statistic = lambda r: np.stack([m(r) for m in metric_objs], axis=1)
    out = {}
    for key, scores in score_dict.items():
        rng = np.random.default_rng(int(source.randint(0, 2**63 - 1, dtype=np.int64)))
        dist = bs.replicates(bs.Cells.from_array(scores), statistic, reps, rng)
        alpha = (1.0 - 0.95) / 2  # the API's percentiles, computed as it computes them
        out[key] = np.array([np.percentile(d, [100.0 * alpha, 100.0 * (1.0 - alpha)]) for d in dist.T]).T
    return out


def cpu(fn, *args) -> tuple[float, object]:
    start = time.process_time()
    result = fn(*args)
    return time.process_time() - start, result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--algorithms", type=int, default=10)
    p.add_argument("--tasks", type=int, default=57)
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-direct", action="store_true", help="leave out the engine without the API")
    args = p.parse_args()

    data = synthetic(args.algorithms, args.tasks, args.runs)
    print(
        f"{args.algorithms} algorithms x {args.tasks} tasks x {args.runs} runs, {args.reps:,} replicates; "
        f"python {platform.python_version()}, numpy {np.__version__}, load average {os.getloadavg()[0]:.2f}"
    )

    # agreement first (one algorithm, the replicates themselves, and every interval of the timed runs below)
    key, scores = next(iter(data.items()))
    key_seed = int(np.random.RandomState(args.seed).randint(0, 2**63 - 1, dtype=np.int64))
    boot = library.StratifiedBootstrap(scores, random_state=np.random.default_rng(key_seed))
    engine_dist = boot.apply(aggregate_func, reps=min(args.reps, 2_000))
    floor_dist = floor_replicates(scores, min(args.reps, 2_000), key_seed)
    rel = np.abs(engine_dist - floor_dist).max() / np.abs(floor_dist).max()
    print(f"replicates of {key} (2,000): engine vs floor, largest difference relative to the largest value {rel:.1e}")

    cases = {"floor": floor_intervals, "engine": engine_intervals, "direct": direct_intervals}
    if args.skip_direct:
        del cases["direct"]
    times: dict[str, list[float]] = {name: [] for name in cases}
    results: dict[str, dict] = {}
    for i in range(args.repeats):
        for name in list(cases) if i % 2 == 0 else list(reversed(cases)):
            t, results[name] = cpu(cases[name], data, args.reps, args.seed)
            times[name].append(t)
            print(f"  run {i + 1} {name:6s} {t:7.2f} s CPU  (load average {os.getloadavg()[0]:.2f})", flush=True)
    gap = max(float(np.abs(results["floor"][k] - results["engine"][k]).max()) for k in data)
    floor_t, engine_t = statistics.median(times["floor"]), statistics.median(times["engine"])
    print(f"interval endpoints, largest |engine - floor|: {gap:.1e}")
    print(f"floor  (plain numpy, this file)                   median {floor_t:7.2f} s CPU")
    print(f"engine (public rliable-style API, traced func)    median {engine_t:7.2f} s CPU")
    if "direct" in cases:
        direct_t = statistics.median(times["direct"])
        same = all(np.array_equal(results["direct"][k], results["engine"][k]) for k in data)
        print(f"engine without the API (bootstrap.replicates)     median {direct_t:7.2f} s CPU, same intervals: {same}")
        print(f"RATIO API / engine without it: {engine_t / direct_t:.2f}x")
    print(f"RATIO engine / floor: {engine_t / floor_t:.2f}x  (issue 44's bound: 1.5x)")
    numba, floor_then, reps_then = NUMBA_FIGURE
    print(
        f"retired numba engine (quoted, issue 44, {reps_then:,} replicates): {numba} s CPU against a floor of "
        f"{floor_then} s then: {numba / floor_then:.2f}x the floor; at this floor that is about "
        f"{floor_t * numba / floor_then:.2f} s"
    )


if __name__ == "__main__":
    main()
