"""Launch files of a watch look: new seeds per cell, grids that hold exactly the listed runs, checked names."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.looks.launch import grids, launch_files, new_runs, parameters


def test_new_seeds_skip_used_ones_and_uneven_cells_get_separate_grids() -> None:
    scores = pd.DataFrame(
        {
            "algorithm": ["A"] * 5 + ["B"] * 4,
            "task": ["x", "x", "x", "y", "y", "x", "x", "y", "y"],
            "seed": [0, 1, "003", 0, 1, 0, 1, "0", "1.0"],  # "003" is seed 3 to a launcher
        }
    )
    launch = pd.DataFrame({"algorithm": ["A", "A", "B", "B"], "task": ["x", "y", "x", "y"], "add_runs": [2, 2, 2, 2]})
    runs = new_runs(scores, launch)
    seeds = {(a, t): list(g["seed"]) for (a, t), g in runs.groupby(["algorithm", "task"])}
    assert seeds == {("A", "x"): [2, 4], ("A", "y"): [2, 3], ("B", "x"): [2, 3], ("B", "y"): [2, 3]}
    cover = grids(runs)
    assert len(cover) == 3  # A-x needs seeds 2, 4; A-y and B-y need 2, 3; B-x too, but A-x is not in that grid
    listed = sorted(p for g in cover for p in itertools.product(g["algorithm"], g["task"], g["seed"]))
    assert listed == sorted(map(tuple, runs.itertuples(index=False, name=None)))
    files = launch_files(scores, launch)
    assert {"runs.csv", "mlflow-params.txt", "sweep.yaml", "sweep-2.yaml", "sweep-3.yaml"} == set(files)


@pytest.mark.parametrize(
    "names", [{"seed": "a b"}, {"seed": "--x"}, {"algorithm": "seed"}, {"run": "r"}, {"task": "x\ny"}, {"task": "x\n"}]
)
def test_parameter_names_must_be_distinct_plain_words(names: dict[str, str]) -> None:
    with pytest.raises(InputError, match="launch parameter"):
        parameters(names)


def test_a_races_configurations_are_launch_fields_and_their_grids_are_exact_products() -> None:
    """A race lists (algorithm, lr, gamma, task) cells: every launch column but add_runs is the cell; configurations
    that are no product of their values (A at lr 0.1 with two gammas, at lr 0.01 with one) are split into
    products that together hold exactly the listed runs."""
    cells = [("A", 0.1, 0.9), ("A", 0.1, 0.99), ("A", 0.01, 0.9), ("B", 0.1, 0.9)]
    launch = pd.DataFrame(
        [{"algorithm": a, "lr": lr, "gamma": g, "task": t, "add_runs": 2} for a, lr, g in cells for t in ("x", "y")]
    )
    scores = pd.DataFrame(
        [
            {"algorithm": a, "lr": lr, "gamma": g, "task": t, "seed": s}
            for a, lr, g in cells
            for t in ("x", "y")
            for s in (0, 1)
        ]
        + [{"algorithm": "A", "lr": 0.1, "gamma": 0.9, "task": "x", "seed": 2}]  # one cell ran a third seed
    )
    runs = new_runs(scores, launch)
    assert list(runs.columns) == ["algorithm", "lr", "gamma", "task", "seed"]
    first = runs[(runs["algorithm"] == "A") & (runs["lr"] == 0.1) & (runs["gamma"] == 0.9) & (runs["task"] == "x")]
    assert list(first["seed"]) == [3, 4] and len(runs) == 16
    cover = grids(runs)
    listed = sorted(
        p for g in cover for p in itertools.product(g["algorithm"], g["lr"], g["gamma"], g["task"], g["seed"])
    )
    assert listed == sorted(map(tuple, runs.itertuples(index=False, name=None)))  # exactly, none twice
    files = launch_files(scores, launch, {"gamma": "discount"}, keys=["lr", "gamma"])
    first_line = files["mlflow-params.txt"].splitlines()[0]
    assert first_line.split(" -P ")[0] == "-P algorithm=A" and "-P discount=" in first_line
