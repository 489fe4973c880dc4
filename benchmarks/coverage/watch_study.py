"""Error and savings of the group-sequential watch (issue 35). One command prints the table and writes it:

    nice python benchmarks/coverage/watch_study.py --out benchmarks/results/watch_study.txt

Each scenario draws ``--trials`` experiments of N (``max_runs``) runs per (algorithm, task) cell from a known
population and replays what ``rl_reliable_logger.watch`` does look by look (``analysis/watch.py``), with the
same engine calls: the IQM replicates of each algorithm (``bootstrap.draw`` + the registry's metric) and the
one test of the open pairs at a look (``sequential.look_at_pairs``: Holm's step-down over the pairs with each
pair's critical value from the spending function at its level, information fraction runs / max runs, 1 at the
K-th look; the repeated interval over the pair's cells; futility by conditional power); the runs are added look
by look (``⌈k N / K⌉`` per cell) only to the algorithms of pairs still open (not decided, not futile), as the
launch list asks.

Populations: ``normal`` and ``lognormal`` tasks (``tests/support/simulation.py``: ``make_tasks``, the coverage study's models),
and real Atari 100k runs (``../shared/data/rliable_atari_100k``: 100 runs per game and algorithm, human
normalised; a cell draws its runs from the algorithm's 100 with replacement). Under the null every algorithm
draws from the same population (normal/lognormal: the same tasks; Atari: SPR's runs). With a difference the
first algorithm's scores are shifted by ``delta`` (the IQM difference is ``delta`` exactly), or, for Atari,
the first algorithm draws SPR's runs and the others DER's or DrQ(eps)'s (a real difference).

Reported per scenario: the family-wise error over all looks and pairs (any pair decided where the truth is no
difference, or decided the wrong way) with its standard error, and the expected runs (all cells) as a share of N
per cell; with a difference, the mean power over the pairs with a real difference, the fixed single-look design's
power at the same N, and the smallest fixed N (the same test and step-down, one look, no futility) whose power
reaches the watch's: the runs ratio is the watch's expected runs over that fixed design's.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import _paths
import numpy as np
import pandas as pd
import simulation as sim

from rl_reliable_logger.analysis.watch_options import FUTILITY, FUTILITY_FROM
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import registry
from rl_reliable_logger.stats import sequential as sq

ROOT = _paths.BENCHMARKS
LONG_CSV = ROOT.parent.parent / "shared" / "data" / "rliable_atari_100k" / "final_scores_long.csv"
IQM = registry.get_metric("iqm")


@dataclass(frozen=True)
class Scenario:
    source: str  # normal, lognormal, atari
    algorithms: int
    looks: int
    tasks: int
    max_runs: int
    delta: float = 0.0  # shift of the first algorithm (normal/lognormal); for atari any non-zero: SPR vs ``rival``
    spending: str = "obf"
    staggered: bool = False  # algorithm a shifted by delta * (A - 1 - a): every pair differs
    rival: str = "DER"  # atari with a difference: the other algorithms' runs (the first draws SPR's)
    multiplicity: str = "holm"
    futility: float = FUTILITY

    def truth(self, pair: tuple[int, int]) -> str:
        """The right decision of a pair (x, y) = algorithms (i < j): ``x>y`` where x is shifted more."""
        return "x>y" if self.delta > 0 and (self.staggered or pair[0] == 0) else "none"

    @property
    def name(self) -> str:
        kind = (
            "null"
            if self.delta == 0
            else (f"diff {self.delta:g}" if self.source != "atari" else f"SPR vs {self.rival}")
        )
        kind += " staggered" if self.staggered else ""
        rule = f"{self.spending} {self.multiplicity}" + (f" fut{self.futility:g}" if self.futility else "")
        return f"{self.source} A={self.algorithms} K={self.looks} M={self.tasks} N={self.max_runs} {rule} {kind}"


SCENARIOS = [
    Scenario("normal", 2, 3, 10, 9),
    Scenario("lognormal", 2, 4, 26, 12),
    Scenario("normal", 4, 4, 26, 12),
    Scenario("lognormal", 4, 3, 10, 9),
    Scenario("atari", 2, 3, 26, 9),
    Scenario("atari", 4, 4, 10, 12),
    Scenario("normal", 2, 3, 10, 9, delta=0.1),
    Scenario("lognormal", 2, 4, 26, 12, delta=0.12),
    Scenario("atari", 2, 4, 26, 12, delta=1.0),
    Scenario("normal", 4, 4, 26, 12, delta=0.08),
    Scenario("normal", 2, 3, 10, 9, delta=0.1, spending="pocock"),
    Scenario("lognormal", 2, 4, 26, 12, delta=0.12, spending="pocock"),
    Scenario("normal", 4, 4, 26, 12, delta=0.09, staggered=True),
    Scenario("atari", 2, 4, 26, 20, delta=1.0, rival="DrQ(eps)"),
    Scenario("lognormal", 4, 3, 10, 9, delta=0.12),
    Scenario("normal", 4, 4, 26, 12, delta=0.08, spending="pocock"),
    Scenario("normal", 4, 4, 26, 12, delta=0.08, multiplicity="bonferroni", futility=0.0),  # the procedure before
]


def _atari_pools() -> dict[str, np.ndarray]:
    long = pd.read_csv(LONG_CSV)
    games = sorted(long["game"].unique())
    pools = {}
    for alg in ("SPR", "DER", "DrQ(eps)"):
        part = long[long["algorithm"] == alg]
        pools[alg] = np.stack(
            [part[part["game"] == g].sort_values("run_index")["human_normalized"].to_numpy() for g in games]
        )
    return pools


def sampler(sc: Scenario, seed: int):
    """A function ``(rng) -> (A, M, N)`` scores of one experiment."""
    if sc.source == "atari":
        pools = _atari_pools()
        order = np.random.default_rng(seed).permutation(pools["SPR"].shape[0])[: sc.tasks]
        pop = [pools["SPR" if (sc.delta == 0 or a == 0) else sc.rival][order] for a in range(sc.algorithms)]

        def draw_atari(rng: np.random.Generator) -> np.ndarray:
            return np.stack(
                [np.take_along_axis(p, rng.integers(0, p.shape[1], (sc.tasks, sc.max_runs)), 1) for p in pop]
            )

        return draw_atari
    tasks = sim.make_tasks(sc.source, sc.tasks, seed)

    def draw_sim(rng: np.random.Generator) -> np.ndarray:
        out = np.stack([np.stack([t.sample(rng, sc.max_runs) for t in tasks]) for _ in range(sc.algorithms)])
        shifts = (
            sc.delta * (sc.algorithms - 1 - np.arange(sc.algorithms))
            if sc.staggered
            else sc.delta * (np.arange(sc.algorithms) == 0)
        )
        out += shifts[:, None, None]
        return out

    return draw_sim


def _dist(scores: np.ndarray, n: int, reps: int, rng: np.random.Generator) -> tuple[bs.Cells, np.ndarray, float]:
    cells = bs.Cells.from_list([np.sort(row[:n]) for row in scores])
    return cells, IQM(bs.draw(cells, reps, rng)), float(IQM(bs.original(cells))[0])


def _look(
    sc: Scenario, stats: dict, pairs: list, times: dict, future: list, decided: int, alpha: float, futility: float
):
    """The watch's test of ``pairs`` at one look (``sequential.look_at_pairs``, as ``analysis/watch.py`` calls it):
    each pair's decision (``x>y``, ``y>x``, ``futile`` or ``undecided``)."""
    tested = sq.look_at_pairs(
        [stats[x][1] - stats[y][1] for x, y in pairs],
        [stats[x][2] - stats[y][2] for x, y in pairs],
        [[stats[x][0], stats[y][0]] for x, y in pairs],
        [times[p] for p in pairs],
        future,
        sq.Procedure(
            alpha=alpha,
            pairs=sc.algorithms * (sc.algorithms - 1) // 2,
            decided=decided,
            spending=sc.spending,
            multiplicity=sc.multiplicity,
            futility=futility,
            futility_from=FUTILITY_FROM,
        ),
    )
    out = [str(d) for d in sq.decide(tested.low, tested.high)]
    return ["futile" if f else d for d, f in zip(out, tested.futile)]


