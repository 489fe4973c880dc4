"""Coverage of the Jordan et al. (2020) aggregate intervals in simulation: PBP, PBP-t, bootstrap.

Known score distributions give the true aggregate y (exact payoffs), so a trial *fails* when the true y
of at least one algorithm lies outside its interval; the intervals claim P(fail) <= delta. The script
prints, per scenario, sample size and method:

* ``FR``       failure rate against the true aggregate (the principled definition, spec Q9);
* ``FR_auth``  the authors' cross-trial rate (``bounds_test.jl num_bound_violations``): the fraction of
               ordered pairs of distinct trials (t, t') where t's point estimate leaves t''s interval;
* ``SIG``      fraction of algorithm pairs whose intervals do not overlap (power);
* ``width``    mean interval width; ``sec`` mean seconds per trial.

Scenarios (all with known support, so PBP's guarantee applies):

* ``discrete``   scores on {0, ..., K-1} with random probabilities (atoms, hence ties in the payoffs);
* ``continuous`` Beta distributions on [0, 1] (payoffs by numerical integration);
* ``ties``       like ``continuous`` but algorithms 0 and 1 are identical everywhere: their true payoffs
                 are exactly 1/2, the case where the chain is discontinuous and the bootstrap struggles.

Examples::

    python benchmarks/coverage/jordan_coverage.py --quick
    python benchmarks/coverage/jordan_coverage.py --n 10 30 100 1000 --trials 500 --reps 2000
    python benchmarks/coverage/jordan_coverage.py --methods pbp --tie-rule authors --scenarios ties
"""

from __future__ import annotations

import argparse
import time

import _paths  # noqa: F401  (this checkout's package)
import numpy as np
import pandas as pd
from scipy import integrate, stats

from rl_reliable_logger.stats import jordan as jd


# --------------------------------------------------------------------------- scenarios
class Scenario:
    """Known per-(algorithm, task) distributions on [0, 1] (or {0..K-1}) with exact payoffs."""

    name = "base"
    support = (0.0, 1.0)

    def sample(self, rng: np.random.Generator, n: int) -> list[list[np.ndarray]]:
        raise NotImplementedError

    def true_mu(self) -> np.ndarray:
        raise NotImplementedError


class Discrete(Scenario):
    name = "discrete"

    def __init__(self, n_alg: int, n_env: int, rng: np.random.Generator, K: int = 6) -> None:
        self.K = K
        self.support = (0.0, float(K - 1))
        self.pmf = rng.dirichlet(np.ones(K), size=(n_alg, n_env))

    def sample(self, rng, n):
        nA, nE, K = self.pmf.shape
        return [[rng.choice(K, size=n, p=self.pmf[i, j]).astype(float) for j in range(nE)] for i in range(nA)]

    def true_mu(self):
        cdf = np.cumsum(self.pmf, axis=-1)
        mu = np.einsum("ijx,kjx->ijk", self.pmf, cdf)
        n_alg = self.pmf.shape[0]
        mu[np.arange(n_alg), :, np.arange(n_alg)] = 0.5
        return mu


class Continuous(Scenario):
    name = "continuous"

    def __init__(self, n_alg: int, n_env: int, rng: np.random.Generator, identical: tuple[int, ...] = ()) -> None:
        self.ab = rng.uniform(0.5, 5.0, size=(n_alg, n_env, 2))
        for i in identical[1:]:
            self.ab[i] = self.ab[identical[0]]
        self.identical = identical

    def sample(self, rng, n):
        nA, nE, _ = self.ab.shape
        return [[rng.beta(*self.ab[i, j], size=n) for j in range(nE)] for i in range(nA)]

    def true_mu(self):
        nA, nE, _ = self.ab.shape
        mu = np.full((nA, nE, nA), 0.5)
        for j in range(nE):
            for i in range(nA):
                for k in range(nA):
                    if i == k or (i in self.identical and k in self.identical):
                        continue  # identical continuous distributions: exactly 1/2
                    fi = stats.beta(*self.ab[i, j]).pdf
                    Fk = stats.beta(*self.ab[k, j]).cdf
                    mu[i, j, k] = integrate.quad(
                        lambda x, Fk=Fk, fi=fi: Fk(x) * fi(x), 0.0, 1.0, epsabs=1e-13, epsrel=1e-12, limit=200
                    )[0]
        return mu


def make_scenario(name: str, n_alg: int, n_env: int, rng: np.random.Generator) -> Scenario:
    if name == "discrete":
        return Discrete(n_alg, n_env, rng)
    if name == "continuous":
        return Continuous(n_alg, n_env, rng)
    if name == "ties":
        s = Continuous(n_alg, n_env, rng, identical=(0, 1))
        s.name = "ties"
        return s
    raise SystemExit(f"unknown scenario {name!r}")


