"""Speed (and agreement) of rl_reliable_logger against rliable 1.2, plus a large-scale time/memory check.

Run:  bash benchmarks/rliable/setup_rliable_venv.sh && python benchmarks/rliable/bench_vs_rliable.py

Part 1 - paper-default analysis on real Atari 100k data (6 algorithms x 10 runs x 26 games, human
normalised; see ``atari_data.py`` for the construction: DER, DrQ, DrQ(eps), OTR, SPR runs 0-9 and
"SPR-b" = SPR runs 10-19 of the same published release):

* 4 aggregates (mean, median, IQM, optimality gap), 50,000 replicates per algorithm;
* performance profiles (run-score and average-score), 2,000 replicates, 101 taus;
* probability of improvement, all 15 pairs, 2,000 replicates.

rl_reliable_logger runs in this interpreter; rliable runs in ``benchmarks/.rliable-venv`` through
``rliable_worker.py`` (its own interpreter, data passed as a temporary .npz). rliable's POI takes
~20 s per pair in anchors.md and 45-90 s measured here, so only ``--poi-pairs`` pairs (default 3) are timed and the total is extrapolated
linearly to 15 pairs (printed as such). Point estimates of both libraries are compared (to 1e-9).

Part 2 - 10 algorithms x 57 tasks x 100 runs (synthetic, fixed seed) at 50,000 replicates: time
and peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of a fresh subprocess) for the 4
aggregates alone and for the full ``evaluate()``. Target (issue 14): <= 8 s and < 1 GB on 2 cores.

Times are wall clock; CPU seconds (all threads, ``getrusage``) are printed beside them, since on a shared
machine wall time measures the other processes' load as much as ours.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent

import _paths  # noqa: E402, F401  (tests/support, benchmarks/speed on the path)
import rliable_runner  # noqa: E402
from machine_info import cpu_model, load_average  # noqa: E402

from rl_reliable_logger.analysis.evaluation import evaluate  # noqa: E402
from rl_reliable_logger.data.normalize import get_normalizer  # noqa: E402
from rl_reliable_logger.data.scores import ScoreTable  # noqa: E402

METRICS = ("mean", "median", "iqm", "optimality_gap")


def machine() -> str:
    import scipy

    return (
        f"load average (1/5/15 min) at start: {load_average()}  "
        f"nproc={os.cpu_count()} cpu={cpu_model()!r} python={platform.python_version()} numpy={np.__version__} "
        f"scipy={scipy.__version__} pandas={pd.__version__}"
    )


# --------------------------------------------------------------------------- part 1: ours
def builder_times(table: ScoreTable, until: str | None = None, **options) -> dict[str, float]:
    """Seconds per table builder of evaluate(), run in evaluate()'s own order on the same prepared Run (up to and
    including the builder named ``until``)."""
    from rl_reliable_logger.analysis import evaluation as ev
    from rl_reliable_logger.analysis.aggregates import prepare
    from rl_reliable_logger.analysis.options import as_options

    opts = as_options(None, **options)
    run = ev._setup(prepare(table, opts), opts)  # our own package's internals: timing evaluate() piece by piece
    times: dict[str, float] = {}
    for build in ev.TABLE_BUILDERS:
        t0 = time.perf_counter()
        build(run)
        name = build.__name__.strip("_").removesuffix("_part")
        times[name] = time.perf_counter() - t0
        if name == until:
            break
    return times


# --------------------------------------------------------------------------- part 1: ours
def time_ours(table: ScoreTable, taus: np.ndarray, args) -> tuple[dict[str, float], object, float]:
    """Per-workload times through evaluate()'s own table builders, then the full evaluate()."""
    pieces = builder_times(table, **_options(args, taus))
    times = {"aggregates": pieces["aggregates"], "profiles": pieces["profiles"], "poi": pieces["improvement"]}
    t0 = time.perf_counter()
    report = evaluate(table, **_options(args, taus))
    total = time.perf_counter() - t0
    return times, report, total


