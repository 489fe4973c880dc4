"""W&B offline source, sink and end-of-training call, against runs written by the real wandb client.

All runs are written once per module by a subprocess (so wandb's process-wide settings never leak
between test modules) with ``WANDB_MODE=offline`` in a temp dir. The expected values are what the
writer script logged, recorded in a manifest by the writer itself, independent of the reader.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support.paths import REPO
from tests.support.reports import small_report
from tests.support.wandb_env import wandb_env

pytest.importorskip("wandb")

from rl_reliable_logger.trackers.base.publishing import report_hash
from rl_reliable_logger.trackers.base.records import records_to_table
from rl_reliable_logger.trackers.base.request import DEFAULT_KEYS
from rl_reliable_logger.trackers.wandb import offline as off
from rl_reliable_logger.trackers.wandb.offline import read_offline_runs
from rl_reliable_logger.trackers.wandb.sink import ARTIFACT_TYPE, OFFLINE_INDEX
from rl_reliable_logger.trackers.wandb.source import ANALYSIS_JOB_TYPE

WRITER = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
sys.path.insert(0, os.path.join(os.environ["RL_REPO"], "integrations", "wandb"))
import wandb
import train
from rl_reliable_logger import log_final_score   # the public one-line call (detects W&B)

root = sys.argv[1]
manifest = []
for algorithm in ("ucb", "gradient"):
    for task in ("bandit-easy", "bandit-hard"):
        for seed in (0, 1):
            run = wandb.init(project="bandits", dir=root, config={"lr": 0.1, "nested": {"depth": 2}},
                             group=f"{algorithm}-{task}", job_type="train",
                             settings=wandb.Settings(sweep_id="sw1") if algorithm == "ucb" else None)
            hist = []
            def log(row, step):
                run.log(row, step=step)
                hist.append((step, row["eval/return"]))
            score = train.train(algorithm, task, seed, steps=120, eval_every=40, log=log)
            assert log_final_score(score, algorithm=algorithm, task=task, seed=seed) == "wandb"
            manifest.append({"id": run.id, "algorithm": algorithm, "task": task, "seed": seed, "score": score,
                             "history": hist, "dir": run.settings.sync_dir, "sweep": "sw1" if algorithm == "ucb" else None})
            run.finish()
# a run that failed (non-zero exit code), with a score logged before failing
run = wandb.init(project="bandits", dir=root)
log_final_score(0.5, algorithm="ucb", task="bandit-easy", seed=9)
manifest.append({"id": run.id, "failed": True, "dir": run.settings.sync_dir})
run.finish(exit_code=1)
json.dump(manifest, open(os.path.join(root, "manifest.json"), "w"))
"""

