"""rliable's README usage on the Atari 100k data with the drop-in ``rl_reliable_logger.rliable`` and with rliable
1.2 (in its venv), in one run: times, their ratio, and the parity of the numbers (points exactly, interval
endpoints within Monte-Carlo error). See ``rliable_readme.py`` for the workload and data.

    python benchmarks/rliable/bench_rliable_dropin.py                      # the README's replicate counts
    python benchmarks/rliable/bench_rliable_dropin.py --reps 2000          # every snippet at 2,000 replicates
    python benchmarks/rliable/bench_rliable_dropin.py --reps 5000 --write-oracle tests/rliable/oracle_readme.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

import _paths  # noqa: E402, F401  (tests/support on the path)
import rliable_readme  # noqa: E402

from rl_reliable_logger.rliable import library as rly  # noqa: E402
from rl_reliable_logger.rliable import metrics  # noqa: E402

VENV_PY = HERE.parent / ".rliable-venv" / "bin" / "python"
#: The README's replicate counts.
README_REPS = {"aggregates": 50000, "poi": 2000, "curve": 50000, "profile": 2000}


def run_rliable(finals: dict, curves: dict, reps: dict, seed: int) -> dict | None:
    """rliable 1.2's result (``rliable_readme.to_json``) and its wall time; None when the venv is missing."""
    if not VENV_PY.exists():
        print(f"rliable venv not found ({VENV_PY}): run `bash benchmarks/rliable/setup_rliable_venv.sh` to compare.")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.json"
        arrays = {f"finals_{k}": v for k, v in finals.items()} | {f"curves_{k}": v for k, v in curves.items()}
        np.savez(src, seed=seed, **arrays, **{f"reps_{k}": v for k, v in reps.items()})
        t0 = time.perf_counter()
        proc = subprocess.run(
            [str(VENV_PY), str(HERE / "rliable_readme_worker.py"), str(src), str(dst)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            print("rliable worker failed:\n" + proc.stderr[-3000:])
            return None
        out = json.loads(dst.read_text())
        out["wall"] = time.perf_counter() - t0
        return out


def compare(ours: dict, theirs: dict, reps: dict, finals: dict) -> list[str]:
    """One line per snippet: points equal?, the largest endpoint gap in units of its Monte-Carlo tolerance."""
    lines = []
    for name in ("aggregates", "poi", "curve", "profile"):
        exact = all(ours[name]["points"][k] == v for k, v in theirs[name]["points"].items())
        worst = 0.0
        for key, ci in theirs[name]["intervals"].items():
            a, b = np.asarray(ours[name]["intervals"][key]), np.asarray(ci)
            worst = max(
                worst,
                float(
                    (
                        np.abs(a - b)
                        / rliable_readme.mc_tolerance(b, reps[name], rliable_readme.lattice_step(name, finals))
                    ).max()
                ),
            )
        lines.append(f"  {name:<10} points identical: {exact}; largest endpoint gap / MC tolerance: {worst:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="one replicate count for every snippet")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-rliable", action="store_true", help="time the drop-in only")
    parser.add_argument("--write-oracle", type=Path, default=None, help="store rliable's result (JSON) here")
    args = parser.parse_args()
    reps = {k: args.reps or v for k, v in README_REPS.items()}
    finals, curves = rliable_readme.load_inputs()
    shapes = (
        {k: v.shape for k, v in finals.items()},
        {k: v[:, :, rliable_readme.FRAMES].shape for k, v in curves.items()},
    )
    print(f"replicates: {reps}\nfinal scores: {shapes[0]}\ncurves: {shapes[1]}")
    np.random.seed(args.seed)
    t0 = time.perf_counter()
    ours = rliable_readme.to_json(rliable_readme.readme_usage(rly, metrics, finals, curves, reps))
    ours_wall = time.perf_counter() - t0
    print(f"drop-in  : {ours_wall:8.2f} s  " + ", ".join(f"{k} {v:.2f}" for k, v in ours["seconds"].items()))
    theirs = None if args.skip_rliable else run_rliable(finals, curves, reps, args.seed)
    if theirs is None:
        return
    print(f"rliable  : {theirs['wall']:8.2f} s  " + ", ".join(f"{k} {v:.2f}" for k, v in theirs["seconds"].items()))
    print(f"ratio (rliable / drop-in, same run): {theirs['wall'] / ours_wall:.1f}x")
    print("\n".join(compare(ours, theirs, reps, finals)))
    if args.write_oracle is not None:
        theirs["reps"], theirs["seed"] = reps, args.seed
        theirs.pop("wall"), theirs.pop("seconds")
        args.write_oracle.write_text(json.dumps(theirs, indent=0) + "\n")
        print(f"oracle written to {args.write_oracle}")


if __name__ == "__main__":
    main()
