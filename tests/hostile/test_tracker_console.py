"""What MLflow itself prints during our calls carries no secret, and odd metric values in MLflow runs are said.

Against a real ``mlflow server`` on 127.0.0.1 (no authentication: the server ignores the user-info, the client
still builds every URL, and so every printed link, from the URI as given). A publish used to print MLflow's own
``🏃 View run ... at: http://alice:PASSWORD@...`` and ``🧪 View experiment at: ...`` lines to stdout."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mlflow_server import mlflow_server
from tests.support.paths import REPO

mlflow = pytest.importorskip("mlflow")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SECRET = "PA55-w0rd-s3cret"
STATS = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--no-figures"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("console_server")
    with mlflow_server(root, startup=180) as url:
        yield {"url": url, "secret_uri": url.replace("http://", f"http://alice:{SECRET}@"), "root": root}


def _experiment(url: str, name: str, scores: dict[tuple[str, int], float]) -> None:
    from mlflow.entities import Metric, RunTag

    client = mlflow.MlflowClient(url)
    experiment = client.create_experiment(name)
    for (algorithm, seed), value in scores.items():
        run = client.create_run(experiment)
        tags = {"rl_reliable_algorithm": algorithm, "rl_reliable_task": "t", "rl_reliable_seed": str(seed)}
        client.log_batch(
            run.info.run_id,
            metrics=[Metric("rl_reliable_final_score", value, int(time.time() * 1000), 0)],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        client.update_run(run.info.run_id, status="FINISHED")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in its own process: everything it and MLflow write to stdout and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env.update(PYTHONPATH=str(REPO), MLFLOW_DISABLE_TELEMETRY="true")
    return subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


GOOD = {(a, s): (1.0 if a == "B" else 0.0) + 0.1 * s for a in ("A", "B") for s in range(3)}


def test_a_publish_prints_no_password_from_mlflow_itself(server, tmp_path):
    _experiment(server["url"], "console", GOOD)
    done = _cli("mlflow", "--tracking-uri", server["secret_uri"], "--experiment", "console", *STATS,
                "--publish", "new", cwd=tmp_path)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert SECRET not in output, output
    assert "View run" not in output  # MLflow's own link line; ours follows, redacted
    assert "published to MLflow" in done.stderr and "alice:***@" in done.stderr, done.stderr
    assert "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT" not in os.environ  # nothing left set in this process either


def test_the_switch_is_restored_and_a_users_own_setting_is_kept(server, monkeypatch):
    from rl_reliable_logger.trackers.mlflow.quiet import end_run_quietly

    client = mlflow.MlflowClient(server["url"])
    experiment = client.create_experiment("restore")
    monkeypatch.delenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", raising=False)
    end_run_quietly(client, client.create_run(experiment).info.run_id, "FINISHED")
    assert "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT" not in os.environ
    monkeypatch.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "false")
    end_run_quietly(client, client.create_run(experiment).info.run_id, "FINISHED")
    assert os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] == "false"


def test_a_nan_final_score_in_a_run_is_refused_naming_the_run(server, tmp_path):
    _experiment(server["url"], "nan", {**GOOD, ("A", 0): math.nan})
    done = _cli("mlflow", "--tracking-uri", server["secret_uri"], "--experiment", "nan", *STATS, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: some runs cannot be used: 1 run — non-finite final score nan"), done.stderr
    assert SECRET not in done.stdout + done.stderr
    dropped = _cli("mlflow", "--tracking-uri", server["secret_uri"], "--experiment", "nan", *STATS,
                   "--drop-invalid", cwd=tmp_path)  # fmt: skip
    assert dropped.returncode == 0, dropped.stderr


def test_an_infinite_final_score_stored_by_mlflow_as_the_largest_float_is_said(server, tmp_path):
    """MLflow's server stores inf as 1.7976931348623157e308: refused as an overflowing magnitude, naming the run
    and saying what that value means."""
    _experiment(server["url"], "inf", {**GOOD, ("B", 1): math.inf})
    done = _cli("mlflow", "--tracking-uri", server["secret_uri"], "--experiment", "inf", *STATS, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("error: scores up to 1.8e+308 in magnitude (the largest: B / t"), line
    assert "how some trackers store an infinite metric" in line


# ------------------------------------------------------------------------------- basic authentication
@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory):
    """``mlflow server --app-name basic-auth`` (needs MLflow's ``auth`` extra: Flask-WTF; skipped without it)."""
    import http.client
    import signal
    import urllib.request

    pytest.importorskip("flask_wtf", reason="MLflow's basic-auth app needs mlflow[auth]")
    from tests.support.mlflow_server import free_port

    root = tmp_path_factory.mktemp("auth_server")
    (root / "auth.ini").write_text(
        "[mlflow]\ndefault_permission = READ\n"
        f"database_uri = sqlite:///{root}/auth.db\nadmin_username = admin\nadmin_password = {SECRET}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n"
    )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env.update(MLFLOW_AUTH_CONFIG_PATH=str(root / "auth.ini"), MLFLOW_FLASK_SERVER_SECRET_KEY="probe-only",
               MLFLOW_DISABLE_TELEMETRY="true")  # fmt: skip
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--app-name", "basic-auth", "--host", "127.0.0.1", "--port",
         str(port), "--workers", "1", "--backend-store-uri", f"sqlite:///{root}/server.db",
         "--artifacts-destination", str(root / "artifacts")],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, (root / "server.log").read_text()[-2000:]
            try:
                urllib.request.urlopen(f"{url}/health", timeout=5).close()
                break
            except (OSError, http.client.HTTPException):  # not up yet, or another process's server
                assert time.monotonic() < deadline, "basic-auth server did not start"
                time.sleep(1)
        yield {
            "right": url.replace("http://", f"http://admin:{SECRET}@"),
            "wrong": url.replace("http://", "http://admin:wrong-Pw-0@"),
        }
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()


def test_basic_auth_right_credentials_publish_and_wrong_ones_are_one_line(auth_server, tmp_path):
    _experiment(auth_server["right"], "auth", GOOD)
    done = _cli("mlflow", "--tracking-uri", auth_server["right"], "--experiment", "auth", *STATS,
                "--publish", "new", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr and "published to MLflow" in done.stderr
    wrong = _cli("mlflow", "--tracking-uri", auth_server["wrong"], "--experiment", "auth", *STATS,
                 "--retry-for", "0", cwd=tmp_path)  # fmt: skip
    assert wrong.returncode == 2, wrong.stderr
    line = wrong.stderr.strip()
    assert "\n" not in line and line.startswith("error: ") and "401" in line, line
    assert "wrong-Pw-0" not in wrong.stdout + wrong.stderr and "Traceback" not in line
