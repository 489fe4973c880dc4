"""Coverage on task sets drawn afresh and on real data (issue 33, item 4): a study that cannot be fitted to itself.

One command reproduces the table of ``docs/validation.md``:

    nice -n 10 python benchmarks/coverage/coverage_fresh.py --out benchmarks/results/coverage_issue33.txt

``coverage_study.py`` (issue 23) drew the task parameters once per configuration, so its table describes 30 task
sets, the same ones the recommendation and the skew threshold were chosen on. Here:

* **Simulated rows**: for each task model (``tests/support/simulation.py``: ``STUDY_MODELS``) and task count, ``--blocks`` blocks;
  each block draws its own task parameters for X and Y (seeded by model, task count and block, never the issue-23
  sets), computes its own truth (as ``coverage_study``: exact IQM, mean and median; P(X > Y) by Monte Carlo,
  100,000 draws per task), and runs ``--per-block`` trials at every run count (fresh data per run count).
  Coverage is pooled over the blocks; the binomial SE is over all trials, ``block SE`` is the SD of the block
  coverages over sqrt(blocks) (it includes the spread between task sets), and for the median the block coverages'
  range, their SD net of binomial noise and the coverage split by how near the middle task means tie relative to
  their standard errors (``tie``: the smallest gap between task means next to the middle, over the standard error
  of that difference at N runs).
* **Real rows** (``../shared/data``): Atari 100k, SPR (X) and DrQ(eps) (Y), human-normalised, 26 games x 100 runs;
  each trial draws N distinct runs per game from the 100, and the truth is the statistic of all 100 runs (the
  finite population; sampling without replacement makes the intervals at most 5% wider than needed at 10 runs).
  DreamerV2 (ALE, 200M frames), the 45 games where all 11 runs reach 190M frames, human-normalised (random and
  human-gamer scores of its ``baselines.json``): X its score at the end of each run, Y the same runs' score at
  50M frames; a population of 11 runs per game is too small to draw distinct runs from, so each trial draws N runs
  per game *with replacement* and the truth is the statistic of the 11-run empirical distribution (exact for it).

Intervals: ``coverage_study.trial`` (the engine calls ``evaluate()`` makes) under ``bootstrap-t`` and
``percentile``, named explicitly (no default is read), and the median's order-statistic interval
(``stats.aggregate.median_order_statistic_interval``: medians of the per-task Student-t bounds).
Vectorised over replicates (``--reps`` 1,000 per interval).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
import pandas as pd
import simulation as sim
from atari_data import SHARED_DATA
from coverage_study import STATS, _truths, trial

from rl_reliable_logger.stats import aggregate as agg
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry

METHODS = ("bootstrap-t", "percentile")
#: Columns of the table: (method, statistic) and the median's order-statistic interval.
COLUMNS = [(m, s) for m in METHODS for s in STATS] + [("order-statistic", "median")]
BAND = (0.935, 0.965)
REAL_SETS = ("atari100k", "dreamerv2")


# ----------------------------------------------------------------------------- one trial
def hits(cx: bs.Cells, cy: bs.Cells, truth: np.ndarray, reps: int, rx, ry, ci: float) -> np.ndarray:
    """(len(COLUMNS),) bool: which intervals of one pair of data sets cover the truth."""
    out = trial(cx, cy, reps, rx, ry, ci)
    cover = [(out[m][0] <= truth) & (truth <= out[m][1]) for m in METHODS]
    low, high = agg.median_order_statistic_interval(cx, ci)
    median = truth[STATS.index("median")]
    return np.concatenate([*cover, [low <= median <= high]])


# ----------------------------------------------------------------------------- simulated blocks
def block_tasks(model: str, m: int, block: int, seed: int) -> tuple[list[sim.Task], list[sim.Task]]:
    """X's and Y's task sets of one block: seeds disjoint from coverage_study's (seed + m, seed + m + 500)."""
    base = 100_000 + 1_000 * block + 10 * m + sim.STUDY_MODELS.index(model)
    return sim.make_tasks(model, m, seed + base), sim.make_tasks(model, m, seed + base + 50_000_000)


