"""`--normalize-names`: names with surrounding whitespace or in NFD are refused naming the flag, and accepted
(stripped, put in NFC) with it, each change printed on the console and listed in provenance — files and MLflow."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pytest

from rl_reliable_logger.cli import main as cli

FAST = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0"]
NFD = unicodedata.normalize("NFD", "Café")
NFC = unicodedata.normalize("NFC", "Café")


def _rows(algorithms, tasks=("t1", "t2 "), seeds=3):
    return [
        {"algorithm": a, "task": t, "seed": s, "score": 0.1 * i + 0.05 * j + 0.01 * s}
        for i, a in enumerate(algorithms)
        for j, t in enumerate(tasks)
        for s in range(seeds)
    ]


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_files_refused_without_the_flag_and_normalised_with_it(tmp_path, capsys, suffix):
    frame = pd.DataFrame(_rows([NFD, " PPO"]))
    path = tmp_path / f"scores{suffix}"
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
        frame.to_parquet(path)
    elif suffix == ".json":
        frame.to_json(path, orient="records")
    else:
        frame.to_csv(path, index=False)

    assert cli.main(["evaluate", str(path), *FAST, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: ") and "--normalize-names" in err, err
    assert "names='normalize'" not in err  # the CLI speaks flags

    out = tmp_path / "out"
    assert cli.main(["evaluate", str(path), *FAST, "--normalize-names", "--no-figures", "--out", str(out)]) == 0
    console = capsys.readouterr().out
    # every rewrite is named on the console; a Unicode-only change is shown escaped (it would look the same)
    line = next(x for x in console.splitlines() if "rewritten by --normalize-names" in x)
    assert line.startswith("warning: 3 name(s) rewritten")
    assert ascii(NFD) in line and ascii(NFC) in line and "' PPO' normalised to 'PPO'" in line
    assert "'t2 ' normalised to 't2'" in line
    scores = pd.read_csv(out / "scores.csv")
    assert set(scores["algorithm"]) == {NFC, "PPO"} and set(scores["task"]) == {"t1", "t2"}
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert len(prov["source"]["name_rewrites"]) == 3


def test_quiet_still_prints_the_rewrites(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    pd.DataFrame(_rows(["A", "B "], tasks=("t1", "t2"))).to_csv(path, index=False)
    assert cli.main(["evaluate", str(path), *FAST, "--normalize-names", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "warning: 1 name(s) rewritten by --normalize-names: algorithm name 'B ' normalised to 'B'" in captured.err


def test_names_that_collide_after_normalising_are_still_an_error(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    pd.DataFrame(_rows(["A", "A "], tasks=("t1", "t2"))).to_csv(path, index=False)
    assert cli.main(["evaluate", str(path), *FAST, "--normalize-names", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "duplicate" in err, err


def test_mlflow_tags_with_whitespace_need_the_flag(tmp_path, capsys, monkeypatch):
    from tests.support.mlflow_store import convention, log_run, make_store, mlflow, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("names")
        for i, alg in enumerate(["ppo ", NFD]):
            for task in ("t1", "t2"):
                for seed in range(3):
                    log_run(
                        client,
                        exp,
                        f"{alg}-{task}-{seed}",
                        tags=convention(alg, task, seed),
                        metrics={"rl_reliable_final_score": 0.2 * i + 0.01 * seed},
                    )
    args = ["mlflow", "--tracking-uri", uri, "--experiment", "names", *FAST, "--publish", "none"]
    capsys.readouterr()  # MLflow's own log lines of creating the store
    assert cli.main([*args, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--normalize-names" in err and "leading or trailing whitespace" in err, err

    out = tmp_path / "out"
    assert cli.main([*args, "--normalize-names", "--no-figures", "--out", str(out)]) == 0
    console = capsys.readouterr().out
    assert "'ppo ' normalised to 'ppo'" in console and ascii(NFD) in console
    assert set(pd.read_csv(out / "aggregates.csv")["algorithm"]) == {"ppo", NFC}


def test_tracker_name_errors_name_the_run_not_a_row_number(tmp_path, monkeypatch, capsys):
    """Row numbers of an internal frame mean nothing to a tracker user: the refused name's run id is given."""
    mlflow = pytest.importorskip("mlflow")
    from tests.support.mlflow_store import convention, log_run, make_store, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("padded")
        ids = {}
        for alg in ("PPO", "SAC "):
            for seed in range(2):
                ids[(alg, seed)] = log_run(
                    client, exp, f"r{seed}", tags=convention(alg, "t1", seed), metrics={"rl_reliable_final_score": 1.0}
                )
    capsys.readouterr()
    code = cli.main(["mlflow", "--tracking-uri", uri, "--experiment", "padded", *FAST, "--publish", "none", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "run(s) " in err and "row(s)" not in err, err
    assert ids[("SAC ", 0)] in err and ids[("SAC ", 1)] in err and ids[("PPO", 0)] not in err, err
