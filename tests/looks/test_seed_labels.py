"""Seeds labelled as text with a number (``s0, s1, s2``): the launch files never propose the numbers those labels
carry (a script that names seed k ``s<k>`` would run the same seeds again)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import rl_reliable_logger as rl
from rl_reliable_logger.data.names import seed_label_collisions
from rl_reliable_logger.looks.launch import new_runs


def test_new_seeds_skip_the_numbers_text_labels_carry() -> None:
    scores = pd.DataFrame(
        {
            "algorithm": ["A"] * 3 + ["B"] * 2,
            "task": ["x"] * 5,
            "seed": ["s0", "s1", "seed_3", "run-a", "b"],  # B's labels carry no number
        }
    )
    launch = pd.DataFrame({"algorithm": ["A", "B"], "task": ["x", "x"], "add_runs": [3, 2]})
    runs = new_runs(scores, launch)
    seeds = {a: list(g["seed"]) for a, g in runs.groupby("algorithm")}
    assert seeds == {"A": [2, 4, 5], "B": [0, 1]}
    for a, labels in scores.groupby("algorithm")["seed"]:
        assert seed_label_collisions(labels, seeds[a]) is None


def test_a_watch_of_seeds_s0_s1_s2_launches_seeds_3_on(tmp_path: Path) -> None:
    rows = [
        (a, f"t{t}", f"s{k}", float(np.random.default_rng([ord(a), t, k]).normal(t, 1.0)))
        for a in "AB"
        for t in range(2)
        for k in range(3)
    ]
    frame = pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rl.ReliabilityWarning)
        result = rl.watch(frame, state=tmp_path / "w", looks=3, max_runs=9, reps=200, seed=0)
    assert not result.stop
    launched = pd.read_csv(tmp_path / "w" / "runs.csv")
    assert len(launched) == int(result.launch["add_runs"].sum()) > 0
    assert set(launched["seed"]) == {3, 4, 5}


def test_a_cell_written_two_ways_pools_its_used_seeds() -> None:
    """A cell whose runs say a value as a number and as text (a finished run's ``0.01``, an unfinished run's
    ``"0.01"`` as its source wrote it) is one cell: every seed either used is taken (before, the second spelling's
    seeds replaced the first's, and a race after a kill proposed seeds 0 and 2 again)."""
    scores = pd.DataFrame({"algorithm": ["A"] * 3, "lr": [0.01, 0.01, "0.01"], "task": ["x"] * 3, "seed": [0, 2, "1"]})
    launch = pd.DataFrame({"algorithm": ["A"], "lr": [0.01], "task": ["x"], "add_runs": [2]})
    assert list(new_runs(scores, launch)["seed"]) == [3, 4]
