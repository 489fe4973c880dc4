"""Family-wise coverage of compare_all()'s simultaneous intervals under the null, by simulation.

Six algorithms draw their runs from the same distribution (per task a shifted log-normal, 5 tasks,
10 runs per task), so every difference of IQMs is 0 and every P(X > Y) is 0.5. An experiment
*covers* when all 15 intervals of a statistic contain the true value at once. Reported: the
family-wise coverage of the max-T simultaneous intervals, of the unadjusted per-pair intervals,
and the family-wise error rate of Holm-adjusted p-values at 0.05.

The simultaneous intervals are max-T with standard errors scaled by sqrt(n/(n-1)) and the critical value read
on the t scale with each pair's degrees of freedom (``stats.multiplicity.max_t_intervals(df=)``).

Run:  python benchmarks/coverage/multiplicity_coverage.py [--experiments 1000] [--algorithms 6] [--runs 10 5]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import _paths
import numpy as np
import pandas as pd

from rl_reliable_logger.analysis.comparisons import compare_all
from rl_reliable_logger.data.scores import ScoreTable


def experiment(rng: np.random.Generator, n_alg: int, tasks: int, runs: int) -> ScoreTable:
    rows = []
    for k in range(n_alg):
        for t in range(tasks):
            scores = rng.lognormal(mean=0.3 * t, sigma=0.6, size=runs)
            rows += [{"algorithm": f"alg{k}", "task": f"t{t}", "seed": s, "score": v} for s, v in enumerate(scores)]
    return ScoreTable(pd.DataFrame(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--algorithms", type=int, nargs="+", default=[3, 6])
    parser.add_argument("--runs", type=int, nargs="+", default=[10], help="runs per task (one row block each)")
    parser.add_argument("--out", default=str(_paths.BENCHMARKS / "results" / "multiplicity_coverage.md"))
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    started = time.time()
    lines = [
        "# Family-wise coverage of all-pairs comparisons under the null",
        "",
        f"{args.experiments} experiments per row; 5 tasks; {args.reps} bootstrap replicates; 95% level.",
        "",
        "| algorithms (pairs) | runs per task | metric | statistic | simultaneous (max-T) | unadjusted "
        "| Holm FWER at 0.05 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n_alg, runs, metric in itertools.product(args.algorithms, args.runs, ("iqm", "mean")):
        hits = {s: [0, 0, 0] for s in ("difference", "improvement")}
        for e in range(args.experiments):
            out = compare_all(experiment(rng, n_alg, 5, runs), metric=metric, reps=args.reps, seed=e)
            for statistic, null in (("difference", 0.0), ("improvement", 0.5)):
                rows = out[out["statistic"] == statistic]
                hits[statistic][0] += bool(
                    ((rows["low_simultaneous"] <= null) & (rows["high_simultaneous"] >= null)).all()
                )
                hits[statistic][1] += bool(((rows["low"] <= null) & (rows["high"] >= null)).all())
                hits[statistic][2] += bool((rows["p_holm"] < 0.05).any())
        for statistic, (joint, plain, holm) in hits.items():
            n = args.experiments
            se = np.sqrt(joint / n * (1 - joint / n) / n)
            lines.append(
                f"| {n_alg} ({n_alg * (n_alg - 1) // 2}) | {runs} | {metric} | {statistic} | {joint / n:.3f} ± {se:.3f} | "
                f"{plain / n:.3f} | {holm / n:.3f} |"
            )
        print(lines[-2:], f"{time.time() - started:.0f} s", file=sys.stderr, flush=True)
    lines.append(f"\n± one Monte-Carlo standard error. Generated in {time.time() - started:.0f} s.")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
