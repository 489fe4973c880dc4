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
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt


# ----------------------------------------------------------------------------- components
@dataclass(frozen=True)
class LogNormal:
    mu: float
    sigma: float

    def cdf(self, x: float) -> float:
        return 0.0 if x <= 0 else float(special.ndtr((math.log(x) - self.mu) / self.sigma))

    def partial(self, a: float, b: float) -> float:
        """E[X; a < X <= b]."""
        def phi(x: float) -> float:
            if x <= 0:
                return 0.0
            if math.isinf(x):
                return 1.0
            return float(special.ndtr((math.log(x) - self.mu - self.sigma**2) / self.sigma))

        return math.exp(self.mu + self.sigma**2 / 2) * (phi(b) - phi(a))

    @property
    def mean(self) -> float:
        return math.exp(self.mu + self.sigma**2 / 2)

    def sample(self, rng: np.random.Generator, n) -> np.ndarray:
        return np.exp(self.mu + self.sigma * rng.standard_normal(n))


@dataclass(frozen=True)
class Pareto:
    scale: float
    alpha: float

    def cdf(self, x: float) -> float:
        return 0.0 if x <= self.scale else 1.0 - (self.scale / x) ** self.alpha

    def partial(self, a: float, b: float) -> float:
        a, b = max(a, self.scale), max(b, self.scale)
        if b <= a:
            return 0.0
        f = lambda x: 0.0 if math.isinf(x) else x ** (1 - self.alpha)  # noqa: E731
        return self.alpha * self.scale**self.alpha / (self.alpha - 1) * (f(a) - f(b))

    @property
    def mean(self) -> float:
        return self.alpha * self.scale / (self.alpha - 1)

    def sample(self, rng: np.random.Generator, n) -> np.ndarray:
        return self.scale * (1.0 - rng.random(n)) ** (-1.0 / self.alpha)


@dataclass(frozen=True)
class Task:
    """A finite mixture of components: ``weights`` sum to 1."""

    weights: tuple[float, ...]
    parts: tuple

    def cdf(self, x: float) -> float:
        return sum(w * p.cdf(x) for w, p in zip(self.weights, self.parts))

    def partial(self, a: float, b: float) -> float:
        return sum(w * p.partial(a, b) for w, p in zip(self.weights, self.parts))

    @property
    def mean(self) -> float:
        return sum(w * p.mean for w, p in zip(self.weights, self.parts))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        which = rng.choice(len(self.parts), size=n, p=self.weights)
        out = np.empty(n)
        for j, p in enumerate(self.parts):
            sel = which == j
            out[sel] = p.sample(rng, int(sel.sum()))
        return out


def make_tasks(model: str, n_tasks: int, seed: int) -> list[Task]:
    rng = np.random.default_rng(seed)
    if model == "lognormal":
        mus, sigmas = rng.normal(-1.0, 0.7, n_tasks), rng.uniform(0.5, 1.5, n_tasks)
        return [Task((1.0,), (LogNormal(float(m), float(s)),)) for m, s in zip(mus, sigmas)]
    if model == "pareto-mix":
        w = rng.uniform(0.2, 0.6, n_tasks)
        scale, alpha = rng.uniform(0.3, 1.5, n_tasks), rng.uniform(2.2, 4.0, n_tasks)
        return [Task((float(wi), 1.0 - float(wi)), (LogNormal(math.log(0.05), 0.5), Pareto(float(s), float(a))))
                for wi, s, a in zip(w, scale, alpha)]
    raise ValueError(f"unknown model {model!r}")


# ----------------------------------------------------------------------------- true values
def true_mean(tasks: list[Task]) -> float:
    return float(np.mean([t.mean for t in tasks]))


def mixture_quantile(tasks: list[Task], q: float) -> float:
    f = lambda x: np.mean([t.cdf(x) for t in tasks]) - q  # noqa: E731
    lo, hi = 1e-12, 1.0
    while f(hi) < 0:
        hi *= 2
    return float(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def true_trimmed_mean(tasks: list[Task], proportion: float = 0.25) -> float:
    """Trimmed mean of the equal-weight task mixture (exact up to root-finding precision)."""
    a, b = mixture_quantile(tasks, proportion), mixture_quantile(tasks, 1 - proportion)
    inner = np.mean([t.partial(a, b) for t in tasks])
    return float(inner / (1 - 2 * proportion))


def monte_carlo_truth(tasks: list[Task], n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([t.sample(rng, n // len(tasks)) for t in tasks])
    from scipy import stats

    return float(stats.trim_mean(pooled, 0.25)), float(pooled.mean())


# ----------------------------------------------------------------------------- simulation
def run_sizes(design: str, n_tasks: int, seed: int, runs: int = 10) -> np.ndarray:
    if design == "equal":
        return np.full(n_tasks, runs)
    if design == "ragged":
        return np.random.default_rng(seed + 7).integers(5, 11, n_tasks)  # 5..10 runs per task
    raise ValueError(design)


@dataclass
class Coverage:
    trials: int
    hits: np.ndarray  # (2,) iqm, mean
    below: np.ndarray  # truth below the interval
    above: np.ndarray  # truth above the interval
    width: np.ndarray  # mean interval width

    def rate(self) -> np.ndarray:
        return self.hits / self.trials

    def se(self) -> np.ndarray:
        p = self.rate()
        return np.sqrt(p * (1 - p) / self.trials)


def simulate(tasks: list[Task], sizes: np.ndarray, trials: int, reps: int, seed: int, ci: float = 0.95) -> Coverage:
    """Coverage of the percentile intervals for (IQM, mean) over ``trials`` simulated data sets."""
    truth = np.array([true_trimmed_mean(tasks), true_mean(tasks)])
    root = np.random.default_rng(seed)
    data_rng, boot_rng = root.spawn(2)
    objs = [mt.get_metric("iqm"), mt.get_metric("mean")]
    stat = lambda r: np.stack([m(r) for m in objs], axis=1)  # noqa: E731
    hits, below, above, width = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
    for _ in range(trials):
        cells = bs.Cells.from_list([t.sample(data_rng, int(n)) for t, n in zip(tasks, sizes)])
        point = stat(bs.original(cells))[0]
        dist = bs.replicates(cells, stat, reps, boot_rng)
        low, high = bs.interval(dist, point, ci=ci, method="percentile")
        hits += (low <= truth) & (truth <= high)
        below += truth < low
        above += truth > high
        width += high - low
    return Coverage(trials, hits, below, above, width / trials)


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
                print(f"  {model:<11} M={m:<3} IQM exact {true_trimmed_mean(tasks):.5f}  MC {mc_iqm:.5f}   "
                      f"mean exact {true_mean(tasks):.5f}  MC {mc_mean:.5f}")
        return

    print(f"95% percentile intervals, {args.trials} trials per row, {args.reps} bootstrap reps per trial, seed {args.seed}")
    print("coverage ± binomial SE; 'miss lo/hi' = share of trials with the truth below / above the interval;")
    print("flag: in [0.93, 0.97] -> ok; otherwise UNDER/OVER (the issue's 93-97% target)\n")
    head = f"{'model':<11} {'M':>3} {'runs':<7} {'true IQM':>9} {'IQM cov':>14} {'miss lo/hi':>11} {'':5} " \
           f"{'true mean':>9} {'mean cov':>14} {'miss lo/hi':>11} {'':5} {'sec':>5}"
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
