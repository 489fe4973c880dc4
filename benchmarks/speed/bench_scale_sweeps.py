"""Lab-scale sweeps (issue 24): time and peak memory of the tuning view and of many algorithms, with growth exponents.

Run:  python benchmarks/speed/bench_scale_sweeps.py [--configs 100,1000,10000] [--algorithms 50,200] [--reps 500]
      [--jordan 10,20,50] [--plan-repeats 1]

The one command of issue 24's scale benchmark: every case below in one run.

Cases, each in a fresh ``python`` process of this checkout (so one case's memory never counts for another):

* ``configs N``: a sweep of N configurations (``lr`` x ``width``) of 2 algorithms, 5 seeds reused by every
  configuration, 10 tasks (N x 100 rows), read as a ScoreTable with ``hyperparameter_keys`` (a run is its
  configuration and seed), then
  - ``views``: the tuning views alone (``stats.tuning.tuning_views``: selection and split of every
    configuration, no bootstrap);
  - ``evaluate``: ``evaluate(table, hyperparameter_keys=...)`` with ``--reps`` replicates for every statistic
    (aggregates, profiles, improvement and the tuning view). The pooled algorithm has N x 5 runs per task, so
    the bootstrap (replicates x runs) dominates at large N whatever the tuning view costs: the paper's 50,000
    replicates over 50,000 runs per task would take hours, hence ``--reps``.
* ``algorithms A``: A algorithms (configurations analysed as algorithms, as ``--variant-key`` makes them) x 26
  tasks x 5 seeds, ``evaluate(table)`` with the paper's defaults (percentile intervals) (``--algorithm-reps`` to change them); the
  memory pre-check's estimate (``AnalysisOptions.memory_estimate``) next to the memory the evaluation added to
  the process (peak RSS minus the RSS before it).

* ``jordan``: ``benchmarks/speed/bench_scale_jordan.py --algorithms ...`` (Jordan's PBP at 10, 20 and 50 algorithms x
  26 tasks x 10 runs, serial and on Ray with two workers, identical tables checked, growth exponents).
* ``plan``: ``benchmarks/speed/bench_scale_plan.py`` (``plan`` on the README example, serial and on Ray with two
  workers, identical tables checked), ``--plan-repeats`` rounds.

Printed: wall time of each stage, the process's peak RSS, and the growth exponent of each stage between
consecutive sizes (log time ratio / log size ratio; 1 = linear, 2 = quadratic). The machine is shared: the
load average is printed at the start and the end; compare exponents and ratios, not absolute seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
KEYS = ["lr", "width"]


def _rss_mb() -> float:
    """Current resident set size of this process (MB)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def sweep_frame(n_configs: int, n_algorithms: int = 2, n_seeds: int = 5, n_tasks: int = 10, seed: int = 0):
    """A sweep in long form: every configuration of every algorithm runs seeds 0..n_seeds-1 on every task."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    c = np.arange(n_configs)
    lr = 10.0 ** (-5 + 3 * (c % 100) / 100)
    width = 32 * (1 + c // 100)
    quality = rng.normal(0, 0.3, (n_algorithms, n_configs))
    a, k, t, s = (
        x.ravel() for x in np.meshgrid(*map(np.arange, (n_algorithms, n_configs, n_tasks, n_seeds)), indexing="ij")
    )
    return pd.DataFrame(
        {
            "algorithm": np.array([f"alg{i}" for i in range(n_algorithms)], dtype=object)[a],
            "task": np.array([f"task{i}" for i in range(n_tasks)], dtype=object)[t],
            "seed": s,
            "lr": lr[k],
            "width": width[k],
            "score": quality[a, k] + 0.1 * t + rng.normal(0, 1, a.size),
        }
    )


def algorithms_frame(n_algorithms: int, n_tasks: int = 26, n_seeds: int = 5, seed: int = 0):
    """Configurations as algorithms (``PPO lr=...``), every one on every task with the same seeds."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    a, t, s = (x.ravel() for x in np.meshgrid(*map(np.arange, (n_algorithms, n_tasks, n_seeds)), indexing="ij"))
    names = np.array([f"PPO lr={10 ** (-5 + 3 * i / n_algorithms):.4g}" for i in range(n_algorithms)], dtype=object)
    return pd.DataFrame(
        {
            "algorithm": names[a],
            "task": np.array([f"game{j}" for j in range(n_tasks)], dtype=object)[t],
            "seed": s,
            "score": rng.normal(0.5, 0.3, a.size) + 0.001 * a,
        }
    )


