"""A race on configuration values a CSV reader misreads or a label prints alike (issue 54): the console names each
configuration apart, and the launch files start each as written (``b=3`` stays ``3``; no value is no ``-P``)."""

from __future__ import annotations

import csv

import numpy as np
import yaml

from rl_reliable_logger.trackers.mlflow.launch import read_mlflow_lines
from tests.support.cli import run_cli


def _race(tmp_path, configs, keys, capsys):
    rng = np.random.default_rng(3)
    path = tmp_path / "sweep.csv"
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["algorithm", "task", "seed", *keys, "score"])
        for values in configs:
            for seed in range(3):
                for task in ("x", "y"):
                    out.writerow(["A", task, seed, *values, rng.normal()])
    state = tmp_path / "state"
    code, out, err = run_cli(capsys, "race", path, "--state", state, "--looks", 4, "--max-runs", 12, "--delta", 0.01,
                             "--hyperparameter-keys", ",".join(keys), "--seed", 0)  # fmt: skip
    assert code == 3, err
    return out, state


def test_labels_that_print_alike_are_printed_apart_and_launched_as_written(tmp_path, capsys):
    out, state = _race(tmp_path, [("1, b=2", "3"), ("1", "2, b=3")], ["lr", "b"], capsys)
    assert "A lr='1, b=2', b=3: +" in out and "A lr=1, b='2, b=3': +" in out
    launched = {(p["lr"], p["b"]) for p in read_mlflow_lines((state / "mlflow-params.txt").read_text().splitlines())}
    assert launched == {("1, b=2", "3"), ("1", "2, b=3")}


def test_no_value_and_the_text_none_are_two_configurations_printed_and_launched_apart(tmp_path, capsys):
    out, state = _race(tmp_path, [("0.5",), ("None",), ("",)], ["lr"], capsys)
    assert "A lr='None': +" in out and "A lr=NA: +" in out and "nan" not in out
    launched = read_mlflow_lines((state / "mlflow-params.txt").read_text().splitlines())
    assert {p.get("lr") for p in launched} == {"0.5", "None", None}
    grids = [yaml.safe_load(p.read_text()) for p in sorted(state.glob("sweep*.yaml"))]
    values = [v for g in grids for v in g["parameters"]["lr"]["values"]]
    assert sorted(set(map(repr, values))) == sorted(map(repr, [0.5, "None", None]))
