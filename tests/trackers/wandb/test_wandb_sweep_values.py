"""A race's ``sweep.yaml`` keeps each configuration value's type (issue 54): a float raced as ``0.3`` is launched as
the number 0.3, so the W&B runs of the sweep log ``lr`` as a number and the next look sees one configuration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.wandb.launch import sweep_yaml


def test_numbers_stay_numbers_and_text_stays_text():
    grid = {
        "algorithm": ["1e3", "yes"],
        "lr": [0.3, 1.0, np.float64(1e-5), "None", "0.5"],
        "layers": [np.int64(2), 3],
        "norm": [True, False],
        "task": ["null"],
        "seed": [0, 1],
    }
    names = {k: k for k in grid}
    values = {k: v["values"] for k, v in yaml.safe_load(sweep_yaml(grid, names))["parameters"].items()}
    assert values["algorithm"] == ["1e3", "yes"] and values["task"] == ["null"]
    assert values["lr"] == [0.3, 1.0, 1e-5, "None", "0.5"]
    assert [type(v) for v in values["lr"]] == [float, float, float, str, str]
    assert values["layers"] == [2, 3] and all(type(v) is int for v in values["layers"])
    assert values["norm"] == [True, False] and values["seed"] == [0, 1]


def test_a_race_on_float_hyperparameters_launches_floats(tmp_path):
    rng = np.random.default_rng(0)
    rows = [
        {"algorithm": "A", "task": t, "seed": s, "lr": lr, "score": rng.normal(1.0 if lr == 0.3 else 0.0)}
        for lr in (0.3, 1.0, 3.0)
        for t in ("x", "y")
        for s in range(3)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "sweep.csv", index=False)
    state = tmp_path / "state"
    args = [str(tmp_path / "sweep.csv"), "--state", str(state), "--looks", "4", "--max-runs", "12"]
    try:
        main(["race", *args, "--hyperparameter-keys", "lr", "--delta", "0.05", "--seed", "0"])
    except SystemExit as stop:
        assert stop.code == 3
    sweep = yaml.safe_load((state / "sweep.yaml").read_text())
    launched = sweep["parameters"]["lr"]["values"]
    assert launched and all(type(v) is float for v in launched)
    assert set(launched) <= {0.3, 1.0, 3.0}


def test_no_value_and_the_text_none_are_two_launches(tmp_path):
    """A configuration with an empty ``lr`` cell (no value) and one whose ``lr`` is the text ``None``: the sweep
    grid writes null and ``'None'``, and ``mlflow run`` gets no ``-P lr`` for the first (the entry point's default),
    ``-P lr=None`` for the second, never ``lr=nan``."""
    from rl_reliable_logger.trackers.mlflow.launch import mlflow_lines, read_mlflow_lines

    runs = pd.DataFrame(
        {"algorithm": ["A"] * 3, "lr": [0.2, None, "None"], "task": ["x"] * 3, "seed": [0, 0, 0]}, dtype=object
    )
    names = {k: k for k in runs.columns}
    grid = {"algorithm": ["A"], "lr": [0.2, float("nan"), "None"], "task": ["x"], "seed": [0]}
    assert yaml.safe_load(sweep_yaml(grid, names))["parameters"]["lr"]["values"] == [0.2, None, "None"]
    launched = read_mlflow_lines(mlflow_lines(runs, names).splitlines())
    assert [p.get("lr") for p in launched] == ["0.2", None, "None"]
    assert all(p["algorithm"] == "A" and p["seed"] == "0" for p in launched)
