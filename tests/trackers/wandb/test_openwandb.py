"""A second, independent check of the online W&B publish path: the real client against openwandb.

openwandb (PyPI, an independently written W&B-compatible server) is CC-BY-NC licensed, so it is a
test-only tool: never a dependency or an extra of the package. ``.ci/run`` installs it into its own
virtual environment (``$TMPDIR/rl-reliable-openwandb``); set ``OPENWANDB`` to another executable, or
put ``openwandb`` on PATH. Without it this test is skipped.

What openwandb can check (tried with openwandb 0.5.25 and wandb 0.31): the run is created
(``upsertBucket``), its config, tags and summary arrive through the file stream, and its files
(the ``wandb.Table`` media of every result table) are uploaded to the URLs the server hands out.
What it cannot check, and is therefore covered only by the loopback stand-in
(``tests/trackers/test_sink_contract.py``): it answers every ``createArtifact`` with
``COMMITTED``, so the client uploads no artifact file and no alias is stored; and it rejects the
Public API reads of wandb 0.31 (their ``operationName`` is empty). So the "already published"
lookup gets no answer there (wandb's ``artifact_exists`` turns the error into False) and the read
back of the logged artifact fails (the sink prints a note; the upload itself had succeeded).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

wandb = pytest.importorskip("wandb")

from rl_reliable_logger.analysis.report import TABLES  # noqa: E402
from rl_reliable_logger.trackers.base.publishing import headline_metrics, report_hash, run_name  # noqa: E402
from rl_reliable_logger.trackers.wandb.sink import ARTIFACT_TYPE, HASH_KEY, artifact_name, publish_wandb  # noqa: E402
from tests.support.reports import make_report  # noqa: E402
from tests.support.wandb_env import isolate_wandb  # noqa: E402

pytestmark = pytest.mark.slow

#: openwandb's built-in key for its first user (``local`` + 40 characters).
KEY = "local" + "0" * 40
ENTITY, PROJECT = "default", "rl-bench"


def _executable() -> str | None:
    candidates = [
        os.environ.get("OPENWANDB"),
        shutil.which("openwandb"),
        str(Path(tempfile.gettempdir()) / "rl-reliable-openwandb" / "bin" / "openwandb"),
    ]
    for exe in candidates:
        if exe and Path(exe).is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture
def openwandb(tmp_path, monkeypatch, free_port):
    exe = _executable()
    if exe is None:
        pytest.skip("openwandb is not installed (a CC-BY-NC test tool; .ci/run installs it into its own venv)")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    if version.returncode != 0:
        pytest.skip(f"openwandb does not run here: {(version.stderr or version.stdout).strip()[:200]}")
    port, data = free_port, tmp_path / "openwandb-data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "OPENWANDB_"))}
    env["HOME"] = str(tmp_path / "openwandb-home")
    log = (tmp_path / "openwandb.log").open("w")
    server = subprocess.Popen(
        [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data), "--log-level", "warning"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:  # it has no health endpoint; GET / answers 200 once it is up
            try:
                with urllib.request.urlopen(base + "/", timeout=2) as response:
                    if response.status == 200:
                        break
            except (OSError, http.client.HTTPException):  # not up yet, or another process's server (not HTTP)
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"openwandb did not start: {(tmp_path / 'openwandb.log').read_text()[-2000:]}")
            time.sleep(0.3)
        isolate_wandb(monkeypatch, tmp_path, WANDB_BASE_URL=base, WANDB_API_KEY=KEY, WANDB_X_GRAPHQL_RETRY_MAX="1")
        wandb.teardown()  # wandb's settings singleton must pick up this server's URL
        yield base, data
    finally:
        wandb.teardown()
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_a_report_published_to_openwandb_arrives_there(openwandb, capsys):
    base, data = openwandb
    report = make_report(3, reps=40)
    digest = report_hash(report)
    result = publish_wandb(report, project=PROJECT, entity=ENTITY, group="g", mode="online", figures=False)
    assert result.created and result.report_hash == digest
    run_id = result.target.rsplit("/runs/", 1)[1]
    assert result.target == f"{base}/{ENTITY}/{PROJECT}/runs/{run_id}"

    # the run, as openwandb stored it (its own HTTP API)
    (run,) = _get(f"{base}/api/v2/projects/{ENTITY}/{PROJECT}/runs")["runs"]
    assert run["run_id"] == run_id and run["state"] == "finished"
    assert run["display_name"] == run_name(report, digest)
    assert "rl-reliable" in run["tags"]
    assert run["config"]["rl_reliable"]["value"]["reps"] == report.provenance["reps"]
    # every headline key, with the report's numbers, and the content hash
    expected = headline_metrics(report)
    assert expected and {k: run["summary"].get(k) for k in expected} == pytest.approx(expected)
    assert run["summary"][HASH_KEY] == digest

    # every result table arrived as a file with the report's columns and rows
    stored = {f["name"] for f in _get(f"{base}/api/v1/runs/{run_id}/files")["files"]}
    run_dir = data / "files" / ENTITY / PROJECT / run_id
    for name in TABLES:
        frame = report.table(name)
        if frame.empty and name == "curves":
            continue
        (path,) = [p for p in stored if p.startswith(f"media/table/tables/{name}_") and p.endswith(".table.json")]
        table = json.loads((run_dir / path).read_text())
        assert table["columns"] == [str(c) for c in frame.columns], name
        assert len(table["data"]) == len(frame), name

    # the artifact is recorded with its metadata (openwandb stores no artifact files, see the docstring)
    arts = _get(f"{base}/api/v2/runs/{run_id}/artifacts")["artifacts"]
    (art,) = [a for a in arts if a["artifact_type"] == ARTIFACT_TYPE]
    assert art["name"] == artifact_name(project=PROJECT, group="g")
    assert art["metadata"]["report_hash"] == digest
    assert "manifest.json" in art["metadata"]["files"]
    err = capsys.readouterr().err
    assert "could not be created" in err  # no custom chart presets there: built-in presets, said so
