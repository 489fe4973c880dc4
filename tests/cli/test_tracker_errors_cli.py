"""Tracker failures reach the user as one line with exit status 2, the cause kept and credentials redacted.

Every case is a real failure of a real MLflow client: a wrong experiment, filters MLflow rejects, an
unreachable server (with a password and a token in the URI), a loopback server that answers 403 with a
multi-line JSON body or 404 with an HTML page, a file that is not a database, a folder given as the
database, the file store MLflow refuses, and runs that lack the fields (a multi-line library error).
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading

import pytest

from rl_reliable_logger.cli import main as cli

mlflow = pytest.importorskip("mlflow")

from tests.support.mlflow_store import convention, log_run, make_store, use_store  # noqa: E402

FAST = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--quiet", "--publish", "none"]
RAW = re.compile(r"\b(Traceback|KeyError|OSError|TypeError|AttributeError)\b|<html|<!DOCTYPE|\[SQL:")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tracker-errors")
    uri = make_store(tmp)
    with pytest.MonkeyPatch.context() as mp, use_store(uri, mp):
        client = mlflow.MlflowClient(uri)
        exp = client.create_experiment("exp")
        for alg in ("A", "B"):
            for seed in range(2):
                log_run(
                    client,
                    exp,
                    f"{alg}-{seed}",
                    tags=convention(alg, "t", seed),
                    metrics={"rl_reliable_final_score": seed + (alg == "B")},
                )
    return {"uri": uri, "tmp": tmp}


def error_line(capsys, argv: list[str]) -> str:
    """Run the CLI; it must exit 2 with one `error:` line (MLflow's own log lines aside), which is returned."""
    capsys.readouterr()
    code = cli.main(argv)
    err = capsys.readouterr().err
    lines = [
        line for line in err.splitlines() if not re.match(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARNING) ", line)
    ]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert not RAW.search(lines[0]), lines[0]
    return lines[0]


def mlflow_args(uri: str, *extra: str) -> list[str]:
    return ["mlflow", "--tracking-uri", uri, "--experiment", "exp", "--retry-for", "0", *FAST, *extra]


def test_wrong_experiment_lists_the_existing_ones(store, capsys):
    line = error_line(capsys, ["mlflow", "--tracking-uri", store["uri"], "--experiment", "nope", *FAST])
    assert "'nope'" in line and "'exp'" in line and "--experiment" in line


@pytest.mark.parametrize(
    "filter_string, cause",
    [("tags.x == 'a' or", "Invalid clause"), ("attributes.foo = 'a'", "Invalid attribute key 'foo'")],
)
def test_rejected_filter(store, capsys, filter_string, cause):
    line = error_line(capsys, mlflow_args(store["uri"], "--filter", filter_string))
    assert cause in line and "AND only" in line


def test_runs_lacking_the_fields_are_listed_on_one_line(store, capsys):
    line = error_line(capsys, mlflow_args(store["uri"], "--algorithm-key", "tags.nope"))
    assert "some runs cannot be used: 4 runs lack tags.nope" in line and "--drop-invalid" in line


def test_unreachable_server_redacts_the_uri(capsys, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = error_line(capsys, mlflow_args(f"http://alice:hunter2pw@127.0.0.1:{port}/?token=tok98765"))
    assert "could not connect to the MLflow tracking server" in line and "connection refused" in line
    assert "hunter2pw" not in line and "tok98765" not in line and "alice:***@" in line


class _Handler(http.server.BaseHTTPRequestHandler):
    status = 403
    body = b""
    content_type = "application/json"

    def _answer(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback_server():
    servers = []

    def start(status: int, body: bytes, content_type: str) -> str:
        handler = type("H", (_Handler,), {"status": status, "body": body, "content_type": content_type})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_permission_denied_json_body(capsys, monkeypatch, loopback_server):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    body = json.dumps(
        {"error_code": "PERMISSION_DENIED", "message": "User alice lacks READ permission\non experiment 'exp'"},
        indent=2,
    ).encode()
    line = error_line(capsys, mlflow_args(loopback_server(403, body, "application/json")))
    assert line.startswith("error: tracker request failed: ") and "PERMISSION_DENIED" in line
    assert "User alice lacks READ permission" in line and "on experiment 'exp'" in line


def test_html_error_page_is_reduced_to_its_words(capsys, monkeypatch, loopback_server):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    page = b"<!DOCTYPE HTML>\n<html>\n<head><title>Error response</title></head>\n<body>\n<h1>Error response</h1>\n<p>Message: File not found.</p>\n</body>\n</html>\n"
    line = error_line(capsys, mlflow_args(loopback_server(404, page, "text/html")))
    assert "404" in line and "File not found" in line


def test_not_a_database(store, capsys):
    bad = store["tmp"] / "bad.db"
    bad.write_text("not sqlite\n" * 3)
    line = error_line(capsys, mlflow_args(f"sqlite:///{bad}"))
    assert "bad.db is not an MLflow database (not an SQLite file" in line
    assert bad.read_text() == "not sqlite\n" * 3  # refused before MLflow opened it


def test_folder_as_database_fails_at_once(store, capsys):
    folder = store["tmp"] / "folder.db"
    folder.mkdir()
    line = error_line(capsys, mlflow_args(f"sqlite:///{folder}"))
    assert "is a folder, not a database file" in line


def test_file_store(store, capsys, monkeypatch):
    folder = store["tmp"] / "mlruns"
    folder.mkdir()
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    line = error_line(capsys, mlflow_args(f"file://{folder}"))
    assert "exp" in line or "filesystem" in line  # refused (MLflow >= 3.13) or no such experiment
