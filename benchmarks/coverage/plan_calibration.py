"""Calibration of plan() on held-out real data: predicted vs realised interval width and separation.

Data: the Atari 100k runs of Agarwal et al. (2021) (``rliable_atari_100k/final_scores_long.csv`` in
the shared data folder), human-normalised, 26 games, 100 runs per game for DER, OTR, DrQ, DrQ(eps),
SPR and CURL.

One *draw*: in every (algorithm, game) cell the 100 runs are shuffled; the first 3 are the pilot,
the next 10 (disjoint from the pilot) are the held-out experiment.

* predicted: ``plan(pilot, runs=[10])`` — the expected width of each algorithm's 95% IQM interval
  at 10 runs per game, and for a few pairs the probability that the difference interval excludes 0;
* realised: the 95% stratified-bootstrap percentile interval (2,000 replicates) on the held-out 10
  runs — its width, and whether the difference interval excludes 0.

Over many draws this gives: mean predicted vs mean realised width (bias), the spread of the
prediction from one pilot (what a user gets), the fraction of draws in which the realised width
falls between the predicted 10% and 90% quantiles, and predicted vs realised separation rates.

Run:  python benchmarks/coverage/plan_calibration.py [--draws 100] [--out benchmarks/results/plan_calibration.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import _paths
import numpy as np
import pandas as pd
from atari_data import LONG_CSV

from rl_reliable_logger.analysis.planning import plan
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals, registry

ALGORITHMS = ["DER", "OTR", "DrQ", "DrQ(eps)", "SPR", "CURL"]
PAIRS = [("DrQ", "DER"), ("DrQ(eps)", "DrQ"), ("SPR", "DrQ(eps)"), ("OTR", "CURL")]
PILOT, TARGET, REPS = 3, 10, 2000


def load() -> dict[tuple[str, str], np.ndarray]:
    frame = pd.read_csv(LONG_CSV)
    frame = frame[frame["algorithm"].isin(ALGORITHMS)]
    return {
        (a, g): grp.sort_values("run_index")["human_normalized"].to_numpy(float)
        for (a, g), grp in frame.groupby(["algorithm", "game"])
    }


def realised(cells: dict[str, bs.Cells], rng: np.random.Generator) -> tuple[dict, dict]:
    metric = registry.get_metric("iqm")
    dists = {a: metric(bs.draw(c, REPS, rng)) for a, c in cells.items()}
    widths = {}
    for a, d in dists.items():
        lo, hi = intervals.interval(d[:, None], np.zeros(1), ci=0.95)
        widths[a] = float(hi[0] - lo[0])
    seps = {}
    for a, b in PAIRS:
        lo, hi = intervals.interval((dists[a] - dists[b])[:, None], np.zeros(1), ci=0.95)
        seps[(a, b)] = bool(lo[0] > 0 or hi[0] < 0)
    return widths, seps


def table_of(data: dict[tuple[str, str], np.ndarray], algorithms: list[str]) -> ScoreTable:
    rows = [
        {"algorithm": a, "task": g, "seed": i, "score": s}
        for (a, g), x in data.items()
        if a in algorithms
        for i, s in enumerate(x)
    ]
    return ScoreTable(pd.DataFrame(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--sim-reps", type=int, default=300)
    parser.add_argument("--out", default=str(_paths.BENCHMARKS / "results" / "plan_calibration.md"))
    args = parser.parse_args()
    data = load()
    games = sorted({g for _, g in data})
    rng = np.random.default_rng(2026)
    started = time.time()
    pred_rows, real_rows = [], []
    for d in range(args.draws):
        pilot, held = {}, {}
        for key, x in data.items():
            perm = rng.permutation(x.size)
            pilot[key] = x[perm[:PILOT]]
            held[key] = x[perm[PILOT : PILOT + TARGET]]
        held_cells = {a: bs.Cells.from_list([held[(a, g)] for g in games]) for a in ALGORITHMS}
        widths, seps = realised(held_cells, rng)
        real_rows += [{"draw": d, "name": a, "width": w} for a, w in widths.items()]
        real_rows += [{"draw": d, "name": f"{a} - {b}", "separated": s} for (a, b), s in seps.items()]
        pilot_table = table_of(pilot, ALGORITHMS)
        for correction in ("variance", "none"):
            p = plan(
                pilot_table, runs=[TARGET], trials=args.trials, sim_reps=args.sim_reps, seed=d, correction=correction
            )
            for _, r in p.table.iterrows():
                pred_rows.append(
                    {
                        "draw": d,
                        "correction": correction,
                        "name": r["algorithm"],
                        "width": r["expected_width"],
                        "q10": r["width_q10"],
                        "q90": r["width_q90"],
                    }
                )
            for a, b in PAIRS:
                sub = table_of({k: v for k, v in pilot.items() if k[0] in (a, b)}, [a, b])
                q = plan(
                    sub,
                    runs=[TARGET],
                    trials=args.trials,
                    sim_reps=args.sim_reps,
                    seed=d,
                    compare=(a, b),
                    correction=correction,
                )
                row = q.table[q.table["kind"] == "pair"].iloc[0]
                pred_rows.append(
                    {"draw": d, "correction": correction, "name": f"{a} - {b}", "p_separate": row["p_separate"]}
                )
        if (d + 1) % 10 == 0:
            print(f"{d + 1}/{args.draws} draws, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    pred, real = pd.DataFrame(pred_rows), pd.DataFrame(real_rows)
    text = report(pred, real, args, time.time() - started)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


def report(pred: pd.DataFrame, real: pd.DataFrame, args: argparse.Namespace, seconds: float) -> str:
    lines = [
        "# plan() calibration on held-out Atari 100k runs",
        "",
        f"Pilot {PILOT} runs per game, prediction for {TARGET} runs per game, realised on {TARGET} held-out runs "
        f"(disjoint from the pilot) of the same 26 games; {args.draws} draws; IQM of human-normalised scores, "
        f"95% percentile intervals ({REPS} replicates for the realised ones; plan: {args.trials} trials x "
        f"{args.sim_reps} replicates). Generated by `python benchmarks/coverage/plan_calibration.py --draws {args.draws}` "
        f"in {seconds:.0f} s.",
        "",
        "## Interval width at 10 runs per game",
        "",
        "ratio = mean predicted / mean realised width; pilot spread = 10%-90% range of the ratio "
        "(predicted from one pilot / mean realised); in band = realised width between the predicted 10% and "
        "90% quantiles of that draw.",
        "",
        "| algorithm | realised width (mean) | correction | predicted (mean) | ratio | pilot spread | in band |",
        "|---|---|---|---|---|---|---|",
    ]
    widths = real.dropna(subset=["width"])
    for name in ALGORITHMS:
        rw = widths[widths["name"] == name].set_index("draw")["width"]
        for correction in ("variance", "none"):
            pw = pred[(pred["name"] == name) & (pred["correction"] == correction)].set_index("draw")
            ratio = pw["width"] / rw.mean()
            band = ((rw >= pw["q10"]) & (rw <= pw["q90"])).mean()
            lines.append(
                f"| {name} | {rw.mean():.4f} | {correction} | {pw['width'].mean():.4f} | {ratio.mean():.2f} | "
                f"{ratio.quantile(0.1):.2f}-{ratio.quantile(0.9):.2f} | {band:.0%} |"
            )
    lines += [
        "",
        "## Separation at 10 runs per game (difference of IQMs, 95% interval excludes 0)",
        "",
        "| pair | realised rate | correction | predicted rate (mean over pilots) | pilots predicting >= 0.8 |",
        "|---|---|---|---|---|",
    ]
    seps = real.dropna(subset=["separated"])
    for a, b in PAIRS:
        name = f"{a} - {b}"
        rate = seps[seps["name"] == name]["separated"].astype(float).mean()
        for correction in ("variance", "none"):
            ps = pred[(pred["name"] == name) & (pred["correction"] == correction)]["p_separate"]
            lines.append(f"| {name} | {rate:.2f} | {correction} | {ps.mean():.2f} | {(ps >= 0.8).mean():.0%} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