def _options(args, taus: np.ndarray) -> dict:
    """The options of part 1: rliable's method (percentile), the paper's normalisation, the benchmark's counts."""
    return {
        "normalize": "atari100k",
        "method": "percentile",
        "reps": args.reps,
        "profile_reps": args.profile_reps,
        "improvement_reps": args.improvement_reps,
        "taus": tuple(float(t) for t in taus),
        "seed": args.seed,
    }


def first_call_worker(args) -> None:
    """Subprocess body: the full evaluate() of part 1 as the first call of a fresh process, then a second call; prints JSON with wall and CPU seconds
    (CPU of all threads, ``resource.getrusage``)."""
    import atari_data

    table = ScoreTable(atari_data.rectangular_frame())
    final = get_normalizer("atari100k").apply(table.final())
    all_values = np.concatenate([s.ravel() for s in atari_data.score_dict(final).values()])
    taus = np.linspace(min(0.0, all_values.min()), all_values.max(), 101)
    out = {}
    for label in ("first", "second"):
        c0, t0 = _cpu(), time.perf_counter()
        evaluate(table, **_options(args, taus))
        out[label] = {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0}
    print(json.dumps(out))


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def first_call(args) -> dict | None:
    cmd = [sys.executable, __file__, "--first-call-worker", "--reps", str(args.reps), "--seed", str(args.seed)]
    cmd += ["--profile-reps", str(args.profile_reps), "--improvement-reps", str(args.improvement_reps)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print("  first-call worker failed:\n" + proc.stderr[-3000:])
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- part 1: rliable
def run_rliable(scores: dict[str, np.ndarray], taus: np.ndarray, pairs: list[tuple[int, int]], args) -> dict | None:
    return rliable_runner.run_rliable(
        scores,
        taus,
        pairs,
        seed=args.seed,
        reps=args.reps,
        profile_reps=args.profile_reps,
        improvement_reps=args.improvement_reps,
    )


def part1(args) -> dict:
    import atari_data

    print("=" * 100)
    print("Part 1: paper-default analysis, Atari 100k, 6 algorithms x 10 runs x 26 games (human-normalised)")
    table = ScoreTable(atari_data.rectangular_frame())
    final = get_normalizer("atari100k").apply(table.final())
    scores = atari_data.score_dict(final)
    algs = list(scores)
    all_values = np.concatenate([s.ravel() for s in scores.values()])
    taus = np.linspace(min(0.0, all_values.min()), all_values.max(), 101)
    print(
        f"  algorithms: {algs}; runs x tasks per algorithm: {scores[algs[0]].shape}; "
        f"reps {args.reps} / profiles {args.profile_reps} on {taus.size} taus / POI {args.improvement_reps}"
    )

    ours, report, ours_total = time_ours(table, taus, args)
    fresh = first_call(args)
    if fresh is not None:
        f, w = fresh["first"], fresh["second"]
        print(
            f"  ours, full evaluate() in a fresh process: first call {f['wall']:.2f} s wall ({f['cpu']:.2f} s CPU), "
            f"second call {w['wall']:.2f} s wall ({w['cpu']:.2f} s CPU)"
        )
    all_pairs = list(itertools.combinations(range(len(algs)), 2))
    pairs = all_pairs[: args.poi_pairs]
    theirs = None if args.skip_rliable else run_rliable(scores, taus, pairs, args)

    rows = []
    if theirs is not None:
        t = theirs["times"]
        poi_measured = float(np.sum(t["poi_pairs"]))
        poi_total = poi_measured / len(pairs) * len(all_pairs)
        rl_prof = t["profile_runs"] + t["profile_tasks"]
        rows = [
            (
                "4 aggregates, 50k reps x 6 algs"
                if args.reps == 50_000
                else f"4 aggregates, {args.reps} reps x 6 algs",
                ours.get("aggregates"),
                t["aggregates"],
                "",
            ),
            (
                f"profiles (runs + tasks), {args.profile_reps} reps, {taus.size} taus",
                ours.get("profiles"),
                rl_prof,
                "ours also computes the optimality-gap curve in the same pass",
            ),
            (
                f"POI, 15 pairs, {args.improvement_reps} reps",
                ours.get("poi"),
                poi_total,
                f"rliable: {len(pairs)} pairs timed ({poi_measured:.1f} s), x{len(all_pairs)}/{len(pairs)} = EXTRAPOLATED"
                if len(pairs) < len(all_pairs)
                else "rliable: all pairs timed",
            ),
        ]
        print()
        print(f"  {'workload':<48} {'ours (s)':>9} {'rliable (s)':>12} {'ratio':>8}  note")
        for name, o, r, note in rows:
            ratio = f"{r / o:7.0f}x" if o else "   n/a"
            print(f"  {name:<48} {o if o is not None else float('nan'):9.2f} {r:12.2f} {ratio}  {note}")
        o_sum = sum(o for _, o, _, _ in rows if o is not None) or float("nan")
        r_sum = sum(r for _, _, r, _ in rows)
        print(
            f"  {'total of the three workloads':<48} {o_sum:9.2f} {r_sum:12.2f} {r_sum / o_sum:7.0f}x"
            + ("  (rliable POI extrapolated)" if len(pairs) < len(all_pairs) else "")
        )
        print(
            f"  {'full evaluate() (adds per-task CIs, ranks, diffs)':<48} {ours_total:9.2f} {r_sum:12.2f} "
            f"{r_sum / ours_total:7.0f}x"
        )
        if fresh is not None:
            f = fresh["first"]
            print(
                f"  {'full evaluate(), FIRST call in a fresh process':<48} {f['wall']:9.2f} {r_sum:12.2f} "
                f"{r_sum / f['wall']:7.0f}x  (target >= 600x)"
            )
        print(
            f"  rliable per-pair POI times: {', '.join(f'{x:.1f}' for x in t['poi_pairs'])} s; "
            f"rliable subprocess wall time {theirs['wall']:.1f} s (includes imports)"
        )

        # agreement of point estimates
        agg = report.aggregates.set_index(["algorithm", "metric"])["point"]
        diffs = {
            m: max(abs(agg[(a, m)] - theirs["aggregates"][a]["point"][j]) for a in algs) for j, m in enumerate(METRICS)
        }
        imp = report.improvement.set_index(["algorithm_x", "algorithm_y"])["point"]
        diffs["poi (15 pairs)"] = max(abs(imp[tuple(k.split(","))] - v) for k, v in theirs["poi_point"].items())
        print("\n  point estimates, max |ours - rliable| over algorithms / pairs:")
        for m, d in diffs.items():
            print(f"    {m:<16} {d:.2e}  {'OK' if d <= 1e-9 else 'MISMATCH (> 1e-9)'}")
        # intervals (different random streams: differences are Monte-Carlo noise)
        lo = report.aggregates.set_index(["algorithm", "metric"])
        ci_diff = max(
            max(
                abs(lo.loc[(a, m), "low"] - theirs["aggregates"][a]["low"][j]),
                abs(lo.loc[(a, m), "high"] - theirs["aggregates"][a]["high"][j]),
            )
            for a in algs
            for j, m in enumerate(METRICS)
        )
        poi_ci = report.improvement.set_index(["algorithm_x", "algorithm_y"])
        p_diff = max(
            max(
                abs(poi_ci.loc[tuple(k.split(",")), "low"] - v["low"]),
                abs(poi_ci.loc[tuple(k.split(",")), "high"] - v["high"]),
            )
            for k, v in theirs["poi"].items()
        )
        print(
            f"  interval endpoints (independent random streams, so Monte-Carlo noise only): aggregates max |diff| "
            f"{ci_diff:.4f}, POI ({len(pairs)} pairs) max |diff| {p_diff:.4f}"
        )
    else:
        print(f"  ours: {ours}; full evaluate() {ours_total:.2f} s")
    return {"ours": ours, "ours_total": ours_total, "first_call": fresh, "rliable": theirs, "rows": rows}


# --------------------------------------------------------------------------- part 2
def synthetic_table(n_alg: int = 10, n_tasks: int = 57, n_runs: int = 100, seed: int = 0) -> ScoreTable:
    """Skewed per-task scores (lognormal with task-specific scale) with algorithm effects; fixed seed."""
    rng = np.random.default_rng(seed)
    task_mu = rng.normal(-0.5, 0.7, n_tasks)
    task_sigma = rng.uniform(0.3, 1.2, n_tasks)
    alg_shift = np.linspace(-0.3, 0.3, n_alg)
    vals = np.exp(
        task_mu[None, :, None]
        + alg_shift[:, None, None]
        + task_sigma[None, :, None] * rng.standard_normal((n_alg, n_tasks, n_runs))
    )
    a, t, s = np.meshgrid(np.arange(n_alg), np.arange(n_tasks), np.arange(n_runs), indexing="ij")
    df = pd.DataFrame(
        {
            "algorithm": [f"alg{i:02d}" for i in a.ravel()],
            "task": [f"task{j:02d}" for j in t.ravel()],
            "seed": s.ravel(),
            "score": vals.ravel(),
        }
    )
    return ScoreTable(df)


def large_worker(mode: str, reps: int) -> None:
    """Subprocess body: build the data, measure RSS before, run, print JSON with time and peak RSS."""
    table = synthetic_table()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    c0, t0 = _cpu(), time.perf_counter()
    if mode == "aggregates":  # the aggregates table builder alone, as evaluate() runs it
        builder = builder_times(table, "aggregates", reps=reps, seed=0, method="percentile", metrics=tuple(METRICS))
        print(json.dumps({"builders": builder}), file=sys.stderr)
    else:
        evaluate(table, reps=reps, seed=0, method="percentile")
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"mode": mode, "seconds": elapsed, "cpu": _cpu() - c0, "peak_rss_mb": peak, "rss_before_mb": rss_before}
        )
    )


