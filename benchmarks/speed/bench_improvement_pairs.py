"""Issue 56 item 3: P(X > Y) of every pair of a sweep, one call per pair against every pair in one array operation;
and the improvement table of ``evaluate()`` that uses it, against an older checkout.

Run (from the repository root; about three minutes with ``--against``):

    nice python benchmarks/speed/bench_improvement_pairs.py --repeats 3 [--against main]

A sweep of 57 configurations x 10 tasks x 10 runs (``--pairs all``: 1,596 pairs), 2,000 independent replicates per
configuration (the improvement table's default). Each case is a fresh ``python`` process that reports CPU time
(``time.process_time``) and a digest of the numbers:

* ``loop`` and ``one op``, drawn once per process: the estimates and replicates of every pair; ``loop`` calls
  :func:`stats.metrics.probability_of_improvement` and :func:`stats.metrics.improvement_replicates` once per pair (as
  the improvement table did), ``one op`` calls :func:`stats.pairwise.improvement_points` and
  :func:`stats.pairwise.improvement_pair_replicates` once. The two digests must be equal (the same bits).
* ``evaluate <method>`` (``default``: ``bootstrap-t``, and ``percentile``), in this checkout and, with ``--against
  REF``, in ``git archive REF``: ``evaluate(pairs="all")`` of the same sweep with its scores rounded to a hundredth
  (ties), 10,000 replicates for the aggregates and 2,000 for profiles and P(X > Y); the CPU of the call and of the
  improvement table (``analysis.tables.improvement.build``) within it, and a digest of the improvement table's
  pairs, points and interval ends, which must be equal across checkouts.

The cases alternate round by round; medians are printed. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

from bench_sweep_scale import interleaved_parser, repositories, run  # (this folder is on the path)

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

TABLE = textwrap.dedent(
    """
    import hashlib, json, sys, time
    import numpy as np, pandas as pd
    import rl_reliable_logger.analysis.evaluation as evaluation
    from rl_reliable_logger import ScoreTable, evaluate
    method, configs, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(7)
    rows = [
        {"algorithm": f"c{c:02d}", "task": f"t{m}", "seed": s,
         "score": round(float(rng.normal(0.02 * c + 0.1 * m, 0.3)), 2)}
        for c in range(configs) for m in range(10) for s in range(10)
    ]
    table = ScoreTable(pd.DataFrame(rows))
    kw = {} if method == "default" else {"method": method}
    spent = {"improvement": 0.0}
    inner = evaluation.improvement.build

    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent["improvement"] += time.process_time() - start

    evaluation.improvement.build = timed
    evaluate(table, reps=200, profile_reps=50, improvement_reps=50, seed=1, pairs="all", **kw)  # warm, unclocked
    spent["improvement"] = 0.0
    start = time.process_time()
    report = evaluate(table, reps=reps, profile_reps=2_000, improvement_reps=2_000, seed=0, pairs="all", **kw)
    cpu = time.process_time() - start
    imp = report.improvement
    names = "|".join(imp["algorithm_x"] + ">" + imp["algorithm_y"]).encode()
    digest = hashlib.sha256(names + imp[["point", "low", "high"]].to_numpy(float).tobytes()).hexdigest()[:16]
    print("RESULT " + json.dumps({"cpu": cpu, "improvement": spent["improvement"], "digest": digest}))
    """
)

METHODS = ("default", "percentile")


def main() -> None:
    p = interleaved_parser(__doc__, repeats=3)
    p.add_argument("--configs", type=int, default=57)
    p.add_argument("--reps", type=int, default=2_000, help="replicates of the one-call-per-pair cases")
    p.add_argument("--evaluate-reps", type=int, default=10_000, help="evaluate()'s replicates for the aggregates")
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp_name:
        repos = repositories(args.against, Path(tmp_name))
        found: dict[tuple[str, str], list[dict]] = {("this checkout", "loop"): [], ("this checkout", "one op"): []}
        found.update({(name, f"evaluate {m}"): [] for m in METHODS for name in repos})
        for round_ in range(args.repeats):
            for name, case in list(found) if round_ % 2 == 0 else list(reversed(found)):
                if case.startswith("evaluate"):
                    spec = (TABLE, case.split()[1], str(args.configs), str(args.evaluate_reps))
                else:
                    spec = (CASE, case, str(args.configs), str(args.reps))
                found[(name, case)].append(run(repos[name], *spec))
                print(
                    f"  round {round_ + 1}: {name:<14} {case:<20} cpu {found[(name, case)][-1]['cpu']:6.2f} s",
                    flush=True,
                )
    report(found, args)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


def report(found: dict[tuple[str, str], list[dict]], args: argparse.Namespace) -> None:
    def med(name: str, case: str, key: str = "cpu") -> float:
        return statistics.median(r[key] for r in found[(name, case)])

    loop, vectorised = med("this checkout", "loop"), med("this checkout", "one op")
    digests = {r["digest"] for case in ("loop", "one op") for r in found[("this checkout", case)]}
    pairs = found[("this checkout", "loop")][0]["pairs"]
    print(
        f"\n== P(X > Y) of {pairs:,} pairs ({args.configs} configurations x 10 tasks x 10 runs, {args.reps:,} replicates)"
    )
    print(f"  one call per pair      {loop:6.2f} s CPU (median)")
    print(f"  every pair in one op   {vectorised:6.2f} s CPU (median)")
    print(f"  one op / loop          {vectorised / loop:6.2f}x; the same bits: {len(digests) == 1}")
    names = list(dict.fromkeys(name for name, _ in found))
    print(f"\n== evaluate(pairs='all') of {args.configs} configurations (CPU seconds, medians)")
    for method in METHODS:
        case = f"evaluate {method}"
        for name in names:
            print(
                f"  {method:<11} {name:<14} evaluate {med(name, case):6.2f}  improvement table "
                f"{med(name, case, 'improvement'):6.2f}"
            )
        if args.against:
            same = len({r["digest"] for name in names for r in found[(name, case)]}) == 1
            ratio = med("this checkout", case) / med(args.against, case)
            table = med("this checkout", case, "improvement") / med(args.against, case, "improvement")
            print(
                f"  {method:<11} this checkout / {args.against}: evaluate {ratio:.2f}x, improvement table "
                f"{table:.2f}x; the same table, bit for bit: {same}"
            )


if __name__ == "__main__":
    main()
