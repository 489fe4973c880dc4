"""``rl-reliable plan``: the plan.csv / launch.csv contract, the figure, flag-speaking errors, and pilots read from a
real MLflow SQLite store and real offline W&B runs with the tracker commands' own source flags."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

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
    assert first.startswith("protocol warning: algorithms have different") and "[runs.unequal;" in first
    assert "[runs.few;" in err
    assert main(["plan", str(src), "--runs", "3", "--trials", "5", "--strict"]) == 2
    err = capsys.readouterr().err
    assert "strict" in err and "runs.few" in err


# ----------------------------------------------------------------------------- tracker sources
def _mlflow_pilot(tmp_path):
    """A real MLflow SQLite store: 2 algorithms x 2 tasks x 3 finished runs, plus one RUNNING run of PPO/Pong."""
    from tests.support.mlflow_store import convention, log_run, make_store, mlflow

    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("pilot")
    rng = np.random.default_rng(1)
    scores = []
    for alg, mu in (("PPO", 10.0), ("DQN", 14.0)):
        for task in ("Pong", "Breakout"):
            for seed in range(3):
                score = float(rng.normal(mu, 1.0))
                log_run(client, exp, f"{alg}-{task}-{seed}", tags=convention(alg, task, seed),
                        metrics={"rl_reliable_final_score": score})  # fmt: skip
                scores.append({"algorithm": alg, "task": task, "seed": seed, "score": score})
    log_run(client, exp, "PPO-Pong-3", tags=convention("PPO", "Pong", 3),
            metrics={"rl_reliable_final_score": 10.5}, status=None)  # fmt: skip
    return uri, pd.DataFrame(scores)


PLAN_FAST = ["--metric", "mean", "--target-width", "3", "--compare", "DQN,PPO", "--runs", "3,5,8",
             "--trials", "10", "--sim-reps", "100", "--no-figures"]  # fmt: skip


def test_plan_on_mlflow_runs_writes_the_contract_files(tmp_path, capsys):
    uri, scores = _mlflow_pilot(tmp_path)
    out = tmp_path / "plan"
    code = main(["plan", "mlflow", "--tracking-uri", uri, "--experiment", "pilot", *PLAN_FAST, "--out", str(out)])
    assert code == 0
    err = capsys.readouterr().err
    assert "pilot: 12 runs (2 algorithms × 2 tasks, 3 runs per cell, 3 seeds) from MLflow experiment(s) pilot" in err
    assert "left out 1 unfinished" in err and "--include-unfinished" in err  # dropped runs said, in flags
    table = pd.read_csv(out / "plan.csv")
    assert {"kind", "algorithm", "metric", "n_runs", "expected_width", "p_separate"} <= set(table.columns)
    assert set(table.loc[table["kind"] == "algorithm", "algorithm"]) == {"PPO", "DQN"}
    assert list(table.loc[table["kind"] == "pair", "algorithm"].unique()) == ["DQN - PPO"]
    launch = pd.read_csv(out / "launch.csv")
    assert {"algorithm", "task", "more_runs"} <= set(launch.columns)
    # the tracker's runs, cell by cell: 3 finished runs each (the RUNNING one is left out)
    assert set(zip(launch["algorithm"], launch["task"])) == {
        (a, t) for a in ("PPO", "DQN") for t in ("Pong", "Breakout")
    }
    assert (launch["n_runs"] == 3).all()
    # the same scores from a file give the same plan: the plan is made of exactly the tracker's runs
    src = tmp_path / "pilot.csv"
    scores.to_csv(src, index=False)
    assert main(["plan", str(src), *PLAN_FAST, "--out", str(tmp_path / "from_file"), "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "from_file" / "plan.csv"), table)


def test_plan_on_mlflow_takes_the_shared_source_flags(tmp_path, capsys):
    uri, _ = _mlflow_pilot(tmp_path)
    out = tmp_path / "plan"
    argv = ["plan", "mlflow", "--tracking-uri", uri, "--experiment", "pilot", "--include-unfinished"]
    assert main([*argv, *PLAN_FAST, "--out", str(out), "--quiet"]) == 0
    launch = pd.read_csv(out / "launch.csv").set_index(["algorithm", "task"])
    assert launch.loc[("PPO", "Pong"), "n_runs"] == 4 and launch.loc[("DQN", "Pong"), "n_runs"] == 3
    # a source problem is one line in flags, before any simulation
    assert main(["plan", "mlflow", "--tracking-uri", uri, "--experiment", "nope", "--quiet"]) == 2
    assert "nope" in capsys.readouterr().err


WANDB_WRITER = r"""
import sys, wandb
from rl_reliable_logger import log_final_score
root = sys.argv[1]
for algorithm, mu in (("ucb", 1.0), ("gradient", 2.0)):
    for task in ("easy", "hard"):
        for seed in (0, 1, 2):
            run = wandb.init(project="pilot", dir=root)
            log_final_score(mu + 0.1 * seed + (task == "hard"), algorithm=algorithm, task=task, seed=seed)
            run.finish()
