"""``plan --compare`` on the README example: this checkout against an older one (``--against``, default ``main``), in
one interleaved run, with the ratios and whether every printed and written number is the same.

Run (from the repository root):

    python benchmarks/speed/bench_plan_compare.py                    # against main, 3 rounds
    python benchmarks/speed/bench_plan_compare.py --against 2f7270b --repeats 5
    python benchmarks/speed/bench_plan_compare.py --parts units          # the in-process part only

First, in one process, the plan's units (each (algorithm, N) of the example, the pair's 12 included) computed by this
checkout's ``simulate_unit`` and by the previous one (``old_simulate_unit`` below: P(X > Y) by the engine's
``improvement_replicates`` one synthetic experiment at a time), unit by unit, the two alternating (which goes first
switches every round), CPU time (``time.process_time``), each unit's best of ``--repeats``: the pair's units, and as
a control the single algorithms' units, whose code did not change (their ratio shows the noise), with whether every
number is the same. This part stands up to a busy machine best.

Then two end-to-end cases, each measurement a fresh process, the rounds interleaving this checkout and ``--against``
(``git archive REF``), so load on the shared machine falls on both alike:

* ``cli``: ``rl-reliable plan examples/atari100k_scores.csv --normalize atari100k --compare 'SPR,DrQ(eps)' --max-runs
  30 --out DIR --no-figures`` end to end (imports, reading, protocol checks, the simulation, plan.csv and
  launch.csv): wall time and the child's CPU time (user + system);
* ``plan()``: the same plan called in the process (``plan(table, normalize="atari100k", compare=("SPR", "DrQ(eps)"),
  max_runs=30, seed=0)``), timed around the call alone: wall and CPU.

Printed per case and variant: the medians, the ratio of ``--against``'s median to this checkout's (above 1: this
checkout is faster) and whether the outputs are byte-identical to this checkout's (``cli``: what the command printed
and both CSV files; ``plan()``: the plan table written with every digit, ``%.17g``). No timed assertion anywhere:
these are measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import _paths  # noqa: F401 -- this checkout's package first on the path
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "atari100k_scores.csv"
PAIR = "SPR,DrQ(eps)"

IN_PROCESS = r"""
import hashlib, json, resource, sys, time
from rl_reliable_logger import ScoreTable, plan
table = ScoreTable.from_csv(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
p = plan(table, normalize="atari100k", compare=tuple(sys.argv[2].split(",")), max_runs=30, seed=0)
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
digest = hashlib.sha256(p.table.to_csv(index=False, float_format="%.17g").encode()).hexdigest()
print("RESULT " + json.dumps({"wall": wall, "cpu": cpu, "digest": digest}))
"""


def old_simulate_unit(unit):
    """``simulate_unit`` as it was before P(X > Y) took a block of experiments at a time."""
    from rl_reliable_logger.analysis import planning as pl
    from rl_reliable_logger.stats import metrics as mt

    sims = [pl._Experiments(p, s, unit) for p, s in zip(unit.pilots, unit.seeds)]
    pair = len(sims) == 2
    dists = np.empty((len(sims), unit.trials, unit.sim_reps))
    poi = np.empty((unit.trials, unit.sim_reps) if pair else (0, 0))
    for t in range(unit.trials):
        draws = [sim.next() for sim in sims]
        for i, d in enumerate(draws):
            dists[i, t] = unit.metric(d)
        if pair:
            poi[t] = mt.improvement_replicates(draws[0].cells, draws[0].counts(), draws[1].cells, draws[1].counts())
    out = {"widths": np.stack([pl._interval(d, unit.ci)[2] for d in dists])}
    if pair:
        low, high, out["diff_width"] = pl._interval(dists[0] - dists[1], unit.ci)
        out["sep"] = (low > 0.0) | (high < 0.0)
        low, high, _ = pl._interval(poi, unit.ci)
        out["sep_poi"] = (low > 0.5) | (high < 0.5)
    return out


def example_units() -> list:
    """The units ``plan(table, normalize="atari100k", compare=("SPR", "DrQ(eps)"), max_runs=30, seed=0)`` computes,
    set up as ``plan_with`` sets them up."""
    from rl_reliable_logger import ScoreTable
    from rl_reliable_logger.analysis import planning as pl
    from rl_reliable_logger.analysis.normalization import normalize_final
    from rl_reliable_logger.analysis.plan_options import PlanOptions
    from rl_reliable_logger.stats import registry

    opts = PlanOptions(normalize="atari100k", compare=tuple(PAIR.split(",")), max_runs=30, seed=0)
    final = normalize_final(ScoreTable.from_csv(EXAMPLE).final(), opts.normalize)
    tasks, cells = sorted(final.tasks), final.cells()
    pilots = {a: [np.sort(cells[(a, t)]) for t in tasks] for a in final.algorithms}
    sizes = final.runs_per_cell().to_numpy()
    grid = pl._default_grid(opts, int(sizes.min()), int(sizes.max()))
    slot = {a: i for i, a in enumerate(sorted(final.algorithms))}
    metric = registry.get_metric(opts.metric, gamma=opts.gamma)
    return [u for per_n in pl._units(pilots, slot, grid, metric, opts.compare, opts) for _, u in per_n]


def units_in_process(repeats: int) -> None:
    from rl_reliable_logger.analysis.planning import simulate_unit

    units = example_units()
    best = {"old": [float("inf")] * len(units), "new": [float("inf")] * len(units)}
    same = True
    for round_ in range(repeats):
        for k, unit in enumerate(units):
            order = [("old", old_simulate_unit), ("new", simulate_unit)]
            found = {}
            for name, fn in order if (round_ + k) % 2 == 0 else order[::-1]:
                start = time.process_time()
                found[name] = fn(unit)
                best[name][k] = min(best[name][k], time.process_time() - start)
            same = same and all(np.array_equal(found["old"][key], found["new"][key]) for key in found["old"])
        print(f"  round {round_ + 1}: old {sum(best['old']):6.2f} s  new {sum(best['new']):6.2f} s (best so far)")
    print(f"\nthe units of the example in one process, CPU s, each unit's best of {repeats}, old / new alternating")
    print(f"{'units':<34} {'old':>7} {'new':>7} {'old / new':>10}")
    for label, keep in (
        (f"the pair's ({PAIR}), 12", lambda u: len(u.pilots) == 2),
        ("single algorithms' (control), 48", lambda u: len(u.pilots) == 1),
        ("all 60", lambda u: True),
    ):
        old = sum(t for t, u in zip(best["old"], units) if keep(u))
        new = sum(t for t, u in zip(best["new"], units) if keep(u))
        print(f"{label:<34} {old:>7.2f} {new:>7.2f} {old / new:>9.2f}x")
    print(f"every number the same: {'yes' if same else 'NO'}")


def _env(repo: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}


def run_cli(repo: Path, out: Path) -> dict:
    """The command end to end in a fresh process: wall, the child's CPU, and a digest of all it printed and wrote."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    command = [sys.executable, "-m", "rl_reliable_logger", "plan", str(EXAMPLE), "--normalize", "atari100k"]
    command += ["--compare", PAIR, "--max-runs", "30", "--out", str(out), "--no-figures"]
    done = subprocess.run(command, capture_output=True, cwd=repo, env=_env(repo))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"plan in {repo} failed (exit status {done.returncode}):\n{done.stderr.decode()[-3000:]}")
    digest = hashlib.sha256()
    # the printed text, less the lines naming the output folder (each variant writes to its own)
    digest.update(b"\n".join(line for line in done.stdout.splitlines() if not line.startswith(b"wrote ")))
    for name in ("plan.csv", "launch.csv"):
        digest.update((out / name).read_bytes())
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "digest": digest.hexdigest()}


