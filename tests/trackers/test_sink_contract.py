"""One Sink contract, tested once against the results folder, MLflow (real SQLite store), W&B offline
(real offline runs) and W&B online (the real client, through wandb-core, against the loopback stand-in
``tests/support/wandb_standin.py``, which records the runs, file streams, uploads and artifacts it received).

Each test runs on every sink: the same content published twice creates nothing and says so in the
same words; the content hash is the same everywhere; headline keys are collision-free; nothing is
ever written onto a source run; only a bundle's manifest files are published; a failed publish
never looks complete.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from rl_reliable_logger.errors import InputError, TrackerError
from rl_reliable_logger.render.writer import save_report
from rl_reliable_logger.store.bundle import read_bundle
from rl_reliable_logger.store.kinds import BundleError
from rl_reliable_logger.trackers.base.protocols import PublishResult, Sink
from rl_reliable_logger.trackers.base.publishing import PublishOptions, headline_metrics, key_segment, report_hash
from rl_reliable_logger.trackers.folder import FolderSink
from tests.support.reports import small_report
from tests.support.wandb_env import isolate_wandb
from tests.support.wandb_standin import StandIn
from tests.support.wandb_standin import start as start_standin

mlflow = pytest.importorskip("mlflow")
wandb = pytest.importorskip("wandb")

from rl_reliable_logger.trackers.mlflow.sink import MlflowSink  # noqa: E402
from rl_reliable_logger.trackers.wandb import offline as off  # noqa: E402
from rl_reliable_logger.trackers.wandb import sink as wandb_sink  # noqa: E402
from rl_reliable_logger.trackers.wandb.sink import WandbSink  # noqa: E402
from tests.support.mlflow_store import convention, log_run, make_store, snapshot  # noqa: E402

KINDS = ["folder", "mlflow", "wandb", "wandb-online"]
LABELS = {"folder": "the results folder", "mlflow": "MLflow", "wandb": "W&B", "wandb-online": "W&B"}
#: Where the online W&B sink publishes on the stand-in.
ONLINE = ("ent", "contract")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("contract-mlflow"))


class Target:
    """One sink under test plus a way to look at everything it wrote."""

    def __init__(self, kind: str, tmp: Path, store_uri: str, name: str, standin: StandIn | None = None):
        self.kind, self.tmp, self.uri, self.standin = kind, tmp, store_uri, standin
        self.client = mlflow.MlflowClient(store_uri)
        self.exp = self.client.create_experiment(name) if kind == "mlflow" else None

    def sink(self, **kw: Any) -> Sink:
        if self.kind == "folder":
            return FolderSink(self.tmp / "published", figures=False)
        if self.kind == "mlflow":
            return MlflowSink(
                tracking_uri=self.uri, experiment=self.exp, publishing=PublishOptions(figures=False), **kw
            )
        if self.kind == "wandb-online":
            entity, project = ONLINE
            return WandbSink(project=project, entity=entity, group="g", mode="online", figures=False)
        return WandbSink(project="contract", group="g", mode="offline", dir=self.tmp / "wb", figures=False)

    def written(self) -> list[str]:
        """Every analysis run / bundle that exists (to prove that nothing new was created)."""
        if self.kind == "folder":
            path = self.tmp / "published"
            return [read_bundle(path).report_hash] if path.exists() else []
        if self.kind == "mlflow":
            return sorted(r.info.run_id for r in self.client.search_runs([self.exp], ""))
        if self.kind == "wandb-online":
            st = self.standin
            assert st is not None
            runs = [f"run {r['id']} {r['state']}" for r in st.projects.get(ONLINE, [])]
            arts = [f"artifact {a['name']}:v{a['version']} {a['state']} {a['aliases']}" for a in report_artifacts(st)]
            return sorted(runs + arts)
        return sorted(p.name for p in (self.tmp / "wb").glob("wandb/offline-run-*"))

    def headline(self, result: PublishResult) -> dict[str, float]:
        if self.kind == "mlflow":
            return dict(self.client.get_run(result.target).data.metrics)
        if self.kind == "wandb-online":  # read back through the Public API, as a user would
            run = wandb.Api().run(online_path(result))  # JSON on the wire: 0.0 comes back as 0
            summary = run.summary_metrics.items()
            return {k: float(v) for k, v in summary if isinstance(v, (int, float)) and not isinstance(v, bool)}
        rec = off.read_offline_run(next(Path(result.target).glob("run-*.wandb")))
        return {k: v for k, v in rec.summary.items() if isinstance(v, float)}


def online_path(result: PublishResult) -> str:
    """``entity/project/run_id`` of an online publish (its target is the run's URL)."""
    head, _, run_id = result.target.rpartition("/runs/")
    assert run_id and head.endswith("/".join(ONLINE)), result.target
    return "/".join([*ONLINE, run_id])


def report_artifacts(st: StandIn) -> list[dict[str, Any]]:
    """The ``rl-reliable-report`` artifact versions the client created on the stand-in (any state)."""
    return [a for a in st.created_artifacts() if a["type"] == wandb_sink.ARTIFACT_TYPE]


def _wandb_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **extra: str) -> None:
    isolate_wandb(monkeypatch, tmp_path, **extra)


