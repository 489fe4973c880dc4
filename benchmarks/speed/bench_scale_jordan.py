"""Jordan et al. PBP at scale: time and peak memory at 10, 20 and 50 algorithms x 26 tasks, serial and Ray.

Run (one command, from the repository root):

    python benchmarks/speed/bench_scale_jordan.py                      # 10, 20, 50 algorithms; serial and Ray
    python benchmarks/speed/bench_scale_jordan.py --algorithms 6,10,14 --timeout 300

Every case runs in a fresh process (``jordan_evaluate(method="pbp")`` on synthetic scores: 10 runs per
(algorithm, task), algorithm x task means drawn once from a seeded normal), so peak memory (``ru_maxrss``) is
that case's. The Ray case starts a local Ray with two workers (``ray.init(num_cpus=2)``) before the clock starts
and runs the ``2 nA`` bound optimisations as Ray tasks; its memory column is the driver's only. A case slower
than ``--timeout`` seconds is stopped and printed as such. The growth exponent between two sizes is
``log(t2 / t1) / log(A2 / A1)``; the speed-up is serial time / Ray time. Ray is the optional extra
(``pip install 'rl_reliable_logger[ray]'``): without it the Ray column says so. Both cases start BLAS with one
thread (``OMP_NUM_THREADS=1``, as Ray does in its workers): the solver is single-threaded anyway, and an
iterative solve's last bits depend on BLAS's start-up thread count, so the "identical" column compares like
with like.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASE = r"""
import json, resource, sys, time
import numpy as np
n_alg, n_env, runs, executor = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
from rl_reliable_logger.stats import jordan as jd
rng = np.random.default_rng(0)
loc = rng.normal(size=(n_alg, n_env))
samples = [[rng.normal(loc[a, t], 1.0, size=runs) for t in range(n_env)] for a in range(n_alg)]
if executor == "ray":
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    jd.jordan_evaluate(samples[:5], method="pbp", executor="ray")  # workers up, warm on the structured path (650 states)
t0, c0 = time.perf_counter(), time.process_time()
res = jd.jordan_evaluate(samples, method="pbp", executor=executor)
out = {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
       "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "low": res.low.tolist(), "high": res.high.tolist()}
print("RESULT " + json.dumps(out))
"""


def run_case(n_alg: int, n_env: int, runs: int, executor: str, timeout: float) -> dict | str:
    cmd = [sys.executable, "-c", CASE, str(n_alg), str(n_env), str(runs), executor]
    try:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return f"failed: {tail[:60]}"


def has_ray() -> bool:
    return subprocess.run([sys.executable, "-c", "import ray"], capture_output=True).returncode == 0


def exponent(sizes: list[int], times: list[float | None]) -> list[str]:
    out = ["-"]
    for (a1, t1), (a2, t2) in zip(zip(sizes, times), zip(sizes[1:], times[1:])):
        out.append(f"{math.log(t2 / t1) / math.log(a2 / a1):.2f}" if t1 and t2 else "?")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithms", default="10,20,50", help="comma-separated numbers of algorithms")
    parser.add_argument("--tasks", type=int, default=26)
    parser.add_argument("--runs", type=int, default=10, help="runs per (algorithm, task)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a case is stopped")
    parser.add_argument("--no-ray", action="store_true", help="serial only")
    args = parser.parse_args()
    sizes = [int(a) for a in args.algorithms.split(",")]
    ray_ok = not args.no_ray and has_ray()
    rows: dict[str, list] = {"serial": [], "ray": []}
    for n_alg in sizes:
        for ex in ("serial", "ray") if ray_ok else ("serial",):
            res = run_case(n_alg, args.tasks, args.runs, ex, args.timeout)
            rows[ex].append(res)
            shown = f"{res['seconds']:.1f} s" if isinstance(res, dict) else res
            print(f"  {n_alg:>3} algorithms, {ex:<6}: {shown}", file=sys.stderr, flush=True)
    secs = {ex: [r["seconds"] if isinstance(r, dict) else None for r in rs] for ex, rs in rows.items()}
    exps = {ex: exponent(sizes, secs[ex]) for ex in rows if rows[ex]}
    print(f"Jordan PBP, {args.tasks} tasks, {args.runs} runs per cell (wall s; peak MB of the driver process)")
    head = f"{'algorithms':>10} | {'serial s':>9} {'peak MB':>8} {'growth':>6}"
    if ray_ok:
        head += f" | {'ray s':>9} {'peak MB':>8} {'growth':>6} | {'speed-up':>8} {'identical':>9}"
    print(head)
    for k, n_alg in enumerate(sizes):
        s = rows["serial"][k]
        line = f"{n_alg:>10} | " + (
            f"{s['seconds']:>9.1f} {s['peak_mb']:>8.0f} {exps['serial'][k]:>6}" if isinstance(s, dict) else f"{s:>25}"
        )
        if ray_ok:
            r = rows["ray"][k]
            line += " | " + (
                f"{r['seconds']:>9.1f} {r['peak_mb']:>8.0f} {exps['ray'][k]:>6}" if isinstance(r, dict) else f"{r:>25}"
            )
            if isinstance(s, dict) and isinstance(r, dict):
                same = s["low"] == r["low"] and s["high"] == r["high"]
                line += f" | {s['seconds'] / r['seconds']:>7.2f}x {str(same):>9}"
        print(line)
    if not ray_ok:
        print(
            "Ray: not run ("
            + ("--no-ray" if args.no_ray else "not installed: pip install 'rl_reliable_logger[ray]'")
            + ")"
        )


if __name__ == "__main__":
    main()
