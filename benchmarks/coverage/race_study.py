"""How often a race selects a configuration within δ of the best, how many runs it spends, and where they go.

    nice -n 10 python benchmarks/coverage/race_study.py                 # the κ table (issue 47): race_study.{txt,json}
    nice -n 10 python benchmarks/coverage/race_study.py --shape         # the issue-55 table: race_shape.{txt,json}
    nice -n 10 python benchmarks/coverage/race_study.py --trace         # the per-look trace: race_trace.{txt,json}
    python benchmarks/coverage/race_study.py --compare BEFORE.json AFTER.json   # a before/after table of two runs

Each scenario is C configurations of one algorithm on M tasks with known population metrics θ_c (IQM); a trial
draws N (``max_runs``) runs per (configuration, task) cell and replays the race look by look with the library's
own calls: each configuration's IQM replicates (``bootstrap.draw`` + the registry's metric, one stream per
configuration), one look (``racing.race_look``: eliminations, settling, selection, repeated intervals) and the runs
the next look gets (``racing.allocation``); a configuration's first n runs of a cell are the ones it has after n
were launched, and each look has exactly the runs the race asked for. The fixed design on the same draws runs all
N runs of every cell and selects the best estimate.

Two families of scenarios:

* **κ scenarios** (issue 47): δ is κ standard errors of an IQM difference at N runs per cell; populations are the
  synthetic tasks of ``tests/support/simulation.py``'s ``make_tasks`` (``normal``, ``student-t3``, ``lognormal-1.5``,
  ``pareto-mix``), each configuration the same tasks shifted (θ_c = the tasks' IQM + shift, exactly), and real runs
  resampled with replacement, human normalised: Atari 100k (``../shared/data/rliable_atari_100k``, 100 runs per
  game), Dopamine's ALE baselines (5 runs per game) and DreamerV2 (11 runs per game), either one configuration per
  real algorithm (the truth is the pool's IQM, exactly) or one algorithm's runs shifted per configuration.
* **shape scenarios** (issue 55): one algorithm's 8 configurations on 10 tasks, 2 runs per cell at the first of 5
  looks, at most 10; δ is a sixth of a run's spread (the normal-consistent IQR of a run within its task, root mean
  square over tasks), the effects are of the order of that spread: ``graded`` (a line from 0 down to one spread),
  ``one clear best`` (half a spread ahead), ``near tie`` (the top three within δ/2), ``all equal`` and ``one failure
  mode`` (the graded line, the second configuration's runs failing to the task's floor in 20% of runs: its truth by
  Monte Carlo, 400,000 runs per task). ``dev`` scenarios tuned the procedure; ``held-out`` ones (other noise
  families, seeds, slopes and real runs) were written with them and measured once before the last two choices
  (``docs/race.md`` says which); ``fresh`` ones were written after the last choice and run once.

The procedures: ``race`` (the library's), and ``simple``: a plain normal-approximation race written apart from the
library's (the comparator of issue 55): the mean over tasks of the task means, its standard error from the cells'
sample variances, one-sided comparisons of every configuration with the leader at α / (C - 1) (Bonferroni) on
O'Brien-Fleming-type boundaries (Lan-DeMets spending over the planned fractions), no indifference zone: a
configuration is out when the leader is ahead by more than the boundary; at the last look the best mean is selected.
"Before" is this script run against the previous library (``--compare`` joins the two records).

Reported per scenario (standard errors over trials): ``within``, P(θ* - θ_selected <= δ), for the procedure and the
fixed design (with the IQM, and with the mean: the comparator's statistic); ``runs``, the runs over the fixed
design's (C x M x N); ``R covers``, P(θ* - θ_sel <= R), the regret bound the race reports; ``margin covers``, the
margin interval over the runner-up; ``θ covers``, the selected configuration's own interval; ``best out``, P(every
best configuration eliminated); ``certified``, the races that stopped by their rule rather than at the last look.

The trace (``--trace``): per look, how many configurations get runs, are settled (racing, no runs: they cannot be δ
better than the leader) or are out, the runs the look asks for, and for the configurations that get runs, why they
are not settled (the median estimate behind the leader and half-width of their interval with it, in δ); per
configuration (by true rank), its runs per cell, and those of two oracles that knew the effects and the standard
errors (``settle``: each rival runs until the race's own interval with the best one, centred on the truth, would
settle it, or to N; ``oracle``: the same, but it stops at the first look when no run could certify the best).

Seeds: ``--seed`` draws the sweeps (the scenarios' own seeds draw their tasks). The procedure was tuned on the dev
scenarios at ``--seed 0``; the tables of ``docs/race.md`` are run at ``--seed 1``, on draws it never saw.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import _paths
import numpy as np
import pandas as pd
import simulation as sim

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import racing, registry
from rl_reliable_logger.stats import sequential as sq

ROOT = _paths.BENCHMARKS
DATA = _paths.ROOT.parent / "shared" / "data"
IQM = registry.get_metric("iqm")
#: The runs per task a failure mode's truth is computed on (Monte Carlo; its error is below 0.01 δ).
TRUTH_RUNS = 400_000


def lr_curve(peak: float, height: float, configs: int = 8, floor: float = -6.0) -> tuple[float, ...]:
    """Shifts (in units of δ) of ``configs`` learning rates on a log grid: a parabola in log-lr, 0 at ``peak``
    (off the grid: no two configurations tie), ``height`` δ lower one grid step away, never below ``floor`` δ."""
    x = np.arange(configs, dtype=float)
    return tuple(float(v) for v in np.maximum(-height * (x - peak) ** 2, floor))


@dataclass(frozen=True)
class Scenario:
    """C configurations: a source's tasks (or games) shifted by ``shifts`` (in units of δ), or one real algorithm's
    runs per configuration (``pools``; with ``shifts`` too: the one algorithm's runs shifted). δ is ``kappa``
    standard errors of an IQM difference at ``max_runs`` runs per cell, or, with ``spread`` > 0, ``spread`` times a
    run's spread. ``fail[c]``: the share of configuration c's runs that fail to the task's floor. ``first``: runs per
    cell at the first look (0: the planned ⌈N / K⌉)."""

    name: str
    role: str  # dev | held-out | fresh
    source: str  # a make_tasks model, or atari100k | dopamine | dreamerv2
    shifts: tuple[float, ...] = ()
    pools: tuple[str, ...] = ()
    kappa: float = 4.0
    tasks: int = 10
    looks: int = 5
    max_runs: int = 10
    seed: int = 0  # which tasks (games) the scenario uses
    spread: float = 0.0
    fail: tuple[float, ...] = ()
    first: int = 0
    sweeps: int = 0  # trials of its own (0: ``--trials``)

    @property
    def configs(self) -> int:
        return len(self.shifts) or len(self.pools)

    @property
    def first_runs(self) -> int:
        return self.first or int(sq.look_targets(self.max_runs, self.looks)[0])

    def look_counts(self) -> np.ndarray:
        """Runs per cell at each look of a configuration that gets runs at every look, as ``racing.allocation``
        gives them: the first look's, then the planned ``⌈k N / K⌉`` or one more than the last, at most N."""
        counts = [self.first_runs]
        for planned in sq.look_targets(self.max_runs, self.looks)[1:]:
            counts.append(min(self.max_runs, max(int(planned), counts[-1] + 1)))
        return np.array(counts)


ATARI6 = ("DER", "OTR", "DrQ", "DrQ(eps)", "SPR", "CURL")
DOPAMINE6 = ("DQN", "C51", "Rainbow", "IQN", "Quantile (JAX)", "DQN (Adam + MSE in JAX)")
SCENARIOS = [
    Scenario("all equal", "dev", "normal", (0.0,) * 8),
    Scenario("learning-rate curve", "dev", "normal", lr_curve(3.3, 0.3)),
    Scenario("one clear best (2δ ahead)", "dev", "normal", (0.0, -2.0, -2.3, -2.6, -3.0, -3.3, -4.0, -5.0)),
    Scenario("Atari 100k, 6 algorithms as configurations", "dev", "atari100k", pools=ATARI6),
    # held-out: written before the defaults were fixed, never used to tune them
    Scenario("learning-rate curve, peak at the edge", "held-out", "normal", lr_curve(6.6, 0.2), seed=11),
    Scenario(
        "near ties within δ (top three)", "held-out", "student-t3", (0.0, -0.3, -0.5, -3, -3.5, -4, -5, -6), seed=12
    ),
    Scenario(
        "runner-up just outside δ", "held-out", "normal", (0.0, -1.1, -1.15, -1.2, -1.25, -1.3, -1.35, -1.4), seed=13
    ),
    Scenario("all equal, skewed tasks", "held-out", "lognormal-1.5", (0.0,) * 8, seed=14),
    Scenario("learning-rate curve, heavy tails", "held-out", "pareto-mix", lr_curve(2.6, 0.35), seed=15),
    Scenario(
        "Atari 100k SPR runs, learning-rate curve", "held-out", "atari100k", lr_curve(4.4, 0.4), ("SPR",), seed=16
    ),
    Scenario("Dopamine ALE, 6 agents as configurations", "held-out", "dopamine", pools=DOPAMINE6, seed=17),
    Scenario(
        "DreamerV2 runs, learning-rate curve", "held-out", "dreamerv2", lr_curve(3.7, 0.25), ("dreamerv2",), seed=18
    ),
]

#: Effect profiles of the issue-55 shape, in units of δ (a sixth of a run's spread): best first.
GRADED = tuple(-6.0 * c / 7.0 for c in range(8))  # a line from 0 down to one spread
CLEAR = (0.0, -3.0, -3.5, -4.0, -4.5, -5.0, -5.5, -6.0)  # the best half a spread ahead
NEAR_TIE = (0.0, -0.3, -0.5, -2.5, -3.5, -4.5, -5.5, -6.5)  # the top three within δ / 2
EQUAL = (0.0,) * 8
STEEP = tuple(-12.0 * c / 7.0 for c in range(8))  # a line from 0 down to two spreads
FAILING = (0.2,) + (0.0,) * 7  # the best by its healthy runs fails in a fifth of them (its IQM falls below)


def _shape(name: str, role: str, source: str, shifts: tuple[float, ...], seed: int, **kw: Any) -> Scenario:
    return Scenario(name, role, source, shifts, seed=seed, spread=1.0 / 6.0, **kw)


SHAPE = [
    _shape("graded", "dev", "normal", GRADED, 21),
    _shape("one clear best", "dev", "normal", CLEAR, 22),
    _shape("near tie", "dev", "normal", NEAR_TIE, 23),
    _shape("all equal", "dev", "normal", EQUAL, 24),
    _shape("one failure mode", "dev", "normal", GRADED, 25, fail=FAILING),
    # held-out: measured only
    _shape("graded, heavy tails", "held-out", "student-t3", GRADED, 31),
    _shape("graded, skewed runs", "held-out", "lognormal-1.0", GRADED, 32),
    _shape("graded, steeper (1.5 spreads)", "held-out", "normal", tuple(-9.0 * c / 7.0 for c in range(8)), 33),
    _shape("one clear best, heavy right tail", "held-out", "pareto-mix", CLEAR, 34),
    _shape("near tie, heavy tails", "held-out", "student-t3", NEAR_TIE, 35),
    _shape("all equal, skewed runs", "held-out", "lognormal-1.0", EQUAL, 36),
    _shape("one failure mode, heavy tails", "held-out", "student-t3", GRADED, 37, fail=FAILING),
    Scenario("graded, Atari 100k SPR runs", "held-out", "atari100k", GRADED, ("SPR",), seed=38, spread=1.0 / 6.0),
    Scenario("graded, DreamerV2 runs", "held-out", "dreamerv2", GRADED, ("dreamerv2",), seed=39, spread=1.0 / 6.0),
    # fresh: written after the last choice (the trimmed spreads, certify at one half), run once for the table
    _shape("graded, other tasks", "fresh", "normal", GRADED, 41),
    _shape("graded, heavy tails, other tasks", "fresh", "student-t3", GRADED, 42),
    _shape("graded, gentler (two thirds of a spread)", "fresh", "normal", tuple(-4.0 * c / 7.0 for c in range(8)), 43),
    _shape("one clear best, skewed runs", "fresh", "lognormal-1.0", CLEAR, 44),
    _shape("near tie, heavy right tail", "fresh", "pareto-mix", NEAR_TIE, 45),
    _shape("all equal, heavy tails", "fresh", "student-t3", EQUAL, 46),
    Scenario("graded, Dopamine DQN runs", "fresh", "dopamine", GRADED, ("DQN",), seed=47, spread=1.0 / 6.0),
    # issue 55's sweep as it describes it: graded effects two spreads deep (the comparator spends 0.55 of the runs
    # here, as the did), its 60 sweeps and the same draws continued to the --trials for a precise answer
    _shape("issue 55's sweep (60 sweeps)", "issue", "normal", STEEP, 51, sweeps=60),
    _shape("issue 55's sweep", "issue", "normal", STEEP, 51),
]


def _reference() -> pd.DataFrame:
    ref = pd.read_csv(DATA / "reference_scores" / "atari_57_random_human_record.csv")
    ref["key"] = ref["game_snake"].str.replace("_", "", regex=False)
    return ref.set_index("key")


def _hns(frame: pd.DataFrame, game: str, value: str) -> pd.DataFrame:
    ref = _reference()
    key = frame[game].str.replace("atari_", "", regex=False).str.replace("_", "", regex=False).str.lower()
    keep = key.isin(ref.index)
    frame, key = frame[keep].copy(), key[keep]
    human, rand = ref.loc[key, "human"].to_numpy(), ref.loc[key, "random"].to_numpy()
    frame["hns"] = (frame[value].to_numpy() - rand) / (human - rand)
    frame["game_key"] = key.to_numpy()
    return frame


def real_pools(source: str) -> dict[str, list[np.ndarray]]:
    """{algorithm: [runs of game g]}, human normalised, games in one sorted order shared by the algorithms."""
    if source == "atari100k":
        long = pd.read_csv(DATA / "rliable_atari_100k" / "final_scores_long.csv")
        long = long.rename(columns={"human_normalized": "hns", "game": "game_key"})
        algo = "algorithm"
    elif source == "dopamine":
        long = _hns(pd.read_csv(DATA / "dopamine_atari_baselines" / "atari_final_scores.csv"), "game", "return")
        algo = "agent"
    elif source == "dreamerv2":
        long = _hns(pd.read_csv(DATA / "dreamerv2_atari" / "atari_dreamerv2_final_scores.csv"), "task", "last_return")
        algo = "method"
    else:
        raise ValueError(source)
    games = sorted(set.intersection(*(set(g["game_key"]) for _, g in long.groupby(algo))))
    return {str(a): [g.loc[g["game_key"] == k, "hns"].to_numpy(float) for k in games] for a, g in long.groupby(algo)}


def _iqm(runs: np.ndarray) -> float:
    """The IQM of (M, n) runs (tasks by runs)."""
    return float(IQM(bs.original(bs.Cells.from_array(np.asarray(runs).T)))[0])


class Population:
    """The scenario's C configurations: ``draw(rng)`` -> (C, M, N) runs, ``theta`` the true IQMs, ``delta``."""

    def __init__(self, sc: Scenario):
        self.sc = sc
        rng = np.random.default_rng(sc.seed)
        self.tasks = None
        if sc.source in ("atari100k", "dopamine", "dreamerv2"):
            pools = real_pools(sc.source)
            games = np.sort(rng.choice(len(next(iter(pools.values()))), sc.tasks, replace=False))
            names = sc.pools if len(sc.pools) > 1 else sc.pools * sc.configs
            self.pools = [[pools[a][g] for g in games] for a in names]
            # the population IQM trims exactly 25% of the mass: 4 copies of each run make ⌊0.25 K⌋ / K exact
            base = np.array(
                [float(IQM(bs.original(bs.Cells.from_list([np.tile(g, 4) for g in p])))[0]) for p in self.pools]
            )
        else:
            self.tasks = sim.make_tasks(sc.source, sc.tasks, sc.seed)
            base = np.full(sc.configs, sim.true_trimmed_mean(self.tasks, 0.25))
        self.fail = np.asarray(sc.fail or (0.0,) * sc.configs, dtype=float)
        self.floor = self._floors(np.random.default_rng([sc.seed, 2]))
        self.shift = np.zeros(sc.configs)
        self.spread = self.run_spread(np.random.default_rng([sc.seed, 3]))
        if sc.spread > 0:
            self.delta = sc.spread * self.spread
        else:
            self.delta = sc.kappa * self.se_difference(np.random.default_rng([sc.seed, 1]))
        self.shift = self.delta * np.asarray(sc.shifts or (0.0,) * sc.configs)
        self.theta = base + self.shift  # the IQM moves with a shift of every run
        for c in np.flatnonzero(self.fail > 0):  # a failure mode moves it otherwise: by Monte Carlo
            runs = self._runs(np.random.default_rng([sc.seed, 4, int(c)]), TRUTH_RUNS)
            self.theta[c] = _iqm(self._failing(runs, c, np.random.default_rng([sc.seed, 5, int(c)])) + self.shift[c])

    def _runs(self, rng: np.random.Generator, n: int, config: int = 0) -> np.ndarray:
        """(M, n) runs of one configuration before its shift and failures."""
        if self.tasks is None:
            return np.stack([p[rng.integers(0, p.size, n)] for p in self.pools[config]])
        return np.stack([t.sample(rng, n) for t in self.tasks])

    def _floors(self, rng: np.random.Generator) -> np.ndarray:
        """Each task's floor: where a failed run ends (its 1st percentile less two spreads' worth of its IQR)."""
        runs = self._runs(rng, 20_000)
        q1, q25, q75 = np.percentile(runs, [1, 25, 75], axis=1)
        return q1 - 2.0 * (q75 - q25)

    def _failing(self, runs: np.ndarray, config: int, rng: np.random.Generator) -> np.ndarray:
        out = runs.copy()
        failed = rng.random(runs.shape) < self.fail[config]
        return np.where(failed, self.floor[:, None], out)

    def run_spread(self, rng: np.random.Generator) -> float:
        """A run's spread within its task: the normal-consistent IQR (IQR / 1.349), root mean square over tasks."""
        q25, q75 = np.percentile(self._runs(rng, 100_000), [25, 75], axis=1)
        return float(np.sqrt(np.mean(((q75 - q25) / 1.349) ** 2)))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        n = self.sc.max_runs
        out = np.stack([self._runs(rng, n, c) for c in range(self.sc.configs)])
        for c in np.flatnonzero(self.fail > 0):
            out[c] = self._failing(out[c], c, rng)
        return out + self.shift[:, None, None]

    def variances(self, rng: np.random.Generator, draws: int = 400) -> np.ndarray:
        """Each configuration's IQM variance at ``max_runs`` runs per cell, by simulation."""
        est = np.array([[_iqm(d) for d in self.draw(rng)] for _ in range(draws)])
        return est.var(axis=0, ddof=1)

    def se_difference(self, rng: np.random.Generator, draws: int = 400) -> float:
        """The standard error of an IQM difference of two configurations at ``max_runs`` runs per cell (root mean
        square over the configurations), by simulation."""
        return float(np.sqrt(2.0 * np.mean(self.variances(rng, draws))))


# ----------------------------------------------------------------------------- procedures
#: The procedures compared: ``race`` (the library's) and ``simple`` (the comparator: see the module's docstring).
VARIANTS = ("race", "simple")
#: A configuration's state at a look, in a trace: gets runs for the next look, settled (cannot be δ better than the
#: leader), resting (a contender whose runs could change neither the selection nor the certificate), out, or the
#: race is over (every configuration still racing).
RUNS, SETTLED, RESTING, OUT, DONE = "R", "S", "F", "E", "D"


def _states(look, delta: float) -> list[str]:
    def state(c: int) -> str:
        if not look.alive[c]:
            return OUT
        if look.stop:
            return DONE
        if look.wants[c]:
            return RUNS
        return RESTING if c != look.leader and look.upper(c, look.leader) >= delta else SETTLED

    return [state(c) for c in range(len(look.alive))]


def run_race(data: np.ndarray, design: racing.RaceDesign, reps: int, rng: np.random.Generator, first: int):
    """One race on ``data`` (C, M, N): the last look, the runs it used and its trace (one entry per look)."""
    c_n, m_n, _ = data.shape
    counts = np.full((c_n, m_n), first)
    seen: dict[int, tuple] = {}
    look, trace = None, []
    while True:
        dists, points, cells = [None] * c_n, [np.nan] * c_n, [None] * c_n
        for c in range(c_n):
            if look is not None and not look.alive[c]:
                continue
            key = tuple(counts[c])
            if c not in seen or seen[c][0] != key:
                cl = bs.Cells.from_list([data[c, m, : counts[c, m]] for m in range(m_n)])
                seen[c] = (key, cl, IQM(bs.draw(cl, reps, rng)), float(IQM(bs.original(cl))[0]))
            _, cells[c], dists[c], points[c] = seen[c]
        look = racing.race_look(look, design, dists, points, cells)
        add = racing.allocation(look, design, counts)
        trace.append(_trace_row(look, design, counts, add))
        if look.stop:
            return look, int(counts.sum()), trace
        counts = counts + add


def _trace_row(look, design: racing.RaceDesign, counts: np.ndarray, add: np.ndarray) -> dict:
    lead = look.leader
    upper = [look.upper(c, lead) if c != lead and look.alive[c] else np.nan for c in range(design.configs)]
    lower = [-look.upper(lead, c) if c != lead and look.alive[c] else np.nan for c in range(design.configs)]
    return {
        "state": _states(look, design.delta),
        "runs": counts.mean(axis=1).tolist(),
        "add": int(add.sum()),
        "leader": int(lead),
        "upper": upper,  # U(c, leader)
        "half": [(u - lo) / 2.0 for u, lo in zip(upper, lower)],
        "behind": [(u + lo) / 2.0 for u, lo in zip(upper, lower)],  # the interval's centre: c - leader
    }


def run_simple(data: np.ndarray, alpha: float, targets: np.ndarray):
    """The comparator: a normal-approximation race on the mean over tasks (see the module's docstring); ``targets``
    the runs per cell of each look."""
    c_n, m_n, n_max = data.shape
    looks, first = len(targets), int(targets[0])
    alive, n, times, trace = np.ones(c_n, dtype=bool), np.full(c_n, first), [], []
    level = 2.0 * alpha / (c_n - 1)  # two-sided boundaries: α / (C - 1) on the side that eliminates
    for k in range(looks):
        means = np.array([data[c, :, : n[c]].mean() for c in range(c_n)])
        var = np.array([(data[c, :, : n[c]].var(axis=1, ddof=1) / n[c]).sum() / m_n**2 for c in range(c_n)])
        times.append(1.0 if k == looks - 1 else min(1.0, targets[k] / n_max))
        bound = float(sq.boundaries(times, level, "obf")[-1])
        lead = max(np.flatnonzero(alive), key=lambda c: (means[c], -c))
        half = bound * np.sqrt(var + var[lead])
        alive &= ~((means[lead] - means > half) & (np.arange(c_n) != lead))
        done = k == looks - 1 or alive.sum() == 1
        nxt = np.where(alive, targets[min(k + 1, looks - 1)], n)
        trace.append(
            {
                "state": [OUT if not a else (DONE if done else RUNS) for a in alive],
                "runs": n.astype(float).tolist(),
                "add": 0 if done else int((nxt - n).sum() * m_n),
                "leader": int(lead),
                "upper": np.where(alive, means - means[lead] + half, np.nan).tolist(),
                "half": np.where(alive, half, np.nan).tolist(),
                "behind": np.where(alive, means - means[lead], np.nan).tolist(),
            }
        )
        if done:
            return int(lead), int(n.sum() * m_n), trace
        n = nxt
    raise AssertionError("unreachable")


def trial(pop: Population, design: racing.RaceDesign, reps: int, rngs: tuple, variant: str) -> dict:
    """One sweep: its runs from ``rngs[0]`` (the same for every procedure), the race's bootstrap from ``rngs[1]``."""
    data, rng = pop.draw(rngs[0]), rngs[1]
    theta, best, delta = pop.theta, pop.theta.max(), pop.delta
    first = pop.sc.first_runs
    out: dict[str, Any] = {}
    if variant == "race":
        look, runs, trace = run_race(data, design, reps, rng, first)
        sel = look.selected
        margin = theta[sel] - np.delete(theta, sel).max()
        out.update(
            regret_covers=best - theta[sel] <= look.regret + 1e-12,
            margin_covers=look.margin_low - 1e-12 <= margin <= look.margin_high + 1e-12,
            theta_covers=look.config_low[sel] <= theta[sel] <= look.config_high[sel],
            best_out=all(not look.alive[b] for b in np.flatnonzero(theta >= best - 1e-12)),
            look=look.look,
            reason=look.reason,
            regret=look.regret / delta,
        )
    else:
        sel, runs, trace = run_simple(data, design.alpha, pop.sc.look_counts())
        out.update(
            regret_covers=np.nan,
            margin_covers=np.nan,
            theta_covers=np.nan,
            best_out=all(s == OUT for s, t in zip(trace[-1]["state"], theta) if t >= best),
            look=len(trace),
            reason="one left" if sum(s != OUT for s in trace[-1]["state"]) == 1 else "last look",
            regret=np.nan,
        )
    fixed = int(np.argmax([_iqm(data[c]) for c in range(len(theta))]))
    fixed_mean = int(np.argmax(data.mean(axis=(1, 2))))
    out.update(
        within=best - theta[sel] <= delta,
        fixed_within=best - theta[fixed] <= delta,
        fixed_mean_within=best - theta[fixed_mean] <= delta,
        runs=runs,
        trace=trace,
    )
    return out


def design_of(sc: Scenario, pop: Population, alpha: float, spending: str) -> racing.RaceDesign:
    """The race of the scenario as ``analysis/race.py`` designs it for the IQM (a library without ``trim``: as is)."""
    design = racing.RaceDesign(sc.configs, sc.tasks, sc.looks, sc.max_runs, pop.delta, alpha, spending)
    return replace(design, trim=0.25) if "trim" in racing.RaceDesign.__dataclass_fields__ else design


def run(sc: Scenario, trials: int, reps: int, alpha: float, seed: int, spending: str, variant: str) -> dict:
    pop = Population(sc)
    design = design_of(sc, pop, alpha, spending)
    rngs = (np.random.default_rng([seed, sc.seed, 0]), np.random.default_rng([seed, sc.seed, 1]))
    rows = [trial(pop, design, reps, rngs, variant) for _ in range(trials)]
    frame = pd.DataFrame([{k: v for k, v in r.items() if k != "trace"} for r in rows])
    fixed_runs = sc.configs * sc.tasks * sc.max_runs

    def rate(col: str) -> tuple[float, float]:
        p = float(frame[col].astype(float).mean())
        return p, float(np.sqrt(p * (1 - p) / trials)) if p == p else float("nan")

    out: dict = {"scenario": sc.name, "role": sc.role, "variant": variant, "spending": spending, "C": sc.configs}
    out.update(kappa=sc.kappa, spread=sc.spread, first=sc.first_runs, delta=pop.delta)
    out.update(
        kappa_actual=pop.delta / pop.se_difference(np.random.default_rng([sc.seed, 1])) if sc.spread else sc.kappa
    )
    out["good_configs"] = int((pop.theta >= pop.theta.max() - pop.delta).sum())
    for col in ("within", "fixed_within", "fixed_mean_within", "regret_covers", "margin_covers", "theta_covers"):
        out[col], out[col + "_se"] = rate(col)
    out["best_out"], out["best_out_se"] = rate("best_out")
    share = frame["runs"] / fixed_runs
    out["runs_share"], out["runs_share_se"] = float(share.mean()), float(share.std(ddof=1) / np.sqrt(trials))
    out["mean_look"] = float(frame["look"].mean())
    for reason in racing.REASONS:
        out["stop " + reason] = float((frame["reason"] == reason).mean())
    out["certified"] = out["stop within delta"] + out["stop one left"]
    out["trials"] = trials
    out["trace"] = summarise_trace([r["trace"] for r in rows], pop, sc, design)
    return out


# ----------------------------------------------------------------------------- the trace
def oracle_runs(
    pop: Population, sc: Scenario, design: racing.RaceDesign, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Runs per cell of two oracles that knew the effects and the standard errors and wanted the race's certificate
    (every rival of the best settled: its interval with the best, the normal critical value of the race's pair
    boundary at the looks times the true standard error, centred on the truth, below δ). ``settle``: each rival runs
    until it would be settled, or to N when it never would; the best as long as its longest-running rival.
    ``oracle``: the same, except that when some rival could not be settled by N runs per cell it knows that no run
    can certify the best and stops every configuration at the first look (the race's futility, with the truth)."""
    targets = sc.look_counts()
    per_run = pop.variances(rng, 200) * sc.max_runs  # a configuration's IQM variance times its runs per cell
    times = [1.0 if k == sc.looks - 1 else min(1.0, t / sc.max_runs) for k, t in enumerate(targets)]
    crit = sq.boundaries(times, 2.0 * design.alpha / (sc.configs - 1), design.spending)
    b = int(np.argmax(pop.theta))
    settle = np.full(sc.configs, float(targets[0]))
    certifiable = True
    for c in range(sc.configs):
        if c == b:
            continue
        gap = pop.theta[b] - pop.theta[c]
        half = crit * np.sqrt((per_run[c] + per_run[b]) / targets)
        at = np.flatnonzero(half < gap + design.delta)
        certifiable &= at.size > 0
        settle[c] = float(targets[at[0]]) if at.size else float(sc.max_runs)
    settle[b] = np.delete(settle, b).max()
    return settle, settle if certifiable else np.full(sc.configs, float(targets[0]))


def summarise_trace(traces: list[list[dict]], pop: Population, sc: Scenario, design: racing.RaceDesign) -> dict:
    """Per look and per configuration (by true rank), what the races of one scenario did (see the docstring)."""
    order = np.argsort(-pop.theta, kind="stable")  # configuration indices, best first
    looks = []
    for k in range(sc.looks):
        at = [t[k] for t in traces if len(t) > k]
        if not at:
            break
        states = np.array([r["state"] for r in at])
        contending = [
            (r["behind"][c], r["half"][c])
            for r in at
            for c in range(sc.configs)
            if r["state"][c] == RUNS and c != r["leader"]
        ]
        behind, half = (np.array([x[i] for x in contending]) / pop.delta for i in (0, 1)) if contending else ([], [])
        looks.append(
            {
                "look": k + 1,
                "going": len(at) / len(traces),
                "runs": float(np.mean([r["runs"] for r in at])),
                "get_runs": float((states == RUNS).sum(axis=1).mean()),
                "settled": float((states == SETTLED).sum(axis=1).mean()),
                "resting": float((states == RESTING).sum(axis=1).mean()),
                "out": float((states == OUT).sum(axis=1).mean()),
                "stopped": float((states == DONE).any(axis=1).mean()),
                "add_share": float(np.mean([r["add"] for r in at]) / (sc.configs * sc.tasks * sc.max_runs)),
                "contender_behind": float(np.median(behind)) if len(behind) else float("nan"),
                "contender_half": float(np.median(half)) if len(half) else float("nan"),
                "leader_is_best": float(np.mean([pop.theta[r["leader"]] >= pop.theta.max() - 1e-12 for r in at])),
            }
        )
    final_runs = np.array([t[-1]["runs"] for t in traces])  # runs per cell at the last look each race took
    final_state = np.array([t[-1]["state"] for t in traces])

    def ever(state: str) -> np.ndarray:
        return np.array([[any(r["state"][c] == state for r in t) for c in range(sc.configs)] for t in traces])

    ever_settled, ever_resting = ever(SETTLED), ever(RESTING)
    settle, oracle = oracle_runs(pop, sc, design, np.random.default_rng([sc.seed, 6]))
    configs = [
        {
            "rank": rank + 1,
            "behind": float((pop.theta.max() - pop.theta[c]) / pop.delta),
            "runs": float(final_runs[:, c].mean()),
            "oracle": float(oracle[c]),
            "settle": float(settle[c]),
            "out": float((final_state[:, c] == OUT).mean()),
            "ever_settled": float(ever_settled[:, c].mean()),
            "ever_resting": float(ever_resting[:, c].mean()),
        }
        for rank, c in enumerate(order)
    ]
    fixed = sc.configs * sc.max_runs
    shares = {"oracle_share": float(oracle.sum() / fixed), "settle_share": float(settle.sum() / fixed)}
    return {"looks": looks, "configs": configs, **shares}


# ----------------------------------------------------------------------------- tables
def _pm(value: float, se: float) -> str:
    return f"{value:.3f} ± {se:.3f}" if se > 0 else f"{value:.3f}"


def _f(value: float) -> str:
    return "–" if value != value else f"{value:.3f}"


def markdown(rows: list[dict]) -> str:
    """The docs table: one row per scenario, procedure and κ."""
    head = (
        "| scenario | set | κ | good | procedure | within δ ± SE | fixed design within δ | runs share ± SE | "
        "certified | R covers | margin covers | θ covers | best out |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        share = _pm(r["runs_share"], r["runs_share_se"])
        lines.append(
            f"| {r['scenario']} | {r['role']} | {r['kappa_actual']:.2g} | {r['good_configs']}/{r['C']} | "
            f"{r.get('label', r['variant'])} | {_pm(r['within'], r['within_se'])} | {r['fixed_within']:.3f} | {share} | "
            f"{r['certified']:.3f} | {_f(r['regret_covers'])} | {_f(r['margin_covers'])} | {_f(r['theta_covers'])} | "
            f"{r['best_out']:.3f} |"
        )
    return head + "\n".join(lines) + "\n"


def trace_text(row: dict) -> str:
    """One scenario's trace as two small tables (per look, per configuration)."""
    t = row["trace"]
    head = (
        f"{row['scenario']} [{row.get('label', row['variant'])}, first look {row['first']} runs per cell]: runs share "
        f"{row['runs_share']:.3f}, oracles {t['oracle_share']:.3f} (settle {t['settle_share']:.3f}), within δ "
        f"{row['within']:.3f}\n"
    )
    looks = pd.DataFrame(t["looks"]).rename(
        columns={"contender_behind": "behind/δ", "contender_half": "half/δ", "add_share": "adds"}
    )
    configs = pd.DataFrame(t["configs"]).rename(columns={"behind": "θ*-θ (δ)", "runs": "runs/cell"})
    fmt = {"float_format": lambda v: f"{v:.2f}", "index": False}
    return head + looks.to_string(**fmt) + "\n" + configs.to_string(**fmt) + "\n"


COLUMNS = [
    "scenario",
    "variant",
    "role",
    "kappa_actual",
    "delta",
    "first",
    "good_configs",
    "within",
    "within_se",
    "fixed_within",
    "fixed_mean_within",
    "runs_share",
    "runs_share_se",
    "certified",
    "regret_covers",
    "margin_covers",
    "theta_covers",
    "best_out",
    "mean_look",
    *("stop " + r for r in racing.REASONS),
    "cpu_s",
]


def compare(before: Path, after: Path) -> str:
    """A before/after table of two records of the same scenarios, one row per scenario: the fixed design's within δ,
    the race before and after (within δ ± SE, runs share ± SE, certified, futility stops) and the comparator."""
    b_rows = {(r["scenario"], r["variant"], r["first"]): r for r in json.loads(before.read_text())["rows"]}
    a_rows = {(r["scenario"], r["variant"], r["first"]): r for r in json.loads(after.read_text())["rows"]}
    lines = [
        "| scenario | set | fixed within δ | before: within δ | runs | certified | after: within δ | runs | certified | "
        "futility | simple: within δ | runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, r in a_rows.items():
        if r["variant"] != "race":
            continue
        old, simple = b_rows.get(key), a_rows.get((key[0], "simple", key[2]))

        def cells(row: dict | None, *extra: str) -> str:
            if row is None:
                return " | ".join(["–"] * (2 + len(extra)))
            base = [_pm(row["within"], row["within_se"]), _pm(row["runs_share"], row["runs_share_se"])]
            return " | ".join(base + [f"{row.get(x, float('nan')):.3f}" for x in extra])

        lines.append(
            f"| {r['scenario']} | {r['role']} | {r['fixed_within']:.3f} | {cells(old, 'certified')} | "
            f"{cells(r, 'certified', 'stop futility')} | {cells(simple)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="store_true", help="the issue-55 scenarios (δ a sixth of a run's spread)")
    ap.add_argument(
        "--trace",
        action="store_true",
        help="the per-look trace: the dev shape scenarios and the issue's, first looks 2-4",
    )
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="join two runs' records")
    ap.add_argument("--trials", type=int, default=400, help="trials per scenario at the first κ (shape: each)")
    ap.add_argument("--sensitivity-trials", type=int, default=200, help="trials per scenario at the other κ")
    ap.add_argument(
        "--kappas",
        type=float,
        nargs="+",
        default=[2.5, 3.0, 4.0],
        help="δ in standard errors of an IQM difference at max_runs; the first gets both procedures",
    )
    ap.add_argument("--firsts", type=int, nargs="+", default=[2, 3, 4], help="first-look sizes of the trace")
    ap.add_argument("--reps", type=int, default=300, help="bootstrap replicates per configuration and look")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--spending", default="pocock")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=str, nargs="*", help="scenario numbers (0-based) or roles (dev, held-out) to run")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--out", type=Path, default=None, help="where to write .txt and .json (default: results/)")
    args = ap.parse_args()
    if args.compare:
        print(compare(*args.compare))
        return
    name = "race_trace" if args.trace else ("race_shape" if args.shape else "race_study")
    out_path = args.out or ROOT / "results" / name
    plan: list[tuple[Scenario, int]] = []  # (scenario, trials)
    base = SHAPE if (args.shape or args.trace) else SCENARIOS
    chosen = [sc for i, sc in enumerate(base) if args.only is None or str(i) in args.only or sc.role in args.only]
    if args.trace:
        traced = [sc for sc in chosen if sc.role in ("dev", "issue") and not sc.sweeps]
        plan = [(replace(sc, first=f), args.trials) for sc in traced for f in args.firsts]
    elif args.shape:
        plan = [(sc, sc.sweeps or args.trials) for sc in chosen]
    else:
        plan = [
            (replace(sc, kappa=kappa), args.trials if n == 0 else args.sensitivity_trials)
            for n, kappa in enumerate(args.kappas)
            for sc in chosen
        ]
    rows, started = [], time.time()
    for sc, trials in plan:
        variants = args.variants if (args.shape or args.trace or sc.kappa == args.kappas[0]) else ["race"]
        for variant in variants:
            t0 = time.process_time()
            row = run(sc, trials, args.reps, args.alpha, args.seed, args.spending, variant)
            row["cpu_s"] = round(time.process_time() - t0, 1)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "trace"}), flush=True)
    head = (
        f"{name}: alpha={args.alpha}, spending={args.spending}, {args.reps} bootstrap replicates per configuration "
        f"and look, {args.trials} trials per scenario, seed {args.seed} ({time.time() - started:.0f} s wall, "
        f"{sum(r['cpu_s'] for r in rows):.0f} s CPU)\n"
    )
    text = head + pd.DataFrame(rows)[COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.3f}") + "\n"
    text += "\n" + markdown(rows)
    if args.trace or args.shape:
        text += "\n" + "\n".join(trace_text(r) for r in rows)
    print(text)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.with_suffix(".txt").write_text(text)
    record = {"args": {k: str(v) for k, v in vars(args).items()}, "scenarios": [asdict(s) for s, _ in plan]}
    out_path.with_suffix(".json").write_text(json.dumps({**record, "rows": rows}, indent=1, default=float))


if __name__ == "__main__":
    main()
