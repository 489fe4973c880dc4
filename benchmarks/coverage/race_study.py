"""How often a race selects a configuration within δ of the best, and how many runs it spends (issue 47).

    nice -n 10 python benchmarks/coverage/race_study.py       # writes benchmarks/results/race_study.{txt,json}

Each scenario is C configurations of one algorithm on M tasks with known population metrics θ_c (IQM); a trial
draws N (``max_runs``) runs per (configuration, task) cell and replays the race look by look with the library's
own calls: each configuration's IQM replicates (``bootstrap.draw`` + the registry's metric, one stream per
configuration), one look (``racing.race_look``: eliminations, selection, repeated intervals from
``sequential``) and the runs the next look gets (``racing.allocation``); a configuration's first n runs of a
cell are the ones it has after n were launched. The fixed design on the same draws runs all N runs of every cell
and selects the best estimate.

Populations: ``normal``, ``student-t3`` (heavy symmetric tails), ``lognormal-1.5`` (skewed) and ``pareto-mix``
(bimodal, heavy right tail) tasks of ``tests/support/simulation.py``'s ``make_tasks``, each configuration the same tasks shifted
by its ``shift`` (θ_c = IQM of the tasks + shift, exactly); and real runs resampled with replacement, human
normalised: Atari 100k (``../shared/data/rliable_atari_100k``, 100 runs per game), Dopamine's ALE baselines (5
runs per game) and DreamerV2 (11 runs per game), either one configuration per real algorithm (the truth is the
pool's IQM, exactly) or one algorithm's runs shifted per configuration.

Reported per scenario (with standard errors over trials): ``within``, P(θ* - θ_selected <= δ), for the race and
the fixed design; ``runs``, the race's runs over the fixed design's (C x M x N); ``R covers``, P(θ* - θ_sel <=
R), the regret bound the race reports; ``margin covers``, the margin interval over the runner-up; ``θ covers``,
the selected configuration's own interval; ``best out``, P(every best configuration eliminated); and how the
races stopped. Scenarios marked ``dev`` chose the defaults; ``held-out`` ones were written before the defaults
were fixed and never used to tune them.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import _paths
import numpy as np
import pandas as pd
import simulation as sim

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import racing, registry

ROOT = _paths.BENCHMARKS
DATA = _paths.ROOT.parent / "shared" / "data"
IQM = registry.get_metric("iqm")


def lr_curve(peak: float, height: float, configs: int = 8, floor: float = -6.0) -> tuple[float, ...]:
    """Shifts (in units of δ) of ``configs`` learning rates on a log grid: a parabola in log-lr, 0 at ``peak``
    (off the grid: no two configurations tie), ``height`` δ lower one grid step away, never below ``floor`` δ."""
    x = np.arange(configs, dtype=float)
    return tuple(float(v) for v in np.maximum(-height * (x - peak) ** 2, floor))


@dataclass(frozen=True)
class Scenario:
    """C configurations: a source's tasks (or games) shifted by ``shifts`` (in units of δ), or one real algorithm's
    runs per configuration (``pools``; with ``shifts`` too: the one algorithm's runs shifted). δ is ``kappa``
    standard errors of an IQM difference at ``max_runs`` runs per cell (the noise sets the scale)."""

    name: str
    role: str  # dev | held-out
    source: str  # a make_tasks model, or atari100k | dopamine | dreamerv2
    shifts: tuple[float, ...] = ()
    pools: tuple[str, ...] = ()
    kappa: float = 4.0
    tasks: int = 10
    looks: int = 5
    max_runs: int = 10
    seed: int = 0  # which tasks (games) the scenario uses

    @property
    def configs(self) -> int:
        return len(self.shifts) or len(self.pools)


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
        self.shift = np.zeros(sc.configs)
        self.delta = sc.kappa * self.se_difference(np.random.default_rng([sc.seed, 1]))
        self.shift = self.delta * np.asarray(sc.shifts or (0.0,) * sc.configs)
        self.theta = base + self.shift  # the IQM moves with a shift of every run

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        n = self.sc.max_runs
        if self.tasks is None:
            out = np.stack([np.stack([p[rng.integers(0, p.size, n)] for p in pool]) for pool in self.pools])
        else:
            out = np.stack([np.stack([t.sample(rng, n) for t in self.tasks]) for _ in range(self.sc.configs)])
        return out + self.shift[:, None, None]

    def se_difference(self, rng: np.random.Generator, draws: int = 400) -> float:
        """The standard error of an IQM difference of two configurations at ``max_runs`` runs per cell (root mean
        square over the configurations), by simulation."""
        est = np.array(
            [[float(IQM(bs.original(bs.Cells.from_array(d.T)))[0]) for d in self.draw(rng)] for _ in range(draws)]
        )
        return float(np.sqrt(2.0 * np.mean(est.var(axis=0, ddof=1))))


#: The procedures compared: ``race`` (this module's race: one-sided bounds at α / (C - 1), settled configurations
#: get no runs) and ``plain`` (two-sided bounds at α / (C - 1), every configuration still racing gets runs: the
#: plain Pocock race the issue measured, on the same scenarios).
VARIANTS = ("race", "plain")


def run_race(data: np.ndarray, design: racing.RaceDesign, reps: int, rng: np.random.Generator, variant: str):
    """One race on ``data`` (C, M, N): the last look and the runs it used."""
    c_n, m_n, _ = data.shape
    counts = np.full((c_n, m_n), int(design.targets()[0]))
    seen: dict[int, tuple] = {}
    look = None
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
        if look.stop:
            return look, int(counts.sum())
        if variant == "plain":
            look = replace(look, wants=look.alive)
        counts = counts + racing.allocation(look, design, counts)


def trial(pop: Population, design: racing.RaceDesign, reps: int, rng: np.random.Generator, variant: str) -> dict:
    data = pop.draw(rng)
    theta, best, delta = pop.theta, pop.theta.max(), pop.delta
    look, runs = run_race(data, design, reps, rng, variant)
    sel = look.selected
    margin = theta[sel] - np.delete(theta, sel).max()
    fixed = int(np.argmax([float(IQM(bs.original(bs.Cells.from_array(data[c].T)))[0]) for c in range(len(theta))]))
    best_set = np.flatnonzero(theta >= best - 1e-12)
    return {
        "within": best - theta[sel] <= delta,
        "fixed_within": best - theta[fixed] <= delta,
        "regret_covers": best - theta[sel] <= look.regret + 1e-12,
        "margin_covers": look.margin_low - 1e-12 <= margin <= look.margin_high + 1e-12,
        "theta_covers": look.config_low[sel] <= theta[sel] <= look.config_high[sel],
        "best_out": all(not look.alive[b] for b in best_set),
        "runs": runs,
        "look": look.look,
        "reason": look.reason,
    }


def run(sc: Scenario, trials: int, reps: int, alpha: float, seed: int, spending: str, variant: str) -> dict:
    pop = Population(sc)
    level = alpha if variant == "race" else alpha / 2.0  # plain: two-sided at alpha / (C - 1)
    design = racing.RaceDesign(sc.configs, sc.tasks, sc.looks, sc.max_runs, pop.delta, level, spending)
    rng = np.random.default_rng([seed, sc.seed])
    rows = pd.DataFrame([trial(pop, design, reps, rng, variant) for _ in range(trials)])
    fixed_runs = sc.configs * sc.tasks * sc.max_runs

    def rate(col: str) -> tuple[float, float]:
        p = float(rows[col].mean())
        return p, float(np.sqrt(p * (1 - p) / trials))

    out: dict = {"scenario": sc.name, "role": sc.role, "variant": variant, "spending": spending, "C": sc.configs}
    out.update(kappa=sc.kappa, delta=pop.delta, good_configs=int((pop.theta >= pop.theta.max() - pop.delta).sum()))
    for col in ("within", "fixed_within", "regret_covers", "margin_covers", "theta_covers", "best_out"):
        out[col], out[col + "_se"] = rate(col)
    share = rows["runs"] / fixed_runs
    out["runs_share"], out["runs_share_se"] = float(share.mean()), float(share.std(ddof=1) / np.sqrt(trials))
    out["mean_look"] = float(rows["look"].mean())
    for reason in racing.REASONS:
        out["stop " + reason] = float((rows["reason"] == reason).mean())
    out["trials"] = trials
    return out


def _pm(value: float, se: float) -> str:
    return f"{value:.3f} ± {se:.3f}" if se > 0 else f"{value:.3f}"


def markdown(rows: list[dict]) -> str:
    """The docs table: one row per scenario, procedure and κ."""
    head = (
        "| scenario | set | κ | good | procedure | within δ ± SE | fixed design within δ | runs share ± SE | "
        "certified | R covers | margin covers | θ covers | best out |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        share = _pm(r["runs_share"], r["runs_share_se"])
        share = f"**{share}**" if r["variant"] == "race" and r["runs_share"] <= 0.5 else share
        lines.append(
            f"| {r['scenario']} | {r['role']} | {r['kappa']:g} | {r['good_configs']}/{r['C']} | {r['variant']} | "
            f"{_pm(r['within'], r['within_se'])} | {r['fixed_within']:.3f} | {share} | {r['certified']:.3f} | "
            f"{r['regret_covers']:.3f} | {r['margin_covers']:.3f} | {r['theta_covers']:.3f} | {r['best_out']:.3f} |"
        )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=400, help="trials per scenario at the first κ")
    ap.add_argument("--sensitivity-trials", type=int, default=200, help="trials per scenario at the other κ")
    ap.add_argument(
        "--kappas",
        type=float,
        nargs="+",
        default=[2.5, 3.0, 4.0],
        help="δ in standard errors of an IQM difference at max_runs; the first gets both procedures",
    )
    ap.add_argument("--reps", type=int, default=300, help="bootstrap replicates per configuration and look")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--spending", default="pocock")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=int, nargs="*", help="scenario numbers (0-based) to run")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "race_study")
    args = ap.parse_args()
    rows, started = [], time.time()
    for n, kappa in enumerate(args.kappas):
        for i, sc in enumerate(SCENARIOS):
            if args.only is not None and i not in args.only:
                continue
            for variant in VARIANTS if n == 0 else ("race",):
                t0 = time.process_time()
                trials = args.trials if n == 0 else args.sensitivity_trials
                row = run(replace(sc, kappa=kappa), trials, args.reps, args.alpha, args.seed, args.spending, variant)
                row["certified"] = row["stop within delta"] + row["stop one left"]
                row["cpu_s"] = round(time.process_time() - t0, 1)
                rows.append(row)
                print(json.dumps(row), flush=True)
    head = (
        f"race study: alpha={args.alpha}, spending={args.spending}, {args.reps} bootstrap replicates per configuration "
        f"and look, {args.trials} trials per scenario at kappa={args.kappas[0]:g} and {args.sensitivity_trials} at "
        f"{args.kappas[1:]}, seed {args.seed} ({time.time() - started:.0f} s wall, "
        f"{sum(r['cpu_s'] for r in rows):.0f} s CPU)\n"
    )
    cols = [
        "scenario",
        "variant",
        "role",
        "kappa",
        "delta",
        "good_configs",
        "within",
        "within_se",
        "fixed_within",
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
    text = head + pd.DataFrame(rows)[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}") + "\n"
    text += "\n" + markdown(rows)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".txt").write_text(text)
    record = {"args": {k: str(v) for k, v in vars(args).items()}, "scenarios": [asdict(s) for s in SCENARIOS]}
    args.out.with_suffix(".json").write_text(json.dumps({**record, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
