"""``rl-reliable plan``: the plan.csv / launch.csv contract, the figure, and flag-speaking errors."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rl_reliable_logger.cli.main import main


def _pilot(path, runs: int = 3) -> None:
    rng = np.random.default_rng(0)
    rows = [
        {"algorithm": alg, "task": f"game{t}", "seed": s, "score": rng.normal(mu + t, 1.0)}
        for alg, mu in (("A", 0.0), ("B", 1.0))
        for t in range(4)
        for s in range(runs)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)


def test_plan_writes_the_contract_files(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _pilot(src)
    out = tmp_path / "plan"
    code = main(
        [
            "plan", str(src), "--metric", "mean", "--target-width", "1.5", "--compare", "A,B",
            "--max-runs", "8", "--trials", "10", "--sim-reps", "100", "--out", str(out), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    table = pd.read_csv(out / "plan.csv")
    assert {"algorithm", "metric", "n_runs", "expected_width", "p_separate"} <= set(table.columns)
    algs = table[table["kind"] == "algorithm"]
    assert sorted(algs["n_runs"].unique()) == list(range(3, 9))
    assert set(algs["algorithm"]) == {"A", "B"}
    pair = table[table["kind"] == "pair"]
    assert list(pair["algorithm"].unique()) == ["A - B"] and pair["p_separate"].between(0, 1).all()
    launch = pd.read_csv(out / "launch.csv")
    assert {"algorithm", "task", "more_runs"} <= set(launch.columns)
    assert (launch["more_runs"] >= 0).all()
    assert (out / "plan.png").stat().st_size > 1000
    assert "wrote" in capsys.readouterr().out


def test_no_target_no_launch_list(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _pilot(src)
    out = tmp_path / "plan"
    assert main(["plan", str(src), "--runs", "3,6", "--trials", "5", "--sim-reps", "50", "--out", str(out)]) == 0
    assert (out / "plan.csv").exists() and not (out / "launch.csv").exists()
    printed = capsys.readouterr().out
    assert "predicted width" in printed and "A" in printed


def test_errors_speak_flags(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _pilot(src)
    assert main(["plan", str(src), "--compare", "A,Nope", "--trials", "5"]) == 2
    err = capsys.readouterr().err
    assert "--compare" in err and "Nope" in err
    assert main(["plan", str(src), "--compare", "A"]) == 2
    assert "--compare needs two" in capsys.readouterr().err


def test_protocol_findings_come_first_and_strict_fails(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _pilot(src)
    frame = pd.read_csv(src)
    frame = frame[~((frame["algorithm"] == "B") & (frame["seed"] == 2))]  # B has 2 runs per task
    frame.to_csv(src, index=False)
    assert main(["plan", str(src), "--runs", "3", "--trials", "5", "--sim-reps", "50", "--quiet"]) == 0
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("protocol warning: runs.unequal") and "protocol warning: runs.few" in err
    assert main(["plan", str(src), "--runs", "3", "--trials", "5", "--strict"]) == 2
    err = capsys.readouterr().err
    assert "strict" in err and "runs.few" in err