KILLED = r"""
import os, sys, wandb
run = wandb.init(project="bandits", dir=sys.argv[1])
run.log({"eval/return": 1.0}, step=1)
print(run.settings.sync_dir, flush=True)
os._exit(9)   # hard kill: atexit never runs, wandb never flushes
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("wandb_offline")
    env = wandb_env(root)
    subprocess.run([sys.executable, "-c", WRITER, str(root)], env=env, check=True, timeout=300)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED, str(root)], env=env, capture_output=True, text=True, timeout=120
    )
    manifest = json.loads((root / "manifest.json").read_text())
    return {"root": root, "manifest": manifest, "killed_dir": killed.stdout.strip(), "env": env}


@pytest.fixture(scope="module")
def runs(written: dict) -> off.OfflineRuns:
    return read_offline_runs(written["root"])


def _good(manifest: list[dict]) -> list[dict]:
    return [m for m in manifest if not m.get("failed")]


def test_reads_every_run_with_config_tags_group_sweep_and_summary(runs, written):
    by_id = {r.run_id: r for r in runs}
    manifest = written["manifest"]
    assert set(by_id) == {m["id"] for m in manifest}
    for m in _good(manifest):
        r = by_id[m["id"]]
        assert r.state == "finished"
        assert r.source == "wandb-offline"
        assert r.config[DEFAULT_KEYS["algorithm"]] == m["algorithm"]
        assert r.config[DEFAULT_KEYS["task"]] == m["task"]
        assert r.config[DEFAULT_KEYS["seed"]] == m["seed"]
        assert r.config["nested.depth"] == 2 and r.config["lr"] == 0.1
        assert not any(k.startswith("_wandb") for k in r.config)
        assert r.summary[DEFAULT_KEYS["score"]] == pytest.approx(m["score"], abs=0)
        assert f"algorithm:{m['algorithm']}" in r.tags and f"task:{m['task']}" in r.tags
        assert r.attrs["group"] == f"{m['algorithm']}-{m['task']}"
        assert r.attrs["job_type"] == "train"
        assert r.attrs["sweep"] == m["sweep"]
        assert r.attrs["project"] == "bandits"
        assert Path(r.attrs["path"]) == Path(m["dir"])


def test_history_is_exact_and_final_score_never_in_history(runs, written):
    by_id = {r.run_id: r for r in runs}
    for m in _good(written["manifest"]):
        hist = by_id[m["id"]].history
        assert hist["eval/return"] == [(float(s), float(v)) for s, v in m["history"]]
        assert DEFAULT_KEYS["score"] not in hist
        # the last logged history row is flushed at finish; it must not clobber the final score
        assert by_id[m["id"]].summary[DEFAULT_KEYS["score"]] == pytest.approx(m["score"])


def test_failed_run_has_state_failed_and_is_excluded_from_the_table(runs, written):
    failed = next(m for m in written["manifest"] if m.get("failed"))
    rec = next(r for r in runs if r.run_id == failed["id"])
    assert rec.state == "failed" and rec.attrs["exit_code"] == 1
    table = records_to_table(
        runs,
        algorithm="config.rl_reliable_algorithm",
        task="config.rl_reliable_task",
        seed="config.rl_reliable_seed",
        score="summary.rl_reliable_final_score",
    )
    assert len(table.frame) == 8
    assert [e["run_id"] for e in table.source["excluded"]] == [failed["id"]]
    got = {(r.algorithm, r.task, int(r.seed)): r.score for r in table.frame.itertuples()}
    want = {(m["algorithm"], m["task"], m["seed"]): m["score"] for m in _good(written["manifest"])}
    assert got == pytest.approx(want)


def test_hard_killed_run_is_reported_by_path_not_a_crash(runs, written):
    killed = Path(written["killed_dir"])
    log = next(killed.glob("run-*.wandb"))
    assert log.stat().st_size == 7  # header only: what SIGKILL leaves behind
    problems = [p for p in runs.problems if Path(p.path) == killed]
    assert len(problems) == 1, runs.problems
    assert "hard-killed" in problems[0].reason and str(killed) in str(problems[0])
    assert all(r.attrs["path"] != str(killed) for r in runs)


def test_single_run_dir_and_single_file_inputs(written):
    m = _good(written["manifest"])[0]
    one = read_offline_runs(m["dir"])
    assert [r.run_id for r in one] == [m["id"]]
    log = next(Path(m["dir"]).glob("run-*.wandb"))
    assert [r.run_id for r in read_offline_runs(log)] == [m["id"]]
    with pytest.raises(FileNotFoundError, match="offline-run"):
        read_offline_runs(written["root"] / "nope")


def test_cli_fallback_gives_the_same_record(written, monkeypatch):
    m = _good(written["manifest"])[0]
    log = next(Path(m["dir"]).glob("run-*.wandb"))
    direct = off.read_offline_run(log)

    def broken(*a, **k):
        raise off._FormatError("pretend the internal record format changed")

    monkeypatch.setattr(off, "_read_pb", broken)
    via_cli = off.read_offline_run(log)
    assert via_cli.config == direct.config
    assert via_cli.tags == direct.tags
    assert via_cli.state == direct.state == "finished"
    assert via_cli.summary[DEFAULT_KEYS["score"]] == pytest.approx(direct.summary[DEFAULT_KEYS["score"]])
    assert via_cli.history["eval/return"] == direct.history["eval/return"]
    assert (via_cli.attrs["group"], via_cli.attrs["sweep"]) == (direct.attrs["group"], direct.attrs["sweep"])


def test_corrupt_log_falls_back_then_reports_problem(written, tmp_path):
    m = _good(written["manifest"])[0]
    src = next(Path(m["dir"]).glob("run-*.wandb"))
    bad_dir = tmp_path / "wandb" / "offline-run-20260101_000000-corrupt1"
    bad_dir.mkdir(parents=True)
    data = bytearray(src.read_bytes())
    data[3] = ord("X")  # break the ':W&B' header
    (bad_dir / "run-corrupt1.wandb").write_bytes(bytes(data))
    result = read_offline_runs(tmp_path)
    assert list(result) == []
    assert len(result.problems) == 1 and result.problems[0].path == str(bad_dir)
    assert "header" in result.problems[0].reason


def test_checksum_mismatch_is_detected():
    payload = b"hello"
    import struct
    import zlib

    crc = zlib.crc32(payload, zlib.crc32(bytes([1])))
    good = off._HEADER + struct.pack("<IHB", crc, len(payload), 1) + payload
    assert list(off._iter_chunks_payloads(good)) == [payload]
    bad = off._HEADER + struct.pack("<IHB", crc ^ 1, len(payload), 1) + payload
    with pytest.raises(off._Damaged, match="checksum"):
        list(off._iter_chunks_payloads(bad))
    # a record split over FIRST/LAST chunks is reassembled; a log cut short is damaged, not read in part
    a, b = b"abc", b"defg"
    split = (
        off._HEADER
        + struct.pack("<IHB", zlib.crc32(a, zlib.crc32(bytes([2]))), 3, 2)
        + a
        + struct.pack("<IHB", zlib.crc32(b, zlib.crc32(bytes([4]))), 4, 4)
        + b
    )
    assert list(off._iter_chunks_payloads(split)) == [b"abcdefg"]
    with pytest.raises(off._Damaged, match="middle of a chunk header"):
        list(off._iter_chunks_payloads(split + b"\x01\x02"))
    with pytest.raises(off._Damaged, match="middle of a chunk header"):  # a cut checksum that starts with 0x00
        list(off._iter_chunks_payloads(split + b"\x00"))
    with pytest.raises(off._Damaged, match="middle of a chunk header"):
        list(off._iter_chunks_payloads(off._HEADER + b"\x00"))
    with pytest.raises(off._Damaged, match="last record is cut short"):
        list(off._iter_chunks_payloads(split[: -(len(b) + 7)]))


# ---------------------------------------------------------------------------- sink (offline)
def _tree_digest(paths: list[str]) -> str:
    h = hashlib.sha256()
    for d in sorted(paths):
        for p in sorted(Path(d).rglob("*")):
            if p.is_file() and "logs" not in p.parts:
                h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def published(written: dict) -> dict:
    """Publish the same report twice and a changed one once, in a subprocess (offline)."""
    root = written["root"]
    sources = [m["dir"] for m in written["manifest"]]
    before = _tree_digest(sources)
    script = r"""