@pytest.fixture(params=KINDS)
def target(request, tmp_path, store, monkeypatch):
    yield from _target(request.param, request, tmp_path, store, monkeypatch)


@pytest.fixture
def online(request, tmp_path, store, monkeypatch):
    """The W&B online sink on a fresh stand-in (for the checks only the stand-in can make)."""
    yield from _target("wandb-online", request, tmp_path, store, monkeypatch)


def _target(kind, request, tmp_path, store, monkeypatch):
    standin = server = None
    if kind == "wandb":
        _wandb_env(monkeypatch, tmp_path, WANDB_MODE="offline")
    elif kind == "wandb-online":
        # wandb keeps one settings singleton (base URL included) per process: start from a fresh one
        # for this test's stand-in port, and leave none behind for the next test
        wandb.teardown()
        request.addfinalizer(wandb.teardown)
        standin, server = start_standin()
        _wandb_env(
            monkeypatch,
            tmp_path,
            WANDB_BASE_URL=standin.base_url,
            WANDB_API_KEY=standin.api_key,
            WANDB_X_GRAPHQL_RETRY_MAX="2",
            WANDB_X_FILE_TRANSFER_RETRY_MAX="1",
            WANDB_X_FILE_STREAM_RETRY_MAX="1",
        )
    try:
        yield Target(kind, tmp_path, store, request.node.name, standin)
        if standin is not None:
            assert standin.unknown == [], "the client sent operations the stand-in does not know"
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def _hostile_report() -> Any:
    names = ["PPO", "PPO/low", "A+B", "A=B", "http://evil.example/x?y=1&z=../..", "_hidden"]
    report = small_report()
    report.aggregates = pd.DataFrame(
        {
            "algorithm": [n for n in names for _ in ("iqm", "mean")],
            "metric": ["iqm", "mean"] * len(names),
            "point": [0.1 * i for i in range(2 * len(names))],
            "low": [0.1 * i - 0.05 for i in range(2 * len(names))],
            "high": [0.1 * i + 0.05 for i in range(2 * len(names))],
        }
    )
    report.provenance["algorithms"] = names
    return report


# ---------------------------------------------------------------------------- contract
def test_every_sink_implements_the_protocol(target):
    assert isinstance(target.sink(), Sink)


def test_same_content_twice_creates_nothing_and_says_so_in_the_same_words(target):
    report = small_report()
    first = target.sink().publish(report)
    state = target.written()
    again = target.sink().publish(report)
    assert first.created and not again.created
    assert again.target == first.target and again.report_hash == first.report_hash == report_hash(report)
    assert target.written() == state
    label = LABELS[target.kind]
    assert first.message().startswith(f"published to {label} (report {report_hash(report)[:8]}): ")
    assert again.message().startswith(
        f"already published to {label} with the same content (report {report_hash(report)[:8]}); nothing new written: "
    )
    changed = target.sink().publish(small_report(shift=0.01))
    assert changed.created and changed.report_hash != first.report_hash


