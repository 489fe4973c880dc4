"""Messages that said something else than what happened: each now names the file, field or budget."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import time
import warnings

import pytest

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.data.read_memory import gzip_damage

from .generate import _csv, grid

FAST = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--quiet"]


# ----------------------------------------------------------------------------------------- disk full
@pytest.fixture()
def full_disk(tmp_path):
    """A 64 KiB tmpfs: writing a results folder runs out of space (needs root and mount; skipped otherwise)."""
    mount = tmp_path / "full"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_full_disk_names_the_folder_being_written(full_disk, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    path.write_bytes(_csv(grid(["A", "B"], [f"t{i}" for i in range(30)], seeds=5)))
    assert main(["evaluate", str(path), *FAST, "--out", str(full_disk / "out")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("warning: ")]
    assert errors == [f"error: No space left on device: {full_disk / 'out'}"], errors
    assert os.listdir(full_disk) == []  # the temporary folder is removed, nothing half-written is left


# ----------------------------------------------------------------------------------- truncated .gz
def test_a_truncated_gzip_is_refused_as_damaged_not_as_too_large(tmp_path, capsys, monkeypatch):
    """A cut .csv.gz has random bytes where gzip records the size: it read as "reading its 3.9 GB of csv data"."""
    from rl_reliable_logger.data import read_memory

    monkeypatch.setattr(read_memory, "available_memory", lambda: 2.0**30)
    data = gzip.compress(_csv(grid(["A", "B"], [f"t{i}" for i in range(200)], seeds=50)), mtime=0)
    for at in range(len(data) // 10, len(data) - 1, len(data) // 7):
        cut = data[:at]
        path = tmp_path / "cut.csv.gz"
        path.write_bytes(cut)
        recorded = int.from_bytes(cut[-4:], "little")
        assert gzip_damage(path) == "it ends before the end of its compressed data (cut short)"
        status = main(["evaluate", str(path), *FAST])
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1, err
        if recorded * 25 > 2**30:  # the size it seems to record would be refused as too large
            assert "not a complete gzip file: it ends before the end of its compressed data" in err, err
        assert "would need about" not in err, err
    whole = tmp_path / "whole.csv.gz"
    whole.write_bytes(data + gzip.compress(b""))  # two members: complete
    assert gzip_damage(whole) is None


# -------------------------------------------------------------------------------------- nested JSON
@pytest.mark.parametrize("value", ['"2"', '"abc"', "[2]", '{"x": 2}'])
def test_nested_json_refuses_strings_and_containers_as_scores(tmp_path, capsys, value):
    path = tmp_path / "scores.json"
    path.write_text('{"A": {"t": [1, ' + value + ', 2]}, "B": {"t": [1, 2, 3]}}')
    assert main(["evaluate", str(path), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: nested scores: 'A' / 't' run 1 is a "), err
    assert "not a number" in err and err.count("\n") == 1


# ------------------------------------------------------------------------- two final scores, one run
def test_a_second_different_final_score_on_an_mlflow_run_is_said(tmp_path, monkeypatch):
    from rl_reliable_logger import log_final_score
    from tests.support.mlflow_store import make_store, mlflow, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("twice")
        with mlflow.start_run():
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                log_final_score(1.0, algorithm="A", task="t", seed=0)
                log_final_score(1.0, algorithm="A", task="t", seed=0)  # the same value again: nothing to say
            with pytest.warns(UserWarning, match=r"already has rl_reliable_final_score = 1\.0; 2\.0 is logged after"):
                log_final_score(2.0, algorithm="A", task="t", seed=0)


# ----------------------------------------------------------------------------------- a spent budget
def test_a_spent_retry_budget_does_not_say_seconds_are_left_of_it():
    """``--retry-for 0``: while the one request runs, the progress line said "10 s left of the time budget"."""
    from rl_reliable_logger.trackers.base.retry import RetryPolicy

    said: list[str] = []
    policy = RetryPolicy(total=0, request_timeout=3.0, progress_every=0.2, progress=said.append)
    assert policy.call(lambda: time.sleep(0.7) or 42, "reading the run") == 42
    assert said, "no progress line"
    for line in said:
        assert "left of the time budget" not in line, line
        assert "the 0 s time budget is spent; this last request gets " in line, line
    said.clear()
    policy = RetryPolicy(total=30, request_timeout=3.0, progress_every=0.2, progress=said.append)
    policy.call(lambda: time.sleep(0.5), "reading the run")
    assert said and all("s left of the 30 s time budget" in line for line in said), said
    left = [int(line.split(" s left of the 30 s")[0].rsplit(" ", 1)[1]) for line in said]
    assert all(n <= 30 for n in left), left  # the countdown never shows more than the budget
