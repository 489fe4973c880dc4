"""scratch: candidate tail features of the mean, on the recorded caveat-study draws (replayed), against its misses."""

from __future__ import annotations

import argparse

import _paths  # noqa: F401
import numpy as np
from caveat_study import LOADERS

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import diagnostics as dg


def features(cells: bs.Cells) -> dict[str, float]:
    runs = [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]
    means = np.array([r.mean() for r in runs])
    sd = np.array([r.std(ddof=1) for r in runs])
    n = cells.sizes.astype(float)
    var_mean = sd**2 / n
    total_var = var_mean.sum()
    count = dg.skewed_tasks(cells)
    # each task's largest run over its mean: how much one run carries the task
    top_run = np.array([r.max() / r.sum() if r.sum() > 0 else 0.0 for r in runs])
    # the mean of tasks over their medians: right skew of the runs
    med = np.array([np.median(r) for r in runs])
    mean_over_median = float(np.mean(means) / np.mean(med)) if np.mean(med) > 0 else np.inf
    # coefficient of variation of runs within tasks (pooled)
    cv = float(np.sqrt(np.mean(sd**2)) / np.mean(np.abs(means))) if np.mean(np.abs(means)) > 0 else 0.0
    # standardized: the largest run of all over the total of all runs
    vals = cells.values
    pooled = (vals - np.repeat(means, cells.sizes)) / np.repeat(np.where(sd > 0, sd, 1), cells.sizes)
    # relative se of the mean
    rel_se = float(np.sqrt(total_var) / len(runs) / max(abs(means.mean()), 1e-12))
    # task cv: sd of the task means over their mean
    task_cv = float(means.std(ddof=1) / max(abs(means.mean()), 1e-12))
    # log-scale spread of positive runs
    pos = vals[vals > 0]
    logsd = float(np.mean([np.std(np.log(r[r > 0]), ddof=1) if (r > 0).sum() > 1 else 0.0 for r in runs]))
    return {
        "skewed_share": count.share,
        "top_run": float(np.mean(top_run)),
        "mean_over_median": mean_over_median,
        "cv": cv,
        "rel_se": rel_se,
        "task_cv": task_cv,
        "logsd": logsd,
        "pos_share": float(pos.size / vals.size),
        "pooled_max": float(np.max(pooled)) if pooled.size else 0.0,
    }


def replay(name: str, runs: list[int], trials: int, seed: int, folder: str) -> None:
    data = LOADERS[name]()
    found = dict(np.load(f"{folder}/{name}.npz"))
    algs = list(data.populations)
    for n in runs:
        key = f"agg_side_{n}"
        if key not in found:
            continue
        side = found[key][..., 0]  # the mean
        rng = np.random.default_rng([seed, n, list(LOADERS).index(name)])
        rows = []
        for t in range(min(trials, side.shape[0])):
            for a_i, a in enumerate(algs):
                cells = bs.Cells.from_list([rng.choice(r, n, replace=True) for r in data.populations[a]])
                f = features(cells)
                from rl_reliable_logger.analysis import caveats as cv

                rec = found[f"agg_feat_{n}"][t, a_i]
                assert abs(cv.algorithm_features(cells)["top_share"] - rec[4]) < 1e-9, "replay differs"
                f["miss"] = float(side[t, a_i] != 0)
                f["above"] = float(side[t, a_i] > 0)
                f["alg"] = float(a_i)
                rows.append(f)
        keys = [k for k in rows[0] if k not in ("miss", "above", "alg")]
        miss = np.array([r["miss"] for r in rows], bool)
        print(f"## {name} N={n}: {len(rows)} rows, mean covers {1 - miss.mean():.3f}")
        for k in keys:
            v = np.array([r[k] for r in rows])
            print(
                f"  {k:18s} covers: median {np.median(v[~miss]):.3g} q90 {np.quantile(v[~miss], 0.9):.3g}"
                + (
                    f" | misses: median {np.median(v[miss]):.3g} q10 {np.quantile(v[miss], 0.1):.3g}"
                    if miss.any()
                    else ""
                )
            )
        np.save(
            f"/tmp/cover/feat_{name}_{n}.npy", np.array([[r[k] for k in [*keys, "miss", "above", "alg"]] for r in rows])
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+")
    ap.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--folder", default="benchmarks/results/caveat_study")
    args = ap.parse_args()
    for s in args.sets:
        replay(s, args.runs, args.trials, args.seed, args.folder)


if __name__ == "__main__":
    main()