def run_in_process(repo: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(EXAMPLE), PAIR], capture_output=True, text=True, cwd=repo, env=_env(repo)
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"plan() in {repo} failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def checkout(ref: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", default="main", metavar="REF", help="the older commit/branch/tag (default: main)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians / bests are printed)")
    p.add_argument("--parts", choices=("units", "end-to-end", "both"), default="both")
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    if args.parts != "end-to-end":
        units_in_process(args.repeats)
    if args.parts != "units":
        end_to_end(args.against, args.repeats)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def end_to_end(against: str, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repos = {"this checkout": ROOT, f"@ {against}": checkout(against, Path(tmp) / "ref")}
        results: dict[tuple[str, str], list[dict]] = {}
        for round_ in range(repeats):
            for name, repo in repos.items():
                for case in ("cli", "plan()"):
                    out = Path(tmp) / f"out-{len(results)}-{round_}"
                    r = run_cli(repo, out) if case == "cli" else run_in_process(repo)
                    results.setdefault((case, name), []).append(r)
                    print(f"  round {round_ + 1}: {case:<7} {name:<20} wall {r['wall']:6.2f} s  cpu {r['cpu']:6.2f} s")
    print(f"\nplan --compare '{PAIR}' --max-runs 30 on {EXAMPLE.name} (--normalize atari100k), medians of {repeats}")
    print(f"{'case':<7} {'variant':<20} {'wall s':>7} {'cpu s':>7} {'wall ratio':>11} {'cpu ratio':>10}  identical")
    for case in ("cli", "plan()"):
        mine = results[(case, "this checkout")]
        wall0 = statistics.median(r["wall"] for r in mine)
        cpu0 = statistics.median(r["cpu"] for r in mine)
        for name in repos:
            rs = results[(case, name)]
            wall, cpu = statistics.median(r["wall"] for r in rs), statistics.median(r["cpu"] for r in rs)
            same = "yes" if all(r["digest"] == mine[0]["digest"] for r in rs) else "NO"
            print(f"{case:<7} {name:<20} {wall:>7.2f} {cpu:>7.2f} {wall / wall0:>10.2f}x {cpu / cpu0:>9.2f}x  {same}")
    print("(ratio: the variant's median over this checkout's; above 1, this checkout is faster)")


if __name__ == "__main__":
    main()
