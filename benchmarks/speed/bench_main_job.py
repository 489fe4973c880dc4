"""End-to-end time of the README's main job, as a user runs it, with and without figures (issue 14).

Run:  python benchmarks/speed/bench_main_job.py [--repeats 5] [--against REF] [--rliable] [--stats] [--scale] [--jordan]

What is timed (each a fresh ``python -m rl_reliable_logger`` process of this checkout, wall clock and the CPU
time of the process and its children):

* the main job ``evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out DIR``, with
  figures (PNG + SVG, report.html, table.tex/md) and with ``--no-figures``;
* **cold**: a fresh, empty ``NUMBA_CACHE_DIR``, one run of each (it matters only for a ``--against`` checkout from
  before issue 22, whose numba kernels compile in that run: this checkout has no compiled code);
* **warm**: after an untimed run (byte-compiled, disk cache, numba cache of such an older checkout);
  ``--repeats`` rounds of both jobs, medians;
* start-up: ``--help`` and a ``--no-figures`` evaluation of a 2 × 2 × 2 file (warm cache);
* ``--against REF``: the same warm main job from ``git archive REF`` (e.g. ``v0.1.0``, the previous release, for
  regressions, or the commit before a speed change),
  interleaved round by round with this checkout's, for regressions;
* ``--rliable``: the paper-default statistics (4 aggregates at 50k, profiles and all-pairs POI at 2k, 6 × 10
  × 26 real Atari 100k data, see ``atari_data.py``) on a *first call in a new process*
  against rliable 1.2 in its venv on the same normalised arrays. rliable's POI takes 30-90 s per pair, so only
  ``--poi-pairs`` of the 15 pairs are timed and its total is extrapolated (said in the output).

Every ratio printed is of two numbers measured in this run. Timings are never asserted in tests. The machine is
shared: the load average is printed at the start and the end, and the CPU times are less sensitive to load than
the wall times (but they add up the CPU of parallel figure workers, which the wall time does not).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import io
import itertools
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import _paths
from machine_info import cpu_model, load_average
from rliable_runner import VENV_PY, run_rliable

HERE = Path(__file__).resolve().parent
ROOT = _paths.ROOT
SUPPORT = ROOT / "tests" / "support"  # the Atari 100k data set's helper
EXAMPLE = "examples/atari100k_scores.csv"
MAIN_JOB = ["evaluate", EXAMPLE, "--normalize", "atari100k", "--seed", "0"]
TINY = "algorithm,task,seed,score\nA,t1,0,1\nA,t1,1,2\nA,t2,0,3\nA,t2,1,4\nB,t1,0,2\nB,t1,1,3\nB,t2,0,1\nB,t2,1,5\n"


def machine() -> str:
    model = cpu_model()

    def v(pkg: str) -> str:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "-"

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"cpus={cpus} cpu={model!r} python={platform.python_version()} numpy={v('numpy')} pandas={v('pandas')} "
        f"scipy={v('scipy')} numba={v('numba')} matplotlib={v('matplotlib')}"
    )


def run(args: list[str], *, repo: Path, cache: Path, cwd: Path | None = None) -> tuple[float, float]:
    """Run ``python -m rl_reliable_logger ARGS`` from ``repo``; return (wall s, CPU s of it and its children).

    Release 0.1.0 (tag ``v0.1.0``) had no ``__main__`` module: its ``rl-reliable`` entry point is called instead.
    """
    env = dict(os.environ, PYTHONPATH=str(repo), NUMBA_CACHE_DIR=str(cache))
    if (repo / "rl_reliable_logger" / "__main__.py").is_file():
        command = [sys.executable, "-m", "rl_reliable_logger", *args]
    else:
        entry = "import sys; from rl_reliable_logger.cli import main; sys.exit(main(sys.argv[1:]))"
        command = [sys.executable, "-c", entry, *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        command,
        cwd=cwd or repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"failed: rl-reliable {' '.join(args)}\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def main_job(repo: Path, cache: Path, out: Path, figures: bool) -> tuple[float, float]:
    if out.exists():
        shutil.rmtree(out)
    return run([*MAIN_JOB, "--out", str(out), *([] if figures else ["--no-figures"])], repo=repo, cache=cache)


def warm_runs(repos: dict[str, Path], tmp: Path, repeats: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """``repeats`` rounds; each round runs every checkout's job without, then with figures (warm numba cache).

    Interleaving the checkouts and the two jobs exposes them to the same machine load.
    """
    caches = {}
    for name, repo in repos.items():
        caches[name] = tmp / f"numba-{len(caches)}"
        caches[name].mkdir()
        main_job(repo, caches[name], tmp / "warmup", True)  # fills the numba cache, byte-compiles, warms disk cache
    times: dict[str, dict[str, list[tuple[float, float]]]] = {n: {"figures": [], "no-figures": []} for n in repos}
    for _ in range(repeats):
        for name, repo in repos.items():
            times[name]["no-figures"].append(main_job(repo, caches[name], tmp / "nofig", False))
            times[name]["figures"].append(main_job(repo, caches[name], tmp / "fig", True))
    return times


def line(label: str, runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return (
        f"  {label:<44} wall median {med(walls):6.2f} s (min {min(walls):5.2f}, max {max(walls):5.2f})   "
        f"CPU median {med(cpus):6.2f} s"
    )


def ratio_line(label: str, num: list[tuple[float, float]], den: list[tuple[float, float]]) -> str:
    rw = med([w for w, _ in num]) / med([w for w, _ in den])
    rc = med([c for _, c in num]) / med([c for _, c in den])
    return f"  {label:<44} wall {rw:5.2f}   CPU {rc:5.2f}"


# --------------------------------------------------------------------------- statistics vs rliable
def stats_first_call(repo: Path, cache: Path) -> dict[str, float]:
    """Wall and CPU seconds of the paper-default evaluate() on its first call in a new process (numba cache on
    disk) and of three more (warm) calls: ``{"seconds", "cpu", "warm_seconds", "warm_cpu"}`` (warm: medians)."""
    code = (
        "import sys, time, json\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "import numpy as np, atari_data\n"
        "from rl_reliable_logger import ScoreTable, evaluate\n"
        "from rl_reliable_logger.data.normalize import get_normalizer\n"
        "table = ScoreTable(atari_data.rectangular_frame())\n"
        "final = get_normalizer('atari100k').apply(table.final())\n"
        "v = np.concatenate([s.ravel() for s in atari_data.score_dict(final).values()])\n"
        "taus = np.linspace(min(0.0, v.min()), v.max(), 101)\n"
        "runs = []\n"
        "for _ in range(4):\n"
        "    t0, c0 = time.perf_counter(), time.process_time()\n"
        "    evaluate(table, normalize='atari100k', reps=50_000, profile_reps=2_000, improvement_reps=2_000,"
        " taus=taus, seed=0, method='percentile')\n"
        "    runs.append((time.perf_counter() - t0, time.process_time() - c0))\n"
        "warm = sorted(w for w, _ in runs[1:])[1], sorted(c for _, c in runs[1:])[1]\n"
        "print(json.dumps({'seconds': runs[0][0], 'cpu': runs[0][1], 'warm_seconds': warm[0], 'warm_cpu': warm[1]}))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(repo), NUMBA_CACHE_DIR=str(cache))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the rl-reliable command sets it
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=repo)
    if proc.returncode != 0:
        raise SystemExit("statistics run failed:\n" + proc.stderr[-3000:])
    return {k: float(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def scale_case(repo: Path, cache: Path, reps: int) -> dict[str, float]:
    """The full evaluate() of 10 algorithms x 57 tasks x 100 runs (bench_vs_rliable's synthetic data) in a new
    process: wall and CPU seconds, peak RSS (MB)."""
    env = dict(os.environ, PYTHONPATH=str(repo), NUMBA_CACHE_DIR=str(cache))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cmd = [
        sys.executable,
        str(_paths.BENCHMARKS / "rliable" / "bench_vs_rliable.py"),
        "--large-worker",
        "full",
        "--reps",
        str(reps),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=repo)
    if proc.returncode != 0:
        raise SystemExit("scale case failed:\n" + proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def jordan_case(repo: Path, cache: Path) -> list[str]:
    """``bench_jordan.py --skip-old`` in a new process: its output lines, the ratio judged against the target 15."""
    env = dict(os.environ, PYTHONPATH=str(repo), NUMBA_CACHE_DIR=str(cache))
    cmd = [sys.executable, str(HERE / "bench_jordan.py"), "--skip-old"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=repo)
    if proc.returncode != 0:
        raise SystemExit("Jordan case failed:\n" + proc.stderr[-3000:])
    lines = [x for x in proc.stdout.splitlines() if x.strip()]
    ratio = next(float(x.rsplit(":", 1)[1]) for x in lines if x.startswith("ratio new / evaluate()"))
    return [
        *lines,
        f"Jordan case / plain case (wall): {ratio:.2f} (target <= 15: {'MET' if ratio <= 15 else 'NOT MET'})",
    ]


def rliable_seconds(venv_python: Path, poi_pairs: int) -> tuple[float, str] | None:
    """rliable 1.2 on the same workload (its POI extrapolated from ``poi_pairs`` pairs): (seconds, note)."""
    sys.path[:0] = [str(ROOT), str(SUPPORT)]  # this checkout's package, the benchmark's data helper
    import atari_data
    import numpy as np

    from rl_reliable_logger.data.normalize import get_normalizer
    from rl_reliable_logger.data.scores import ScoreTable

    table = ScoreTable(atari_data.rectangular_frame())
    scores = atari_data.score_dict(get_normalizer("atari100k").apply(table.final()))
    algs = list(scores)
    values = np.concatenate([s.ravel() for s in scores.values()])
    taus = np.linspace(min(0.0, values.min()), values.max(), 101)
    all_pairs = list(itertools.combinations(range(len(algs)), 2))
    pairs = all_pairs[:poi_pairs]
    out = run_rliable(
        scores, taus, pairs, seed=0, reps=50_000, profile_reps=2_000, improvement_reps=2_000, venv_python=venv_python
    )
    if out is None:
        return None
    t = out["times"]
    poi = sum(t["poi_pairs"]) / len(pairs) * len(all_pairs)
    total = t["aggregates"] + t["profile_runs"] + t["profile_tasks"] + poi
    note = (
        f"aggregates {t['aggregates']:.1f} s + profiles {t['profile_runs'] + t['profile_tasks']:.1f} s + POI "
        f"{poi:.1f} s ({len(pairs)} of {len(all_pairs)} pairs timed: "
        f"{', '.join(f'{x:.1f}' for x in t['poi_pairs'])} s, EXTRAPOLATED x{len(all_pairs)}/{len(pairs)})"
    )
    return total, note


# --------------------------------------------------------------------------- main
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="warm runs of each job (medians are reported)")
    p.add_argument("--against", metavar="REF", help="also time the warm main job of this git commit/tag")
    p.add_argument("--rliable", action="store_true", help="also time the statistics against rliable 1.2 (minutes)")
    p.add_argument("--poi-pairs", type=int, default=1, help="rliable POI pairs actually timed (of 15)")
    p.add_argument("--rliable-python", type=Path, default=VENV_PY)
    p.add_argument("--skip-cold", action="store_true")
    p.add_argument("--stats", action="store_true", help="also time the statistics alone (first and warm calls)")
    p.add_argument("--scale", action="store_true", help="also time the 10 x 57 x 100 case (targets 8 s, 1 GB)")
    p.add_argument(
        "--jordan", action="store_true", help="also time the Jordan case against a plain evaluate() (target 15)"
    )
    args = p.parse_args()

    print(machine())
    print(f"load average (1/5/15 min) at start: {load_average()}")
    print(f"checkout: {ROOT}")
    with tempfile.TemporaryDirectory(prefix="rl-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.skip_cold:
            print("\ncold numba cache (a fresh, empty NUMBA_CACHE_DIR per run: the kernels compile in the run)")
            cold_nofig = [main_job(ROOT, Path(tempfile.mkdtemp(dir=tmp)), tmp / "c1", False)]
            cold_fig = [main_job(ROOT, Path(tempfile.mkdtemp(dir=tmp)), tmp / "c2", True)]
            print(line("main job --no-figures, cold", cold_nofig))
            print(line("main job with figures, cold", cold_fig))
            print(ratio_line("ratio figures / no figures, cold", cold_fig, cold_nofig))
        repos = {"this checkout": ROOT}
        if args.against:
            ref = tmp / "ref"
            ref.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against], capture_output=True, check=True)
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(ref, filter="data")
            repos[args.against] = ref
        print(
            f"\nwarm numba cache ({args.repeats} rounds after one untimed run; each round runs "
            f"{' and '.join(repos)} without, then with figures)"
        )
        results = warm_runs(repos, tmp, args.repeats)
        for name, res in results.items():
            print(line(f"{name}: main job --no-figures", res["no-figures"]))
            print(line(f"{name}: main job with figures", res["figures"]))
            print(ratio_line(f"{name}: figures / no figures", res["figures"], res["no-figures"]))
        if args.against:
            ours, theirs = results["this checkout"], results[args.against]
            print(ratio_line(f"this checkout / {args.against}, with figures", ours["figures"], theirs["figures"]))
            print(ratio_line(f"this checkout / {args.against}, no figures", ours["no-figures"], theirs["no-figures"]))
        cache = tmp / "numba-0"

        print("\nstart-up (warm cache)")
        tiny = tmp / "tiny.csv"
        tiny.write_text(TINY)
        helps = [run(["--help"], repo=ROOT, cache=cache) for _ in range(args.repeats)]
        tinies = [
            run(
                ["evaluate", str(tiny), "--seed", "0", "--no-figures", "--out", str(tmp / f"tiny{i}")],
                repo=ROOT,
                cache=cache,
            )
            for i in range(args.repeats)
        ]
        print(line("rl-reliable --help", helps))
        print(line("--no-figures evaluation of a 2 x 2 x 2 file", tinies))

        if args.rliable or args.stats:
            print(
                "\nstatistics, paper defaults, 6 x 10 x 26 real Atari 100k data" + (", vs rliable 1.2" * args.rliable)
            )
            print(f"  load average before: {load_average()}")
            st = stats_first_call(ROOT, cache)
            print(
                f"  ours, first call in a new process (numba cache on disk): {st['seconds']:.2f} s wall, "
                f"{st['cpu']:.2f} s CPU (targets: 0.5 s on a quiet machine)"
            )
            print(
                f"  ours, warm (median of 3 more calls in that process): {st['warm_seconds']:.2f} s wall, "
                f"{st['warm_cpu']:.2f} s CPU (target: 0.3 s on a quiet machine)"
            )
            theirs_r = rliable_seconds(args.rliable_python, args.poi_pairs) if args.rliable else None
            if theirs_r is not None:
                total, note = theirs_r
                print(f"  rliable 1.2: {total:.1f} s = {note}")
                print(f"  ratio rliable / ours (first call, wall): {total / st['seconds']:.0f}x (target >= 600x)")
            print(f"  load average after: {load_average()}")
        if args.scale:
            print(
                "\nscale case: full evaluate() of 10 algorithms x 57 tasks x 100 runs, 50,000 replicates, new process"
            )
            print(f"  load average before: {load_average()}")
            sc = scale_case(ROOT, cache, 50_000)
            ok_t, ok_m = sc["seconds"] <= 8, sc["peak_rss_mb"] < 1024
            print(
                f"  {sc['seconds']:.2f} s wall, {sc['cpu']:.2f} s CPU, peak RSS {sc['peak_rss_mb']:.0f} MB "
                f"(time <= 8 s: {'MET' if ok_t else 'NOT MET'}; memory < 1 GB: {'MET' if ok_m else 'NOT MET'})"
            )
            print(f"  load average after: {load_average()}")
        if args.jordan:
            print("\nJordan et al. bootstrap at the paper's size vs a plain evaluate() (bench_jordan.py --skip-old)")
            print(f"  load average before: {load_average()}")
            for text in jordan_case(ROOT, cache):
                print(f"  {text}")
            print(f"  load average after: {load_average()}")
    print(f"\nload average (1/5/15 min) at end: {load_average()}")


if __name__ == "__main__":
    main()
