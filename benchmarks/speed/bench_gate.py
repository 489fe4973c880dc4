"""Issue 53: how long one ``rl_reliable_logger.gate`` call takes on at most 10 paired seeds, through the public API.

A stream of candidates is gated look by look, each at the seeds the previous look asked for (3, then 6, 8, 10 or a
final verdict), in one process: every call reads the ledger, takes the look and writes the state folder back (the
one writer: an atomic swap with a manifest, fsync'd). Reported: the wall and CPU time per call, the first call of
the process apart (its boundary kernels are computed then, and cached for the process), the median and the
largest of the later ones, and a replay (the same scores again: the ledger read, nothing written).

Run:  nice python benchmarks/speed/bench_gate.py [--candidates 12] [--folder /tmp/gate-bench]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import _paths  # noqa: F401  (this checkout's package first on the import path)
import numpy as np
import pandas as pd

from rl_reliable_logger import gate


def runs(name: str, effect: float, seeds: list[int]) -> pd.DataFrame:
    rows = []
    for s in seeds:
        noise = np.random.default_rng([s, sum(map(ord, name))]).normal(0, 1.0, 2)
        rows += [{"algorithm": name, "task": t, "seed": s, "score": 10 + effect + e} for t, e in zip("ab", noise)]
    return pd.DataFrame(rows)


def timed(name: str, effect: float, incumbent: tuple[str, float], seeds: list[int], state: Path):
    """One gate call (the tables built before the clock starts): its result, wall and CPU seconds."""
    cand, inc = runs(name, effect, seeds), runs(*incumbent, seeds)
    wall, cpu = time.perf_counter(), time.process_time()
    result = gate(cand, inc, state=state, name=name, min_effect=0.3)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=12)
    ap.add_argument("--folder", type=Path, default=None, help="where the state folder goes (default: a temp dir)")
    args = ap.parse_args()
    root = args.folder or Path(tempfile.mkdtemp(prefix="gate-bench-"))
    state = root / "state"
    shutil.rmtree(state, ignore_errors=True)
    incumbent, next_seeds, rows = ("base", 0.0), [0, 1, 2], []
    rng = np.random.default_rng(0)
    for j in range(args.candidates):
        name, effect = f"c{j}", float(rng.choice([0.0, 2.5], p=[0.7, 0.3]))
        seeds = list(next_seeds)
        while True:
            result, wall, cpu = timed(name, effect, incumbent, seeds, state)
            rows.append(
                {"call": len(rows) + 1, "seeds": len(seeds), "verdict": result.verdict, "wall": wall, "cpu": cpu}
            )
            if result.verdict != "run_more":
                break
            seeds += list(result.next_seeds)
        against = incumbent
        if result.verdict == "keep":
            incumbent = (name, effect)
        next_seeds = list(result.next_seeds)
    _, replay_wall, replay_cpu = timed(name, effect, against, seeds, state)
    frame = pd.DataFrame(rows)
    later = frame.iloc[1:]
    print(f"{len(frame)} gate calls, {args.candidates} candidates, at most 10 paired seeds each (state: {state})")
    print(
        f"  first call of the process: wall {frame['wall'].iat[0] * 1e3:.1f} ms, cpu {frame['cpu'].iat[0] * 1e3:.1f} ms"
    )
    print(
        f"  later calls: median wall {statistics.median(later['wall']) * 1e3:.1f} ms "
        f"(cpu {statistics.median(later['cpu']) * 1e3:.1f} ms), largest wall {later['wall'].max() * 1e3:.1f} ms"
    )
    print(f"  a replay (same scores, nothing written): wall {replay_wall * 1e3:.1f} ms, cpu {replay_cpu * 1e3:.1f} ms")
    print(frame.groupby("verdict")[["wall", "cpu"]].median().mul(1e3).round(1).rename(columns=lambda c: c + " ms"))
    if args.folder is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
