"""One store, however its tracking URI is spelled, is one series with one current analysis run (issue 54).

``sqlite:///mlflow.db`` from the store's folder and ``sqlite:////abs/path/mlflow.db`` name one SQLite store; an
``http://`` URI with and without credentials names one server. Publishing the same experiment through each
spelling once left two analysis runs marked current (the series key hashed the URI as written).
"""

from __future__ import annotations

import pytest

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.publishing import uri_identity
from rl_reliable_logger.trackers.mlflow.sink import CURRENT_RUN_TAG
from tests.support.mlflow_server import mlflow_server
from tests.support.mlflow_store import convention, log_run, make_store, mlflow

FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures"]


def _experiment(uri: str) -> tuple[object, str]:
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("exp")
    for alg, seed, score in (("PPO", s, 0.6 + 0.1 * s) for s in range(3)):
        log_run(
            client, exp, f"{alg}-{seed}", tags=convention(alg, "Pong", seed), metrics={"rl_reliable_final_score": score}
        )
    for alg, seed, score in (("DQN", s, 0.2 + 0.1 * s) for s in range(3)):
        log_run(
            client, exp, f"{alg}-{seed}", tags=convention(alg, "Pong", seed), metrics={"rl_reliable_final_score": score}
        )
    return client, exp


def _current(client, exp) -> list[str]:
    found = client.search_runs([exp], "tags.`rl_reliable.role` = 'analysis'")
    return [r.info.run_id for r in found if r.data.tags.get(CURRENT_RUN_TAG) == "true"]


def _one_more_run(client, exp) -> None:
    """Changed data between two publishes: the second supersedes the first when both are one series."""
    log_run(client, exp, "PPO-3", tags=convention("PPO", "Pong", 3), metrics={"rl_reliable_final_score": 0.95})


def _publish(uri: str, capsys) -> None:
    capsys.readouterr()
    code = main(["mlflow", "--tracking-uri", uri, "--experiment", "exp", *FAST])
    assert code == 0, capsys.readouterr().err


def test_a_relative_and_an_absolute_sqlite_uri_are_one_series(tmp_path, monkeypatch, capsys):
    uri = make_store(tmp_path)
    client, exp = _experiment(uri)
    # a relative URI of this test's own: MLflow caches one store per URI string, so a bare `sqlite:///mlflow.db`
    # would reuse the store another test of the same worker opened from its own folder
    monkeypatch.chdir(tmp_path.parent)
    _publish(f"sqlite:///{tmp_path.name}/mlflow.db", capsys)
    _one_more_run(client, exp)
    _publish(f"sqlite:////{str(tmp_path).lstrip('/')}/mlflow.db", capsys)
    assert len(_current(client, exp)) == 1


def test_the_identity_of_a_uri_drops_credentials_default_ports_and_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert uri_identity("sqlite:///m.db") == uri_identity(f"sqlite:///{tmp_path}/m.db") == f"sqlite:///{tmp_path}/m.db"
    assert uri_identity("http://alice:s3cret@HOST:5000/") == uri_identity("http://host:5000") == "http://host:5000"
    assert uri_identity("https://host:443") == "https://host" != uri_identity("https://host:8443")
    assert uri_identity("http://host:5000/a") != uri_identity("http://host:5000/b")


@pytest.mark.slow
def test_a_server_uri_with_and_without_credentials_is_one_series(tmp_path, capsys):
    with mlflow_server(tmp_path) as url:
        client, exp = _experiment(url)
        _publish(url, capsys)
        _one_more_run(client, exp)
        _publish(url.replace("http://", "http://alice:s3cret@"), capsys)
        assert len(_current(client, exp)) == 1
        assert "s3cret" not in capsys.readouterr().err
