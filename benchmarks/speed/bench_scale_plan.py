"""``plan`` on the README example (issue 24): serial against Ray, and this checkout against an older one, in one run.

Run (one command, from the repository root):

    python benchmarks/speed/bench_scale_plan.py                        # serial and Ray, 3 rounds
    python benchmarks/speed/bench_scale_plan.py --against main --repeats 3 --no-ray --curves

The case: ``plan(ScoreTable.from_csv("examples/atari100k_scores.csv"), normalize="atari100k", target_width=0.05,
seed=0)`` -- what ``rl-reliable plan examples/atari100k_scores.csv --normalize atari100k --target-width 0.05``
computes (6 algorithms x 26 games, 5-10 runs per cell; N from 5 to 20, 200 trials of 500 replicates each: 72
(algorithm, N) units). Each measurement is a fresh process; the rounds interleave the variants (this checkout
serial, ``--against REF`` serial from ``git archive REF``, this checkout on Ray), so load on the shared machine
falls on all of them alike. Printed per variant: median wall time, the process's CPU time (user + system; on
Ray the driver's only), peak RSS, minor page faults, and whether its table is identical (every number, bit for
bit) to this checkout's serial one, and if not, how far its expected widths are from it (an older checkout
may draw differently). Ray starts a local cluster with two workers (``ray.init(num_cpus=2)``) and runs a tiny
plan to start its workers before the clock (as a long-running session would have them); the time to start Ray
itself (5-15 s here) is not in the figure. Measure on a machine nothing else keeps busy: with another process
on the two cores, Ray's two workers share what is left. The speed-up is serial wall / Ray wall. With ``--curves``
also the sample-efficiency curves of ``examples/dopamine_atari_curves.csv`` (IQM and mean, 2,000 replicates; the
curve computation alone; and "ragged": the first run of every other game dropped, IQM, mean and DP-25), each compared
with this checkout's: its "vs serial" is this checkout's curves wall / its wall.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "atari100k_scores.csv"

CASE = r"""
import hashlib, json, resource, sys, time
executor, example = sys.argv[1], sys.argv[2]
from rl_reliable_logger import ScoreTable, plan
table = ScoreTable.from_csv(example)
if executor == "ray":
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    plan(table, normalize="atari100k", runs=[2, 3], trials=2, sim_reps=10, executor="ray")  # workers up
before = resource.getrusage(resource.RUSAGE_SELF)
faults = before.ru_minflt
t0 = time.perf_counter()
p = plan(table, normalize="atari100k", target_width=0.05, seed=0, executor=executor)
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
digest = hashlib.sha256(p.table.to_csv(index=False, float_format="%.17g").encode()).hexdigest()
print("RESULT " + json.dumps({"wall": wall, "cpu": cpu, "peak_mb": after.ru_maxrss / 1024,
                              "faults": after.ru_minflt - faults, "digest": digest,
                              "widths": p.table["expected_width"].tolist()}))
"""

# curves of the Dopamine example (6 agents x 60 games x 5 runs, 21 logged iterations): IQM and mean at 2,000
# replicates, the curve computation alone (evaluate()'s _curves, the same call evaluate makes); "ragged": the same
# with the first run of every other game dropped (4 or 5 runs per task: run weights) and DP-25 as well
CURVES = r"""
import hashlib, json, resource, sys, time
import numpy as np, pandas as pd
from rl_reliable_logger import ScoreTable
from rl_reliable_logger.analysis import evaluation as ev
from rl_reliable_logger.stats.intervals import get
wide = pd.read_csv(sys.argv[2])
long = wide.melt(id_vars=["game", "agent", "run"], var_name="iteration", value_name="return")
long["iteration"] = long["iteration"].str.removeprefix("iter_").astype(int)
metrics = ("iqm", "mean")
if sys.argv[1] == "ragged":
    games = sorted(long["game"].unique())
    long = long[~((long["run"] == long["run"].min()) & long["game"].isin(games[::2]))]
    metrics = ("iqm", "mean", "dp25")
