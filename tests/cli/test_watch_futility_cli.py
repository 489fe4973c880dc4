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
    args += ["--futility", "0.1"]  # futility is off by default (issue 43): asked for here
    assert main(["watch", str(_scores(tmp_path / "one.csv", {"A": 3, "B": 3, "C": 3})), *args]) == 3
    first = capsys.readouterr().out
    assert "A - C: undecided;" in first and "  A: +3 in each of its 4 tasks" in first
    assert main(["watch", str(_scores(tmp_path / "two.csv", {"A": 6, "B": 3, "C": 6})), *args]) == 0
    second = capsys.readouterr().out
    assert "A - C: futile (max runs would not decide it) (look 2);" in second
    assert second.rstrip().endswith("stop: every comparison is decided or futile")
    assert pd.read_csv(state / "launch.csv").empty


def test_futility_is_a_design_flag_recorded_at_the_first_look(tmp_path: Path, capsys) -> None:
    """Without ``--futility`` (the default, 0) no pair stops for futility (the same runs as above go on: exit 3),
    the threshold is frozen with the design (another value later is refused), and a value outside [0, 1) is one
    sentence, exit 2."""
    state = tmp_path / "state"
    args = ["--state", str(state), "--looks", "4", "--max-runs", "12", "--reps", "300", "--seed", "0"]
    one, two = (
        _scores(tmp_path / "one.csv", {"A": 3, "B": 3, "C": 3}),
        _scores(tmp_path / "two.csv", {"A": 6, "B": 3, "C": 6}),
    )
    assert main(["watch", str(one), *args]) == 3
    assert main(["watch", str(two), *args, "--futility", "0"]) == 3  # the default, said
    out = capsys.readouterr().out
    assert "futile" not in out and "A - C: undecided" in out
    assert main(["watch", str(two), *args, "--futility", "0.1"]) == 2  # another design than the recorded 0
    assert "futility" in capsys.readouterr().err
    assert main(["watch", str(one), "--state", str(tmp_path / "other"), "--looks", "4", "--max-runs", "12",
                 "--futility", "1.5"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "futility" in err[0] and "Traceback" not in err[0]
