"""The offline W&B publish: ``WANDB_MODE=disabled`` writes nothing to W&B, and the offline run folder alone
holds the report's artifact (copy ``wandb/`` elsewhere, delete wandb's staging folder: every file is still
there, named from inside the copy), with the real wandb client."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.wandb import offline as off
from rl_reliable_logger.trackers.wandb.sink import ARTIFACT_FOLDER, WandbSink
from rl_reliable_logger.trackers.wandb.source import ANALYSIS_JOB_TYPE
from tests.support import wandb_standin
from tests.support.reports import small_report
from tests.support.wandb_env import isolate_wandb


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    """An offline W&B environment under ``tmp_path`` (runs in ``wb/wandb``, staging in ``wbdata``)."""
    return isolate_wandb(monkeypatch, tmp_path, WANDB_MODE="offline")


def _artifact(run_dir: Path):
    from wandb.proto import wandb_internal_pb2 as pb

    found = []
    for payload in off._iter_chunks_payloads(next(run_dir.glob("run-*.wandb")).read_bytes()):
        record = pb.Record()
        record.ParseFromString(payload)
        if record.WhichOneof("record_type") == "artifact" and record.artifact.type == "rl-reliable-report":
            found.append(record.artifact)
    (art,) = found
    return art


def _md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def test_the_offline_run_folder_alone_holds_the_artifact(offline, monkeypatch):
    monkeypatch.chdir(offline)  # the working directory is not the run root: paths must not depend on it
    result = WandbSink(project="p", group="g", mode="offline", dir=offline / "wb", figures=False).publish(
        small_report()
    )
    assert result.created
    staging = offline / "wbdata" / "artifacts" / "staging"
    staged = {_md5(p.read_bytes()) for p in staging.iterdir()} if staging.exists() else set()

    elsewhere = offline / "other-machine"
    shutil.copytree(offline / "wb" / "wandb", elsewhere / "wandb", symlinks=True)
    shutil.rmtree(offline / "wb")
    shutil.rmtree(offline / "wbdata")
    run_dir = elsewhere / "wandb" / Path(result.target).name
    art = _artifact(run_dir)
    names = {e.path for e in art.manifest.contents}
    assert {"tables/aggregates.table.json", "files/manifest.json"} <= names
    prefix = f"wandb/{run_dir.name}/{ARTIFACT_FOLDER}/"
    for entry in art.manifest.contents:
        assert not os.path.isabs(entry.local_path) and entry.local_path.startswith(prefix), entry.local_path
        data = (elsewhere / entry.local_path).read_bytes()  # found inside the copy, from its root
        assert _md5(data) == entry.digest and len(data) == entry.size
        if entry.path.startswith("files/"):  # wandb's own run_table copies of the logged tables stay staged
            assert entry.digest not in staged


def test_wandb_mode_disabled_writes_nothing_to_wandb(offline, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "disabled")
    result = WandbSink(project="p", group="g", mode="offline", dir=offline / "wb").publish(small_report())
    assert not result.created and result.skipped
    assert result.message().startswith("not published to W&B: W&B is disabled (WANDB_MODE=disabled)")
    assert not (offline / "wb" / "wandb").exists()


def _write_runs(root: Path) -> None:
    """Four finished offline runs (2 algorithms x 2 seeds on one task) written by log_final_score."""
    script = f"""
import sys, wandb
sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
from rl_reliable_logger import log_final_score
for algorithm, base in (("ppo", 1.0), ("sac", 2.0)):
    for seed in (0, 1, 2):
        run = wandb.init(project="bandits", dir={str(root)!r})
        log_final_score(base + seed / 10, algorithm=algorithm, task="bandit", seed=seed)
        run.finish()
"""
    subprocess.run([sys.executable, "-c", script], env=dict(os.environ), check=True, timeout=300)


def test_cli_under_wandb_mode_disabled_keeps_the_bundle_and_says_so(offline, monkeypatch, capsys):
    _write_runs(offline / "wb")
    monkeypatch.setenv("WANDB_MODE", "disabled")
    out = offline / "results"
    code = main(["wandb", "--offline-dir", str(offline / "wb" / "wandb"), "--reps", "200", "--profile-reps", "100",
                 "--improvement-reps", "100", "--publish", "group", "--no-figures", "--out", str(out)])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "not published to W&B: W&B is disabled (WANDB_MODE=disabled), so nothing was written to W&B" in err
    assert (out / "manifest.json").is_file() and (out / "aggregates.csv").is_file()
    runs = off.read_offline_runs(offline / "wb")
    assert len(runs) == 6 and not any(r.attrs["job_type"] == ANALYSIS_JOB_TYPE for r in runs)


def test_wandb_sync_of_the_copy_uploads_the_whole_report(offline, monkeypatch):
    result = WandbSink(project="p", group="g", mode="offline", dir=offline / "wb", figures=False).publish(
        small_report()
    )
    elsewhere = offline / "other-machine"
    shutil.copytree(offline / "wb" / "wandb", elsewhere / "wandb", symlinks=True)
    shutil.rmtree(offline / "wb")
    shutil.rmtree(offline / "wbdata")
    st, server = wandb_standin.start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
        env.update(WANDB_BASE_URL=st.base_url, WANDB_API_KEY=st.api_key, WANDB_DIR=str(elsewhere),
                   WANDB_DATA_DIR=str(offline / "data2"), WANDB_CONFIG_DIR=str(offline / "cfg2"),
                   WANDB_CACHE_DIR=str(offline / "cache2"), WANDB_X_DISABLE_STATS="true", WANDB_ERROR_REPORTING="false")  # fmt: skip
        run = f"wandb/{Path(result.target).name}"
        done = subprocess.run(
            [sys.executable, "-m", "wandb", "sync", run],  # the installed wandb, whether or not its bin is on PATH
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        (art,) = [a for a in st.artifacts if a["type"] == "rl-reliable-report"]
        assert art["state"] == "COMMITTED"
        assert {"tables/aggregates.table.json", "files/manifest.json"} <= set(art["manifest"]["contents"])
    finally:
        server.shutdown()
        server.server_close()


def test_an_offline_publish_says_its_charts_use_the_built_in_presets(offline, monkeypatch, capsys):
    from rl_reliable_logger.trackers.wandb.sink import OFFLINE_PRESETS_NOTE

    monkeypatch.chdir(offline)
    sink = WandbSink(project="p", group="g", mode="offline", dir=offline / "wb", figures=False)
    assert sink.publish(small_report()).created
    err = capsys.readouterr().err
    assert err.count(f"note: {OFFLINE_PRESETS_NOTE}\n") == 1 and "cannot be created offline" in OFFLINE_PRESETS_NOTE
    art = _artifact(next((offline / "wb" / "wandb").glob("offline-run-*")))  # the run really was written offline
    assert art.type == "rl-reliable-report"
    assert not sink.publish(small_report()).created  # the same report again: nothing drawn, nothing said
    assert "presets" not in capsys.readouterr().err
