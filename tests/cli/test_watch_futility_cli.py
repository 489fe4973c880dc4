"""``rl-reliable watch`` with a futile pair: it is named as such, gets no runs, and the watch stops (exit 0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rl_reliable_logger.cli.main import main

SHIFTS = {"A": 0.0, "B": 8.0, "C": 0.05}


def _scores(path: Path, runs: dict[str, int]) -> Path:
    rows = []
    for a, n in runs.items():
        for t in range(4):
            values = np.random.default_rng([0, ord(a), t]).normal(t + SHIFTS[a], 1.0, size=20)[:n]
            rows += [(a, f"task{t}", k, float(v)) for k, v in enumerate(values)]
    pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]).to_csv(path, index=False)
    return path


def test_a_futile_pair_is_named_and_ends_the_watch(tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    args = ["--state", str(state), "--looks", "4", "--max-runs", "12", "--reps", "300", "--seed", "0"]
    assert main(["watch", str(_scores(tmp_path / "one.csv", {"A": 3, "B": 3, "C": 3})), *args]) == 3
    first = capsys.readouterr().out
    assert "A - C: undecided;" in first and "  A: +3 in each of its 4 tasks" in first
    assert main(["watch", str(_scores(tmp_path / "two.csv", {"A": 6, "B": 3, "C": 6})), *args]) == 0
    second = capsys.readouterr().out
    assert "A - C: futile (max runs would not decide it) (look 2);" in second
    assert second.rstrip().endswith("stop: every comparison is decided or futile")
    assert pd.read_csv(state / "launch.csv").empty
