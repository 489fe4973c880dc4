"""Property: a name is never merged, renamed or dropped. Random names (digits, whitespace, Unicode, punctuation)
go through CSV, TSV.gz, Parquet, JSON and the MLflow SQLite store; each comes back byte-identical, or the whole
input is refused with an InputError."""

from __future__ import annotations

import csv
import gzip
import json
import random

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rl_reliable_logger.data.names import display_key
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError

ALPHABET = (
    "0123456789"
    + "aAzZ"
    + " \t\n\r\u00a0\u2003"
    + "é\u0301ßΩ算🤖\u200b\u200dＡ"
    + "=+-@'\",;|$\\{}[]()<>#%&*_^~!?./:"
    + "\x00"
)
VISIBLE = "".join(ch for ch in ALPHABET if ch.isprintable() and not ch.isspace() and ch not in "\u200b\u200d\u0301")
#: Mostly names a user could have (so acceptance is exercised), often hostile ones (so refusal is).
names = st.one_of(
    st.text(alphabet=VISIBLE, min_size=1, max_size=8),
    st.text(alphabet=ALPHABET, min_size=0, max_size=8),
)
name_lists = st.lists(names, min_size=2, max_size=4, unique=True)


def frame_of(algorithms: list[str], tasks: list[str]) -> pd.DataFrame:
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(i + s)}
        for i, a in enumerate(algorithms)
        for t in tasks
        for s in range(2)
    ]
    return pd.DataFrame(rows)


def write(frame: pd.DataFrame, path) -> None:
    name = str(path)
    if name.endswith(".csv"):
        _write_csv(frame, path)
    elif name.endswith(".tsv.gz"):
        path.write_bytes(gzip.compress(_csv_text(frame, "\t").encode("utf-8")))
    elif name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    elif name.endswith(".json"):
        path.write_text(json.dumps(frame.to_dict(orient="records"), ensure_ascii=False), encoding="utf-8")


def _csv_text(frame: pd.DataFrame, sep: str) -> str:
    from rl_reliable_logger.data.csvcells import neutralise_frame

    return neutralise_frame(frame).to_csv(index=False, sep=sep)


def _write_csv(frame: pd.DataFrame, path) -> None:
    from rl_reliable_logger.store.encode import csv_bytes

    path.write_bytes(csv_bytes(frame))  # the one writer's CSV encoding


def check_round_trip(algorithms: list[str], tasks: list[str], path) -> None:
    frame = frame_of(algorithms, tasks)
    try:
        accepted = ScoreTable(frame.copy())
    except InputError:
        accepted = None
    try:
        write(frame, path)
    except csv.Error:  # Python < 3.11's csv module cannot write NUL: only names we refuse anyway hold one
        assert accepted is None
        return
    try:
        table = ScoreTable.from_file(path)
    except InputError:
        assert accepted is None, f"{path.name} refused names the DataFrame accepted: {algorithms!r} {tasks!r}"
        return
    assert accepted is not None, f"{path.name} accepted names the DataFrame refused: {algorithms!r} {tasks!r}"
    assert table.algorithms == algorithms  # byte-identical, same order, none merged or dropped
    assert table.tasks == tasks
    assert len({display_key(a) for a in algorithms}) == len(algorithms)  # never two that print the same


@pytest.mark.parametrize("suffix", [".csv", ".tsv.gz", ".parquet", ".json"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(algorithms=name_lists, tasks=name_lists)
def test_names_survive_every_format_or_are_refused(suffix, algorithms, tasks, tmp_path):
    check_round_trip(algorithms, tasks, tmp_path / f"scores{suffix}")


@pytest.mark.parametrize("name", ["007", "1", "1.0", "1e3", "NaN ", "-1", "=A1", "'=x", "''", "True", "０７"])
def test_tricky_names_byte_identical_or_refused(name, tmp_path):
    for suffix in (".csv", ".tsv.gz", ".parquet", ".json"):
        check_round_trip([name, "B"], ["t"], tmp_path / f"s{suffix}")


@pytest.mark.slow
def test_names_survive_the_mlflow_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    from rl_reliable_logger.trackers.mlflow.source import mlflow_table
    from tests.support.mlflow_store import convention, log_run, make_store, mlflow, use_store

    rng = random.Random(12)
    printable = [ch for ch in ALPHABET if ch.isprintable() and ch not in "\u200b\u200d"]
    algorithms: list[str] = ["007", "1", "1.0", "=cmd|' /C calc'!A0", "Café", "算法 🤖"]
    while len(algorithms) < 10:
        candidate = "".join(rng.choice(printable) for _ in range(rng.randint(1, 6))).strip()
        if candidate and candidate not in algorithms and display_key(candidate) not in map(display_key, algorithms):
            algorithms.append(candidate)
    tasks = ["01", "1"]
    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("names")
        for a in algorithms:
            for t in tasks:
                for s in range(2):
                    tags = convention(a, t, s)
                    log_run(client, exp, f"{a}-{t}-{s}", tags=tags, metrics={"rl_reliable_final_score": 1.0 + s})
        try:
            table = mlflow_table("names", client_kwargs={"tracking_uri": uri})
        except InputError as err:  # refused as a whole is allowed, silently changed is not
            pytest.fail(f"printable names were refused: {err}")
    assert sorted(table.algorithms) == sorted(algorithms)
    assert sorted(table.tasks) == sorted(tasks)


WANDB_WRITER = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import wandb
from rl_reliable_logger import log_final_score

names = json.loads(open(sys.argv[2], encoding="utf-8").read())
for i, algorithm in enumerate(names):
    for seed in (0, 1):
        run = wandb.init(project="names", dir=sys.argv[1])
        log_final_score(1.0 + i + seed, algorithm=algorithm, task="01", seed=seed)
        run.finish()
"""


@pytest.mark.slow
def test_names_survive_an_offline_wandb_run(tmp_path):
    pytest.importorskip("wandb")
    import subprocess
    import sys

    from rl_reliable_logger.trackers.base.records import records_to_table
    from rl_reliable_logger.trackers.wandb.offline import read_offline_runs
    from tests.support.wandb_env import wandb_env

    algorithms = ["007", "1.0", "=cmd|' /C calc'!A0", "Café", "算法 🤖", "a.b/c"]
    (tmp_path / "names.json").write_text(json.dumps(algorithms), encoding="utf-8")
    env = wandb_env(tmp_path)
    cmd = [sys.executable, "-c", WANDB_WRITER, str(tmp_path), str(tmp_path / "names.json")]
    subprocess.run(cmd, env=env, check=True, timeout=600)
    table = records_to_table(
        read_offline_runs(tmp_path),
        algorithm="config.rl_reliable_algorithm",
        task="config.rl_reliable_task",
        seed="config.rl_reliable_seed",
        score="summary.rl_reliable_final_score",
    )
    assert sorted(table.algorithms) == sorted(algorithms)
    assert table.tasks == ["01"]