def tie_index(tasks: list[sim.Task], n: int, rng: np.random.Generator) -> float:
    """How near the task means next to the middle tie: the smallest gap between adjacent sorted task means whose
    swap moves the median, over the standard error of their difference at ``n`` runs (task SDs by Monte Carlo)."""
    mu = np.array([t.mean for t in tasks])
    sd = np.array([np.std(t.sample(rng, 20_000)) for t in tasks])
    order = np.argsort(mu)
    mu, se = mu[order], sd[order] / np.sqrt(n)
    k = len(mu)
    # pairs (i, i+1) whose swap changes the median: next to the middle one (odd), around the middle pair (even)
    pairs = [(k // 2 - 1, k // 2), (k // 2, k // 2 + 1)] if k % 2 else [(k // 2 - 2, k // 2 - 1), (k // 2, k // 2 + 1)]
    return float(min(abs(mu[j] - mu[i]) / np.hypot(se[i], se[j]) for i, j in pairs if 0 <= i and j < k))


def simulated_row(model: str, m: int, runs: list[int], args: argparse.Namespace) -> list[dict[str, Any]]:
    """One result per run count: per block, the hit counts of every column, and the block's tie index."""
    counts = {n: np.zeros((args.blocks, len(COLUMNS))) for n in runs}
    ties = {n: np.zeros(args.blocks) for n in runs}
    for b in range(args.blocks):
        x_tasks, y_tasks = block_tasks(model, m, b, args.seed)
        truth = _truths(x_tasks, y_tasks, args.seed + b) if args.exact_truth else _fast_truths(x_tasks, y_tasks, b)
        rng = np.random.default_rng([args.seed, m, b, sim.STUDY_MODELS.index(model)])
        for n in runs:
            data_rng, boot_rng, tie_rng = rng.spawn(3)
            ties[n][b] = tie_index(x_tasks, n, tie_rng)
            for _ in range(args.per_block):
                cx = bs.Cells.from_list([t.sample(data_rng, n) for t in x_tasks])
                cy = bs.Cells.from_list([t.sample(data_rng, n) for t in y_tasks])
                rx, ry = boot_rng.spawn(2)
                counts[n][b] += hits(cx, cy, truth, args.reps, rx, ry, args.ci)
    return [
        {"set": model, "tasks": m, "runs": n, "per_block": args.per_block, "blocks": counts[n].tolist(),
         "tie": ties[n].tolist()}
        for n in runs
    ]  # fmt: skip


def _fast_truths(x: list[sim.Task], y: list[sim.Task], block: int) -> np.ndarray:
    """``coverage_study._truths`` with P(X > Y) from 100,000 draws per task (MC error < 0.0016, a quarter of the SE)."""
    iqm_x, iqm_y = sim.true_trimmed_mean(x), sim.true_trimmed_mean(y)
    mean_x, mean_y = sim.true_mean(x), sim.true_mean(y)
    poi = sim.true_improvement(x, y, draws=100_000, seed=block)
    return np.array([iqm_x, mean_x, sim.true_median(x), iqm_x - iqm_y, mean_x - mean_y, poi])


# ----------------------------------------------------------------------------- real data
def atari100k() -> tuple[np.ndarray, np.ndarray, str]:
    """(26, 100) human-normalised scores of SPR and DrQ(eps) per game, and how runs are drawn."""
    hns = json.loads((SHARED_DATA / "rliable_atari_100k" / "final_scores_hns.json").read_text())
    games = sorted(hns["SPR"])
    return np.array([hns["SPR"][g] for g in games]), np.array([hns["DrQ(eps)"][g] for g in games]), "distinct"


def dreamerv2(at_frames: float = 5e7, complete: float = 1.9e8) -> tuple[np.ndarray, np.ndarray, str]:
    """(45, 11) human-normalised scores of DreamerV2 at the end of each run (X) and at ``at_frames`` (Y), on the
    games where every run reaches ``complete`` frames."""
    folder = SHARED_DATA / "dreamerv2_atari"
    runs = pd.DataFrame(json.loads((folder / "atari-dreamerv2.json").read_text()))
    refs = json.loads((folder / "baselines.json").read_text())
    runs["end"] = runs["xs"].map(max)
    games = sorted(g for g, ends in runs.groupby("task")["end"] if ends.min() >= complete)
    x, y = [], []
    for g in games:
        rows = runs[runs["task"] == g].sort_values("seed")
        lo, hi = refs[g]["random"], refs[g]["human_gamer"]
        at = [np.asarray(r.ys)[np.asarray(r.xs) <= at_frames][-1] for r in rows.itertuples()]
        x.append((np.array([r.ys[-1] for r in rows.itertuples()]) - lo) / (hi - lo))
        y.append((np.array(at) - lo) / (hi - lo))
    return np.array(x), np.array(y), "with replacement"


def population_truth(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The six statistics of the whole population (every run of every game), by the library's own metrics."""
    cx, cy = bs.Cells.from_array(x.T), bs.Cells.from_array(y.T)
    ox, oy = bs.original(cx), bs.original(cy)
    value = lambda name, r: float(registry.get_metric(name)(r)[0])
    iqm_x, iqm_y, mean_x, mean_y = value("iqm", ox), value("iqm", oy), value("mean", ox), value("mean", oy)
    poi = mt.probability_of_improvement(list(x), list(y))
    return np.array([iqm_x, mean_x, value("median", ox), iqm_x - iqm_y, mean_x - mean_y, poi])


def draw_runs(pop: np.ndarray, n: int, how: str, rng: np.random.Generator) -> bs.Cells:
    """``n`` runs of every task (rows of ``pop``): distinct runs, or drawn with replacement."""
    if how == "distinct":
        idx = np.argsort(rng.random(pop.shape), axis=1)[:, :n]
    else:
        idx = rng.integers(0, pop.shape[1], (pop.shape[0], n))
    return bs.Cells.from_array(np.take_along_axis(pop, idx, axis=1).T)


def real_row(name: str, loader: Callable[[], tuple[np.ndarray, np.ndarray, str]], runs: list[int], args) -> list[dict]:
    x, y, how = loader()
    truth = population_truth(x, y)
    out = []
    for n in runs:
        data_rng, boot_rng = np.random.default_rng([args.seed, n, REAL_SETS.index(name)]).spawn(2)
        count = np.zeros(len(COLUMNS))
        for _ in range(args.real_trials):
            rx, ry = boot_rng.spawn(2)
            count += hits(draw_runs(x, n, how, data_rng), draw_runs(y, n, how, data_rng), truth, args.reps, rx, ry,
                          args.ci)  # fmt: skip
        out.append({"set": name, "tasks": int(x.shape[0]), "runs": n, "per_block": args.real_trials,
                    "blocks": [count.tolist()], "tie": [], "truth": truth.tolist(), "draw": how})  # fmt: skip
    return out


# ----------------------------------------------------------------------------- tables
def coverage(r: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pooled coverage of every column, its binomial SE and the between-block SE (NaN with one block)."""
    blocks = np.asarray(r["blocks"]) / r["per_block"]
    pooled = blocks.mean(axis=0)
    binom = np.sqrt(pooled * (1 - pooled) / (r["per_block"] * len(blocks)))
    block_se = blocks.std(axis=0, ddof=1) / np.sqrt(len(blocks)) if len(blocks) > 1 else np.full(len(pooled), np.nan)
    return pooled, binom, block_se


def _cell(c: float, se: float, bold: bool) -> str:
    text = f"{c:.3f} ± {se:.3f}"
    return f"**{text}**" if bold and not BAND[0] <= c <= BAND[1] else text


HEADLINE = [("bootstrap-t", s) for s in ("iqm", "iqm_diff", "P(X>Y)", "mean", "median")] + [
    ("order-statistic", "median")
] + [("percentile", s) for s in ("iqm", "iqm_diff", "P(X>Y)")]  # fmt: skip


def markdown(results: list[dict]) -> list[str]:
    """Coverage ± binomial SE; bold outside 0.935-0.965 (the order-statistic column, meant to over-cover, unbolded)."""
    head = ["data", "M", "N", *(f"{'bt' if m == 'bootstrap-t' else m} {s}" for m, s in HEADLINE), "block SE (bt IQM)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        pooled, binom, block_se = coverage(r)
        cells = []
        for m, s in HEADLINE:
            j = COLUMNS.index((m, s))
            cells.append(_cell(pooled[j], binom[j], m != "order-statistic"))
        j = COLUMNS.index(("bootstrap-t", "iqm"))
        bse = "-" if np.isnan(block_se[j]) else f"{block_se[j]:.3f}"
        lines.append("| " + " | ".join([r["set"], str(r["tasks"]), str(r["runs"]), *cells, bse]) + " |")
    return lines


def median_spread(results: list[dict]) -> list[str]:
    """The median's coverage (bootstrap-t) over task sets: block range, SD net of binomial noise, and the coverage
    of the half of the blocks whose middle task means tie most nearly against the other half."""
    j = COLUMNS.index(("bootstrap-t", "median"))
    lines = [
        "median (bootstrap-t) over task sets: pooled | block min-max | between-block SD (net of binomial noise) | "
        "nearer-tied half / other half of the blocks (tie index median)"
    ]
    for r in results:
        if not r["tie"]:
            continue
        blocks = np.asarray(r["blocks"])[:, j] / r["per_block"]
        p = blocks.mean()
        net = np.sqrt(max(0.0, blocks.var(ddof=1) - p * (1 - p) / r["per_block"]))
        tie = np.asarray(r["tie"])
        near = tie <= np.median(tie)
        lines.append(
            f"{r['set']:<14} M={r['tasks']:<3} N={r['runs']:<3} {p:.3f} | {blocks.min():.3f}-{blocks.max():.3f} | "
            f"{net:.3f} | {blocks[near].mean():.3f} / {blocks[~near].mean():.3f} ({np.median(tie):.2f})"
        )
    return lines


def report(results: list[dict], args: argparse.Namespace) -> list[str]:
    order = {name: k for k, name in enumerate((*sim.STUDY_MODELS, *REAL_SETS))}
    results = sorted(results, key=lambda r: (order.get(r["set"], len(order)), r["tasks"], r["runs"]))
    simulated = [r for r in results if r["tie"]]
    real = sorted({r["per_block"] for r in results if not r["tie"]})
    sizes = sorted({(len(r["blocks"]), r["per_block"]) for r in simulated})
    return [
        f"95% intervals, {args.reps} bootstrap replicates, seed {args.seed}; simulated rows: "
        + ", ".join(f"{b} task sets (blocks) x {t} trials" for b, t in sizes)
        + f"; real rows: {' or '.join(map(str, real))} trials",
        "coverage ± binomial SE; bt = bootstrap-t; order-statistic = [median of per-task Student-t lower bounds, "
        "median of upper bounds]",
        "",
        *markdown(results),
        "",
        *median_spread(results),
    ]


# ----------------------------------------------------------------------------- driver
def rows(args: argparse.Namespace) -> Iterator[list[dict]]:
    for model in args.models:
        for m in args.tasks:
            yield simulated_row(model, m, args.runs, args)
    loaders = {"atari100k": atari100k, "dreamerv2": dreamerv2}
    for name in args.real:
        yield real_row(name, loaders[name], args.runs, args)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="*", default=list(sim.STUDY_MODELS))
    p.add_argument("--tasks", nargs="+", type=int, default=[10])
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--blocks", type=int, default=20, help="task sets per task model and task count")
    p.add_argument("--per-block", type=int, default=50, help="trials per task set and run count")
    p.add_argument("--real", nargs="*", default=list(REAL_SETS), choices=REAL_SETS)
    p.add_argument("--real-trials", type=int, default=1000)
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2033)
    p.add_argument("--ci", type=float, default=0.95)
    p.add_argument("--exact-truth", action="store_true", help="P(X>Y) truth from 400,000 draws per task")
    p.add_argument("--out", help="write the tables here and the raw results beside it (.json)")
    p.add_argument("--from-json", nargs="+", help="print the tables of previous runs' .json files instead")
    args = p.parse_args()
    results: list[dict] = []
    if args.from_json:
        results = [r for f in args.from_json for r in json.loads(Path(f).read_text())]
        if args.out:  # the pieces of a run split over processes, together (rows do not depend on the split)
            Path(args.out).with_suffix(".json").write_text(json.dumps(results))
    else:
        t0 = time.perf_counter()
        for part in rows(args):
            results += part
            for r in part:
                pooled, _, _ = coverage(r)
                shown = " ".join(f"{m[:2]} {s} {pooled[COLUMNS.index((m, s))]:.3f}" for m, s in HEADLINE[:6])
                print(f"# {r['set']} M={r['tasks']} N={r['runs']}: {shown}  ({time.perf_counter() - t0:.0f} s)",
                      flush=True)  # fmt: skip
            if args.out:
                Path(args.out).with_suffix(".json").write_text(json.dumps(results))
    lines = report(results, args)
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
