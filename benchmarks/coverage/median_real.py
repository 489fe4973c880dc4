"""scratch: the median's candidate intervals on the real sets (issue 52): coverage and width."""

from __future__ import annotations

import argparse
import time

import _paths  # noqa: F401
import numpy as np
from caveat_study import LOADERS, REAL

from rl_reliable_logger.analysis.tables.base import pairs
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import distributions as ds
from rl_reliable_logger.stats.intervals.bounds import expanded_level, normal_interval


def os_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    n = x.shape[1]
    m = x.mean(axis=1)
    se = x.std(axis=1, ddof=1) / np.sqrt(n)
    t = float(ds.t_ppf(0.5 + level / 2, n - 1))
    return float(np.median(m - t * se)), float(np.median(m + t * se))


def normal_median(x: np.ndarray, reps: int, rng) -> tuple[float, float]:
    M, n = x.shape
    idx = rng.integers(0, n, size=(reps, M, n))
    means = np.take_along_axis(np.broadcast_to(x, (reps, M, n)), idx, axis=2).mean(axis=2)
    dist = np.median(means, axis=1)
    point = np.median(x.mean(axis=1))
    cells = bs.Cells.from_list(list(x))
    lo, hi = normal_interval(dist[:, None], np.array([point]), expanded_level(cells, 0.95))
    return float(lo[0]), float(hi[0])


def mover(px, lx, ux, py, ly, uy):
    d = px - py
    return d - np.hypot(px - lx, uy - py), d + np.hypot(ux - px, py - ly)


LEVELS = (0.95, 0.9, 0.8, 0.7)


def run(name: str, runs: list[int], trials: int, reps: int, seed: int) -> None:
    data = LOADERS[name]()
    algs = list(data.populations)
    truth = {a: float(np.median([r.mean() for r in data.populations[a]])) for a in algs}
    for N in runs:
        rng = np.random.default_rng([seed, N])
        rows: dict = {}
        t0 = time.perf_counter()
        for _ in range(trials):
            drawn = {a: np.stack([rng.choice(r, N, replace=True) for r in data.populations[a]]) for a in algs}
            point = {a: float(np.median(drawn[a].mean(axis=1))) for a in algs}
            ivs = {}
            for a in algs:
                ivs[a, "normal"] = normal_median(drawn[a], reps, rng)
                for lv in LEVELS:
                    ivs[a, f"os{lv}"] = os_interval(drawn[a], lv)
                for c in ["normal", *(f"os{lv}" for lv in LEVELS)]:
                    rows.setdefault((a, c), []).append(ivs[a, c])
            for x, y in pairs(algs):
                for c in ["normal", *(f"os{lv}" for lv in LEVELS)]:
                    lx, ux = ivs[x, c]
                    ly, uy = ivs[y, c]
                    rows.setdefault((f"{x}-{y}", c), []).append(mover(point[x], lx, ux, point[y], ly, uy))
        print(f"## {name} N={N} ({trials} trials, {time.perf_counter() - t0:.0f}s)")
        names = ["normal", *(f"os{lv}" for lv in LEVELS)]
        print("row | truth | " + " | ".join(names))
        keys = [*algs, *(f"{x}-{y}" for x, y in pairs(algs))]
        for key in keys:
            t = truth[key] if key in truth else truth[key.split("-")[0]] - truth[key.split("-", 1)[1]]
            if key not in truth:
                x, y = next((x, y) for x, y in pairs(algs) if f"{x}-{y}" == key)
                t = truth[x] - truth[y]
            out = []
            for c in names:
                b = np.array(rows[key, c])
                cov = np.mean((b[:, 0] <= t) & (t <= b[:, 1]))
                out.append(f"{cov:.3f} ({np.mean(b[:, 0] > t):.2f}) w{np.mean(b[:, 1] - b[:, 0]):.3g}")
            print(f"{key} | {t:.3f} | " + " | ".join(out), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+", default=list(REAL))
    ap.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    for s in args.sets:
        run(s, args.runs, args.trials, args.reps, args.seed)


if __name__ == "__main__":
    main()
