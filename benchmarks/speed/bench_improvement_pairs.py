"""Issue 56 item 3: P(X > Y) of every pair of a sweep, one call per pair against every pair in one array operation.

Run (from the repository root; about half a minute):

    nice python benchmarks/speed/bench_improvement_pairs.py --repeats 3

A sweep of 57 configurations x 10 tasks x 10 runs (``--pairs all``: 1,596 pairs), 2,000 independent replicates per
configuration (the improvement table's default), drawn once per process. Each case is a fresh ``python`` process that
reports the CPU time (``time.process_time``) of the estimates and replicates of every pair, and a digest of the
numbers: ``loop`` calls :func:`stats.metrics.probability_of_improvement` and :func:`stats.metrics.improvement_replicates`
once per pair (as the improvement table does), ``one op`` calls :func:`stats.pairwise.improvement_points` and
:func:`stats.pairwise.improvement_pair_replicates` once. The cases alternate round by round; medians are printed, and
the two digests must be equal (the same bits). No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASE = textwrap.dedent(
    """
    import hashlib, json, sys, time
    import numpy as np
    from rl_reliable_logger.stats import bootstrap as bs, metrics as mt, pairwise
    how, configs, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(7)
    cells = [bs.Cells.from_list([np.sort(rng.normal(0.02 * c + 0.1 * m, 0.3, size=10)) for m in range(10)])
             for c in range(configs)]
    counts = [bs.draw(c, reps, np.random.default_rng(100 + a)).small_counts() for a, c in enumerate(cells)]
    pairs = [(x, y) for x in range(configs) for y in range(x + 1, configs)]
    runs = [[c.values[o : o + n] for o, n in zip(c.offsets, c.sizes)] for c in cells]
    start = time.process_time()
    if how == "loop":
        points = np.array([mt.probability_of_improvement(runs[x], runs[y]) for x, y in pairs])
        dist = np.column_stack([mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y]) for x, y in pairs])
    else:
        points = pairwise.improvement_points(cells, pairs)
        dist = pairwise.improvement_pair_replicates(cells, counts, pairs)
    spent = time.process_time() - start
    digest = hashlib.sha256(points.tobytes() + np.ascontiguousarray(dist).tobytes()).hexdigest()[:16]
    print("RESULT " + json.dumps({"cpu": spent, "digest": digest, "pairs": len(pairs)}))
    """
)


def run(how: str, configs: int, reps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", CASE, how, str(configs), str(reps)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{how} failed (exit status {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians are printed)")
    p.add_argument("--configs", type=int, default=57)
    p.add_argument("--reps", type=int, default=2_000)
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    found: dict[str, list[dict]] = {"loop": [], "one op": []}
    for round_ in range(args.repeats):
        for how in list(found) if round_ % 2 == 0 else list(reversed(found)):
            found[how].append(run(how, args.configs, args.reps))
            print(f"  round {round_ + 1}: {how:<7} cpu {found[how][-1]['cpu']:6.2f} s", flush=True)
    loop, vectorised = (statistics.median(r["cpu"] for r in found[k]) for k in ("loop", "one op"))
    digests = {r["digest"] for rs in found.values() for r in rs}
    pairs = found["loop"][0]["pairs"]
    print(
        f"\n== P(X > Y) of {pairs:,} pairs ({args.configs} configurations x 10 tasks x 10 runs, {args.reps:,} replicates)"
    )
    print(f"  one call per pair      {loop:6.2f} s CPU (median)")
    print(f"  every pair in one op   {vectorised:6.2f} s CPU (median)")
    print(f"  one op / loop          {vectorised / loop:6.2f}x; the same bits: {len(digests) == 1}")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
