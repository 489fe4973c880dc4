"""Run rliable 1.2 (in its own venv, ``bash benchmarks/rliable/setup_rliable_venv.sh``) on a workload: one copy for every
benchmark that compares against it."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
VENV_PY = HERE.parent / ".rliable-venv" / "bin" / "python"  # benchmarks/.rliable-venv


def run_rliable(
    scores: dict[str, np.ndarray],
    taus: np.ndarray,
    pairs: list[tuple[int, int]],
    *,
    seed: int,
    reps: int,
    profile_reps: int,
    improvement_reps: int,
    venv_python: Path = VENV_PY,
) -> dict | None:
    """``rliable_worker.py``'s timings (plus ``wall``) for aggregates, profiles and the POI ``pairs``; None (with a
    printed reason) when the venv is missing or the worker fails."""
    if not venv_python.exists():
        print(
            f"  rliable venv not found ({venv_python}): run `bash benchmarks/rliable/setup_rliable_venv.sh` to compare."
        )
        return None
    algs = list(scores)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.json"
        np.savez(
            src,
            algorithms=np.array(algs),
            scores=np.stack([scores[a] for a in algs]),
            taus=taus,
            seed=seed,
            reps=reps,
            profile_reps=profile_reps,
            improvement_reps=improvement_reps,
            ci=0.95,
            poi_pairs=np.array(pairs, dtype=int).reshape(-1, 2),
            workloads=np.array(["aggregates", "profiles", "poi"]),
        )
        t0 = time.perf_counter()
        proc = subprocess.run(
            [str(venv_python), str(HERE / "rliable_worker.py"), str(src), str(dst)], capture_output=True, text=True
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print("  rliable worker failed:\n" + proc.stderr[-3000:])
            return None
        out = json.loads(dst.read_text())
        out["wall"] = wall
        return out
