"""Final scores are never lost: a failed tracker write leaves a pending file, ``rl-reliable pending`` sends it.

MLflow: an unreachable tracking URI with a short retry policy (fast); the round trip through a real
``mlflow server`` that is stopped and restarted is in ``mlflow/test_mlflow_pending.py``. W&B: a Public
API run on the loopback stand-in answering 500s, then pushed once the stand-in answers again.
"""

from __future__ import annotations

import json
import os
import re
import socket

import pytest

from rl_reliable_logger import log_final_score
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.errors import InputError, TrackerError
from rl_reliable_logger.trackers.base.final_score import FinalScore
from rl_reliable_logger.trackers.base.pending import (
    PendingScoreError,
    PendingScoreWarning,
    list_pending,
    read_pending,
    save_pending,
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def unreachable_mlflow(monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    uri = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("RL_RELIABLE_PENDING_DIR", raising=False)
    old = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    yield uri
    mlflow.set_tracking_uri(old)


RUN = "0123456789abcdef0123456789abcdef"


def test_mlflow_failure_saves_the_score_and_says_where(unreachable_mlflow, tmp_path, capsys):
    with pytest.warns(PendingScoreWarning, match="saved to") as caught:
        got = log_final_score(
            812.5, algorithm="PPO", task="Hopper", seed=3.0, run=RUN, retry_for=0.5, pending_dir=tmp_path
        )
    assert got == "mlflow"
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1 and re.fullmatch(rf"mlflow-{RUN}-\d{{8}}T\d{{12}}Z-[0-9a-f]{{6}}\.json", files[0].name)
    data = json.loads(files[0].read_text())
    assert (data["score"], data["algorithm"], data["task"], data["seed"]) == (812.5, "PPO", "Hopper", 3)
    assert data["run"] == {"run_id": RUN, "tracking_uri": unreachable_mlflow}
    assert data["cause"] == "connection"
    (message,) = [str(w.message) for w in caught if w.category is PendingScoreWarning]
    assert str(files[0]) in message and f"rl-reliable pending {tmp_path} --push" in message
    assert str(files[0]) not in capsys.readouterr().err  # said once, by the warning (not printed as well)
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_on_failure_raise_names_the_file(unreachable_mlflow, tmp_path, monkeypatch):
    monkeypatch.setenv("RL_RELIABLE_PENDING_DIR", str(tmp_path / "env-dir"))
    with pytest.raises(PendingScoreError) as info:
        log_final_score(1.0, algorithm="PPO", task="Hopper", seed=0, run=RUN, retry_for=0, on_failure="raise")
    assert isinstance(info.value, TrackerError)
    assert info.value.path.parent == tmp_path / "env-dir" and info.value.path.is_file()
    assert read_pending(info.value.path).score == 1.0


def test_bad_scores_are_never_saved(unreachable_mlflow, tmp_path):
    with pytest.raises(ValueError):
        log_final_score(float("nan"), algorithm="PPO", task="Hopper", seed=0, run=RUN, pending_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_file_names_use_only_validated_characters(tmp_path):
    checked = FinalScore(1.0, "PPO", "Hopper", 0)
    hostile = "../../etc/passwd\n;rm -rf"
    path = save_pending(
        checked,
        tracker="wandb",
        target={"run_id": hostile, "entity": "e", "project": "p", "base_url": "https://u:secret99@x"},
        error=RuntimeError("HTTP 500 token=abcdef123"),
        directory=tmp_path,
    )
    assert path.parent == tmp_path and re.fullmatch(r"wandb-h[0-9a-f]{16}-\d{8}T\d{12}Z-[0-9a-f]{6}\.json", path.name)
    item = read_pending(path)
    assert item.run_id == hostile  # the id itself is kept inside the file, as data
    text = path.read_text()
    assert "secret99" not in text and "abcdef123" not in text


def test_unreadable_files_are_named_not_fatal(tmp_path, capsys):
    (tmp_path / "junk.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else"}))
    save_pending(FinalScore(2.0, "A", "T", 1), tracker="mlflow", target={"run_id": "r1", "tracking_uri": "x"},
                 error=RuntimeError("down"), directory=tmp_path)  # fmt: skip
    items, problems = list_pending(tmp_path)
    assert [i.score for i in items] == [2.0] and len(problems) == 2
    with pytest.raises(InputError, match="no pending folder"):
        list_pending(tmp_path / "missing")
    assert main(["pending", str(tmp_path)]) == 2  # listed, but the two bad files are said
    out = capsys.readouterr()
    assert "1 pending score(s)" in out.out and "junk.json" in out.err and "other.json" in out.err


# ---------------------------------------------------------------------------- W&B through the stand-in
def test_wandb_public_run_failure_is_saved_then_pushed(wandb_standin, tmp_path, monkeypatch, capsys):
    pytest.importorskip("wandb")
    import wandb

    from tests.support.wandb_standin import FAST_RETRY_SETTINGS

    wandb.setup(settings=wandb.Settings(**FAST_RETRY_SETTINGS))
    st = wandb_standin
    st.add_run("ent", "proj", id="r1", config={"lr": 0.1}, summary={"loss": 1.0})
    st.add_run("ent", "proj", id="r2", config={"lr": 0.2}, summary={"loss": 2.0})
    run = wandb.Api().run("ent/proj/r1")
    st.fail("UpsertBucket", 500, times=10_000)
    with pytest.warns(PendingScoreWarning) as caught:
        assert (
            log_final_score(55.0, algorithm="PPO", task="Hopper", seed=1, run=run, retry_for=0, pending_dir=tmp_path)
            == "wandb"
        )
    (message,) = [str(w.message) for w in caught]
    assert "could not write the final score to W&B run r1. W&B request failed (server error)" in message
    assert "Gave up after 1 attempt" in message and "nothing was retried" in message
    (path,) = tmp_path.glob("wandb-r1-*.json")
    data = json.loads(path.read_text())
    assert data["run"] == {"run_id": "r1", "entity": "ent", "project": "proj", "base_url": st.base_url}
    assert data["cause"] == "server error" and data["score"] == 55.0
    assert "rl_reliable_final_score" not in st.projects[("ent", "proj")][0]["summary"]

    # still down: the push fails, the file stays
    assert main(["pending", str(tmp_path), "--push", "--retry-for", "0"]) == 2
    assert path.is_file() and "not pushed" in capsys.readouterr().err

    st.faults.clear()  # the server is back
    assert main(["pending", str(tmp_path), "--push", "--retry-for", "0"]) == 0
    out = capsys.readouterr().out
    assert "pushed: wandb run r1: score 55.0 written" in out and "1 of 1 pending score(s) pushed" in out
    r1, r2 = st.projects[("ent", "proj")]
    assert r1["summary"] == {"loss": 1.0, "rl_reliable_final_score": 55.0}
    assert r1["config"] == {
        "lr": 0.1,
        "rl_reliable_algorithm": "PPO",
        "rl_reliable_task": "Hopper",
        "rl_reliable_seed": 1,
    }
    assert set(r1["tags"]) == {"algorithm:PPO", "task:Hopper"}
    assert r2["summary"] == {"loss": 2.0} and r2["config"] == {"lr": 0.2} and r2["tags"] == []  # never touched
    assert not path.exists() and (tmp_path / "pushed" / path.name).is_file()
    assert main(["pending", str(tmp_path)]) == 0 and "no pending final scores" in capsys.readouterr().out


def test_wandb_push_never_goes_to_another_server_or_over_another_score(wandb_standin, tmp_path, monkeypatch, capsys):
    pytest.importorskip("wandb")

    st = wandb_standin
    st.add_run("ent", "proj", id="r1", summary={"rl_reliable_final_score": 9.0})
    target = {"run_id": "r1", "entity": "ent", "project": "proj"}
    save_pending(FinalScore(5.0, "PPO", "Hopper", 1), tracker="wandb", target={**target, "base_url": "https://other.example"},
                 error=RuntimeError("500"), directory=tmp_path)  # fmt: skip
    save_pending(FinalScore(5.0, "PPO", "Hopper", 1), tracker="wandb", target={**target, "base_url": st.base_url},
                 error=RuntimeError("500"), directory=tmp_path)  # fmt: skip
    assert main(["pending", str(tmp_path), "--push", "--retry-for", "0"]) == 2
    err = capsys.readouterr().err
    assert "belongs to the W&B server https://other.example" in err
    assert "already has rl_reliable_final_score = 9.0, not the saved 5.0; left unchanged" in err
    assert st.projects[("ent", "proj")][0]["summary"] == {"rl_reliable_final_score": 9.0}
    assert len(list(tmp_path.glob("*.json"))) == 2 and "UpsertBucket" not in st.ops()


def test_wandb_live_run_that_cannot_take_the_score_is_saved(tmp_path, monkeypatch, capsys):
    """A finished wandb.init run refuses writes (wandb's UsageError): the score goes to a pending file."""
    wandb = pytest.importorskip("wandb")
    for key in [k for k in os.environ if k.startswith("WANDB_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_X_DISABLE_STATS", "true")
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WANDB_CACHE_DIR", str(tmp_path / "cache"))
    run = wandb.init(project="p", dir=str(tmp_path), mode="offline", reinit="create_new")
    run.finish()
    with pytest.warns(PendingScoreWarning) as caught:
        log_final_score(3.5, algorithm="PPO", task="Hopper", seed=2, run=run, pending_dir=tmp_path / "pending")
    (path,) = (tmp_path / "pending").glob(f"wandb-{run.id}-*.json")
    item = read_pending(path)
    assert (item.score, item.algorithm, item.task, item.seed, item.run["project"]) == (3.5, "PPO", "Hopper", 2, "p")
    assert ["could not write the final score to W&B run" in str(w.message) for w in caught] == [True]


def test_a_file_keeps_the_place_its_tracker_named_and_an_unknown_tracker_is_refused_per_file(tmp_path, capsys):
    """The pending module keeps no table of trackers: the file's plugin says where its run lives (shown by
    ``pending``), and a file naming a tracker the registry cannot write to is listed with its recorded fields and
    is one line at ``--push``, the batch going on."""
    score = FinalScore(3.0, "PPO", "Hopper", 2)
    save_pending(score, tracker="mlflow", target={"run_id": "r1", "tracking_uri": "http://tracking.example:5000"},
                 error=RuntimeError("down"), directory=tmp_path)  # fmt: skip
    foreign = save_pending(score, tracker="tensorboard", target={"run_id": "r2", "logdir": "/runs"},
                           error=RuntimeError("down"), directory=tmp_path)  # fmt: skip
    assert main(["pending", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "mlflow run r1 at http://tracking.example:5000" in out
    assert "tensorboard run r2 at logdir=/runs" in out  # no plugin describes it: the recorded fields
    assert main(["pending", str(tmp_path), "--push", "--retry-for", "0"]) == 2
    captured = capsys.readouterr()
    line = [ln for ln in captured.err.splitlines() if foreign.name in ln]
    assert len(line) == 1 and "'tensorboard', which this version cannot write to" in line[0]
    assert foreign.exists()  # kept as it was
    with pytest.raises(ValueError, match="not a tracker name"):
        save_pending(score, tracker="../x", target={"run_id": "r3"}, error=RuntimeError("down"), directory=tmp_path)
