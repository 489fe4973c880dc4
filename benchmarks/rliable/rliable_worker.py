"""Run rliable 1.2 workloads in its own interpreter (the benchmark venv) and time them.

Usage: ``.rliable-venv/bin/python rliable_worker.py IN.npz OUT.json``

IN.npz holds ``algorithms`` (names), ``scores`` (A, runs, tasks) normalised scores, ``taus``, and
scalars ``seed``, ``reps``, ``profile_reps``, ``improvement_reps``, ``ci``; ``poi_pairs`` (P, 2)
indices of the pairs whose POI interval is bootstrapped; ``workloads`` (names among
``aggregates``, ``profiles``, ``poi``). Point estimates of POI are computed for *all* pairs.

rliable draws its indices from the global NumPy RNG (its ``random_state`` argument is ignored), so
``np.random.seed(seed)`` is called before each workload for reproducibility.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import warnings

import numpy as np

warnings.simplefilter("ignore")  # arch FutureWarnings, one per call

from rliable import library as rly  # noqa: E402
from rliable import metrics  # noqa: E402


def aggregate4(x: np.ndarray) -> np.ndarray:
    """The paper's four aggregates in one function (the rliable README idiom)."""
    return np.array(
        [
            metrics.aggregate_mean(x),
            metrics.aggregate_median(x),
            metrics.aggregate_iqm(x),
            metrics.aggregate_optimality_gap(x),
        ]
    )


def main(src: str, dst: str) -> None:
    data = np.load(src, allow_pickle=False)
    algs = [str(a) for a in data["algorithms"]]
    scores = {a: np.asarray(s, float) for a, s in zip(algs, data["scores"])}
    seed = int(data["seed"])
    ci = float(data["ci"])
    workloads = [str(w) for w in data["workloads"]]
    out: dict = {"algorithms": algs, "times": {}}
    if "aggregates" in workloads:
        np.random.seed(seed)
        t0 = time.perf_counter()
        point, interval = rly.get_interval_estimates(
            scores, aggregate4, reps=int(data["reps"]), confidence_interval_size=ci
        )
        out["times"]["aggregates"] = time.perf_counter() - t0
        out["aggregates"] = {
            a: {
                "point": np.asarray(point[a]).tolist(),
                "low": np.asarray(interval[a])[0].tolist(),
                "high": np.asarray(interval[a])[1].tolist(),
            }
            for a in algs
        }
    if "profiles" in workloads:
        taus = np.asarray(data["taus"], float)
        out["profiles"] = {}
        for kind, use_runs in (("runs", True), ("tasks", False)):
            np.random.seed(seed)
            t0 = time.perf_counter()
            prof, prof_ci = rly.create_performance_profile(
                scores,
                taus,
                use_score_distribution=use_runs,
                reps=int(data["profile_reps"]),
                confidence_interval_size=ci,
            )
            out["times"][f"profile_{kind}"] = time.perf_counter() - t0
            out["profiles"][kind] = {
                a: {
                    "point": np.asarray(prof[a]).tolist(),
                    "low": np.asarray(prof_ci[a])[0].tolist(),
                    "high": np.asarray(prof_ci[a])[1].tolist(),
                }
                for a in algs
            }
    # POI point estimates for all pairs (cheap), bootstrapped intervals for the requested subset
    out["poi_point"] = {
        f"{x},{y}": float(metrics.probability_of_improvement(scores[x], scores[y]))
        for x, y in itertools.combinations(algs, 2)
    }
    if "poi" in workloads:
        pairs = [(algs[i], algs[j]) for i, j in np.asarray(data["poi_pairs"], int).reshape(-1, 2)]
        out["poi"] = {}
        out["times"]["poi_pairs"] = []
        for x, y in pairs:
            np.random.seed(seed)
            t0 = time.perf_counter()
            point, interval = rly.get_interval_estimates(
                {f"{x},{y}": (scores[x], scores[y])},
                metrics.probability_of_improvement,
                reps=int(data["improvement_reps"]),
                confidence_interval_size=ci,
            )
            out["times"]["poi_pairs"].append(time.perf_counter() - t0)
            key = f"{x},{y}"
            out["poi"][key] = {
                "point": float(np.asarray(point[key]).ravel()[0]),
                "low": float(np.asarray(interval[key]).ravel()[0]),
                "high": float(np.asarray(interval[key]).ravel()[1]),
            }
    with open(dst, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
