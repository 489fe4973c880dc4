"""Attacks on ``rl-reliable pending --push``: a batch mixing good files with bad ones (unreadable, a run that
does not exist, a run that already holds another score, a URI whose secret was never saved, a file name
with terminal escapes), against a real MLflow SQLite store.

Every bad file is named in one line (redacted, escaped) and the batch goes on: the good scores reach
their runs, the bad files stay as they were, and the exit status is 2 (0 only when every file was pushed).
"""

from __future__ import annotations

import pytest

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.final_score import FinalScore
from rl_reliable_logger.trackers.base.pending import save_pending

from .test_corpus import RAW

mlflow = pytest.importorskip("mlflow")


def _save(folder, run_id: str, uri: str, score: float = 1.0, algorithm: str = "PPO"):
    return save_pending(FinalScore(score, algorithm, "Hopper", 0), tracker="mlflow",
                        target={"run_id": run_id, "tracking_uri": uri}, error=ConnectionError("down"),
                        directory=folder)  # fmt: skip


def test_a_batch_of_good_and_bad_files_pushes_the_good_ones_and_names_each_bad_one(tmp_path, monkeypatch, capsys):
    from tests.support.mlflow_store import log_run, make_store

    monkeypatch.chdir(tmp_path)
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("train")
    good = [log_run(client, exp, f"good{i}") for i in range(2)]
    taken = log_run(client, exp, "taken", metrics={"rl_reliable_final_score": 9.0})
    pending = tmp_path / "pending"
    for i, run_id in enumerate(good):
        _save(pending, run_id, uri, score=10.0 + i)
    conflict = _save(pending, taken, uri, score=5.0)
    missing = _save(pending, "f" * 32, uri)
    secret = _save(pending, good[0], "http://alice:p@ss@mlflow.example:5000")
    junk = pending / "junk\x1b[2J.json"
    junk.write_bytes(b"{not json")
    bad = {p: p.read_bytes() for p in (conflict, missing, secret, junk)}

    capsys.readouterr()  # MLflow's own setup lines are not the probe's
    status = main(["pending", str(pending), "--push", "--retry-for", "0"])
    out, err = capsys.readouterr()

    assert status == 2, err
    assert not RAW.search(err) and "\x1b" not in out + err and "p@ss" not in out + err
    for run_id, score in zip(good, (10.0, 11.0)):
        assert client.get_run(run_id).data.metrics["rl_reliable_final_score"] == score
        assert f"pushed: mlflow run {run_id}: score {score!r} written" in out
    assert client.get_run(taken).data.metrics["rl_reliable_final_score"] == 9.0  # another score is never replaced
    assert "2 of 5 pending score(s) pushed; 3 kept in" in out
    lines = err.strip().splitlines()
    assert len(lines) == 4, err  # one line per bad file, nothing else
    by_file = {p.name: [ln for ln in lines if p.name in ln] for p in (conflict, missing, secret)}
    assert all(len(found) == 1 for found in by_file.values()), by_file
    assert "already has rl_reliable_final_score = 9.0, not the saved 5.0" in by_file[conflict.name][0]
    assert "not recorded in full" in by_file[secret.name][0]
    assert f"run {'f' * 32} does not exist at {uri}" in by_file[missing.name][0]
    assert all(ln.count(name) == 1 and ln.endswith(".") for name, (ln,) in by_file.items())
    (skipped,) = [ln for ln in lines if ln.startswith("warning: skipped")]
    assert "junk\\u001B[2J.json: not a readable pending score file" in skipped
    for path, data in bad.items():  # kept as they were
        assert path.read_bytes() == data
    assert len(list((pending / "pushed").iterdir())) == 2 and len(list(pending.glob("*.json"))) == 4


@pytest.mark.timeout(600)
def test_two_pushes_at_once_send_every_score_once_and_both_succeed(tmp_path):
    """Two ``pending --push`` on one folder at the same time: the second used to fail on the first file the other
    had already moved ("No such file or directory", exit 2) and both could write the same score twice."""
    import os
    import subprocess
    import sys

    from tests.support.mlflow_store import log_run, make_store
    from tests.support.paths import REPO

    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("train")
    runs = [log_run(client, exp, f"r{i}") for i in range(12)]
    pending = tmp_path / "pending"
    for i, run_id in enumerate(runs):
        _save(pending, run_id, uri, score=10.0 + i)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "rl_reliable_logger.cli", "pending", str(pending), "--push", "--retry-for", "0"]
    pushers = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for _ in range(2)]  # fmt: skip
    done = [(p.returncode, *p.communicate(timeout=300)) for p in pushers]
    done = [(p.returncode, out, err) for p, (_, out, err) in zip(pushers, done)]
    for status, _out, err in done:
        assert status == 0, err
        assert not RAW.search(err), err
    pushed = sum(int(out.split("\n")[-2].split(" of ")[0]) for _, out, _ in done)
    assert pushed == 12, [out for _, out, _ in done]
    for i, run_id in enumerate(runs):
        assert [m.value for m in client.get_metric_history(run_id, "rl_reliable_final_score")] == [10.0 + i]
    assert list(pending.glob("*.json")) == [] and len(list((pending / "pushed").iterdir())) == 12
