"""Known RL-like score populations with exact IQM and mean, for checking interval coverage by simulation.

Each task is a finite mixture of lognormal and Pareto components whose CDFs and partial
expectations ``E[X; a < X <= b]`` have closed forms, so the population IQM (the 25%-trimmed mean of
the equal-weight task mixture) and mean (the mean of task means) are computed exactly, by root
finding on the mixture CDF. :func:`simulate` draws many data sets from such a population, computes
the library's stratified-bootstrap intervals for each, and counts how often they cover the truth.

Models (``make_tasks``):

* ``lognormal``: task m ~ LogNormal(mu_m, sigma_m), mu_m ~ N(-1, 0.7), sigma_m ~ U(0.5, 1.5).
* ``pareto-mix``: with probability w_m ~ U(0.2, 0.6) a run "fails" (LogNormal(log 0.05, 0.5)),
  otherwise it scores Pareto(x_m, alpha_m), x_m ~ U(0.3, 1.5), alpha_m ~ U(2.2, 4).

Used by ``tests/stats/test_coverage.py`` and the coverage studies of ``benchmarks/coverage/`` (which import it from
here: the models are test support, not part of the package).

Example:
    >>> tasks = make_tasks("pareto-mix", 5, seed=0)
    >>> round(true_mean(tasks), 3) > 0
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals, registry
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.intervals import bounds


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
class Normal:
    mu: float
    sigma: float

    def cdf(self, x: float) -> float:
        return float(special.ndtr((x - self.mu) / self.sigma))

    def partial(self, a: float, b: float) -> float:
        """E[X; a < X <= b] = mu (Φ(β) - Φ(α)) - sigma (φ(β) - φ(α))."""

        def cdf(z: float) -> float:
            return float(special.ndtr(z))

        def pdf(z: float) -> float:
            return 0.0 if math.isinf(z) else math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

        za, zb = (a - self.mu) / self.sigma, (b - self.mu) / self.sigma
        return self.mu * (cdf(zb) - cdf(za)) - self.sigma * (pdf(zb) - pdf(za))

    @property
    def mean(self) -> float:
        return self.mu

    def sample(self, rng: np.random.Generator, n) -> np.ndarray:
        return self.mu + self.sigma * rng.standard_normal(n)


@dataclass(frozen=True)
class StudentT:
    """``loc + scale · T_df`` (df > 1: the mean exists); heavy symmetric tails."""

    loc: float
    scale: float
    df: float = 3.0

    def _pdf(self, z: float) -> float:
        v = self.df
        log_c = special.gammaln((v + 1) / 2) - special.gammaln(v / 2) - 0.5 * math.log(v * math.pi)
        return math.exp(log_c - (v + 1) / 2 * math.log1p(z * z / v))

    def cdf(self, x: float) -> float:
        return float(special.stdtr(self.df, (x - self.loc) / self.scale))

    def partial(self, a: float, b: float) -> float:
        """E[X; a < X <= b] = loc (F(b) - F(a)) + scale (g(b) - g(a)), g(z) = -(df + z²) f(z) / (df - 1)."""

        def g(x: float) -> float:
            if math.isinf(x):
                return 0.0
            z = (x - self.loc) / self.scale
            return -(self.df + z * z) * self._pdf(z) / (self.df - 1)

        return self.loc * (self.cdf(b) - self.cdf(a)) + self.scale * (g(b) - g(a))

    @property
    def mean(self) -> float:
        return self.loc

    def sample(self, rng: np.random.Generator, n) -> np.ndarray:
        return self.loc + self.scale * rng.standard_t(self.df, n)


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
        f = lambda x: 0.0 if math.isinf(x) else x ** (1 - self.alpha)
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


#: Task models: ``normal`` (symmetric), ``lognormal`` (skewed), ``pareto-mix`` (bimodal, heavy-tailed).
MODELS = ("normal", "lognormal", "pareto-mix")
#: The coverage study's models (issue 23): ``lognormal-1.0`` / ``lognormal-1.5`` fix every task's sigma,
#: ``student-t3`` has symmetric tails with 3 degrees of freedom.
STUDY_MODELS = ("normal", "lognormal-1.0", "lognormal-1.5", "student-t3", "pareto-mix")


def make_tasks(model: str, n_tasks: int, seed: int) -> list[Task]:
    rng = np.random.default_rng(seed)
    if model == "normal":
        mus, sigmas = rng.normal(0.5, 0.3, n_tasks), rng.uniform(0.05, 0.3, n_tasks)
        return [Task((1.0,), (Normal(float(m), float(s)),)) for m, s in zip(mus, sigmas)]
    if model == "lognormal":
        mus, sigmas = rng.normal(-1.0, 0.7, n_tasks), rng.uniform(0.5, 1.5, n_tasks)
        return [Task((1.0,), (LogNormal(float(m), float(s)),)) for m, s in zip(mus, sigmas)]
    if model.startswith("lognormal-"):
        sigma = float(model.split("-", 1)[1])
        return [Task((1.0,), (LogNormal(float(m), sigma),)) for m in rng.normal(-1.0, 0.7, n_tasks)]
    if model == "student-t3":
        mus, scales = rng.normal(0.5, 0.3, n_tasks), rng.uniform(0.05, 0.3, n_tasks)
        return [Task((1.0,), (StudentT(float(m), float(s), 3.0),)) for m, s in zip(mus, scales)]
    if model == "pareto-mix":
        w = rng.uniform(0.2, 0.6, n_tasks)
        scale, alpha = rng.uniform(0.3, 1.5, n_tasks), rng.uniform(2.2, 4.0, n_tasks)
        return [
            Task((float(wi), 1.0 - float(wi)), (LogNormal(math.log(0.05), 0.5), Pareto(float(s), float(a))))
            for wi, s, a in zip(w, scale, alpha)
        ]
    raise ValueError(f"unknown model {model!r}")


# ----------------------------------------------------------------------------- true values
def true_mean(tasks: list[Task]) -> float:
    return float(np.mean([t.mean for t in tasks]))


def mixture_quantile(tasks: list[Task], q: float) -> float:
    f = lambda x: np.mean([t.cdf(x) for t in tasks]) - q
    lo, hi = 1e-12, 1.0
    while f(lo) > 0:  # supports reaching below 0 (normal tasks)
        lo = -2.0 * abs(lo) - 1.0
    while f(hi) < 0:
        hi *= 2
    return float(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def true_trimmed_mean(tasks: list[Task], proportion: float = 0.25) -> float:
    """Trimmed mean of the equal-weight task mixture (exact up to root-finding precision)."""
    a, b = mixture_quantile(tasks, proportion), mixture_quantile(tasks, 1 - proportion)
    inner = np.mean([t.partial(a, b) for t in tasks])
    return float(inner / (1 - 2 * proportion))


def true_median(tasks: list[Task]) -> float:
    """Median over tasks of the task means (the target of the ``median`` metric with the task set fixed)."""
    return float(np.median([t.mean for t in tasks]))


def true_improvement(x: list[Task], y: list[Task], draws: int = 400_000, seed: int = 0) -> float:
    """P(X > Y) averaged over tasks, ``E[F_Y(X)]`` by Monte Carlo over X with Y's exact CDF (MC error < 3e-4 at
    400k draws per task: ``F_Y(X)`` is in [0, 1], its SD at most 0.5)."""
    rng = np.random.default_rng(seed)
    per_task = []
    for tx, ty in zip(x, y):
        sample = np.sort(tx.sample(rng, draws))
        # F_Y on a grid of X's sorted draws (scalar CDF on a coarse grid, then linear interpolation is exact
        # enough: 4,001 grid points over the sample's range)
        grid = np.quantile(sample, np.linspace(0, 1, 4001))
        cdf = np.array([ty.cdf(float(g)) for g in grid])
        per_task.append(float(np.interp(sample, grid, cdf).mean()))
    return float(np.mean(per_task))


def monte_carlo_truth(tasks: list[Task], n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([t.sample(rng, n // len(tasks)) for t in tasks])
    from scipy import stats

    return float(stats.trim_mean(pooled, 0.25)), float(pooled.mean())


# ----------------------------------------------------------------------------- simulation
def run_sizes(design: str, n_tasks: int, seed: int, runs: int = 10) -> np.ndarray:
    """Runs per task: ``equal`` (``runs`` everywhere) or ``ragged`` (uniform in [max(2, runs - runs//2), runs + runs//2])."""
    if design == "equal":
        return np.full(n_tasks, runs)
    if design == "ragged":
        return np.random.default_rng(seed + 7).integers(max(2, runs - runs // 2), runs + runs // 2 + 1, n_tasks)
    raise ValueError(design)


#: Interval methods :func:`simulate` reports (a studentized one, ``bootstrap-t``, is for the mean only).
SIM_METHODS = intervals.METHODS


@dataclass
class Coverage:
    """Per method: hits, misses below/above and mean width for (IQM, mean); NaN where a method does not apply."""

    trials: int
    hits: dict[str, np.ndarray]
    below: dict[str, np.ndarray]
    above: dict[str, np.ndarray]
    width: dict[str, np.ndarray]

    def rate(self, method: str = "percentile") -> np.ndarray:
        return self.hits[method] / self.trials

    def se(self, method: str = "percentile") -> np.ndarray:
        p = self.rate(method)
        return np.sqrt(p * (1 - p) / self.trials)


def simulate(
    tasks: list[Task],
    sizes: np.ndarray,
    trials: int,
    reps: int,
    seed: int,
    ci: float = 0.95,
    methods: tuple[str, ...] = ("percentile",),
) -> Coverage:
    """Coverage of the intervals for (IQM, mean) over ``trials`` simulated data sets, for each method."""
    truth = np.array([true_trimmed_mean(tasks), true_mean(tasks)])
    root = np.random.default_rng(seed)
    data_rng, boot_rng = root.spawn(2)
    iqm, mean = registry.get_metric("iqm"), registry.get_metric("mean")
    stat = lambda r: np.concatenate([iqm(r)[:, None], mt.mean_se(r)], axis=1)  # iqm, mean, se(mean)
    pair = lambda r: np.stack([iqm(r), mean(r)], axis=1)
    zeros = lambda: {m: np.zeros(2) for m in methods}
    hits, below, above, width = zeros(), zeros(), zeros(), zeros()
    for _ in range(trials):
        cells = bs.Cells.from_list([t.sample(data_rng, int(n)) for t, n in zip(tasks, sizes)])
        point = stat(bs.original(cells))[0]
        dist = bs.replicates(cells, stat, reps, boot_rng)
        for method in methods:
            if intervals.requested(method).studentized:
                found = bounds.studentized_mean_interval(dist[:, 1:], point[1:], ci)
                lo_m, hi_m = found if found is not None else (np.nan, np.nan)
                low, high = np.array([np.nan, lo_m]), np.array([np.nan, hi_m])
            else:
                jackknife = intervals.requested(method).needs_jackknife
                jack = bs.jackknife(cells, pair) if jackknife else None
                strata = bs.jackknife_tasks(cells) if jackknife else None
                low, high = intervals.interval(
                    dist[:, :2],
                    point[:2],
                    ci=ci,
                    method=method,
                    jackknife=jack,
                    strata=strata,
                    cells=cells,
                )
            hits[method] += (low <= truth) & (truth <= high)
            below[method] += truth < low
            above[method] += truth > high
            width[method] += high - low
    nan_iqm = np.array([np.nan, 1.0])
    for method in methods:
        if intervals.requested(method).studentized:
            for d in (hits, below, above, width):
                d[method] = d[method] * nan_iqm
    return Coverage(trials, hits, below, above, {m: w / trials for m, w in width.items()})
