"""Issue 56, speed at sweep scale: every item's ratio from one interleaved run, this checkout against an older one.

Run (one command, from the repository root; about 3 minutes of CPU per round of both checkouts):

    nice python benchmarks/speed/bench_sweep_scale.py --against main --repeats 2

Each measurement is a fresh ``python`` process of one checkout (this one, or ``git archive REF`` of ``--against``)
that reports the CPU time (user + system, ``resource.getrusage``) of what it times; the rounds run every case of
every checkout one after the other, so load on a shared machine falls on all of them alike. Medians are printed,
and every ratio is of two numbers measured in this run:

1. ``evaluate()`` under ``bootstrap-t`` / the same call under ``percentile``: Atari 100k (6 algorithms x 26 games,
   5-10 runs, normalised), 20,000 replicates for the aggregates (2,000 for profiles and P(X > Y)).
2. The profiles table under ``bootstrap-t`` / under ``percentile`` (the CPU of ``analysis.tables.profiles.build``
   within the calls of 1).
3. Sweep scaling: ``evaluate()`` of 57 configurations / of 6 (10 tasks x 10 runs, 10,000 replicates, percentile),
   with the growth exponent (log time ratio / log 9.5); ``pairs="auto"`` (each against the leader above 10) and
   ``pairs="all"`` (every pair: what an older checkout always does).
4. The README's main job (``rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0
   --out DIR``, in process): PNG figures (the default now), PNG + SVG (``--figure-formats png,svg``, the default
   before) and ``--no-figures``.
5. ``plan`` on the README example (``--normalize atari100k --target-width 0.05``) and with a pair (``--compare
   'SPR,DrQ(eps)' --max-runs 30``), CPU of the ``plan()`` call and of the whole process.
6. ``from rl_reliable_logger import race, watch, gate`` (and their modules): what a loop calling a look or the gate
   imports before any work, CPU of the import and of the whole process.

A checkout that lacks an option (``pairs=`` before issue 56) runs only the cases it has; its main job's default
figures were PNG + SVG, so it runs ``png,svg`` and ``--no-figures``. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

EVALUATE = textwrap.dedent(
    """
    import json, resource, sys, time
    import rl_reliable_logger.analysis.evaluation as evaluation
    from rl_reliable_logger import ScoreTable, evaluate
    method, reps = sys.argv[1], int(sys.argv[2])
    table = ScoreTable.from_csv("examples/atari100k_scores.csv")
    spent = {}

    def wrap(module, part):
        inner = module.build

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[part] = spent.get(part, 0.0) + time.process_time() - start

        module.build = timed

    for part in ("aggregates", "differences", "profiles", "improvement", "per_task"):
        wrap(getattr(evaluation, part), part)
    evaluate(table, normalize="atari100k", method=method, reps=300, profile_reps=100,
             improvement_reps=100, seed=1)  # warm: imports (scipy.special for bootstrap-t) and first calls unclocked
    spent.clear()
    start = time.process_time()
    evaluate(table, normalize="atari100k", method=method, reps=reps, seed=0)
    print("RESULT " + json.dumps({"cpu": time.process_time() - start, **spent}))
    """
)

SWEEP = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np, pandas as pd
    from rl_reliable_logger import ScoreTable, evaluate
    configs, rule, reps = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(7)
    rows = [
        {"algorithm": f"c{c:02d}", "task": f"t{m}", "seed": s, "score": float(rng.normal(0.02 * c + 0.1 * m, 0.3))}
        for c in range(configs) for m in range(10) for s in range(10)
    ]
    table = ScoreTable(pd.DataFrame(rows))
    extra = {} if rule == "-" else {"pairs": rule}
    evaluate(table, method="percentile", reps=200, profile_reps=50, improvement_reps=50, seed=1)  # warm
    start = time.process_time()
    evaluate(table, method="percentile", reps=reps, profile_reps=min(reps, 2_000), improvement_reps=min(reps, 2_000),
             seed=0, **extra)
    print("RESULT " + json.dumps({"cpu": time.process_time() - start}))
    """
)