def test_the_hash_ignores_paths_time_stamps_warnings_and_tracker_columns():
    a, b = small_report(), small_report()
    scores = pd.DataFrame({"algorithm": ["ucb"], "task": ["t"], "run_id": ["0"], "seed": [0], "score": [1.0]})
    a.scores = scores.assign(tracker_run_id="mlflow-run-1", url="http://mlflow/1", run_name="x", state="finished")
    b.scores = scores.assign(tracker_run_id="wandb-abc", url="https://wandb.ai/e/p/runs/abc", run_name="y")
    b.provenance.update(created="2030-01-01", source={"kind": "wandb", "per_page": 3, "location": "/abs/path"})
    b.warnings.append("skipped 2 unrelated runs: r1, r2")
    assert report_hash(a) == report_hash(b)
    b.provenance["options"] = {**a.provenance["options"], "reps": 999}  # an analysis option
    assert report_hash(a) != report_hash(b)
    b.provenance["options"] = {**a.provenance["options"], "executor": "ray"}  # an execution setting: no number changes
    assert report_hash(a) == report_hash(b)
    b.scores.loc[0, "score"] = 2.0  # a result
    assert report_hash(a) != report_hash(b)


def test_hostile_names_get_distinct_keys_with_the_right_numbers(target):
    if target.kind == "folder":
        pytest.skip("a folder has no metric keys")
    report = _hostile_report()
    expected = headline_metrics(report)
    assert len(expected) == 3 * len(report.aggregates)  # no two rows share a key
    result = target.sink().publish(report)
    got = target.headline(result)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), key
    assert got["iqm_low/PPO"] == pytest.approx(0.0 - 0.05)  # PPO's interval, not the numbers of "PPO/low"
    assert got[f"iqm/{key_segment('PPO/low')}"] == pytest.approx(0.2)


def test_colliding_keys_are_an_error_naming_both_and_nothing_is_written(target):
    report = small_report()
    report.aggregates = pd.DataFrame(
        {
            "algorithm": ["A+B", key_segment("A+B")],
            "metric": ["iqm", "iqm"],
            "point": [1.0, 2.0],
            "low": [0.0, 1.0],
            "high": [2.0, 3.0],
        }
    )
    before = target.written()
    if target.kind == "folder":
        pytest.skip("a folder has no metric keys")
    with pytest.raises(InputError, match=r"algorithms 'A\+B' and 'A_B-[0-9a-f]{6}' would both publish"):
        target.sink().publish(report)
    assert target.written() == before


def test_only_the_manifest_files_of_a_bundle_are_published(target, tmp_path):
    report = small_report()
    out = save_report(report, tmp_path / "out", figures=False)
    (out / ".env").write_text("API_KEY=secret")
    before = target.written()
    with pytest.raises(BundleError, match=r"\.env: not listed in the manifest"):
        target.sink().publish(report, bundle=out)
    assert target.written() == before
    (out / ".env").unlink()
    result = target.sink().publish(report, bundle=out)
    assert result.created
    if target.kind == "wandb-online":  # what reached the server: the manifest's files, byte for byte
        st = target.standin
        (art,) = report_artifacts(st)
        listed = [f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]] + ["manifest.json"]
        files = sorted(k for k in art["manifest"]["contents"] if k.startswith("files/"))
        assert files == sorted(f"files/{name}" for name in listed)
        assert all(k.startswith(("files/", "tables/")) for k in art["manifest"]["contents"])
        for name in listed:
            assert st.artifact_file(art, f"files/{name}") == (out / name).read_bytes(), name
        assert not any(b"API_KEY=secret" in blob for blob in st.uploads.values())
    other = save_report(small_report(shift=0.3), tmp_path / "other", figures=False)
    with pytest.raises(InputError, match="the bundle holds another report"):
        target.sink().publish(report, bundle=other)


# ---------------------------------------------------------------------------- source runs (MLflow)
@pytest.fixture()
def mlflow_sources(store, request):
    client = mlflow.MlflowClient(store)
    exp = client.create_experiment(request.node.name)
    ids = []
    for alg in ("ucb", "gradient"):
        for seed in range(3):
            ids.append(
                log_run(
                    client,
                    exp,
                    f"{alg}-{seed}",
                    tags=convention(alg, "t", seed),
                    metrics={"rl_reliable_final_score": 0.1 * seed},
                )
            )
    return client, exp, ids


