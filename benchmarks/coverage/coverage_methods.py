"""Simulated coverage of rl_reliable_logger's 95% stratified-bootstrap intervals, for every interval method.

For each configuration (generative model, number of tasks M, runs per task), many independent
data sets ("trials") are drawn from a *known* population; each gets a 95% percentile interval for
the IQM and for the mean from the library's stratified bootstrap (``stats.bootstrap.replicates`` +
``stats.intervals.interval`` with ``metrics.iqm`` / ``metrics.mean``, exactly what ``evaluate()``
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

Methods (``stats.intervals.interval`` / ``studentized_mean_interval``): ``percentile`` (the default, as in
the paper), ``basic``, ``bc``, ``bca`` (stratified acceleration), ``expanded`` (Hesterberg's expanded
percentile, stratified by cell) and ``bootstrap-t`` (studentized, the mean only).

Generative models (task parameters drawn once per configuration from a fixed seed):

* ``normal``: task m ~ Normal(mu_m, sigma_m), mu_m ~ N(0.5, 0.3), sigma_m ~ U(0.05, 0.3): symmetric.

* ``lognormal``: task m ~ LogNormal(mu_m, sigma_m), mu_m ~ N(-1, 0.7), sigma_m ~ U(0.5, 1.5):
  right-skewed, heavy-ish tailed, very different scales across tasks.
* ``pareto-mix``: RL-like bimodal runs. With probability w_m ~ U(0.2, 0.6) a run "fails" and scores
  LogNormal(log 0.05, 0.5); otherwise it scores Pareto(x_m, alpha_m), x_m ~ U(0.3, 1.5),
  alpha_m ~ U(2.2, 4) (finite variance, heavy right tail).

Run sizes: ``equal`` (N runs on every task, N in ``--runs``, default 3, 5, 10) and ``ragged`` (per task
uniform in [max(2, N - N//2), N + N//2], drawn once per configuration). Default: M = 10 tasks.

Usage:
    python benchmarks/coverage/coverage_methods.py --out benchmarks/results/coverage_methods.txt   # 18 rows x 1000 trials
    python benchmarks/coverage/coverage_methods.py --trials 300 --reps 1000 --models lognormal --runs 5
    python benchmarks/coverage/coverage_methods.py --check-truth
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
from simulation import (
    MODELS,
    SIM_METHODS,
    make_tasks,
    monte_carlo_truth,
    run_sizes,
    simulate,
    true_mean,
    true_trimmed_mean,
)


def main() -> None:
    p = argparse.ArgumentParser(description="Simulated coverage of 95% bootstrap intervals (IQM, mean), every method.")
    p.add_argument("--models", nargs="+", default=list(MODELS))
    p.add_argument("--tasks", nargs="+", type=int, default=[10])
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--designs", nargs="+", default=["equal", "ragged"])
    p.add_argument("--methods", nargs="+", default=list(SIM_METHODS))
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--out", help="also write the table to this file (e.g. benchmarks/results/coverage_methods.txt)")
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

    lines: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    emit(f"95% intervals, {args.trials} trials per row, {args.reps} bootstrap reps per trial, seed {args.seed}")
    emit("each cell: coverage of IQM / coverage of mean (binomial SE <= 0.016 at 1000 trials); '-': not applicable")
    emit("runs: 'N' equal runs on every task; 'a-b' ragged (drawn once per row); target 0.935-0.965 at 5 and 10 runs\n")
    head = f"{'model':<11} {'M':>3} {'runs':<6} " + " ".join(f"{m:>13}" for m in args.methods) + f" {'sec':>5}"
    emit(head)
    emit("-" * len(head))
    for model in args.models:
        for m in args.tasks:
            tasks = make_tasks(model, m, args.seed + m)
            for runs in args.runs:
                for design in args.designs:
                    sizes = run_sizes(design, m, args.seed + m, runs)
                    t0 = time.perf_counter()
                    cov = simulate(
                        tasks,
                        sizes,
                        args.trials,
                        args.reps,
                        seed=args.seed + 1000 * m + 10 * runs + len(design),
                        methods=tuple(args.methods),
                    )
                    secs = time.perf_counter() - t0
                    label = str(runs) if design == "equal" else f"{sizes.min()}-{sizes.max()}"
                    cols = []
                    for method in args.methods:
                        rate = cov.rate(method)
                        cols.append("/".join("  -  " if np.isnan(x) else f"{x:.3f}" for x in rate).rjust(13))
                    emit(f"{model:<11} {m:>3} {label:<6} " + " ".join(cols) + f" {secs:5.0f}")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
