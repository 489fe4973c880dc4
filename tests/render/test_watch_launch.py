"""Launch files of a watch look: new seeds per cell, grids that hold exactly the listed runs, checked names."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.render.watch_launch import grids, launch_files, new_runs, parameters


def test_new_seeds_skip_used_ones_and_uneven_cells_get_separate_grids() -> None:
    scores = pd.DataFrame(
        {
            "algorithm": ["A"] * 5 + ["B"] * 4,
            "task": ["x", "x", "x", "y", "y", "x", "x", "y", "y"],
            "seed": [0, 1, 3, 0, 1, 0, 1, "0", "1.0"],
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