def run_configs(n: int, reps: int) -> dict:
    from rl_reliable_logger import ScoreTable, evaluate
    from rl_reliable_logger.stats import tuning as tn

    frame = sweep_frame(n)
    out: dict = {"rows": len(frame)}
    t0 = time.perf_counter()
    table = ScoreTable(frame, hyperparameter_keys=KEYS)
    out["table"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tn.tuning_views(table.frame, KEYS, seed=0)
    out["views"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = evaluate(
        table, hyperparameter_keys=KEYS, reps=reps, profile_reps=reps, improvement_reps=reps, tuning_reps=reps
    )
    out["evaluate"] = time.perf_counter() - t0
    out["tuning_rows"] = len(report.extra["tuning"])
    return out


def run_algorithms(n: int, reps: dict) -> dict:
    from rl_reliable_logger import ScoreTable, evaluate
    from rl_reliable_logger.analysis.options import AnalysisOptions

    table = ScoreTable(algorithms_frame(n))
    options = AnalysisOptions(**reps, method="percentile")  # the paper's defaults, as performance.md measured them
    estimate = options.memory_estimate(n, len(table.tasks), int(table.frame.groupby("algorithm").size().max()))
    before = _rss_mb()
    t0 = time.perf_counter()
    evaluate(table, options)
    return {
        "evaluate": time.perf_counter() - t0,
        "estimate_mb": sum(estimate.values()) / 2**20,
        "added_mb": _peak_mb() - before,
    }


def child(case: str, size: int, args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    if case == "configs":
        out = run_configs(size, args.reps)
    else:
        reps = json.loads(args.algorithm_reps) if args.algorithm_reps else {}
        out = run_algorithms(size, reps)
    out["peak_mb"] = _peak_mb()
    print("RESULT " + json.dumps(out))


def measure(case: str, size: int, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--child", case, str(size), "--reps", str(args.reps)]
    if args.algorithm_reps:
        cmd += ["--algorithm-reps", args.algorithm_reps]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"{case} {size} failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def exponents(sizes: list[int], results: list[dict], key: str) -> str:
    parts = []
    for (n1, r1), (n2, r2) in zip(zip(sizes, results), zip(sizes[1:], results[1:])):
        if r1[key] > 0 and r2[key] > 0:
            parts.append(f"{n1:,}→{n2:,}: {math.log(r2[key] / r1[key]) / math.log(n2 / n1):.2f}")
    return "; ".join(parts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="100,1000,10000", help="configuration counts of the sweep case")
    p.add_argument("--algorithms", default="50,200", help="algorithm counts of the many-algorithms case")
    p.add_argument("--reps", type=int, default=500, help="replicates of every statistic in the sweep case")
    p.add_argument("--algorithm-reps", default="", help="JSON options of the algorithms case, e.g. '{\"reps\": 5000}'")
    p.add_argument("--jordan", default="10,20,50", help="algorithm counts of Jordan's PBP case ('' skips it)")
    p.add_argument(
        "--plan-repeats", type=int, default=1, help="rounds of bench_scale_plan.py (plan, serial and Ray); 0 skips it"
    )
    p.add_argument("--child", nargs=2, metavar=("CASE", "SIZE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args)
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores); python {sys.version.split()[0]}")

    sweep_title = f"sweep: N configurations x 2 algorithms x 5 seeds x 10 tasks, evaluate at {args.reps} replicates"
    cases = [
        (
            "configs",
            args.configs,
            sweep_title,
            ["rows", "table", "views", "evaluate", "peak_mb"],
            ["table", "views", "evaluate", "peak_mb"],
        ),
        (
            "algorithms",
            args.algorithms,
            f"algorithms: A x 26 tasks x 5 seeds, evaluate {args.algorithm_reps or '(paper defaults)'}",
            ["evaluate", "peak_mb", "added_mb", "estimate_mb", "added/estimate"],
            ["evaluate", "peak_mb"],
        ),
    ]
    for case, text, title, columns, grown in cases:
        sizes = [int(x) for x in text.split(",") if x]
        if not sizes:
            continue
        print(f"\n{title}")
        print(f"{'size':>8} " + " ".join(f"{c:>14}" for c in columns))
        results = []
        for n in sizes:
            r = measure(case, n, args)
            if "estimate_mb" in r:
                r["added/estimate"] = r["added_mb"] / r["estimate_mb"]
            results.append(r)
            print(f"{n:>8,} " + " ".join(f"{r[c]:>14,.2f}" for c in columns), flush=True)
        for key in grown:
            print(f"  growth exponent of {key}: {exponents(sizes, results, key)}")
    if args.jordan:  # Jordan's PBP, serial and Ray side by side (its own script)
        print(f"\nJordan's PBP (python benchmarks/speed/bench_scale_jordan.py --algorithms {args.jordan}):", flush=True)
        subprocess.run([sys.executable, str(HERE / "bench_scale_jordan.py"), "--algorithms", args.jordan])
    if args.plan_repeats > 0:  # plan on the README example, serial and Ray side by side (its own script)
        print("\nplan (python benchmarks/speed/bench_scale_plan.py):", flush=True)
        subprocess.run([sys.executable, str(HERE / "bench_scale_plan.py"), "--repeats", str(args.plan_repeats)])
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
