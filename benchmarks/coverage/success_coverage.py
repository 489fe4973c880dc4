"""Coverage of the success-rate intervals (issue 46): per task, per-task differences and aggregates over tasks.

One command reproduces the table of ``docs/validation.md`` (about 10 CPU-minutes; parts run apart with
``--parts``, then joined with ``--from-json``):

    nice -n 10 python benchmarks/coverage/success_coverage.py --out benchmarks/results/success_coverage.txt

Data: S seeds of E episodes each per task. A seed's success probability is drawn from a beta distribution with
mean mu and intra-seed correlation rho (beta-binomial: ``Beta(mu(1-rho)/rho, (1-mu)(1-rho)/rho)``; rho = 0 is
one binomial, every seed at mu; mu = 0 or 1 puts every seed there), and its successes are binomial. The truth
is mu (the mean over seeds' probabilities, what the mean of the seeds' rates estimates).

* ``task``: ``stats.success.task_intervals`` at S in {3, 5, 10}, E in {5, 10, 20, 50}, rho in {0, 0.1, 0.3},
  mu from 0 to 1; ``--trials`` per cell. Also the share of trials ``coverage_warnings`` flags and the coverage
  of those it does not.
* ``difference``: ``difference_intervals`` (Newcombe's MOVER) for pairs of rates, both algorithms with the same
  S, E and rho.
* ``variants``: the task part's cells under three design-effect rules (why Korn & Graubard's was chosen).
* ``aggregate``: ``aggregate_interval`` (the mean over 10 tasks; Wilson at the bootstrap's effective episode
  count) on five suites of true task rates; ``--agg-trials`` per cell, ``--reps`` replicates per interval;
  ``aggregate-difference``: ``aggregate_difference`` on two pairs of suites.

Coverage ± binomial SE; bold: outside 0.935-0.965. Every cell has its own seed (from its parameters), so parts
run apart give the same numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import zlib
from pathlib import Path
from typing import Any

import _paths  # noqa: F401  (this checkout's package on the path)
import numpy as np

from rl_reliable_logger.stats import success as su

BAND = (0.935, 0.965)
SEEDS = (3, 5, 10)
EPISODES = (5, 10, 20, 50)
RHOS = (0.0, 0.1, 0.3)
RATES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99, 1.0)
PAIRS = ((0.0, 0.0), (0.05, 0.0), (0.1, 0.3), (0.5, 0.5), (0.3, 0.6), (0.9, 0.99), (1.0, 1.0))
SUITES = {
    "zero": np.zeros(10),
    "low": np.linspace(0.0, 0.1, 10),
    "mid": np.linspace(0.2, 0.8, 10),
    "high": np.linspace(0.9, 1.0, 10),
    "spread": np.linspace(0.0, 1.0, 10),
}
SUITE_PAIRS = (("low", "zero"), ("mid", "spread"))
PARTS = ("task", "difference", "aggregate", "aggregate-difference", "variants")
#: Design-effect rules compared in ``variants`` (the package uses ``korn-graubard``).
VARIANTS = ("korn-graubard", "no-df", "excess-only")


def rng_for(*key: Any) -> np.random.Generator:
    """A generator seeded by the cell's parameters (the same cell gives the same draws in any run)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def draw(rng: np.random.Generator, mu: np.ndarray, rho: float, seeds: int, episodes: int, trials: int) -> np.ndarray:
    """Successes ``(trials, len(mu), seeds)`` of beta-binomial seeds around the task rates ``mu``."""
    mu = np.broadcast_to(np.asarray(mu, dtype=float)[None, :, None], (trials, len(mu), seeds))
    if rho > 0:
        m = np.clip(mu, 1e-12, 1 - 1e-12)
        p = rng.beta(m * (1 - rho) / rho, (1 - m) * (1 - rho) / rho)
        p = np.where((mu == 0) | (mu == 1), mu, p)
    else:
        p = mu
    return rng.binomial(episodes, p)


def cell(hit: np.ndarray, low_miss: np.ndarray, **key: Any) -> dict[str, Any]:
    return {**key, "trials": int(hit.size), "covered": int(hit.sum()), "missed_low": int(low_miss.sum())}


