"""`--redact-run-names REGEX`: a token inside run names never leaves the machine nor reaches the console.

Checked on a file source (run ids from ``--run-key``) and on a real MLflow store (run names, published
analysis run); the numbers are the same as without the flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.cli import main as cli
from rl_reliable_logger.redaction import RunNameRedactor, redact, redacting_run_names

FAST = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0"]
TOKEN = "tok_Zq81vX"  # the secret part of every run name
PATTERN = r"tok_\w+"


def run_name(alg: str, task: str, seed: int) -> str:
    return f"{alg}-{task}-{seed}-{TOKEN}{seed}"


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def assert_absent(folder: Path, *texts: str) -> None:
    files = files_under(folder)
    assert files
    for path in files:
        data = path.read_bytes()
        assert TOKEN.encode() not in data, path
        assert TOKEN.encode("utf-16-le") not in data, path
    for text in texts:
        assert TOKEN not in text, text


def test_redactor_rules():
    r = RunNameRedactor(PATTERN)
    a, b = r(run_name("A", "t", 0)), r(run_name("A", "t", 1))
    assert TOKEN not in a and a != b and a.startswith("A-t-0-redacted-")
    assert r(a) == a and r(f"run {a} failed") == f"run {a} failed"  # applying it twice changes nothing
    assert r(run_name("A", "t", 0)) == a  # stable
    assert RunNameRedactor(".+")("ppo-3") == RunNameRedactor.label("ppo-3")
    for bad in ("tok_(", "", "x*"):
        with pytest.raises(ValueError):
            RunNameRedactor(bad)
    with redacting_run_names(PATTERN):
        assert TOKEN not in redact(f"the run {run_name('A', 't', 0)} lacks a tag")
    assert TOKEN in redact(f"the run {run_name('A', 't', 0)}", environ={})  # only while active


def test_file_source(tmp_path, capsys):
    rows = [
        {"algorithm": a, "task": t, "run": run_name(a, t, s), "seed": s, "score": 0.3 * i + 0.1 * j + 0.01 * s}
        for i, a in enumerate(["A", "B"])
        for j, t in enumerate(["t1", "t2"])
        for s in range(4)
    ]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    common = ["evaluate", str(path), *FAST, "--run-key", "run"]
    out = tmp_path / "out"
    assert cli.main([*common, "--redact-run-names", PATTERN, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert_absent(out, captured.out, captured.err)
    assert any(p.suffix == ".png" for p in files_under(out)) and (out / "report.html").exists()
    scores = pd.read_csv(out / "scores.csv")
    assert scores["run_id"].nunique() == 16 and scores["run_id"].str.contains("-redacted-").all()
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert "redacted_run_names" in prov and PATTERN not in json.dumps(prov)

    # the numbers do not change (runs are ordered by their real ids before the report is redacted)
    plain = tmp_path / "plain"
    assert cli.main([*common, "--no-figures", "--quiet", "--out", str(plain)]) == 0
    for name in ("aggregates", "per_task", "improvement", "profiles", "ranks"):
        assert (plain / f"{name}.csv").read_bytes() == (out / f"{name}.csv").read_bytes(), name

    # an error naming runs is redacted too: a duplicate run id
    rows.append(dict(rows[0]))
    pd.DataFrame(rows).to_csv(path, index=False)
    capsys.readouterr()
    assert cli.main([*common, "--redact-run-names", PATTERN, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "redacted-" in err and TOKEN not in err, err


def test_bad_regex_is_one_line_naming_the_flag_before_reading(tmp_path, capsys):
    assert cli.main(["evaluate", str(tmp_path / "missing.csv"), "--redact-run-names", "tok_(\\w+"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --redact-run-names 'tok_(\\\\w+': not a valid regular")


@pytest.mark.slow
def test_mlflow_store_bundle_console_and_published_run(tmp_path, capsys, monkeypatch):
    from tests.support.mlflow_store import convention, log_run, make_store, mlflow, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("secret-names")
        for i, alg in enumerate(["ppo", "sac"]):
            for task in ("t1", "t2"):
                for seed in range(3):
                    log_run(
                        client,
                        exp,
                        run_name(alg, task, seed),
                        tags=convention(alg, task, seed),
                        metrics={"rl_reliable_final_score": 0.3 * i + 0.02 * seed},
                    )
        # an unfinished run and a run without the fields: both are named in provenance/warnings
        log_run(client, exp, run_name("ppo", "t1", 9), tags=convention("ppo", "t1", 9), status=None)
        log_run(client, exp, run_name("other", "x", 7), metrics={"loss": 1.0})
        before = {r.info.run_id for r in client.search_runs([exp], "")}
        capsys.readouterr()
        out = tmp_path / "out"
        code = cli.main(
            [
                "mlflow",
                "--tracking-uri",
                uri,
                "--experiment",
                "secret-names",
                *FAST,
                "--redact-run-names",
                PATTERN,
                "--out",
                str(out),
                "--publish",
                "new",
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert_absent(out, captured.out, captured.err)
        scores = pd.read_csv(out / "scores.csv")
        assert scores["run_name"].str.contains("-redacted-").all()

        # the published analysis run: name, tags, params, metrics and every artifact
        new = [r for r in client.search_runs([exp], "") if r.info.run_id not in before]
        assert len(new) == 1
        run = new[0]
        fields = json.dumps([run.info.run_name, run.data.tags, run.data.params, list(run.data.metrics)])
        assert TOKEN not in fields
        arts = Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / "artifacts")))
        assert_absent(arts)


def test_library_evaluate_redacts_as_the_command_line_does():
    """``evaluate()`` under ``redacting_run_names`` returns the redacted report itself, so a library caller's
    ``save_report`` or sink writes what ``rl-reliable evaluate --redact-run-names`` writes."""
    from rl_reliable_logger import ScoreTable, evaluate

    rows = [
        {"algorithm": a, "task": t, "run": run_name(a, t, s), "seed": s, "score": 0.3 * i + 0.1 * j + 0.01 * s}
        for i, a in enumerate(["A", "B"])
        for j, t in enumerate(["t1", "t2"])
        for s in range(3)
    ]
    table = ScoreTable(pd.DataFrame(rows), run_id="run")
    kw = dict(reps=100, profile_reps=20, improvement_reps=20, seed=0)
    with redacting_run_names(PATTERN):
        redacted = evaluate(table, **kw)
    plain = evaluate(table, **kw)
    assert redacted.scores["run_id"].str.contains("-redacted-").all()
    assert TOKEN not in redacted.scores.to_csv() and "redacted_run_names" in redacted.provenance
    assert TOKEN in plain.scores.to_csv() and "redacted_run_names" not in plain.provenance
    pd.testing.assert_frame_equal(redacted.aggregates, plain.aggregates)
