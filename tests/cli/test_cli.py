"""The `rl-reliable evaluate` contract: files written, columns, clean errors without tracebacks."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from rl_reliable_logger.cli.main import main

FAST = ["--reps", "400", "--profile-reps", "200", "--improvement-reps", "200", "--seed", "0", "--quiet"]


@pytest.fixture()
def scores_csv(tmp_path):
    rows = []
    for alg, shift in (("PPO", 0.0), ("SAC", 0.5)):
        for task in ("Hopper", "Walker"):
            for seed in range(5):
                rows.append({"agent": alg, "env": task, "run": seed, "ret": shift + seed * 0.1 + (task == "Walker")})
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_evaluate_writes_the_contract_files(scores_csv, tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "evaluate",
            str(scores_csv),
            "--algorithm-key",
            "agent",
            "--task-key",
            "env",
            "--seed-key",
            "run",
            "--score-key",
            "ret",
            "--out",
            str(out),
            "--no-figures",
            *FAST,
        ]
    )
    assert code == 0
    for name in ("aggregates", "improvement", "profiles", "per_task", "ranks"):
        assert (out / f"{name}.csv").exists(), name
    agg = pd.read_csv(out / "aggregates.csv")
    assert list(agg.columns) == ["algorithm", "metric", "point", "low", "high", "caveat"]
    assert agg.set_index(["algorithm", "metric"]).loc[("SAC", "mean"), "point"] == pytest.approx(0.5 + 0.2 + 0.5)
    assert list(pd.read_csv(out / "improvement.csv").columns) == [
        "algorithm_x",
        "algorithm_y",
        "point",
        "low",
        "high",
        "caveat",
    ]
    assert list(pd.read_csv(out / "profiles.csv").columns)[:1] == ["algorithm"]
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["reps"] == 400 and prov["seed"] == 0 and prov["source"]["path"] == str(scores_csv)


def test_printed_table_shows_intervals(scores_csv, capsys):
    args = [
        "evaluate",
        str(scores_csv),
        "--algorithm-key",
        "agent",
        "--task-key",
        "env",
        "--seed-key",
        "run",
        "--score-key",
        "ret",
        *[a for a in FAST if a != "--quiet"],
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "PPO" in text and "SAC" in text and "iqm" in text and "[" in text


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda df: df.assign(ret=df["ret"].where(df.index != 3, float("nan"))), "non-finite score"),
        (lambda df: df.assign(ret=df["ret"].astype(object).where(df.index != 3, "oops")), "non-numeric score 'oops'"),
        (lambda df: pd.concat([df, df.iloc[[0]]]), "duplicate seed"),
        (lambda df: df[~((df["agent"] == "SAC") & (df["env"] == "Walker"))], "has no runs on task 'Walker'"),
        (lambda df: df.iloc[:0], "no rows"),
        (lambda df: df.rename(columns={"ret": "return"}), "unknown column"),
    ],
)
def test_bad_input_exits_2_with_a_short_message(scores_csv, tmp_path, capsys, edit, message):
    bad = tmp_path / "bad.csv"
    edit(pd.read_csv(scores_csv)).to_csv(bad, index=False)
    code = main(
        [
            "evaluate",
            str(bad),
            "--algorithm-key",
            "agent",
            "--task-key",
            "env",
            "--seed-key",
            "run",
            "--score-key",
            "ret",
            *FAST,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_drop_invalid_records_dropped_rows(scores_csv, tmp_path):
    bad = tmp_path / "bad.csv"
    df = pd.read_csv(scores_csv)
    df.loc[3, "ret"] = float("inf")
    df.to_csv(bad, index=False)
    out = tmp_path / "res"
    assert (
        main(
            [
                "evaluate",
                str(bad),
                "--algorithm-key",
                "agent",
                "--task-key",
                "env",
                "--seed-key",
                "run",
                "--score-key",
                "ret",
                "--drop-invalid",
                "--out",
                str(out),
                "--no-figures",
                *FAST,
            ]
        )
        == 0
    )
    dropped = json.loads((out / "provenance.json").read_text())["dropped"]
    assert len(dropped) == 1 and dropped[0]["reason"].startswith("non-finite score")


def test_console_script_help_teaches():
    proc = subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger.cli", "evaluate", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    for flag in ("--normalize", "--reps", "--seed", "--ci", "--method", "--task-bootstrap", "--out", "--drop-invalid"):
        assert flag in proc.stdout
    assert "examples:" in proc.stdout


def test_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_sweep_reusing_seeds_per_configuration_evaluates(tmp_path):
    """`evaluate sweep.csv --hyperparameter-keys lr` on the usual layout: every configuration runs seeds 0..3."""
    rows = [
        {"algorithm": alg, "task": task, "seed": seed, "lr": lr, "score": lr * 100 + seed * 0.01 + (alg == "SAC")}
        for alg in ("PPO", "SAC")
        for lr in (0.001, 0.003, 0.01)
        for task in ("Hopper", "Walker")
        for seed in range(4)
    ]
    path = tmp_path / "sweep.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "res"
    assert main(["evaluate", str(path), "--hyperparameter-keys", "lr", "--out", str(out), "--no-figures", *FAST]) == 0
    tuning = pd.read_csv(out / "tuning.csv").set_index(["algorithm", "view"])
    assert tuning.loc[("PPO", "complete"), "n_runs"] == 3 * 2 * 4  # every configuration and seed is a run
    assert tuning.loc[("SAC", "tuned"), "config"] == "lr=0.01"
    assert tuning.loc[("SAC", "split"), "n_runs"] == 2 * 2  # the evaluation half of the chosen configuration
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["n_runs"] == {"PPO": 24, "SAC": 24}


def test_the_cli_and_the_library_write_byte_identical_bundles(tmp_path, monkeypatch):
    """``rl-reliable evaluate ... --out A`` and ``save_report(evaluate(...), B)`` with the same options write the
    same files, byte for byte (manifest included): the CLI prints, the library produces every text. The scores
    and options make the library warn (unequal runs per task, `profile_reps=` too small for the level), so its
    warnings, which name keywords, are part of what must be identical."""
    import datetime

    from rl_reliable_logger import ScoreTable, evaluate, save_report
    from rl_reliable_logger.analysis import evaluation

    class Clock(datetime.datetime):  # both runs "start" at the same second, so "created" is the same
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime(2026, 1, 1, tzinfo=tz)

    monkeypatch.setattr(evaluation._dt, "datetime", Clock)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": s * 0.1 + (a == "B") + (t == "y")}
        for a in ("A", "B")
        for t in ("x", "y")
        for s in range(4 if t == "x" else 3)
    ]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    flags = ["--reps", "300", "--profile-reps", "20", "--improvement-reps", "100", "--seed", "3"]
    flags += ["--metrics", "iqm,mean", "--task-bootstrap", "--compare-all", "--only-tasks", "x,y"]
    assert main(["evaluate", str(path), *flags, "--quiet", "--out", str(tmp_path / "A")]) == 0

    table = ScoreTable.from_file(path, source={"kind": "file", "path": str(path), "score_column": "score"})
    report = evaluate(
        table,
        reps=300,
        profile_reps=20,
        improvement_reps=100,
        seed=3,
        metrics=["iqm", "mean"],
        task_bootstrap=True,
        comparisons=True,
        only_tasks=["x", "y"],
    )
    assert any("`profile_reps=20`" in w for w in report.warnings)  # a text the CLI used to reword into flags
    save_report(report, tmp_path / "B")
    files = sorted(p.relative_to(tmp_path / "A") for p in (tmp_path / "A").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "B") for p in (tmp_path / "B").rglob("*") if p.is_file())
    assert len(files) > 10 and any(f.suffix == ".png" for f in files)
    different = [f for f in files if (tmp_path / "A" / f).read_bytes() != (tmp_path / "B" / f).read_bytes()]
    assert not different
