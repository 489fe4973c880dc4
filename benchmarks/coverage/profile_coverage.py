"""Coverage of the 95% intervals of the performance profiles and the optimality-gap curve (issue 23).

The profiles and the gap curve get, under ``--method expanded`` and ``bootstrap-t``, the expanded percentile
level of the algorithm's cells (``bootstrap.expanded_level``, as ``evaluate()`` passes it); the default is the
percentile interval. This measures both on the populations of ``coverage_study.py`` (same models, task counts,
run counts, seeds and data streams: X's cells), each curve at three points, the 25%, 50% and 75% quantiles
``q_i`` of the task mixture (task set fixed, each task weighted equally, as the profiles weigh runs):

* run-score profile at ``τ = q_i``: the share of runs above it, truth ``1 - mean_m F_m(τ)``;
* average-score profile at ``τ = q_i``: the share of tasks whose mean is above it, truth the share of the true
  task means above it (a step function of the task means, like the median over tasks);
* optimality gap at ``γ = q_i``: ``γ - E[min(X, γ)]``, truth ``mean_m (γ F_m(γ) - E[X_m; X_m <= γ])``, exact.

Engine calls as ``evaluate()``'s profile table: ``bootstrap.draw``, ``profiles.profile_curves``,
``intervals.interval``. Coverage ± binomial SE per cell; each row: percentile / expanded.

Run:  nice python benchmarks/coverage/profile_coverage.py --out benchmarks/results/profile_coverage.txt
"""

from __future__ import annotations

import argparse
import math

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
import simulation as sim
from coverage_study import add_study_arguments, data_sets, populations, print_grid
from scipy import optimize

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals
from rl_reliable_logger.stats import profiles as pf

QUANTILES = (0.25, 0.5, 0.75)
CURVES = ("run profile", "task profile", "gap")


def _quantile(tasks: list[sim.Task], q: float) -> float:
    """The q-quantile of the equal-weight mixture of the tasks."""
    f = lambda x: float(np.mean([t.cdf(x) for t in tasks])) - q
    lo, hi = -1.0, 1.0
    while f(lo) > 0:
        lo *= 2
    while f(hi) < 0:
        hi *= 2
    return float(optimize.brentq(f, lo, hi, xtol=1e-12))


def truths(tasks: list[sim.Task], points: np.ndarray) -> np.ndarray:
    """(3, len(points)) exact run profile, task profile and gap at ``points``."""
    means = np.array([t.mean for t in tasks])
    run = [1.0 - float(np.mean([t.cdf(p) for t in tasks])) for p in points]
    task = [float((means > p).mean()) for p in points]
    gap = [float(np.mean([p * t.cdf(p) - t.partial(-math.inf, p) for t in tasks])) for p in points]
    return np.array([run, task, gap])


def run(model: str, m: int, n: int, trials: int, reps: int, seed: int, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Coverage (2 methods, 3 curves, 3 points) of one configuration; the data as ``coverage_study.run_config``."""
    x_tasks = populations(model, m, seed)[0]
    points = np.array([_quantile(x_tasks, q) for q in QUANTILES])
    truth = truths(x_tasks, points).ravel()
    hits = np.zeros((2, truth.size))
    for cx, _, rx, _ in data_sets(model, m, n, trials, seed):
        dist = pf.profile_curves(bs.draw(cx, reps, rx), points, points)
        point = pf.profile_curves(bs.original(cx), points, points)[0]
        for k, (lo, hi) in enumerate(
            (
                intervals.interval(dist, point, ci=ci),
                intervals.interval(dist, point, ci=ci, method="expanded", tail=bs.expanded_level(cx, ci)),
            )
        ):
            hits[k] += (lo <= truth) & (truth <= hi)
    return hits / trials, truth


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_study_arguments(p)
    p.add_argument("--out")
    args = p.parse_args()
    cols = [f"{c} q{int(q * 100)}" for c in CURVES for q in QUANTILES]
    header = [
        f"profiles and gap curve at the mixture's quartiles: 95% intervals, {args.trials} trials, {args.reps} "
        f"replicates, seed {args.seed}; each cell percentile / expanded (= bootstrap-t); SE <= "
        f"{math.sqrt(0.25 / args.trials):.3f}",
        f"{'model':<14} {'M':>3} {'N':>3} " + " ".join(f"{c:>15}" for c in cols),
    ]

    def cells(model: str, m: int, n: int) -> str:
        cov, _ = run(model, m, n, args.trials, args.reps, args.seed, args.ci)
        return " ".join(f"{a:.3f}/{b:.3f}".rjust(15) for a, b in zip(cov[0], cov[1]))

    print_grid(args, header, cells, 14)


if __name__ == "__main__":
    main()