table = ScoreTable(long, algorithm="agent", task="game", seed="run", score="return", step="iteration")
rngs = {a: np.random.default_rng(np.random.SeedSequence(0, spawn_key=(i,))) for i, a in enumerate(table.algorithms)}
before = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
out, _, _ = ev._curves(table, metrics, 1.0, 2000, 25, rngs, 64 * 2**20, 0.95, get("percentile"), lambda n: None)
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
digest = hashlib.sha256(out.to_csv(index=False, float_format="%.17g").encode()).hexdigest()
print("RESULT " + json.dumps({"wall": wall, "cpu": cpu, "peak_mb": after.ru_maxrss / 1024,
                              "faults": after.ru_minflt - before.ru_minflt, "digest": digest}))
"""
CURVES_EXAMPLE = ROOT / "examples" / "dopamine_atari_curves.csv"


def measure(repo: Path, executor: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}
    code, example = (CURVES, CURVES_EXAMPLE) if executor in ("curves", "ragged") else (CASE, EXAMPLE)
    done = subprocess.run(
        [sys.executable, "-c", code, executor, str(example)], capture_output=True, text=True, cwd=repo, env=env
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"plan on {executor} ({repo}) failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def _width_change(result: dict, reference: dict) -> str:
    """For a table that is not identical (e.g. an older checkout that draws differently): how far its expected
    widths are from this checkout's serial ones."""
    if "widths" not in result or len(result["widths"]) != len(reference.get("widths", [])):
        return ""
    rel = [abs(a / b - 1) for a, b in zip(result["widths"], reference["widths"])]
    return f" (expected widths differ by {statistics.mean(rel):.1%} on average, at most {max(rel):.1%})"


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians are printed)")
    p.add_argument("--against", metavar="REF", help="also time the serial plan of this git commit/branch/tag")
    p.add_argument("--no-ray", action="store_true", help="skip the Ray variant")
    p.add_argument("--curves", action="store_true", help="also time the Dopamine example's curves (and --against's)")
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores); python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"serial": (ROOT, "serial")}
        if args.against:
            ref = Path(tmp) / "ref"
            ref.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against], capture_output=True, check=True)
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(ref, filter="data")
            variants[f"serial @ {args.against}"] = (ref, "serial")
        if args.curves:
            for kind in ("curves", "ragged"):
                variants[kind] = (ROOT, kind)
                if args.against:
                    variants[f"{kind} @ {args.against}"] = (variants[f"serial @ {args.against}"][0], kind)
        if not args.no_ray:
            if ray_available():
                variants["ray, 2 workers"] = (ROOT, "ray")
            else:
                print("Ray is not installed (pip install 'rl_reliable_logger[ray]'): no Ray variant")
        results: dict[str, list[dict]] = {name: [] for name in variants}
        for round_ in range(args.repeats):
            for name, (repo, executor) in variants.items():
                results[name].append(measure(repo, executor))
                r = results[name][-1]
                print(f"  round {round_ + 1}: {name:<24} wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s", flush=True)
    print(f"\nplan on the README example ({EXAMPLE.name}, --normalize atari100k --target-width 0.05), medians")
    print("(curves / ragged rows: the Dopamine example's curves, equal / unequal runs per task, compared with this")
    print(" checkout's)")
    print(f"{'variant':<24} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'faults':>10} {'vs serial':>10}  identical")
    for name, rs in results.items():
        base = next((k for k in ("curves", "ragged") if name.startswith(k)), "serial")
        reference = results[base][0]["digest"]
        serial_wall = statistics.median(r["wall"] for r in results[base])
        wall = statistics.median(r["wall"] for r in rs)
        same = all(r["digest"] == reference for r in rs)
        verdict = "yes" if same else "NO" + _width_change(rs[0], results[base][0])
        print(
            f"{name:<24} {wall:>8.2f} {statistics.median(r['cpu'] for r in rs):>8.2f} "
            f"{statistics.median(r['peak_mb'] for r in rs):>8.0f} {statistics.median(r['faults'] for r in rs):>10,.0f} "
            f"{serial_wall / wall:>9.2f}x  {verdict}"
        )
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
