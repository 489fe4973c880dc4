"""Issue 56: a ``race`` look and a ``gate`` call from the command line, each a fresh process, with the import share.

Run (from the repository root; about half a minute):

    nice python benchmarks/speed/bench_looks_cli.py --repeats 3 [--against main]

What a loop calling the command pays each time: ``python -m rl_reliable_logger.cli`` as a new process, its CPU time
(user + system of the child, ``resource.getrusage(RUSAGE_CHILDREN)``), for

* ``race``: the first look at a sweep of 5 learning rates x 6 tasks x 2 seeds (``--looks 5 --max-runs 10
  --hyperparameter-keys lr --delta 0.1``, its default replicates), into a fresh ``--state`` each time;
* ``gate``: a candidate against an incumbent on 2 tasks x 3 paired seeds (``--min-effect 0.5``), a fresh state;
* ``race imports``, ``gate imports``: a fresh process importing every module the command loaded (recorded once by
  running it in process), and nothing else: what the command spends importing;
* ``import cli``: ``python -c 'import rl_reliable_logger.cli.main'``, what every command imports before it parses;
* ``python``: ``python -c pass``, the interpreter's own start-up.

The import share is (its imports - python) / (command - python): the part of a command's own CPU that is importing. The
cases alternate round by round (and, with ``--against REF``, with the same cases of ``git archive REF``); medians are
printed. No timing is asserted anywhere.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from bench_sweep_scale import interleaved_parser, repositories  # (this folder is on the path)

ROOT = Path(__file__).resolve().parents[2]
LRS = (0.0001, 0.0003, 0.001, 0.003, 0.01)
SHIFT = {0.0001: -0.3, 0.0003: -0.05, 0.001: 0.0, 0.003: -0.15, 0.01: -1.5}


def write_inputs(into: Path) -> dict[str, Path]:
    """The race's sweep (5 learning rates x 6 tasks x 2 seeds) and the gate's two sides (2 tasks x 3 seeds)."""
    rng = np.random.default_rng(0)
    sweep = pd.DataFrame(
        [
            {
                "algorithm": "ppo",
                "lr": lr,
                "task": f"t{m}",
                "seed": s,
                "score": 1 + 0.3 * m + SHIFT[lr] + 0.3 * rng.normal(),
            }
            for lr in LRS
            for m in range(6)
            for s in range(2)
        ]
    )
    sides = {
        name: pd.DataFrame(
            [
                {"algorithm": name, "task": t, "seed": s, "score": 10 + effect + rng.normal()}
                for t in ("walker", "hopper")
                for s in range(3)
            ]
        )
        for name, effect in (("cand", 3.0), ("base", 0.0))
    }
    paths = {"sweep": into / "sweep.csv", "cand": into / "cand.csv", "base": into / "base.csv"}
    sweep.to_csv(paths["sweep"], index=False)
    for name, frame in sides.items():
        frame.to_csv(paths[name], index=False)
    return paths


#: Runs the command line in this process and, at exit, writes the names of every module it loaded to argv[1].
RECORD = (
    "import atexit, json, runpy, sys; out = sys.argv[1]; "
    "atexit.register(lambda: json.dump(sorted(sys.modules), open(out, 'w'))); "
    "sys.argv = ['rl-reliable', *sys.argv[2:]]; runpy.run_module('rl_reliable_logger.cli', run_name='__main__')"
)
#: Imports every module named in the file argv[1] (those a command loaded), and nothing else.
IMPORT_ALL = (
    "import importlib, json, sys\n"
    "for name in json.load(open(sys.argv[1])):\n"
    "    try:\n        importlib.import_module(name)\n    except Exception:\n        pass"
)


def loaded(command: list[str], repo: Path, into: Path) -> Path:
    """The file naming every module ``command`` (``python -m rl_reliable_logger.cli ...``) loaded."""
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", RECORD, str(into), *command[3:]], cwd=repo, env=env, capture_output=True)
    return into


def commands(inputs: dict[str, Path], state: Path, modules: dict[str, Path]) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "rl_reliable_logger.cli"]
    race = ["race", str(inputs["sweep"]), "--state", str(state / "race"), "--looks", "5", "--max-runs", "10"]
    race += ["--hyperparameter-keys", "lr", "--delta", "0.1"]
    gate = ["gate", str(inputs["cand"]), "--incumbent", str(inputs["base"]), "--state", str(state / "gate")]
    gate += ["--name", "cand", "--min-effect", "0.5"]
    return {
        "race look": cli + race,
        "gate call": cli + gate,
        "race imports": [sys.executable, "-c", IMPORT_ALL, str(modules.get("race look", ""))],
        "gate imports": [sys.executable, "-c", IMPORT_ALL, str(modules.get("gate call", ""))],
        "import cli": [sys.executable, "-c", "import rl_reliable_logger.cli.main"],
        "python": [sys.executable, "-c", "pass"],
    }


def timed(command: list[str], repo: Path) -> float:
    """CPU seconds (user + system) of ``command`` as a child process; its exit status must be 0 or 3 (run more)."""
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{command[3:5]} failed (exit status {proc.returncode}):\n{proc.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report(name: str, found: dict[str, list[float]]) -> None:
    med = {case: statistics.median(times) for case, times in found.items()}
    print(f"\n== {name} (CPU seconds of a fresh process, medians)")
    for case, value in med.items():
        extra = ""
        if case in ("race look", "gate call"):
            imports = med[f"{case.split()[0]} imports"]
            share = (imports - med["python"]) / max(value - med["python"], 1e-9)
            extra = f"import share {share:.0%} (its imports {imports:.2f} s of {value:.2f} s; python itself {med['python']:.2f} s)"
        print(f"  {case:<10} {value:6.2f}  {extra}")


def main() -> None:
    args = interleaved_parser(__doc__, repeats=3).parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        inputs = write_inputs(tmp)
        repos = repositories(args.against, tmp)
        found: dict[str, dict[str, list[float]]] = {name: {} for name in repos}
        modules = {}
        for name, repo in repos.items():
            every = commands(inputs, Path(tempfile.mkdtemp(dir=tmp)), {})
            modules[name] = {
                case: loaded(every[case], repo, tmp / f"{name.replace(' ', '-')}-{case.split()[0]}.json")
                for case in ("race look", "gate call")
            }
        for round_ in range(args.repeats):
            order = list(repos) if round_ % 2 == 0 else list(reversed(repos))
            for case in ("race look", "gate call", "race imports", "gate imports", "import cli", "python"):
                for name in order:
                    state = Path(tempfile.mkdtemp(dir=tmp))  # a fresh state: every process does the first look
                    spent = timed(commands(inputs, state, modules[name])[case], repos[name])
                    found[name].setdefault(case, []).append(spent)
                    print(f"  round {round_ + 1}: {name:<14} {case:<10} cpu {spent:6.2f} s", flush=True)
    for name in repos:
        report(name, found[name])
    if args.against:
        print(f"\n== this checkout / {args.against}")
        for case in found["this checkout"]:
            now = statistics.median(found["this checkout"][case])
            then = statistics.median(found[args.against][case])
            print(f"  {case:<10} {now / then:.2f}x")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
