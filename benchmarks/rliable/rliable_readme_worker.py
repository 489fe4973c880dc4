"""Run rliable's README usage (``rliable_readme.readme_usage``) with rliable 1.2 itself, in its venv
(``bash benchmarks/rliable/setup_rliable_venv.sh``). Usage: ``python rliable_readme_worker.py in.npz out.json``.

``in.npz``: ``finals_<alg>`` and ``curves_<alg>`` arrays, ``reps_<snippet>`` counts and ``seed`` (numpy's global
seed, which rliable's draws read). Writes ``rliable_readme.to_json`` of the result.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))  # rliable_readme.py

import rliable_readme  # noqa: E402
from rliable import library as rly  # noqa: E402
from rliable import metrics  # noqa: E402


def main(src: str, dst: str) -> None:
    data = np.load(src)
    finals = {k[len("finals_") :]: data[k] for k in data.files if k.startswith("finals_")}
    curves = {k[len("curves_") :]: data[k] for k in data.files if k.startswith("curves_")}
    reps = {k[len("reps_") :]: int(data[k]) for k in data.files if k.startswith("reps_")}
    np.random.seed(int(data["seed"]))
    result = rliable_readme.readme_usage(rly, metrics, finals, curves, reps)
    Path(dst).write_text(json.dumps(rliable_readme.to_json(result)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