# --------------------------------------------------------------------------- one trial
def run_method(method: str, samples, args, support, rng) -> jd.JordanResult:
    return jd.jordan_evaluate(
        samples,
        method=method,
        delta=args.delta,
        support=support,
        tie_rule=args.tie_rule,
        t_split=args.t_split,
        bootstrap_split=args.bootstrap_split,
        reps=args.reps,
        seed=rng,
    )


def authors_failure_rate(points: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> float:
    """Fraction of ordered pairs (t != t') where trial t's point vector leaves trial t''s interval."""
    T = len(points)
    if T < 2:
        return float("nan")
    out = (points[:, None, :] < lows[None, :, :]) | (points[:, None, :] > highs[None, :, :])
    viol = out.any(axis=2)
    np.fill_diagonal(viol, False)
    return float(viol.sum() / (T * (T - 1)))


def significant_pairs(low: np.ndarray, high: np.ndarray) -> float:
    n = low.size
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    if not pairs:
        return float("nan")
    return float(np.mean([low[a] > high[b] or low[b] > high[a] for a, b in pairs]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", nargs="+", default=["discrete", "continuous", "ties"])
    p.add_argument("--methods", nargs="+", default=["pbp", "pbp-t", "bootstrap"])
    p.add_argument("--n", nargs="+", type=int, default=[10, 30, 100, 300], help="runs per (algorithm, task)")
    p.add_argument("--n-alg", type=int, default=4)
    p.add_argument("--n-env", type=int, default=3)
    p.add_argument("--trials", type=int, default=200)
    p.add_argument("--reps", type=int, default=2000, help="bootstrap replicates per trial (the paper: 10,000)")
    p.add_argument("--delta", type=float, default=0.05)
    p.add_argument("--tie-rule", choices=["strict", "authors"], default="strict")
    p.add_argument("--t-split", choices=["cells", "pairs", "means"], default="cells")
    p.add_argument("--bootstrap-split", choices=["cells", "algorithms"], default="cells")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="30 trials, n in {10, 100}, 500 bootstrap reps")
    p.add_argument("--csv", help="also write the summary table here")
    args = p.parse_args(argv)
    if args.quick:
        args.trials, args.n, args.reps = 30, [10, 100], 500

    root = np.random.default_rng(args.seed)
    rows = []
    print(
        f"delta = {args.delta}, nA = {args.n_alg}, nE = {args.n_env}, trials = {args.trials}, bootstrap reps = {args.reps}, "
        f"tie rule = {args.tie_rule}, PBP-t split = {args.t_split}, bootstrap split = {args.bootstrap_split}"
    )
    for scen_name in args.scenarios:
        scen = make_scenario(scen_name, args.n_alg, args.n_env, root)
        y_true = jd.equilibrium(scen.true_mu()).y
        print(f"\n[{scen.name}] true aggregate y = {np.round(y_true, 4).tolist()}")
        for n in args.n:
            rec = {m: {"lo": [], "hi": [], "pt": [], "sec": []} for m in args.methods}
            for _ in range(args.trials):
                samples = scen.sample(root, n)
                for m in args.methods:
                    t0 = time.perf_counter()
                    res = run_method(m, samples, args, scen.support, root)
                    rec[m]["sec"].append(time.perf_counter() - t0)
                    rec[m]["lo"].append(res.low)
                    rec[m]["hi"].append(res.high)
                    rec[m]["pt"].append(res.y)
            for m in args.methods:
                lo, hi, pt = (np.array(rec[m][k]) for k in ("lo", "hi", "pt"))
                fails = ((y_true[None] < lo - 1e-12) | (y_true[None] > hi + 1e-12)).any(axis=1)
                fr = float(fails.mean())
                se = float(np.sqrt(max(fr * (1 - fr), 1e-12) / args.trials))
                row = {
                    "scenario": scen.name,
                    "n": n,
                    "method": m,
                    "FR": fr,
                    "FR_se": se,
                    "FR_auth": authors_failure_rate(pt, lo, hi),
                    "SIG": float(np.mean([significant_pairs(a, b) for a, b in zip(lo, hi)])),
                    "width": float(np.mean(hi - lo)),
                    "sec": float(np.mean(rec[m]["sec"])),
                    # one-sided exact binomial test of FR <= delta at level 0.05
                    "p_value": float(stats.binom.sf(int(fails.sum()) - 1, args.trials, args.delta)),
                }
                row["valid"] = "NO" if row["p_value"] < 0.05 else "ok"
                rows.append(row)
                print(
                    f"  n={n:>6} {m:>10}: FR={fr:.3f} (±{se:.3f})  FR_auth={row['FR_auth']:.3f}  SIG={row['SIG']:.2f}  "
                    f"width={row['width']:.3f}  {row['sec']:.2f}s/trial  FR<=delta: {row['valid']} (p={row['p_value']:.3f})",
                    flush=True,
                )
    summary = pd.DataFrame(rows)
    print("\nsummary (FR = failure rate against the true aggregate; the claim is FR <= delta):")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.csv:
        summary.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