def trial(sc: Scenario, data: np.ndarray, reps: int, alpha: float, rng: np.random.Generator, fixed_grid: list[int]):
    """(false decision, per-pair correct decisions of true differences, runs used) of the watch, and the fixed
    designs' correct-decision counts per N in ``fixed_grid``."""
    pairs = [(i, j) for i in range(sc.algorithms) for j in range(i + 1, sc.algorithms)]
    truth = {p: sc.truth(p) for p in pairs}
    targets = sq.look_targets(sc.max_runs, sc.looks)
    counts = np.zeros(sc.algorithms, dtype=int)
    open_pairs, times, decisions = list(pairs), {p: [] for p in pairs}, {p: "undecided" for p in pairs}
    for k in range(sc.looks):
        needed = sorted({a for p in open_pairs for a in p})
        counts[needed] = targets[k]
        stats = {a: _dist(data[a], int(targets[k]), reps, rng) for a in needed}
        last = k == sc.looks - 1
        for p in open_pairs:
            times[p].append(1.0 if last else targets[k] / sc.max_runs)
        future = [] if last else [float(n) / sc.max_runs for n in targets[k + 1 : -1]] + [1.0]
        decided = sum(d in ("x>y", "y>x") for d in decisions.values())
        now = _look(sc, stats, open_pairs, times, future, decided, alpha, sc.futility)
        for p, d in zip(list(open_pairs), now):
            decisions[p] = d
            if d != "undecided" or last:
                open_pairs.remove(p)
        if not open_pairs:
            break
    false = any(d in ("x>y", "y>x") and d != truth[p] for p, d in decisions.items())
    real = [decisions[p] == truth[p] for p in pairs if truth[p] != "none"]
    fixed = []
    for n in fixed_grid:  # the fixed design: one look at n runs, the same multiplicity procedure, no futility
        stats = {a: _dist(data[a], n, reps, rng) for a in range(sc.algorithms)}
        one = _look(sc, stats, pairs, {p: [1.0] for p in pairs}, [], 0, alpha, 0.0)
        fixed.append([d == truth[p] for p, d in zip(pairs, one) if truth[p] != "none"])
    return false, real, int(counts.sum()) * sc.tasks, fixed


