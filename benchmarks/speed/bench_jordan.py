"""Jordan et al. bootstrap: the batched engine vs the old per-replicate solver, and vs a plain evaluate().

Data (real, the paper's size): 11 "algorithms" x 15 games x 10 runs from the rliable Atari 100k release
(``rliable_atari_100k/final_scores_long.csv`` in the shared data folder): batches of 10 consecutive runs
of DER, OTR, DrQ, DrQ(eps) (runs 0-9 and 10-19 of each) and SPR (runs 0-9, 10-19, 20-29), on the first 15
games in alphabetical order, human-normalised. ``--synthetic`` uses normal scores of the same shape instead.

Timed:

* ``new``: ``stats.jordan.bootstrap_aggregate`` (shared draws, batched structured solver in numpy, after a
  warm-up call);
* ``old``: the per-replicate implementation as it was before the split, loaded from git history
  (``--old-rev``, default the last commit with ``stats/jordan.py``). It takes ~30 ms per replicate at this
  size, so by default it runs ``--old-reps`` replicates and the full time is a **linear extrapolation**
  (printed as such);
* ``evaluate``: ``rl_reliable_logger.evaluate`` with its defaults on the same table (the everyday cost).

``--agreement`` also compares the two implementations' bootstrap distributions on a smaller real set
(5 algorithms x 15 games x 10 runs), where the old one runs in full: a two-sample KS test per algorithm and
the percentile-interval ends, next to the seed-to-seed spread of the new implementation.

Examples::

    python benchmarks/speed/bench_jordan.py                       # ~1-2 min
    python benchmarks/speed/bench_jordan.py --agreement --agreement-reps 5000
    python benchmarks/speed/bench_jordan.py --old-reps 100
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rl_reliable_logger import ScoreTable, evaluate  # noqa: E402
from rl_reliable_logger.stats import jordan as jd  # noqa: E402

SHARED_DATA = Path(os.environ.get("RL_RELIABLE_SHARED_DATA", ROOT.parent / "shared" / "data"))
LONG_CSV = SHARED_DATA / "rliable_atari_100k" / "final_scores_long.csv"
BATCHES = [("DER", 2), ("OTR", 2), ("DrQ", 2), ("DrQ(eps)", 2), ("SPR", 3)]
OLD_REV = "069b135"


def real_frame(n_games: int = 15, batches=BATCHES) -> pd.DataFrame:
    """Long frame ``algorithm, task, seed, score`` of 10-run batches (see the module doc)."""
    if not LONG_CSV.exists():
        raise SystemExit(
            f"{LONG_CSV} not found: put the shared data beside the checkout or set RL_RELIABLE_SHARED_DATA"
        )
    long = pd.read_csv(LONG_CSV)
    games = sorted(long["game"].unique())[:n_games]
    parts = []
    for alg, n_batches in batches:
        sub = long[(long["algorithm"] == alg) & long["game"].isin(games)]
        if sub.empty:
            raise SystemExit(f"no runs of {alg} in {LONG_CSV}")
        for b in range(n_batches):
            part = sub[(sub["run_index"] >= 10 * b) & (sub["run_index"] < 10 * (b + 1))]
            parts.append(
                pd.DataFrame(
                    {
                        "algorithm": f"{alg}-{chr(ord('a') + b)}",
                        "task": part["game"],
                        "seed": part["run_index"] - 10 * b,
                        "score": part["human_normalized"],
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def synthetic_frame(n_alg: int = 11, n_env: int = 15, n: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (f"alg{i:02d}", f"task{j:02d}", s, float(rng.normal(0.1 * i + 0.05 * j * (i % 3), 1.0)))
        for i in range(n_alg)
        for j in range(n_env)
        for s in range(n)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def samples_of(frame: pd.DataFrame) -> list[list[np.ndarray]]:
    algs, tasks = sorted(frame["algorithm"].unique()), sorted(frame["task"].unique())
    groups = frame.groupby(["algorithm", "task"])["score"]
    cells = {k: g.to_numpy(float) for k, g in groups}
    return [[cells[(a, t)] for t in tasks] for a in algs]


def load_old(rev: str):
    """The pre-split ``stats/jordan.py`` from git history, as a module (None if git cannot provide it)."""
    try:
        src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:rl_reliable_logger/stats/jordan.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"old implementation unavailable ({exc}); skipping it")
        return None
    path = Path(tempfile.mkdtemp()) / "jordan_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("jordan_old", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["jordan_old"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def timed(fn):
    """(result, wall seconds); the CPU seconds of the last call are kept in ``timed.cpu``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    timed.cpu = time.process_time() - c0  # type: ignore[attr-defined]
    return out, time.perf_counter() - t0