def part2(args) -> list[dict]:
    print("=" * 100)
    print(
        f"Part 2: 10 algorithms x 57 tasks x 100 runs (synthetic lognormal, seed 0), {args.reps} reps; "
        "target <= 8 s and < 1 GB"
    )
    results = []
    for mode, label in (
        ("aggregates", "4 aggregates only"),
        ("full", "full evaluate() (+profiles, POI 45 pairs, ranks, ...)"),
    ):
        proc = subprocess.run(
            [sys.executable, __file__, "--large-worker", mode, "--reps", str(args.reps)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            print(f"  {label}: FAILED\n{proc.stderr[-3000:]}")
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        ok_t, ok_m = res["seconds"] <= 8, res["peak_rss_mb"] < 1024
        print(
            f"  {label:<56} {res['seconds']:7.2f} s ({res.get('cpu', float('nan')):.2f} s CPU)  peak RSS {res['peak_rss_mb']:7.0f} MB "
            f"(data loaded: {res['rss_before_mb']:.0f} MB)  time {'MET' if ok_t else 'NOT MET'}, "
            f"memory {'MET' if ok_m else 'NOT MET'}"
        )
        results.append(res)
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=50_000)
    p.add_argument("--profile-reps", type=int, default=2_000)
    p.add_argument("--improvement-reps", type=int, default=2_000)
    p.add_argument("--poi-pairs", type=int, default=3, help="rliable POI pairs actually timed (of 15)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-rliable", action="store_true")
    p.add_argument("--skip-large", action="store_true")
    p.add_argument("--large-worker", choices=["aggregates", "full"], help=argparse.SUPPRESS)
    p.add_argument("--first-call-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.first_call_worker:
        first_call_worker(args)
        return
    if args.large_worker:
        large_worker(args.large_worker, args.reps)
        return
    print(machine())
    part1(args)
    if not args.skip_large:
        part2(args)
    print(f"load average (1/5/15 min) at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