def run(sc: Scenario, trials: int, reps: int, alpha: float, seed: int) -> dict:
    draw = sampler(sc, seed)
    grid = list(range(2, sc.max_runs + 1)) if sc.delta else []
    streams = np.random.SeedSequence([seed, sc.algorithms, sc.looks, sc.tasks, sc.max_runs]).spawn(trials)
    false, power, runs, fixed = [], [], [], []
    for s in streams:
        rng = np.random.default_rng(s)
        f, p, r, fx = trial(sc, draw(rng), reps, alpha, rng, grid)
        false.append(f), power.append(np.mean(p) if p else np.nan), runs.append(r), fixed.append(fx)
    err = float(np.mean(false))
    cells = sc.algorithms * sc.tasks
    out = {
        "scenario": sc.name,
        "trials": trials,
        "error": err,
        "error_se": float(np.sqrt(err * (1 - err) / trials)),
        "runs_share": float(np.mean(runs)) / (cells * sc.max_runs),
    }
    if sc.delta:
        pw = float(np.mean(power))
        fixed_power = {n: float(np.mean([np.mean(fx[i]) for fx in fixed])) for i, n in enumerate(grid)}
        equal = next((n for n in grid if fixed_power[n] >= pw), sc.max_runs)
        out.update(
            power=pw,
            power_se=float(np.std(power, ddof=1) / np.sqrt(trials)),
            fixed_power_N=fixed_power[sc.max_runs],
            fixed_N_equal_power=equal,
            runs_ratio=float(np.mean(runs)) / (cells * equal),
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--power-trials", type=int, default=200)
    ap.add_argument("--reps", type=int, default=400, help="bootstrap replicates per algorithm and look")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=int, nargs="*", help="scenario numbers (0-based) to run")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "watch_study.txt")
    args = ap.parse_args()
    rows, started = [], time.time()
    for i, sc in enumerate(SCENARIOS):
        if args.only is not None and i not in args.only:
            continue
        n = args.power_trials if sc.delta else args.trials
        rows.append(run(sc, n, args.reps, args.alpha, args.seed))
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    head = (
        f"watch study: alpha={args.alpha}, Holm step-down over pairs (unless a row says bonferroni), futility "
        f"(non-binding) when the conditional power is below the row's fut from t >= {FUTILITY_FROM}, {args.reps} "
        f"bootstrap replicates per algorithm and look; error target <= alpha + 2 SE, runs_ratio target <= 0.75 "
        f"({time.time() - started:.0f} s)\n"
    )
    text = head + table.to_string(index=False, float_format=lambda v: f"{v:.3f}") + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
