"""A real ``mlflow server`` on 127.0.0.1 for tests (SQLite store and artifacts in a temp dir)."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO
from tests.support.shared import free_port, port_taken

__all__ = ["RUNNING", "free_port", "kill_server", "mlflow_server"]


#: The running servers by URL, so a test can kill one mid-call (:func:`kill_server`).
RUNNING: dict[str, subprocess.Popen[bytes]] = {}


def kill_server(url: str) -> None:
    """SIGKILL the server at ``url`` (and its workers) at once, as a crash would."""
    proc = RUNNING[url]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class _PortTaken(RuntimeError):
    """The server's port was taken between choosing it and binding it (by another test process)."""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _start(root: Path, port: int, startup: float) -> subprocess.Popen[bytes]:
    """``mlflow server`` on ``port``, returned once ``/health`` answers; stopped again if it does not."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    env["DO_NOT_TRACK"] = "true"
    for key in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_TRACKING_URI"):
        env.pop(key, None)
    log_path = root / "mlflow-server.log"
    with open(log_path, "a") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mlflow",
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "--backend-store-uri",
                f"sqlite:///{root}/server.db",
                "--artifacts-destination",
                str(root / "artifacts"),
            ],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    healthy = False
    try:
        deadline = time.monotonic() + startup
        while not healthy:
            if proc.poll() is not None:
                said = log_path.read_text()[-2000:]
                if port_taken(said):
                    raise _PortTaken(said)
                raise RuntimeError(f"mlflow server exited with {proc.returncode}: {said}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    healthy = response.read().strip() == b"OK"
            except (OSError, http.client.HTTPException):  # not up yet, or another process's server (not HTTP)
                pass
            if not healthy:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"mlflow server did not become healthy within {startup:.0f} s")
                time.sleep(0.5)
        return proc
    finally:
        if not healthy:
            _stop(proc)


@contextlib.contextmanager
def mlflow_server(root: Path, *, port: int | None = None, startup: float = 120.0) -> Iterator[str]:
    """Start ``mlflow server`` on ``port`` (default: a free loopback port; telemetry off) over ``root/server.db``;
    yield its URL; stop it after. Starting it again on the same ``root`` and port brings the same store back.
    A free port taken by another process before the server bound it is replaced by another (up to 3 tries)."""
    for attempt in range(3):
        chosen = port or free_port()
        try:
            proc = _start(root, chosen, startup)
            break
        except _PortTaken:
            if port is not None or attempt == 2:
                raise
    url = f"http://127.0.0.1:{chosen}"
    RUNNING[url] = proc
    try:
        yield url
    finally:
        RUNNING.pop(url, None)
        _stop(proc)