def test_mlflow_never_writes_onto_a_source_run(store, mlflow_sources, tmp_path):
    from rl_reliable_logger.analysis.evaluation import evaluate
    from rl_reliable_logger.trackers.mlflow.source import MlflowSource

    client, exp, ids = mlflow_sources
    table = MlflowSource([exp], tracking_uri=store).table()
    report = evaluate(table, reps=50, profile_reps=20, improvement_reps=20, seed=0)
    before = snapshot(client, ids)
    with pytest.raises(TrackerError, match="never changes source runs"):
        MlflowSink(tracking_uri=store, parent_run_id=ids[2]).publish(report)
    assert snapshot(client, ids) == before


def test_mlflow_cli_refuses_a_source_run_before_computing(store, mlflow_sources, monkeypatch, capsys):
    import rl_reliable_logger.cli.common as common
    from rl_reliable_logger.cli.main import main

    client, exp, ids = mlflow_sources
    monkeypatch.setattr(common, "evaluate", lambda *a, **k: pytest.fail("evaluated before the refusal"))
    before = snapshot(client, ids)
    argv = ["mlflow", "--tracking-uri", store, "--experiment", exp, "--seed", "0", "--quiet", "--publish", ids[0]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"refusing to publish onto run {ids[0]}" in err and "--publish RUN_ID" in err
    assert snapshot(client, ids) == before


# ---------------------------------------------------------------------------- crashes
def test_a_failed_mlflow_publish_ends_failed_and_the_next_one_completes(store, monkeypatch):
    client = mlflow.MlflowClient(store)
    exp = client.create_experiment("crash")
    calls = {"n": 0}
    real = mlflow.MlflowClient.log_artifacts

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("connection reset while uploading")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(mlflow.MlflowClient, "log_artifacts", flaky)
    with pytest.raises(OSError, match="connection reset"):
        MlflowSink(tracking_uri=store, experiment=exp, publishing=PublishOptions(figures=False)).publish(small_report())
    (failed,) = client.search_runs([exp], "")
    assert failed.info.status == "FAILED"
    assert failed.data.tags["rl_reliable.publish_state"] == "failed"
    assert "connection reset" in failed.data.tags["rl_reliable.failure"]
    assert "rl_reliable.report_hash" not in failed.data.tags
    monkeypatch.setattr(mlflow.MlflowClient, "log_artifacts", real)
    done = MlflowSink(tracking_uri=store, experiment=exp, publishing=PublishOptions(figures=False)).publish(
        small_report()
    )
    assert done.created and done.target != failed.info.run_id  # the failed run is not taken as a publish
    assert client.get_run(done.target).info.status == "FINISHED"


def test_a_failed_mlflow_publish_onto_a_parent_is_redone_next_time(store, monkeypatch):
    client = mlflow.MlflowClient(store)
    exp = client.create_experiment("crash-parent")
    parent = log_run(client, exp, "parent")
    real = mlflow.MlflowClient.log_batch

    def failing(self, run_id, metrics=(), params=(), tags=(), **kw):
        if metrics:
            raise OSError("killed while logging metrics")
        return real(self, run_id, metrics=metrics, params=params, tags=tags, **kw)

    monkeypatch.setattr(mlflow.MlflowClient, "log_batch", failing)
    with pytest.raises(OSError):
        MlflowSink(tracking_uri=store, parent_run_id=parent, publishing=PublishOptions(figures=False)).publish(
            small_report()
        )
    tags = client.get_run(parent).data.tags
    assert tags["rl_reliable.publish_state"] == "failed" and "rl_reliable.report_hash" not in tags
    assert client.get_run(parent).info.status == "FINISHED"  # the user's run keeps its status
    monkeypatch.setattr(mlflow.MlflowClient, "log_batch", real)
    again = MlflowSink(tracking_uri=store, parent_run_id=parent, publishing=PublishOptions(figures=False)).publish(
        small_report()
    )
    assert again.created and client.get_run(parent).data.tags["rl_reliable.publish_state"] == "complete"


def _artifact_records(run_dir: str) -> list[Any]:
    from wandb.proto import wandb_internal_pb2 as pb

    found = []
    for payload in off._iter_chunks_payloads(next(Path(run_dir).glob("run-*.wandb")).read_bytes()):
        record = pb.Record()
        record.ParseFromString(payload)
        if record.WhichOneof("record_type") == "artifact" and record.artifact.type == "rl-reliable-report":
            found.append(record.artifact)
    return found


def test_a_failed_wandb_publish_exits_non_zero_without_an_artifact(target, monkeypatch):
    if not target.kind.startswith("wandb"):
        pytest.skip("W&B only")

    def broken_charts(*args, **kwargs):
        raise RuntimeError("chart failed")

    real_charts = wandb_sink._charts
    monkeypatch.setattr(wandb_sink, "_charts", broken_charts)
    with pytest.raises(RuntimeError, match="chart failed"):
        target.sink().publish(small_report())
    if target.kind == "wandb-online":
        st = target.standin
        (failed,) = st.projects[ONLINE]
        assert (failed["state"], failed["exitcode"]) == ("failed", 1)  # what the file stream's last post said
        assert report_artifacts(st) == []
        monkeypatch.setattr(wandb_sink, "_charts", real_charts)
        done = target.sink().publish(small_report())
        assert done.created and online_path(done) != "/".join([*ONLINE, failed["id"]])
        (art,) = report_artifacts(st)
        assert art["state"] == "COMMITTED" and art["created_by"] == online_path(done).rsplit("/", 1)[1]
        return
    (run_dir,) = (target.tmp / "wb").glob("wandb/offline-run-*")
    record = off.read_offline_run(next(run_dir.glob("run-*.wandb")))
    assert record.state == "failed"
    assert _artifact_records(str(run_dir)) == []
    index_path = target.tmp / "wb" / "wandb" / wandb_sink.OFFLINE_INDEX
    (failed,) = json.loads(index_path.read_text())["published"]  # recorded as failed, with the reason
    assert (failed["state"], failed["current"], failed["failure"]) == ("failed", False, "RuntimeError: chart failed")
    assert "run_dir" not in failed
    monkeypatch.setattr(wandb_sink, "_charts", real_charts)
    done = target.sink().publish(small_report())
    assert done.created and len(_artifact_records(done.target)) == 1
    index = json.loads(index_path.read_text())["published"]
    assert [(e.get("run_dir"), e["state"], e["current"]) for e in index] == [
        (None, "failed", False),
        (done.target, "complete", True),
    ]
    assert index[0]["superseded_by"] == index[1]["run_id"]


# ---------------------------------------------------------------------------- W&B online only
def _online(target: Target) -> StandIn:
    assert target.standin is not None
    return target.standin


def test_a_failed_online_upload_fails_the_publish_and_the_next_one_completes(online, tmp_path):
    st = _online(online)
    report = small_report()
    out = save_report(report, tmp_path / "out", figures=False)
    # the upload of one bundle file keeps failing (wandb-core retries it, then gives up)
    st.upload_faults[f"file/{hashlib.md5((out / 'methods.md').read_bytes()).hexdigest()}"] = 100
    with pytest.raises(TrackerError, match="uploading the artifact rl-reliable-report-g"):
        online.sink().publish(report, bundle=out)
    (failed,) = st.projects[ONLINE]
    assert (failed["state"], failed["exitcode"]) == ("failed", 1)
    (pending,) = report_artifacts(st)
    assert pending["state"] == "PENDING" and pending["aliases"] == []  # never committed, so never found
    st.upload_faults.clear()
    done = online.sink().publish(report, bundle=out)
    assert done.created
    (art,) = [a for a in report_artifacts(st) if a["state"] == "COMMITTED"]
    assert wandb_sink._hash_alias(report_hash(report)) in art["aliases"]
    assert st.artifact_file(art, "files/methods.md") == (out / "methods.md").read_bytes()


def test_a_changed_report_is_a_new_version_of_the_same_online_artifact(online):
    st = _online(online)
    first = online.sink().publish(small_report())
    second = online.sink().publish(small_report(shift=0.01))
    assert first.created and second.created and first.target != second.target
    v0, v1 = report_artifacts(st)
    assert v0["name"] == v1["name"] == wandb_sink.artifact_name(project=ONLINE[1], group="g")
    assert (v0["version"], v1["version"]) == (0, 1)
    assert v0["aliases"] == [wandb_sink._hash_alias(first.report_hash)]  # "latest" moved on
    assert sorted(v1["aliases"]) == sorted(["latest", wandb_sink._hash_alias(second.report_hash)])
    for art, result in ((v0, first), (v1, second)):  # each version holds one whole report, not a mix
        manifest = json.loads(st.artifact_file(art, "files/manifest.json"))
        assert manifest["report_hash"] == art["metadata"]["report_hash"] == result.report_hash
    again = online.sink().publish(small_report())  # the older report is still known as published
    assert not again.created and again.target == first.target


def test_a_failed_read_back_of_a_committed_artifact_is_a_note_not_a_failure(online, capsys):
    st = _online(online)
    st.fail("ArtifactByID", 400, times=5)  # the upload and commit succeed; only Artifact.wait()'s read fails
    result = online.sink().publish(small_report())
    assert result.created
    (art,) = report_artifacts(st)
    assert art["state"] == "COMMITTED"
    run = st.run(*ONLINE, online_path(result).rsplit("/", 1)[1])
    assert run is not None and (run["state"], run["exitcode"]) == ("finished", 0)
    assert "reading back the uploaded artifact rl-reliable-report-g" in capsys.readouterr().err


def test_when_the_server_does_not_say_which_run_published_the_artifact_reference_is_the_target(online):
    st = _online(online)
    report = small_report()
    online.sink().publish(report)
    st.fail("ArtifactCreatedBy", 400, times=5)
    again = online.sink().publish(report)
    name = wandb_sink.artifact_name(project=ONLINE[1], group="g")
    assert not again.created and again.url is None
    assert again.target == f"{ONLINE[0]}/{ONLINE[1]}/{name}:{wandb_sink._hash_alias(report_hash(report))}"
    assert len(report_artifacts(st)) == 1


def test_online_interrupted_publishes_are_marked_failed_and_one_run_is_current(online):
    """A publish killed online leaves an analysis run without ``publish_state=complete`` (W&B marks it crashed);
    the next publish records it failed and which run replaced it; a publish still heartbeating is left alone.
    Changed data: the run of the previous ``latest`` version is marked superseded by the new one."""
    from rl_reliable_logger.trackers.wandb.source import ANALYSIS_JOB_TYPE

    st = online.standin
    common = {"job_type": ANALYSIS_JOB_TYPE, "group": "g"}
    st.add_run(*ONLINE, id="killed1", state="crashed", summary={wandb_sink.STATE_KEY: "writing"}, **common)
    st.add_run(*ONLINE, id="busy1", state="running", summary={wandb_sink.STATE_KEY: "writing"}, **common)
    first = online.sink().publish(small_report())
    first_id = online_path(first).rsplit("/", 1)[1]
    killed = st.run(*ONLINE, "killed1")["summary"]
    assert killed[wandb_sink.STATE_KEY] == "failed" and killed[wandb_sink.SUPERSEDED_BY_KEY] == first_id
    assert killed[wandb_sink.FAILURE_KEY] == wandb_sink.INTERRUPTED and killed[wandb_sink.CURRENT_KEY] is False
    assert st.run(*ONLINE, "busy1")["summary"] == {wandb_sink.STATE_KEY: "writing"}  # still being written
    done = st.run(*ONLINE, first_id)["summary"]
    assert done[wandb_sink.STATE_KEY] == "complete" and done[wandb_sink.CURRENT_KEY] is True

    second = online.sink().publish(small_report(shift=0.1))
    second_id = online_path(second).rsplit("/", 1)[1]
    old, new = st.run(*ONLINE, first_id)["summary"], st.run(*ONLINE, second_id)["summary"]
    assert (old[wandb_sink.CURRENT_KEY], old[wandb_sink.SUPERSEDED_BY_KEY]) == (False, second_id)
    assert new[wandb_sink.CURRENT_KEY] is True and wandb_sink.SUPERSEDED_BY_KEY not in new
