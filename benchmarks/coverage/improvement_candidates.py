"""Candidate intervals for P(X > Y) that do not collapse at the boundary (issue 52), on the real data sets.

scratch: screening candidates (coverage, sides, width) against the current expanded percentile interval.
"""

from __future__ import annotations

import argparse
import time

import _paths  # noqa: F401
import numpy as np
from caveat_study import LOADERS, REAL

from rl_reliable_logger.analysis.tables.base import pairs
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import distributions as ds
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.intervals.bounds import expanded_bounds, improvement_level


def moments(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Per task (rows), from (M, n) and (M, k) runs: the sums the variances are made of."""
    n, k = x.shape[1], y.shape[1]
    h = (x[:, :, None] > y[:, None, :]) + 0.5 * (x[:, :, None] == y[:, None, :])
    row, col = h.sum(axis=2), h.sum(axis=1)
    return {
        "n": np.full(x.shape[0], float(n)),
        "k": np.full(x.shape[0], float(k)),
        "total": h.sum(axis=(1, 2)),
        "total_sq": (h**2).sum(axis=(1, 2)),
        "rows2": (row**2).sum(axis=1),
        "cols2": (col**2).sum(axis=1),
    }


def terms(m: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    n, k, total, total_sq, rows2, cols2 = (m[c] for c in ("n", "k", "total", "total_sq", "rows2", "cols2"))
    a = total_sq / (n * k)
    b10 = (rows2 - total_sq) / (n * k * (k - 1))
    b01 = (cols2 - total_sq) / (k * n * (n - 1))
    t = (total**2 - rows2 - cols2 + total_sq) / (n * (n - 1) * k * (k - 1))
    unbiased = (a + (k - 1) * b10 + (n - 1) * b01 - (n + k - 1) * t) / (n * k)
    b10h, b01h, th = rows2 / (n * k * k), cols2 / (k * n * n), (total / (n * k)) ** 2
    plugin = (a + (k - 1) * b10h + (n - 1) * b01h - (n + k - 1) * th) / (n * k)
    var_row = (rows2 - total**2 / n) / (n - 1)
    var_col = (cols2 - total**2 / k) / (k - 1)
    return {
        "u": total / (n * k),
        "unbiased": unbiased,
        "plugin": plugin,
        "part_x": var_row / (k * k * n),
        "part_y": var_col / (n * n * k),
        "n": n,
        "k": k,
    }


def eff_count(theta: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Newcombe's (2006) effective count of the Mann-Whitney proportion: θ(1-θ)/Var(U) under Hanley-McNeil's
    exponential model with N* = (n+k)/2."""
    star = (n + k) / 2
    return n * k / (1 + (star - 1) * ((1 - theta) / (2 - theta) + theta / (1 + theta)))


def wilson(p, n, z):
    shrink = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * np.sqrt(np.maximum(p * (1 - p) / n + z * z / (4 * n * n), 0))
    return np.minimum(centre - half, p), np.maximum(centre + half, p)


def candidate(tm, a: float, scale: float, floor_on: bool = True, wil: bool = True, ci: float = 0.95, eff=False):
    u, n, k = tm["u"], tm["n"], tm["k"]
    M = u.size
    pairs_ = eff_count(np.ones_like(u), n, k) if eff else n * k
    theta = (u * pairs_ + a) / (pairs_ + 2 * a)
    sep = (u == 0) | (u == 1)
    floor = np.where(sep, theta * (1 - theta) / (scale * eff_count(theta, n, k)), 0.0) if floor_on else 0 * u
    V = (max(tm["unbiased"].sum(), tm["plugin"].sum()) + floor.sum()) / M**2
    comp = np.concatenate([tm["part_x"], tm["part_y"], floor])
    dof = np.concatenate([n - 1, k - 1, n + k - 2])
    df = comp.sum() ** 2 / (comp**2 / dof).sum() if comp.sum() > 0 else dof.sum()
    z = float(ds.t_ppf(0.5 + ci / 2, max(df, 1.0)))
    p = u.mean()
    if not wil:
        return p - z * np.sqrt(V), p + z * np.sqrt(V)
    pt = theta.mean()
    n_eff = pt * (1 - pt) / V
    return wilson(p, n_eff, z)


CANDS = {
    "wald nofloor": dict(a=0.5, scale=1.0, floor_on=False, wil=False),
    "eff a.25": dict(a=0.25, scale=1.0, wil=False, eff=True),
    "eff a.1": dict(a=0.1, scale=1.0, wil=False, eff=True),
    "eff a.05": dict(a=0.05, scale=1.0, wil=False, eff=True),
}


def boundary(tasks: int, spread: tuple[float, float], seed: int):
    """A simulated pair near the boundary: X's tasks lognormal (the simulation's model), Y's the same shifted
    down by z_m·σ_m·√2 in log space, z_m ~ U(spread): P_m = Φ(z_m)."""
    from caveat_study import DataSet

    def load():
        import simulation as sim

        rng = np.random.default_rng([seed, tasks])
        xs = sim.make_tasks("lognormal", tasks, seed)
        z = rng.uniform(*spread, size=tasks)
        px, py = [], []
        for t, zm in zip(xs, z):
            comp = t.parts[0]
            mu, sigma = comp.mu, comp.sigma
            px.append(np.exp(mu + sigma * rng.standard_normal(4000)))
            py.append(np.exp(mu - zm * sigma * np.sqrt(2) + sigma * rng.standard_normal(4000)))
        return DataSet(f"boundary-{tasks}", "simulated", [f"t{m}" for m in range(tasks)], {"X": px, "Y": py})

    return load


for _m in (5, 10, 26):
    for _lo, _hi in ((1.0, 3.0), (1.5, 3.5), (2.0, 4.0)):
        LOADERS[f"boundary-{_m}-{_lo}"] = boundary(_m, (_lo, _hi), 52 + _m)


def run(name: str, runs: list[int], trials: int, reps: int, seed: int) -> None:
    data = LOADERS[name]()
    algs = list(data.populations)
    truth = {(x, y): mt.probability_of_improvement(data.populations[x], data.populations[y]) for x, y in pairs(algs)}
    for N in runs:
        rng = np.random.default_rng([seed, N])
        names = ["current", *CANDS]
        res = {(p, c): [] for p in truth for c in names}
        t0 = time.perf_counter()
        for _ in range(trials):
            drawn = {a: np.stack([rng.choice(r, N, replace=True) for r in data.populations[a]]) for a in algs}
            cells = {a: bs.Cells.from_list(list(drawn[a])) for a in algs}
            counts = {a: bs.draw(cells[a], reps, rng).small_counts() for a in algs}
            for x, y in truth:
                tm = terms(moments(drawn[x], drawn[y]))
                point = tm["u"].mean()
                dist = mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y])
                lo, hi = expanded_bounds(
                    dist[:, None], np.array([point]), 0.95, improvement_level(cells[x], cells[y]), None
                )
                res[(x, y), "current"].append((float(lo[0]), float(hi[0])))
                for c, kw in CANDS.items():
                    res[(x, y), c].append(tuple(float(v) for v in candidate(tm, **kw)))
        print(f"## {name} N={N} ({trials} trials, {time.perf_counter() - t0:.0f}s)")
        print("pair | truth | " + " | ".join(names))
        for p, t in truth.items():
            cells_ = []
            for c in names:
                b = np.array(res[p, c])
                cov = np.mean((b[:, 0] <= t) & (t <= b[:, 1]))
                above = np.mean(b[:, 0] > t)
                width = np.mean(b[:, 1] - b[:, 0])
                cells_.append(f"{cov:.3f} ({above:.2f}) w{width:.3f}")
            print(f"{p[0]}>{p[1]} | {t:.3f} | " + " | ".join(cells_), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+", default=list(REAL))
    ap.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    for s in args.sets:
        run(s, args.runs, args.trials, args.reps, args.seed)


if __name__ == "__main__":
    main()