"""


def test_plan_on_offline_wandb_runs(tmp_path, capsys):
    pytest.importorskip("wandb")
    from tests.support.paths import REPO
    from tests.support.wandb_env import wandb_env

    env = wandb_env(tmp_path)
    env["PYTHONPATH"] = str(REPO)
    subprocess.run([sys.executable, "-c", WANDB_WRITER, str(tmp_path)], env=env, check=True, timeout=300)
    out = tmp_path / "plan"
    argv = ["plan", "wandb", "--offline-dir", str(tmp_path), "--metric", "mean", "--target-width", "0.5"]
    assert main([*argv, "--runs", "3,5", "--trials", "10", "--sim-reps", "100", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "pilot: 12 runs (2 algorithms × 2 tasks, 3 runs per cell, 3 seeds) from W&B offline runs in" in err
    table = pd.read_csv(out / "plan.csv")
    assert set(table["algorithm"]) == {"ucb", "gradient"} and sorted(table["n_runs"].unique()) == [3, 5]
    launch = pd.read_csv(out / "launch.csv")
    assert set(launch["task"]) == {"easy", "hard"} and (launch["n_runs"] == 3).all()
    assert (out / "plan.png").exists()
    # the W&B source's own checks speak flags
    assert main(["plan", "wandb", "--quiet"]) == 2
    assert "--offline-dir" in capsys.readouterr().err


def test_the_first_word_names_a_tracker_only_when_it_is_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _pilot(tmp_path / "mlflow.csv")
    argv = ["--runs", "3", "--trials", "5", "--sim-reps", "50", "--quiet", "--out"]
    assert main(["plan", "mlflow.csv", *argv, "a"]) == 0  # a file, not the tracker
    assert main(["plan", "file", "mlflow.csv", *argv, "b"]) == 0  # the optional word `file`
    assert (tmp_path / "a" / "plan.csv").read_bytes() == (tmp_path / "b" / "plan.csv").read_bytes()


# ----------------------------------------------------------------------------- run counts and unmet targets
@pytest.mark.parametrize("flags", [["--runs", "1,2,3"], ["--max-runs", "1"]])
def test_a_run_count_of_one_is_refused(tmp_path, capsys, flags):
    # one run per task has no run-to-run spread: it predicted width 0 and "1 runs per task needed; launch 0 more"
    src = tmp_path / "pilot.csv"
    _pilot(src)
    assert main(["plan", str(src), *flags, "--target-width", "1.0", "--trials", "5", "--sim-reps", "50"]) == 2
    captured = capsys.readouterr()
    assert (
        f"{flags[0]} must be" in captured.err
        and "at least 2" in captured.err
        and "no run-to-run spread" in captured.err
    )
    assert "Traceback" not in captured.err and "runs per task needed" not in captured.out


def _close_pair(path) -> None:
    """A and B with the same runs but for a shift far inside their spread: narrow intervals, no separation."""
    rng = np.random.default_rng(0)
    base = [(f"game{t}", s, rng.normal(t, 1.0)) for t in range(4) for s in range(3)]
    rows = [{"algorithm": a, "task": t, "seed": s, "score": x + shift} for a, shift in (("A", 0.0), ("B", 0.01))
            for t, s, x in base]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)


FAST = ["--runs", "3,5", "--trials", "10", "--sim-reps", "100"]


def test_an_unmet_comparison_power_is_said_as_such(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _close_pair(src)
    assert main(["plan", str(src), "--target-width", "100", "--compare", "A,B", *FAST]) == 0
    captured = capsys.readouterr()
    assert "A: the A - B comparison's power 80% is not reached within 5 runs per task" in captured.out
    assert "target width" not in captured.out and "relax" not in captured.err
    assert "the A - B comparison does not reach power 80% within 5 runs per task" in captured.err
    assert "raise --max-runs or lower --power." in captured.err


def test_an_unmet_width_is_said_as_such(tmp_path, capsys):
    src = tmp_path / "pilot.csv"
    _close_pair(src)
    assert main(["plan", str(src), "--target-width", "0.001", *FAST]) == 0
    captured = capsys.readouterr()
    assert "A: the target width 0.001 is not reached within 5 runs per task" in captured.out
    assert "power" not in captured.out + captured.err
    assert "the target width 0.001 is not reached within 5 runs per task for A, B: raise --max-runs or relax " \
        "--target-width." in captured.err  # fmt: skip
