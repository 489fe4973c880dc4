"""Simulated coverage of rl_reliable_logger's 95% percentile stratified-bootstrap intervals.

For each configuration (generative model, number of tasks M, runs per task), many independent
data sets ("trials") are drawn from a *known* population; each gets a 95% percentile interval for
the IQM and for the mean from the library's stratified bootstrap (``stats.bootstrap.replicates`` +
``stats.bootstrap.interval`` with ``metrics.iqm`` / ``metrics.mean``, exactly what ``evaluate()``
runs for aggregates); coverage is the fraction of trials whose interval contains the true value,
reported with its binomial standard error sqrt(p(1-p)/trials).

What "true value" each interval targets (the population analogues of the estimators, with the task
set held fixed, as in the stratified bootstrap that resamples runs within tasks, not tasks):

* mean: (1/M) * sum_m E[X_m], the mean over tasks of each task's population mean score;
* IQM: the 25%-trimmed mean of the equal-weight task mixture F = (1/M) sum_m F_m, i.e.
  2 * integral of x dF(x) between F's 25% and 75% quantiles. With equal runs per task the sample
  IQM is the 25% trimmed mean of the pooled runs, which estimates exactly this; with unequal runs
  the library weights every task 1/M (each run 1/(M N_m)), so the target is the same.
  (scipy's trim_mean cuts floor(0.25 K) of the K runs from each end, slightly less than 25% when K
  is not a multiple of 4; that small discrepancy is part of the estimator being assessed.)

Both true values are computed *exactly*: the models are mixtures of lognormal and Pareto components
whose CDFs and partial expectations E[X; a < X <= b] have closed forms; the mixture quantiles are
found by root finding. ``--check-truth`` verifies them against a 4-million-draw Monte-Carlo sample.

Generative models (task parameters drawn once per configuration from a fixed seed):

* ``lognormal``: task m ~ LogNormal(mu_m, sigma_m), mu_m ~ N(-1, 0.7), sigma_m ~ U(0.5, 1.5):
  right-skewed, heavy-ish tailed, very different scales across tasks.
* ``pareto-mix``: RL-like bimodal runs. With probability w_m ~ U(0.2, 0.6) a run "fails" and scores
  LogNormal(log 0.05, 0.5); otherwise it scores Pareto(x_m, alpha_m), x_m ~ U(0.3, 1.5),
  alpha_m ~ U(2.2, 4) (finite variance, heavy right tail).

Run sizes: ``equal`` (10 runs on every task) and ``ragged`` (5-10 runs per task, drawn once per
configuration).

Usage:
    python benchmarks/coverage_study.py                     # default grid, 1000 trials, 2000 reps (a few minutes)
    python benchmarks/coverage_study.py --trials 300 --reps 1000 --models lognormal --tasks 5
    python benchmarks/coverage_study.py --check-truth
"""

from __future__ import annotations

import argparse
import time

from rl_reliable_logger.stats.simulation import (
    make_tasks,
    monte_carlo_truth,
    run_sizes,
    simulate,
    true_mean,
    true_trimmed_mean,
)


def main() -> None:
    p = argparse.ArgumentParser(description="Simulated coverage of 95% percentile bootstrap intervals (IQM, mean).")
    p.add_argument("--models", nargs="+", default=["lognormal", "pareto-mix"])
    p.add_argument("--tasks", nargs="+", type=int, default=[5, 10, 26])
    p.add_argument("--designs", nargs="+", default=["equal", "ragged"])
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--check-truth", action="store_true", help="compare exact true values with a 4M-draw Monte Carlo")
    args = p.parse_args()

    if args.check_truth:
        print("exact true values vs Monte Carlo (4,000,000 pooled draws):")
        for model in args.models:
            for m in args.tasks:
                tasks = make_tasks(model, m, args.seed + m)
                mc_iqm, mc_mean = monte_carlo_truth(tasks, 4_000_000, args.seed)
                print(
                    f"  {model:<11} M={m:<3} IQM exact {true_trimmed_mean(tasks):.5f}  MC {mc_iqm:.5f}   "
                    f"mean exact {true_mean(tasks):.5f}  MC {mc_mean:.5f}"
                )
        return

    print(
        f"95% percentile intervals, {args.trials} trials per row, {args.reps} bootstrap reps per trial, seed {args.seed}"
    )
    print("coverage ± binomial SE; 'miss lo/hi' = share of trials with the truth below / above the interval;")
    print("flag: in [0.93, 0.97] -> ok; otherwise UNDER/OVER (the issue's 93-97% target)\n")
    head = (
        f"{'model':<11} {'M':>3} {'runs':<7} {'true IQM':>9} {'IQM cov':>14} {'miss lo/hi':>11} {'':5} "
        f"{'true mean':>9} {'mean cov':>14} {'miss lo/hi':>11} {'':5} {'sec':>5}"
    )
    print(head)
    print("-" * len(head))
    for model in args.models:
        for m in args.tasks:
            tasks = make_tasks(model, m, args.seed + m)
            for design in args.designs:
                sizes = run_sizes(design, m, args.seed + m)
                t0 = time.perf_counter()
                cov = simulate(tasks, sizes, args.trials, args.reps, seed=args.seed + 1000 * m + len(design))
                secs = time.perf_counter() - t0
                rate, se = cov.rate(), cov.se()
                truth = (true_trimmed_mean(tasks), true_mean(tasks))
                label = "10" if design == "equal" else f"{sizes.min()}-{sizes.max()}"
                cols = []
                for j in range(2):
                    flag = "ok" if 0.93 <= rate[j] <= 0.97 else ("UNDER" if rate[j] < 0.93 else "OVER")
                    miss = f"{cov.below[j] / cov.trials:.3f}/{cov.above[j] / cov.trials:.3f}"
                    cols.append(f"{truth[j]:9.4f} {rate[j]:7.3f} ± {se[j]:.3f} {miss:>11} {flag:<5}")
                print(f"{model:<11} {m:>3} {label:<7} {cols[0]} {cols[1]} {secs:5.0f}", flush=True)


if __name__ == "__main__":
    main()