def speed(args) -> None:
    frame = synthetic_frame() if args.synthetic else real_frame()
    samples = samples_of(frame)
    n_alg, n_env, n = len(samples), len(samples[0]), samples[0][0].size
    print(
        f"data: {'synthetic' if args.synthetic else 'real (rliable Atari 100k)'}, {n_alg} algorithms x {n_env} tasks x {n} runs"
    )
    _, warm = timed(lambda: jd.bootstrap_aggregate(samples, reps=2, seed=0))
    print(f"new  warm-up (2 replicates): {warm:.2f} s")
    _, new = timed(lambda: jd.bootstrap_aggregate(samples, reps=args.reps, seed=0))
    print(f"new  {args.reps} replicates: {new:.2f} s wall, {timed.cpu:.2f} s CPU (all threads)")  # type: ignore[attr-defined]
    table = ScoreTable(frame)
    evaluate(table, seed=0)  # untimed, as the Jordan warm-up above
    _, ev = timed(lambda: evaluate(table, seed=0))
    print(f"evaluate() with its defaults on the same table (warm): {ev:.2f} s wall, {timed.cpu:.2f} s CPU")  # type: ignore[attr-defined]
    old_mod = None if args.skip_old else load_old(args.old_rev)
    if old_mod is not None:
        _, old = timed(lambda: old_mod.bootstrap_aggregate(samples, reps=args.old_reps, seed=0))
        old_cpu = timed.cpu  # type: ignore[attr-defined]
        full = old * args.reps / args.old_reps
        note = (
            "" if args.old_reps == args.reps else f" (measured {old:.2f} s for {args.old_reps}; linear extrapolation)"
        )
        print(f"old  {args.reps} replicates: {full:.1f} s{note}; CPU {old_cpu * args.reps / args.old_reps:.1f} s")
        print(f"ratio old / new: {full / new:.0f}x")
    print(f"ratio new / evaluate(): {new / ev:.2f}")
    print("(wall times depend on machine load; the CPU seconds are the steadier comparison)")


def agreement(args) -> None:
    old_mod = load_old(args.old_rev)
    if old_mod is None:
        return
    frame = real_frame(batches=[(a, 1) for a, _ in BATCHES])
    samples = samples_of(frame)
    names = sorted(frame["algorithm"].unique())
    reps = args.agreement_reps
    print(
        f"\nagreement: real data, {len(samples)} algorithms x {len(samples[0])} tasks x 10 runs, {reps} replicates each"
    )
    old, t_old = timed(lambda: old_mod.bootstrap_aggregate(samples, reps=reps, seed=1))
    new, t_new = timed(lambda: jd.bootstrap_aggregate(samples, reps=reps, seed=1))
    new2 = jd.bootstrap_aggregate(samples, reps=reps, seed=2)
    print(f"old {t_old:.1f} s, new {t_new:.1f} s")
    point = jd.equilibrium(jd.payoff_matrix(samples)).y
    rows = []
    for a, name in enumerate(names):
        ks = stats.ks_2samp(old[:, a], new[:, a])
        ks_ref = stats.ks_2samp(new2[:, a], new[:, a])
        lo_o, hi_o = np.quantile(old[:, a], [0.025, 0.975])
        lo_n, hi_n = np.quantile(new[:, a], [0.025, 0.975])
        lo_2, hi_2 = np.quantile(new2[:, a], [0.025, 0.975])
        rows.append(
            {
                "algorithm": name,
                "point": point[a],
                "KS old-new p": ks.pvalue,
                "KS new-new p": ks_ref.pvalue,
                "old 95%": f"[{lo_o:.4f}, {hi_o:.4f}]",
                "new 95%": f"[{lo_n:.4f}, {hi_n:.4f}]",
                "|d end| old-new": max(abs(lo_o - lo_n), abs(hi_o - hi_n)),
                "|d end| new-new": max(abs(lo_2 - lo_n), abs(hi_2 - hi_n)),
            }
        )
    with pd.option_context("display.width", 200, "display.float_format", "{:.4f}".format):
        print(pd.DataFrame(rows).to_string(index=False))
    res_old = old_mod.jordan_evaluate(samples, method="bootstrap", reps=reps, seed=1)
    res_new = jd.jordan_evaluate(samples, method="bootstrap", reps=reps, seed=1)
    print("jordan_evaluate(method='bootstrap') simultaneous intervals (delta 0.05, split over cells):")
    for a, name in enumerate(names):
        print(
            f"  {name:12s} old [{res_old.low[a]:.4f}, {res_old.high[a]:.4f}]  new [{res_new.low[a]:.4f}, "
            f"{res_new.high[a]:.4f}]  ranks old {res_old.rank_worst[a]}-{res_old.rank_best[a]} "
            f"new {res_new.rank_worst[a]}-{res_new.rank_best[a]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10_000)
    parser.add_argument("--old-reps", type=int, default=300, help="replicates the old implementation really runs")
    parser.add_argument("--old-rev", default=OLD_REV, help="git revision holding the old stats/jordan.py")
    parser.add_argument("--skip-old", action="store_true")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--agreement", action="store_true", help="also compare old and new distributions")
    parser.add_argument("--agreement-reps", type=int, default=5000)
    args = parser.parse_args()
    speed(args)
    if args.agreement:
        agreement(args)


if __name__ == "__main__":
    main()
