"""Candidate 95% intervals for the mean over tasks at 5 and 10 runs per task: which, if any, covers skewed tasks?

Issue 13 asks for a method within 93.5-96.5% for the mean on every task model of ``coverage_study.py``;
``--method bootstrap-t`` stays at 0.875-0.907 on the lognormal model. This screens the candidates from the
literature on the same populations (``tests/support/simulation.py``: ``make_tasks``, 10 tasks, exact true mean) with a plain
stratified bootstrap (runs resampled within tasks, as the library's engine does):

* ``percentile``; ``bootstrap-t``: t* = (mean* - mean) / se*, se the stratified standard error (the library's);
* ``boot-t-log``: bootstrap-t on the variance-stabilised log scale, log(mean) with se / mean (positive data);
* ``hall``: Hall's (1992) skewness-corrected t with normal quantiles, g(T) = T + λT²/3 + λ²T³/27 + λ/6, λ the
  estimated skewness of the stratified mean (Σ_m μ3_m / N_m² / M³) / se³, inverted in closed form;
* ``hall-boot``: the same transformation, its quantiles bootstrapped (Hall's bootstrap version);
* ``mover-cox``: parametric, lognormal tasks: each task's mean by Cox's log-scale interval
  exp(ȳ + s²/2 ± t sqrt(s²/n + s⁴/(2(n-1)))), combined over tasks by MOVER (Zou & Donner 2008);
* ``gpq``: parametric, lognormal tasks: the generalised pivotal quantity of Σ_m exp(μ_m + σ_m²/2) / M
  (Krishnamoorthy & Mathew 2003 per task, summed over tasks);
* ``double-t`` (with ``--double``; costly): the bootstrap-t with its level calibrated by a double bootstrap
  (Beran 1987; Hall 1992 §3.11): inner bootstrap-t intervals around ``--outer`` first-level replicates, the
  nominal level raised until they cover the original mean 95% of the time.

Parametric candidates apply to positive scores only ('n/a' otherwise). Every cell: coverage (below/above =
how often the truth fell below/above the interval). Binomial SE at 1,000 trials <= 0.016.

Run:  python benchmarks/coverage/mean_interval_candidates.py [--trials 1000] [--reps 1000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import _paths
import numpy as np
from scipy import stats
from simulation import MODELS, make_tasks, true_mean

CANDIDATES = ("percentile", "bootstrap-t", "boot-t-log", "hall", "hall-boot", "mover-cox", "gpq")
#: nominal levels the double bootstrap may choose from
LEVELS = np.linspace(0.90, 0.999, 45)


def _hall_inverse(x: np.ndarray | float, lam: float) -> np.ndarray | float:
    """Inverse of g(T) = T + λT²/3 + λ²T³/27 + λ/6 (monotone): (3/λ)((1 + λ(x − λ/6))^(1/3) − 1)."""
    if abs(lam) < 1e-12:
        return x
    return (3.0 / lam) * (np.cbrt(1.0 + lam * (np.asarray(x) - lam / 6.0)) - 1.0)


def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified mean, its standard error and its skewness λ along the last two axes (tasks, runs)."""
    n, m = x.shape[-1], x.shape[-2]
    task_means = x.mean(axis=-1)
    dev = x - task_means[..., None]
    var = (dev**2).sum(axis=-1) / (n - 1)
    mu3 = (dev**3).sum(axis=-1) * n / ((n - 1) * (n - 2))
    se = np.sqrt((var / n).sum(axis=-1)) / m
    k3 = (mu3 / n**2).sum(axis=-1) / m**3
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(se > 0, k3 / se**3, 0.0)
    return task_means.mean(axis=-1), se, lam


def _double_t(
    xb: np.ndarray, mb: np.ndarray, seb: np.ndarray, mean: float, outer: int, inner: int, rng: np.random.Generator
) -> float:
    """The bootstrap-t level whose inner intervals around ``outer`` replicates cover ``mean`` 95% of the time."""
    reps, m, n = xb[:outer].shape
    idx = rng.integers(0, n, size=(reps, inner, m, n))
    xbb = np.take_along_axis(np.broadcast_to(xb[:outer, None], idx.shape), idx, axis=3)
    mbb, sebb, _ = _moments(xbb)
    tt = np.where(sebb > 0, (mbb - mb[:outer, None]) / np.where(sebb > 0, sebb, 1.0), 0.0)
    for level in LEVELS:
        hi_q, lo_q = np.quantile(tt, [1 - (1 - level) / 2, (1 - level) / 2], axis=1)
        covered = (mb[:outer] - hi_q * seb[:outer] <= mean) & (mean <= mb[:outer] - lo_q * seb[:outer])
        if covered.mean() >= 0.95:
            return float(level)
    return float(LEVELS[-1])