def task_part(args: argparse.Namespace) -> list[dict]:
    out = []
    for s, e, rho, mu in itertools.product(SEEDS, EPISODES, RHOS, RATES):
        k = draw(rng_for("task", s, e, rho, mu), np.array([mu]), rho, s, e, args.trials)[:, 0, :]
        n = np.full(k.shape, e)
        res = su.task_intervals(k, n, args.ci)
        hit = (res.low <= mu) & (mu <= res.high)
        warned = su.coverage_warnings(k, n, args.ci)
        row = cell(hit, mu < res.low, part="task", seeds=s, episodes=e, rho=rho, mu=mu)
        row.update(warned=int(warned.sum()), covered_unwarned=int(hit[~warned].sum()))
        out.append(row)
    return out


def _design_effects(k: np.ndarray, e: int, ci: float) -> dict[str, np.ndarray]:
    """The candidate design effects per trial: Korn & Graubard's (the whole seed-to-seed variance widened by
    (t/z)², the package's), without the widening, and widening only its excess over the binomial variance."""
    from scipy import special

    s = k.shape[1]
    z = float(special.ndtri(0.5 + ci / 2))
    t = float(special.stdtrit(s - 1, 0.5 + ci / 2))
    rates = k / e
    p, between = rates.mean(axis=1), rates.var(axis=1, ddof=1) / s
    binomial = p * (1 - p) / (s * e)
    with np.errstate(divide="ignore", invalid="ignore"):
        rules = {
            "korn-graubard": (t / z) ** 2 * between / binomial,
            "no-df": between / binomial,
            "excess-only": (binomial + (t / z) ** 2 * np.maximum(0.0, between - binomial)) / binomial,
        }
    return {name: np.where(binomial > 0, np.maximum(1.0, v), 1.0) for name, v in rules.items()}


def variants_part(args: argparse.Namespace) -> list[dict]:
    """The task part's cells (0 < mu < 1) under each rule of :data:`VARIANTS`, with the task part's draws."""
    from scipy import special

    z = float(special.ndtri(0.5 + args.ci / 2))
    out = []
    for s, e, rho, mu in itertools.product(SEEDS, EPISODES, RHOS, RATES):
        if mu in (0.0, 1.0):
            continue
        k = draw(rng_for("task", s, e, rho, mu), np.array([mu]), rho, s, e, args.trials)[:, 0, :].astype(float)
        p = k.mean(axis=1) / e
        for name, deff in _design_effects(k, e, args.ci).items():
            low, high = su.wilson(p, s * e / deff, z)
            hit = (low <= mu) & (mu <= high)
            out.append(cell(hit, mu < low, part="variants", rule=name, seeds=s, episodes=e, rho=rho, mu=mu))
    return out