MAIN_JOB = textwrap.dedent(
    """
    import json, resource, sys
    from rl_reliable_logger.cli.main import main
    figures = sys.argv[2]
    flags = ["--no-figures"] if figures == "none" else ["--figure-formats", figures]
    code = main(["evaluate", "examples/atari100k_scores.csv", "--normalize", "atari100k", "--seed", "0",
                 "--out", sys.argv[1], "--quiet", *flags])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("RESULT " + json.dumps({"code": code, "cpu": usage.ru_utime + usage.ru_stime}))
    """
)

PLAN = textwrap.dedent(
    """
    import json, resource, sys, time
    from rl_reliable_logger import ScoreTable, plan
    table = ScoreTable.from_csv("examples/atari100k_scores.csv")
    kw = {"normalize": "atari100k", "seed": 0}
    if sys.argv[1] == "compare":
        kw.update(compare=("SPR", "DrQ(eps)"), max_runs=30)
    else:
        kw.update(target_width=0.05)
    start = time.process_time()
    p = plan(table, **kw)
    spent = time.process_time() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("RESULT " + json.dumps({"cpu": spent, "process": usage.ru_utime + usage.ru_stime,
                                  "needed": p.needed}))
    """
)


IMPORTS = textwrap.dedent(
    """
    import json, resource, time
    start = time.process_time()
    from rl_reliable_logger import gate, race, watch
    import rl_reliable_logger.looks.gate, rl_reliable_logger.looks.race, rl_reliable_logger.looks.watch
    spent = time.process_time() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("RESULT " + json.dumps({"cpu": spent, "process": usage.ru_utime + usage.ru_stime}))
    """
)