import json, os, sys, pickle
sys.path.insert(0, os.environ["RL_REPO"])
from tests.support.reports import small_report
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.wandb.sink import WandbSink, publish_wandb
root = sys.argv[1]
offline = {"mode": "offline", "dir": root}
no_figures = PublishOptions(figures=False)
first = publish_wandb(small_report(), WandbSink(project="bandits", sweep="sw1", client_kwargs=offline))
second = publish_wandb(small_report(), WandbSink(project="bandits", sweep="sw1", client_kwargs=offline))
third = publish_wandb(
    small_report(shift=0.01), WandbSink(project="bandits", sweep="sw1", client_kwargs=offline, publishing=no_figures)
)
grp = publish_wandb(small_report(), WandbSink(project="bandits", client_kwargs=offline, publishing=no_figures))
print(json.dumps([str(first), str(second), str(third), str(grp)]))
"""
    out = subprocess.run(
        [sys.executable, "-c", script, str(root)], env=written["env"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    first, second, third, grp = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "first": first,
        "second": second,
        "third": third,
        "group": grp,
        "before": before,
        "after": _tree_digest(sources),
    }


def test_publish_twice_gives_one_artifact_version(published, written):
    assert published["second"] == published["first"]  # skipped: same content already published
    assert published["third"] != published["first"]  # changed content: a new run and version
    index = json.loads((Path(written["root"]) / "wandb" / OFFLINE_INDEX).read_text())["published"]
    assert len(index) == 3
    assert len({e["report_hash"] for e in index if e["sweep"] == "sw1"}) == 2
    # exactly one artifact record per analysis run; three analysis runs in total, not four
    analysis = [r for r in read_offline_runs(written["root"]) if r.attrs["job_type"] == ANALYSIS_JOB_TYPE]
    assert sorted(r.attrs["path"] for r in analysis) == sorted(
        [published["first"], published["third"], published["group"]]
    )


def test_published_run_is_attached_to_sweep_with_artifact_tables_and_summary(published, written):
    rec = off.read_offline_run(next(Path(published["first"]).glob("run-*.wandb")))
    assert rec.attrs["sweep"] == "sw1" and rec.attrs["job_type"] == ANALYSIS_JOB_TYPE
    assert rec.summary["iqm/ucb"] == pytest.approx(0.9)
    assert rec.summary["iqm_low/ucb"] == pytest.approx(0.8) and rec.summary["mean_high/gradient"] == pytest.approx(0.75)
    assert rec.summary["rl_reliable/report_hash"] == report_hash(small_report())
    # the counts of the one count function, as on MLflow (rl_reliable.n_runs, the description)
    counts = small_report().counts()
    assert rec.config["rl_reliable.n_runs"] == counts.runs and counts.text() in rec.attrs["notes"]
    # charts built from the tables (bar per metric, profile lines) and the figures as images
    for key in (
        "charts/iqm_table",
        "charts/profile_runs_table",
        "charts/probability_of_improvement_table",
        "figures/performance_profile",
    ):
        assert any(k == key or k.startswith(key + ".") for k in rec.summary), key
    # the artifact record, read with wandb's own protobuf schema
    from wandb.proto import wandb_internal_pb2 as pb

    arts = []
    for payload in off._iter_chunks_payloads(next(Path(published["first"]).glob("run-*.wandb")).read_bytes()):
        r = pb.Record()
        r.ParseFromString(payload)
        if r.WhichOneof("record_type") == "artifact" and r.artifact.type == ARTIFACT_TYPE:
            arts.append(r.artifact)
    assert len(arts) == 1
    art = arts[0]
    assert art.name == "rl-reliable-report-sw1"
    assert {"latest", "sweep-sw1", "rh-" + report_hash(small_report())[:16]} <= set(art.aliases)
    paths = {e.path for e in art.manifest.contents}
    assert {"tables/aggregates.table.json", "tables/profiles.table.json", "files/aggregates.csv"} <= paths
    assert "files/manifest.json" in paths  # the bundle's manifest travels with its files
    assert {"files/report.html", "files/figures/performance_profile.png"} <= paths  # figures + HTML report
    # the grouped publish (no sweep) goes to group rl-reliable
    grp = off.read_offline_run(next(Path(published["group"]).glob("run-*.wandb")))
    assert grp.attrs["group"] == "rl-reliable" and grp.attrs["sweep"] is None


def test_publish_never_modifies_source_runs(published):
    assert published["after"] == published["before"]


def test_report_hash_ignores_volatile_provenance_only():
    a, b = small_report(), small_report()
    b.provenance["created_at"] = "another time"
    b.provenance["source"] = {"kind": "wandb", "per_page": 7, "location": "/somewhere/else"}
    b.warnings.append("skipped 3 unrelated runs: a, b, c")
    assert report_hash(a) == report_hash(b)
    b.provenance["options"] = {**b.provenance["options"], "reps": 201}  # an analysis option
    assert report_hash(a) != report_hash(b)


# ---------------------------------------------------------------------------- CLI (offline)
STATS = ["--seed", "0", "--reps", "200", "--profile-reps", "200", "--improvement-reps", "200", "--quiet"]


def test_cli_offline_out_matches_evaluate_on_the_same_scores(written, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    rows = [
        {"algorithm": m["algorithm"], "task": m["task"], "seed": m["seed"], "score": m["score"]}
        for m in _good(written["manifest"])
    ]
    csv = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    assert main(["evaluate", str(csv), *STATS, "--no-figures", "--out", str(tmp_path / "a")]) == 0
    assert (
        main(
            [
                "wandb",
                "--offline-dir",
                str(written["root"]),
                *STATS,
                "--no-figures",
                "--out",
                str(tmp_path / "b"),
                "--publish",
                "none",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "hard-killed" in err and "1 failed" in err
    a_files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert a_files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in ("aggregates", "per_task", "improvement", "profiles", "differences", "ranks"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "a" / f"{name}.csv"), pd.read_csv(tmp_path / "b" / f"{name}.csv")
        )
    prov = json.loads((tmp_path / "b" / "provenance.json").read_text())
    assert prov["source"]["kind"] == "wandb-offline"
    assert [e["state"] for e in prov["source"]["excluded"]] == ["failed"]
    assert any("hard-killed" in p for p in prov["source"]["offline_problems"])


def test_cli_offline_errors_are_clear(written, capsys):
    from rl_reliable_logger.cli.main import main

    assert main(["wandb", *STATS]) == 2
    assert "either ENTITY/PROJECT" in capsys.readouterr().err
    assert (
        main(
            ["wandb", "--offline-dir", str(written["root"]), "--score-key", "summary.nope", *STATS, "--publish", "none"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "lack summary.nope" in err and _good(written["manifest"])[0]["id"] in err
    assert main(["wandb", "--offline-dir", str(written["root"]), "--filter", "{bad", *STATS]) == 2
    assert "--filter is not valid JSON" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_offline_publish_twice_logs_once(written, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(written["root"], root, symlinks=True)
    cmd = [
        sys.executable,
        "-m",
        "rl_reliable_logger.cli",
        "wandb",
        "--offline-dir",
        str(root / "wandb"),
        *STATS,
        "--publish",
        "group",
        "--group",
        "cli-test",
        "--no-figures",
    ]
    env = wandb_env(root)
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert first.returncode == 0 and second.returncode == 0, first.stderr[-2000:] + second.stderr[-2000:]
    assert "published to W&B (report " in first.stderr and "already" not in first.stderr
    assert "already published to W&B with the same content" in second.stderr
    new = [r for r in read_offline_runs(root) if r.attrs["group"] == "cli-test"]
    assert len(new) == 1 and new[0].attrs["job_type"] == ANALYSIS_JOB_TYPE
    assert new[0].attrs["project"] == "bandits"


@pytest.mark.slow
def test_offline_example_runs_end_to_end_without_account(tmp_path):
    """integrations/wandb/offline_example.py on a clean environment (no key, no network)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env["HOME"] = str(tmp_path / "home")  # no ~/.netrc, no wandb settings
    cmd = [
        sys.executable,
        str(REPO / "integrations" / "wandb" / "offline_example.py"),
        str(tmp_path / "demo"),
        "--seeds",
        "2",
        "--reps",
        "200",
        "--steps",
        "80",
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert (tmp_path / "demo" / "results" / "aggregates.csv").exists()
    agg = pd.read_csv(tmp_path / "demo" / "results" / "aggregates.csv")
    assert set(agg["algorithm"]) == {"eps-greedy", "ucb", "gradient"}
    runs = read_offline_runs(tmp_path / "demo")
    assert sum(r.attrs["job_type"] == ANALYSIS_JOB_TYPE for r in runs) == 1
    assert sum(r.state == "finished" and r.attrs["job_type"] != ANALYSIS_JOB_TYPE for r in runs) == 12
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0 and "already published" in again.stderr, again.stdout[-2000:] + again.stderr[-4000:]
    assert f"reusing 12 offline training runs in {tmp_path / 'demo' / 'wandb'}" in again.stdout  # not its analysis


def test_log_final_score_needs_a_run_and_a_finite_score(monkeypatch):
    import wandb

    from rl_reliable_logger.errors import TrackerError
    from rl_reliable_logger.trackers.wandb.final_score import write_final_score

    monkeypatch.setattr(wandb, "run", None)
    with pytest.raises(TrackerError, match="no active W&B run"):
        write_final_score(1.0, "ppo", "pong", 0)

    class FakeRun:  # only to reach the value checks; real runs are covered above
        config = summary = None
        tags = ()

    for bad in (float("nan"), float("inf"), "abc"):
        with pytest.raises(
            ValueError,
            match="log_final_score: (refusing non-finite score .* ppo / pong seed 0|the score must be a real number)",
        ):
            write_final_score(bad, "ppo", "pong", 0, run=FakeRun())


def test_without_a_target_the_analysis_is_published_like_on_mlflow(written):
    """No --publish: a new analysis run attached to the sweep the runs share, else in the rl-reliable group (as
    ``rl-reliable mlflow`` publishes a new run; issue 26). These runs share no sweep (only ucb's are in sw1)."""
    from rl_reliable_logger.trackers.wandb.sink import sink_for
    from rl_reliable_logger.trackers.wandb.source import WandbSource

    source = WandbSource(offline_dir=written["root"])
    source.table()  # reads the runs
    sink = sink_for(source)
    assert sink is not None and sink.group == "rl-reliable" and sink.sweep is None
    assert sink_for(source, target="none") is None
