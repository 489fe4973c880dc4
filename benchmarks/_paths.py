"""``import _paths`` first: this checkout's package, the helpers the benchmarks share with the tests
(``tests/support``: simulated populations, the Atari 100k data set, rliable's README usage) and the benchmarks'
own folders go on the import path."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # resolved: each folder of scripts has a link to this one file
BENCHMARKS = ROOT / "benchmarks"
for _folder in (
    BENCHMARKS / "rliable",
    BENCHMARKS / "speed",
    BENCHMARKS / "coverage",
    ROOT / "tests" / "support",
    ROOT,
):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