def variants_table(rows: list[dict]) -> list[str]:
    rows = [r for r in rows if r["part"] == "variants"]
    lines = [
        "| rule | seeds | rates | cells | in band | below | above | range |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in VARIANTS:
        for het in ("rho = 0", "rho > 0"):
            for edge in ("mu <= 0.1 or >= 0.9", "0.1 < mu < 0.9"):
                cov = np.array(
                    [
                        r["covered"] / r["trials"]
                        for r in rows
                        if r["rule"] == name
                        and (r["rho"] == 0) == (het == "rho = 0")
                        and (min(r["mu"], 1 - r["mu"]) <= 0.1) == edge.startswith("mu")
                    ]
                )
                if cov.size == 0:
                    continue
                inside = np.mean((cov >= BAND[0]) & (cov <= BAND[1]))
                lines.append(
                    f"| {name} | {het} | {edge} | {cov.size} | {inside:.2f} | {np.mean(cov < BAND[0]):.2f} | "
                    f"{np.mean(cov > BAND[1]):.2f} | {cov.min():.3f}-{cov.max():.3f} |"
                )
    return lines


def difference_part(args: argparse.Namespace) -> list[dict]:
    out = []
    for s, e, rho, (mx, my) in itertools.product(SEEDS, (5, 20, 50), RHOS, PAIRS):
        rng = rng_for("difference", s, e, rho, mx, my)
        kx = draw(rng, np.array([mx]), rho, s, e, args.trials)[:, 0, :]
        ky = draw(rng, np.array([my]), rho, s, e, args.trials)[:, 0, :]
        n = np.full(kx.shape, e)
        res = su.difference_intervals(kx, n, ky, n, args.ci)
        d = mx - my
        hit = (res.low <= d + 1e-12) & (d - 1e-12 <= res.high)
        out.append(cell(hit, d < res.low, part="difference", seeds=s, episodes=e, rho=rho, mu=mx, mu_y=my))
    return out


def aggregate_part(args: argparse.Namespace) -> list[dict]:
    out = []
    for s, e, rho, name in itertools.product(SEEDS, (5, 20, 50), RHOS, SUITES):
        mus = SUITES[name]
        rng = rng_for("aggregate", s, e, rho, name)
        k = draw(rng, mus, rho, s, e, args.agg_trials)
        n = np.full(k.shape[1:], e)
        truth = float(mus.mean())
        lows, highs = np.empty(len(k)), np.empty(len(k))
        for i, ki in enumerate(k):
            res = su.aggregate_interval(ki, n, reps=args.reps, ci=args.ci, seed=rng)
            lows[i], highs[i] = res.low, res.high
        hit = (lows <= truth + 1e-12) & (truth - 1e-12 <= highs)
        out.append(cell(hit, truth < lows, part="aggregate", seeds=s, episodes=e, rho=rho, suite=name))
    return out


def aggregate_difference_part(args: argparse.Namespace) -> list[dict]:
    out = []
    for s, e, rho, (nx, ny) in itertools.product(SEEDS, (5, 50), (0.0, 0.3), SUITE_PAIRS):
        rng = rng_for("aggregate-difference", s, e, rho, nx, ny)
        kx = draw(rng, SUITES[nx], rho, s, e, args.agg_trials)
        ky = draw(rng, SUITES[ny], rho, s, e, args.agg_trials)
        n = np.full(kx.shape[1:], e)
        truth = float(SUITES[nx].mean() - SUITES[ny].mean())
        lows, highs = np.empty(len(kx)), np.empty(len(kx))
        for i in range(len(kx)):
            seed = int(rng.integers(2**31))
            res = su.aggregate_difference((kx[i], n), (ky[i], n), reps=args.reps, ci=args.ci, seed=seed)
            lows[i], highs[i] = res.low, res.high
        hit = (lows <= truth + 1e-12) & (truth - 1e-12 <= highs)
        out.append(
            cell(hit, truth < lows, part="aggregate-difference", seeds=s, episodes=e, rho=rho, suite=f"{nx} - {ny}")
        )
    return out


def fmt(covered: int, trials: int) -> str:
    p = covered / trials
    se = np.sqrt(p * (1 - p) / trials)
    text = f"{p:.3f} ± {se:.3f}"
    return text if BAND[0] <= p <= BAND[1] else f"**{text}**"


def task_table(rows: list[dict], rho: float) -> list[str]:
    rows = [r for r in rows if r["part"] == "task" and r["rho"] == rho]
    rates = sorted({r["mu"] for r in rows})
    lines = [
        "| S | E | " + " | ".join(f"{m:g}" for m in rates) + " |",
        "|---|---|" + "---|" * len(rates),
    ]
    for s, e in itertools.product(SEEDS, EPISODES):
        cells = {r["mu"]: r for r in rows if r["seeds"] == s and r["episodes"] == e}
        if not cells:
            continue
        text = []
        for m in rates:
            r = cells[m]
            p = r["covered"] / r["trials"]
            t = f"{p:.3f}"
            text.append(t if BAND[0] <= p <= BAND[1] else f"**{t}**")
        lines.append(f"| {s} | {e} | " + " | ".join(text) + " |")
    return lines


def warned_summary(rows: list[dict]) -> list[str]:
    rows = [r for r in rows if r["part"] == "task"]
    flagged = [r for r in rows if r["warned"] > 0]
    short = [r for r in rows if r["covered"] / r["trials"] < BAND[0]]
    lines = [
        f"cells short of {BAND[0]}: {len(short)} of {len(rows)}; warned trials in them: "
        f"{sum(r['warned'] for r in short)} of {sum(r['trials'] for r in short)}",
    ]
    for r in short:
        lines.append(
            f"  S={r['seeds']} E={r['episodes']} rho={r['rho']} mu={r['mu']}: coverage {r['covered'] / r['trials']:.3f}, "
            f"warned {r['warned'] / r['trials']:.2f}, misses below / above {r['missed_low']} / "
            f"{r['trials'] - r['covered'] - r['missed_low']}"
        )
    lines.append(f"cells with any warned trial: {len(flagged)}")
    return lines


def keyed_table(rows: list[dict], part: str, column: str) -> list[str]:
    rows = [r for r in rows if r["part"] == part]
    names = list(dict.fromkeys(r[column] if column != "pair" else f"{r['mu']:g} - {r['mu_y']:g}" for r in rows))
    key = (lambda r: r[column]) if column != "pair" else (lambda r: f"{r['mu']:g} - {r['mu_y']:g}")
    lines = ["| S | E | rho | " + " | ".join(names) + " |", "|---|---|---|" + "---|" * len(names)]
    for s, e, rho in sorted({(r["seeds"], r["episodes"], r["rho"]) for r in rows}):
        cells = {key(r): r for r in rows if (r["seeds"], r["episodes"], r["rho"]) == (s, e, rho)}
        lines.append(
            f"| {s} | {e} | {rho:g} | " + " | ".join(fmt(cells[n]["covered"], cells[n]["trials"]) for n in names) + " |"
        )
    return lines


def report(rows: list[dict]) -> list[str]:
    lines = []
    if any(r["part"] == "task" for r in rows):
        for rho in RHOS:
            lines += ["", f"## Per task, rho = {rho:g} (columns: true rate mu)", *task_table(rows, rho)]
        lines += ["", "## Short cells and the warning", *warned_summary(rows)]
    if any(r["part"] == "variants" for r in rows):
        lines += ["", "## Design-effect rules compared (per task, 0 < mu < 1; share of cells)", *variants_table(rows)]
    for part, column, title in (
        ("difference", "pair", "Per-task differences (columns: mu_X - mu_Y)"),
        ("aggregate", "suite", "Aggregate: mean of 10 tasks' rates (columns: suite)"),
        ("aggregate-difference", "suite", "Aggregate differences (columns: suites X - Y)"),
    ):
        if any(r["part"] == part for r in rows):
            lines += ["", f"## {title}", *keyed_table(rows, part, column)]
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--trials", type=int, default=4000, help="trials per cell (task, difference)")
    p.add_argument("--agg-trials", type=int, default=400, help="trials per cell (aggregates)")
    p.add_argument("--reps", type=int, default=1000, help="bootstrap replicates per aggregate interval")
    p.add_argument("--ci", type=float, default=0.95)
    p.add_argument("--out", help="write the tables here and the raw counts beside it (.json)")
    p.add_argument("--from-json", nargs="+", help="print the tables of previous runs' .json files instead")
    args = p.parse_args()
    started = time.process_time()
    if args.from_json:
        rows = [r for f in args.from_json for r in json.loads(Path(f).read_text())["rows"]]
    else:
        parts = {"task": task_part, "difference": difference_part, "aggregate": aggregate_part}
        parts["aggregate-difference"] = aggregate_difference_part
        parts["variants"] = variants_part
        rows = [r for name in args.parts for r in parts[name](args)]
    run = (
        f"joined from {', '.join(args.from_json)}"
        if args.from_json
        else f"trials {args.trials} (task, difference, variants), {args.agg_trials} x {args.reps} replicates "
        f"(aggregates); CPU {time.process_time() - started:.0f} s"
    )
    head = [
        "# Success-rate interval coverage (benchmarks/coverage/success_coverage.py)",
        f"parts: {', '.join(sorted({r['part'] for r in rows}))}; ci {args.ci}; {run}",
    ]
    text = "\n".join(head + report(rows)) + "\n"
    print(text)
    if args.out:
        out = Path(args.out)
        out.write_text(text)
        out.with_suffix(".json").write_text(json.dumps({"args": vars(args), "rows": rows}, indent=0))


if __name__ == "__main__":
    main()