def intervals(
    x: np.ndarray, reps: int, rng: np.random.Generator, double: tuple[int, int] | None = None
) -> dict[str, tuple[float, float]]:
    """Every candidate's 95% interval for the mean over tasks of one data set ``x`` (tasks, runs)."""
    m, n = x.shape
    z = stats.norm.ppf(0.975)
    mean, se, lam = (float(v) for v in _moments(x))
    idx = rng.integers(0, n, size=(reps, m, n))
    xb = np.take_along_axis(np.broadcast_to(x, (reps, m, n)), idx, axis=2)
    mb, seb, lamb = _moments(xb)
    ok = seb > 0
    out = {"percentile": tuple(np.quantile(mb, [0.025, 0.975]))}
    t = (mb[ok] - mean) / seb[ok]
    hi_t, lo_t = np.quantile(t, [0.975, 0.025])
    out["bootstrap-t"] = (mean - hi_t * se, mean - lo_t * se)
    if double is not None:
        level = _double_t(xb, mb, seb, mean, double[0], double[1], rng)
        hi_t, lo_t = np.quantile(t, [1 - (1 - level) / 2, (1 - level) / 2])
        out["double-t"] = (mean - hi_t * se, mean - lo_t * se)
    positive = bool((x > 0).all())
    if positive:
        tl = (np.log(mb[ok]) - np.log(mean)) / (seb[ok] / mb[ok])
        hi_t, lo_t = np.quantile(tl, [0.975, 0.025])
        out["boot-t-log"] = (mean * np.exp(-hi_t * se / mean), mean * np.exp(-lo_t * se / mean))
    out["hall"] = (mean - float(_hall_inverse(z, lam)) * se, mean - float(_hall_inverse(-z, lam)) * se)
    g = t + lamb[ok] * t**2 / 3 + lamb[ok] ** 2 * t**3 / 27 + lamb[ok] / 6
    g_hi, g_lo = np.quantile(g, [0.975, 0.025])
    out["hall-boot"] = (mean - float(_hall_inverse(g_hi, lam)) * se, mean - float(_hall_inverse(g_lo, lam)) * se)
    if positive:
        logs = np.log(x)
        ybar, s2 = logs.mean(axis=1), logs.var(axis=1, ddof=1)
        eta = ybar + s2 / 2
        half = stats.t.ppf(0.975, n - 1) * np.sqrt(s2 / n + s2**2 / (2 * (n - 1)))
        theta, lo_m, hi_m = np.exp(eta), np.exp(eta - half), np.exp(eta + half)
        total = theta.sum()
        out["mover-cox"] = (
            (total - np.sqrt(((theta - lo_m) ** 2).sum())) / m,
            (total + np.sqrt(((hi_m - theta) ** 2).sum())) / m,
        )
        u, zz = rng.chisquare(n - 1, size=(4000, m)), rng.standard_normal((4000, m))
        sig2 = (n - 1) * s2 / u
        with np.errstate(over="ignore"):
            pivot = np.exp(ybar - zz * np.sqrt(sig2 / n) + sig2 / 2).mean(axis=1)
        out["gpq"] = tuple(np.quantile(pivot, [0.025, 0.975]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--runs", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--double", action="store_true", help="add the double-bootstrap-calibrated bootstrap-t")
    parser.add_argument("--outer", type=int, default=200, help="first-level replicates recalibrated (--double)")
    parser.add_argument("--inner", type=int, default=60, help="second-level replicates of each (--double)")
    parser.add_argument("--out", default=str(_paths.BENCHMARKS / "results" / "mean_candidates.txt"))
    args = parser.parse_args()
    names = CANDIDATES + (("double-t",) if args.double else ())
    double = (args.outer, args.inner) if args.double else None
    lines = [
        f"95% intervals for the mean over 10 tasks: coverage (below/above), {args.trials} trials, "
        f"{args.reps} bootstrap reps, seed {args.seed}"
        + (f", double bootstrap {args.outer} x {args.inner}" if args.double else "")
        + "; target 0.935-0.965",
        "",
        f"{'model':<11} {'runs':>4} " + " ".join(f"{c:>17}" for c in names) + "   sec",
    ]
    print("\n".join(lines), flush=True)
    for model in args.models:
        tasks = make_tasks(model, 10, args.seed + 10)  # the coverage study's populations
        truth = true_mean(tasks)
        for runs in args.runs:
            started = time.time()
            rng = np.random.default_rng(args.seed + runs)
            counts = {c: np.zeros(3) for c in names}
            applicable = dict.fromkeys(names, 0)
            for _ in range(args.trials):
                x = np.stack([t.sample(rng, runs) for t in tasks])
                for name, (lo, hi) in intervals(x, args.reps, rng, double).items():
                    counts[name] += [lo <= truth <= hi, truth < lo, truth > hi]
                    applicable[name] += 1
            cells = []
            for c in names:
                k = applicable[c]
                cells.append(
                    "n/a".rjust(17)
                    if k < args.trials
                    else f"{counts[c][0] / k:.3f} ({counts[c][1] / k:.3f}/{counts[c][2] / k:.3f})".rjust(17)
                )
            lines.append(f"{model:<11} {runs:>4} " + " ".join(cells) + f" {time.time() - started:5.0f}")
            print(lines[-1], flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
