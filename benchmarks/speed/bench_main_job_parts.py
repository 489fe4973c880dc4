"""Issue 44: where the README's main job spends its CPU, part by part, this checkout against an older one.

Each run is a fresh ``python`` process of one checkout that runs the main job in process
(``cli.main.main(["evaluate", "examples/atari100k_scores.csv", "--normalize", "atari100k", "--seed", "0",
"--out", DIR])``), with the package's own functions wrapped to count their CPU (``time.process_time``):

* statistics: ``analysis.evaluation.evaluate``;
* figures, drawing: ``render.writer.render_figures`` (the matplotlib figures built);
* figures, saving: ``render.export.export`` (laid out and written as PNG and SVG);
* the rest: the process's CPU (``resource.getrusage``, interpreter start-up included) less those parts: start-up,
  reading the CSV, the checks, tables, methods.md, report.html, the bundle written.

Imports are counted apart (the CPU of the outermost ``import`` statements, ``builtins.__import__`` wrapped; they
happen inside the parts above, e.g. matplotlib inside the drawing). Rounds alternate the two checkouts; medians are printed.

    nice python benchmarks/speed/bench_main_job_parts.py --against 61bcecf --repeats 3
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
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("statistics", "figures: drawing", "figures: saving", "the rest")

CODE = textwrap.dedent(
    """
    import builtins, json, resource, sys, time
    imports, outer, load = [0.0], [True], builtins.__import__

    def timed_import(*args, **kwargs):  # the CPU of outermost import statements (nested ones run inside)
        if not outer[0]:
            return load(*args, **kwargs)
        outer[0], start = False, time.process_time()
        try:
            return load(*args, **kwargs)
        finally:
            outer[0] = True
            imports[0] += time.process_time() - start

    builtins.__import__ = timed_import
    import rl_reliable_logger.analysis.evaluation as evaluation
    import rl_reliable_logger.render.export as export
    import rl_reliable_logger.render.writer as writer
    spent = {"statistics": 0.0, "figures: drawing": 0.0, "figures: saving": 0.0}

    def wrap(module, name, part):
        inner = getattr(module, name)

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[part] += time.process_time() - start

        setattr(module, name, timed)

    wrap(evaluation, "evaluate", "statistics")
    wrap(writer, "render_figures", "figures: drawing")
    wrap(export, "export", "figures: saving")
    from rl_reliable_logger.cli.main import main
    code = main(["evaluate", "examples/atari100k_scores.csv", "--normalize", "atari100k", "--seed", "0",
                 "--out", sys.argv[1], "--quiet"])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime
    spent["the rest"] = total - sum(spent.values())
    spent["total"] = total
    spent["imports (inside the parts)"] = imports[0]
    print(json.dumps({"code": code, **spent}))
    """
)


def checkout(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def one(repo: Path, out: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run([sys.executable, "-c", CODE, str(out)], cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", default=None, help="an older commit to compare with (git archive)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repos = {"this checkout": ROOT}
        if args.against:
            repos[args.against] = checkout(args.against, Path(tmp) / "against")
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in repos}
        for i in range(args.repeats):
            for name in repos if i % 2 == 0 else list(reversed(repos)):
                runs[name].append(one(repos[name], Path(tmp) / f"out-{i}-{len(runs[name])}-{name[:4]}"))
                print(f"  round {i + 1} {name}: {runs[name][-1]['total']:.2f} s CPU", flush=True)
        keys = [*PARTS, "total", "imports (inside the parts)"]
        names = list(repos)
        print(
            "CPU seconds, medians of", args.repeats, "| " + " | ".join(names) + (" | ratio" if len(names) > 1 else "")
        )
        for key in keys:
            vals = [statistics.median(r[key] for r in runs[n]) for n in names]
            ratio = f" | {vals[0] / vals[1]:.2f}x" if len(vals) > 1 and vals[1] else ""
            print(f"{key:28s} | " + " | ".join(f"{v:6.2f}" for v in vals) + ratio)


if __name__ == "__main__":
    main()