def checkout(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def has_pairs_option(repo: Path) -> bool:
    return "PAIR_RULES" in (repo / "rl_reliable_logger" / "analysis" / "options.py").read_text(encoding="utf-8")


def run(repo: Path, code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=repo, env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{args} in {repo} failed (exit status {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def cases(tmp: Path, *, new: bool, reps: int = 20_000) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Case name -> (code, arguments) for one checkout."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {
        "evaluate bootstrap-t": (EVALUATE, ("bootstrap-t", str(reps))),
        "evaluate percentile": (EVALUATE, ("percentile", str(reps))),
    }
    rules = ("auto", "all") if new else ("-",)
    for rule in rules:
        for n in (6, 57):
            out[f"sweep {n} pairs {'all' if rule == '-' else rule}"] = (SWEEP, (str(n), rule, str(reps // 2)))
    for figures in ("png", "png,svg", "none") if new else ("png,svg", "none"):
        out[f"main job {figures}"] = (MAIN_JOB, (str(tmp / f"out-{figures}"), figures))
    out["import the looks"] = (IMPORTS, ())
    out["plan target-width"] = (PLAN, ("width",))
    out["plan compare"] = (PLAN, ("compare",))
    return out


def med(results: dict[str, list[dict]], case: str, key: str = "cpu") -> float:
    return statistics.median(r[key] for r in results[case]) if results.get(case) else math.nan


def report(name: str, results: dict[str, list[dict]]) -> None:
    print(f"\n== {name} (CPU seconds, medians)")
    for case, rs in results.items():
        extra = ""
        if case.startswith("evaluate"):
            extra = "  ".join(
                f"{part} {statistics.median(r.get(part, 0.0) for r in rs):.2f}"
                for part in ("aggregates", "differences", "profiles", "improvement", "per_task")
            )
        if case.startswith("import"):
            extra = f"process {med(results, case, 'process'):.2f} (interpreter start-up included)"
        if case.startswith("plan"):
            extra = f"process {med(results, case, 'process'):.2f}  needed {rs[0]['needed']}"
        print(f"  {case:<28} {med(results, case):8.2f}  {extra}")
    bt, pc = med(results, "evaluate bootstrap-t"), med(results, "evaluate percentile")
    prof_bt = med(results, "evaluate bootstrap-t", "profiles")
    prof_pc = med(results, "evaluate percentile", "profiles")
    lines = [
        f"1. evaluate() bootstrap-t / percentile (6 x 26 x 10, 20k replicates): {bt / pc:.2f}x",
        f"2. profiles table bootstrap-t / percentile: {prof_bt / prof_pc:.2f}x",
    ]
    for rule in ("auto", "all"):
        small, large = med(results, f"sweep 6 pairs {rule}"), med(results, f"sweep 57 pairs {rule}")
        lines.append(
            f"3. evaluate() 57 / 6 configurations, pairs {rule}: {large / small:.2f}x "
            f"(growth exponent {math.log(large / small) / math.log(57 / 6):.2f})"
        )
    svg, png, bare = (med(results, f"main job {f}") for f in ("png,svg", "png", "none"))
    lines.append(f"4. main job PNG + SVG / PNG only: {svg / png:.2f}x; PNG only / no figures: {png / bare:.2f}x")
    lines.append(f"4. main job with its default figures / without: {(svg if math.isnan(png) else png) / bare:.2f}x")
    for line in lines:
        if "nan" not in line:  # a case not run (--only) or not in this checkout
            print(f"  {line}")


def interleaved_parser(doc: str, repeats: int) -> argparse.ArgumentParser:
    """The flags of an interleaved benchmark against an older checkout: ``--against REF`` and ``--repeats``."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--against", metavar="REF", help="also run an older checkout (git archive REF), e.g. main")
    p.add_argument("--repeats", type=int, default=repeats, help="interleaved rounds (medians are printed)")
    return p


def repositories(against: str | None, tmp: Path) -> dict[str, Path]:
    """This checkout and, with ``against``, that ref's files unpacked under ``tmp``."""
    repos = {"this checkout": ROOT}
    if against:
        repos[against] = checkout(against, tmp / "against")
    return repos


def main() -> None:
    p = interleaved_parser(__doc__, repeats=2)
    p.add_argument("--reps", type=int, default=20_000, help="evaluate()'s replicates (the sweeps take half)")
    p.add_argument("--only", metavar="PREFIX", help="run only the cases whose name starts with PREFIX")
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        repos = repositories(args.against, tmp)
        plans = {
            name: {
                case: spec
                for case, spec in cases(
                    tmp / name.replace(" ", "-"), new=has_pairs_option(repo), reps=args.reps
                ).items()
                if args.only is None or case.startswith(args.only)
            }
            for name, repo in repos.items()
        }
        results: dict[str, dict[str, list[dict]]] = {name: {case: [] for case in plan} for name, plan in plans.items()}
        for round_ in range(args.repeats):
            order = list(repos) if round_ % 2 == 0 else list(reversed(repos))
            every = list(plans["this checkout"]) + [c for c in plans[order[-1]] if c not in plans["this checkout"]]
            for case in every:
                for name in order:
                    if case in plans[name]:
                        code, case_args = plans[name][case]
                        results[name][case].append(run(repos[name], code, *case_args))
                        print(
                            f"  round {round_ + 1}: {name:<14} {case:<28} cpu {results[name][case][-1]['cpu']:7.2f} s",
                            flush=True,
                        )
    for name in repos:
        report(name, results[name])
    if args.against:
        before, after = results[args.against], results["this checkout"]
        print(f"\n== this checkout / {args.against}")
        for case in after:
            if case in before:
                print(f"  {case:<28} {med(after, case) / med(before, case):.2f}x")
        for label, now, then in (
            ("main job, default figures", "main job png", "main job png,svg"),
            ("sweep 57, default pairs", "sweep 57 pairs auto", "sweep 57 pairs all"),
        ):
            ratio = med(after, now) / med(before, then)
            if not math.isnan(ratio):
                print(f"  {label:<28} {ratio:.2f}x")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
