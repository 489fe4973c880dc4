"""W&B online source against the loopback stand-in: the real wandb 0.31 client (through wandb-core)
talks HTTP to 127.0.0.1, so pagination, filters, sweeps, exact history, retries and error paths
are exercised on the real transport. Expected values are the ones stored in the stand-in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.base.protocols import PublishResult
from rl_reliable_logger.trackers.base.publishing import report_hash
from rl_reliable_logger.trackers.base.records import records_to_table
from rl_reliable_logger.trackers.wandb import sweep
from rl_reliable_logger.trackers.wandb.sink import _hash_alias, artifact_name, publish_wandb
from rl_reliable_logger.trackers.wandb.source import load_wandb_runs
from rl_reliable_logger.trackers.wandb.sweep import Clock, wait_for_sweep
from tests.support.paths import REPO
from tests.support.reports import small_report
from tests.support.wandb_standin import API_KEY

#: a short request timeout (the public ``wandb.Api(timeout=)``): wandb-core retries 5xx/429 within it
FAST = {"timeout": 5}


def _populate(st, n=25, sweep_every=2):
    for i in range(n):
        algo = "PPO" if i % 2 else "SAC"
        st.add_run(
            "ent",
            "proj",
            id=f"run{i:03d}",
            name=f"{algo}-{i}",
            state="finished" if i % 7 else "crashed",
            config={
                "rl_reliable_algorithm": algo,
                "rl_reliable_task": "Hopper" if i % 3 else "Walker",
                "rl_reliable_seed": i,
                "lr": 0.001 * (1 + i % 2),
            },
            summary={"rl_reliable_final_score": float(i) * 1.5, "eval/return": float(i)},
            tags=[f"algorithm:{algo}", "baseline" if i % 5 == 0 else "tuned"],
            group=f"g{i % 3}",
            job_type="train",
            sweep="sw1" if i % sweep_every == 0 else None,
        )


def test_pagination_is_non_lazy_and_costs_one_request_per_page(wandb_standin):
    st = wandb_standin
    _populate(st, n=25)
    records = load_wandb_runs("ent/proj", per_page=10, **FAST)
    assert [r.run_id for r in records] == [f"run{i:03d}" for i in range(25)]
    ops = st.ops()
    assert ops.count("Runs") == 3  # ceil(25 / 10) pages, config + summary included (lazy=False)
    assert "Run" not in ops  # no per-run follow-up query
    assert [v.get("perPage") for op, v in st.requests if op == "Runs"] == [10, 10, 10]
    r = records[4]
    assert r.state == "finished" and r.source == "wandb"
    assert r.config == {
        "rl_reliable_algorithm": "SAC",
        "rl_reliable_task": "Hopper",
        "rl_reliable_seed": 4,
        "lr": 0.001,
    }
    assert r.summary["rl_reliable_final_score"] == 6.0
    assert r.tags == ["algorithm:SAC", "tuned"]
    assert r.attrs["group"] == "g1" and r.attrs["job_type"] == "train" and r.attrs["sweep"] == "sw1"
    assert r.attrs["path"] == "ent/proj/run004" and r.name == "SAC-4"
    assert records[0].state == "crashed" and records[7].state == "crashed"


def test_filters_and_sweep_are_sent_to_the_server_and_combined(wandb_standin):
    st = wandb_standin
    _populate(st, n=20)
    records = load_wandb_runs("ent/proj", sweep="sw1", filters={"tags": {"$in": ["baseline"]}}, **FAST)
    sent = [json.loads(v["filters"]) for op, v in st.requests if op == "Runs"]
    assert sent == [{"$and": [{"sweep": "sw1"}, {"tags": {"$in": ["baseline"]}}]}]
    # hand-computed: even ids (sweep) that are multiples of 5 (baseline): 0, 10
    assert [r.run_id for r in records] == ["run000", "run010"]
    cfg = load_wandb_runs("ent/proj", filters={"config.rl_reliable_algorithm": "PPO", "state": "finished"}, **FAST)
    assert [r.run_id for r in cfg] == [f"run{i:03d}" for i in range(1, 20, 2) if i % 7]


def test_only_finished_runs_by_default_others_listed(wandb_standin):
    st = wandb_standin
    _populate(st, n=14)
    records = load_wandb_runs("ent/proj", **FAST)
    table = records_to_table(
        records,
        algorithm="config.rl_reliable_algorithm",
        task="config.rl_reliable_task",
        seed="config.rl_reliable_seed",
        score="summary.rl_reliable_final_score",
        on_invalid="drop",
    )
    excluded = sorted(e["run_id"] for e in table.source["excluded"])
    assert excluded == ["run000", "run007"]
    assert set(table.frame["tracker_run_id"]) <= {f"run{i:03d}" for i in range(14)} - {"run000", "run007"}


def test_exact_history_through_parquet_range_requests(wandb_standin):
    st = wandb_standin
    rows = [{"_step": s, "eval/return": 0.5 * s + (0.25 if s % 3 else 0.0)} for s in range(0, 300, 7)]
    rows[5]["eval/return"] = 12.0  # a whole float comes back as an int: must be cast to float
    st.add_run("ent", "proj", id="h1", config={"a": 1}, summary={"x": 1.0}, history=rows)
    st.add_run("ent", "proj", id="h2", state="running", history=rows)
    records = load_wandb_runs("ent/proj", history_keys=["eval/return"], **FAST)
    h1 = records[0].history["eval/return"]
    assert h1 == [(float(r["_step"]), float(r["eval/return"])) for r in rows]
    assert all(isinstance(v, float) for _, v in h1)
    assert records[1].history is None  # unfinished runs: no history scan by default
    assert "RunParquetHistory" in st.ops() and "RunSampledHistory" not in st.ops()
    assert st.range_requests and all(rng and rng.startswith("bytes=") for _, rng in st.range_requests)


def test_500_then_success_is_retried(wandb_standin):
    st = wandb_standin
    _populate(st, n=3)
    st.fail("Runs", 500, times=1)
    records = load_wandb_runs("ent/proj", **FAST)
    assert len(records) == 3
    assert st.ops().count("Runs") == 2  # the failed attempt and its retry


def test_429_is_retried(wandb_standin):
    st = wandb_standin
    _populate(st, n=3)
    st.fail("Runs", 429, times=1)
    assert len(load_wandb_runs("ent/proj", **FAST)) == 3
    assert st.ops().count("Runs") == 2


def test_persistent_500_gives_one_clear_error(wandb_standin):
    st = wandb_standin
    _populate(st, n=3)
    st.fail("Runs", 500, times=100)
    t0 = time.monotonic()
    with pytest.raises(TrackerError) as info:
        load_wandb_runs("ent/proj", **FAST)
    took = time.monotonic() - t0
    msg = str(info.value)
    assert "listing runs of ent/proj" in msg and "500" in msg and "retr" in msg
    assert st.ops().count("Runs") >= 2  # wandb-core retried within the request's timeout
    assert took < FAST["timeout"] + 5, took  # the public timeout bounds the call; no x_ setting is needed
    seen = st.ops().count("Runs")
    time.sleep(3)
    assert st.ops().count("Runs") == seen  # the abandoned request is not retried in the background


@pytest.mark.slow
def test_timeout_gives_one_clear_error(wandb_standin):
    """Run in a subprocess: the timed-out request keeps wandb-core busy, which must not leak into other tests."""
    st = wandb_standin
    _populate(st, n=3)
    st.fail("Runs", 200, delay=8, times=10)
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from rl_reliable_logger.trackers.wandb.source import load_wandb_runs\n"
        "from rl_reliable_logger.errors import TrackerError\n"
        "try:\n"
        "    load_wandb_runs('ent/proj', timeout=2)\n"
        "except TrackerError as err:\n"
        "    print('TrackerError:', err)\n"
    )
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert out.stdout.startswith("TrackerError: W&B request failed (timeout) while listing runs of ent/proj"), (
        out.stdout + out.stderr
    )
    assert "did not answer in time" in out.stdout
    assert API_KEY not in out.stdout + out.stderr
    assert time.monotonic() - t0 < 60


def test_auth_failure_names_the_fix_and_never_prints_the_key(wandb_standin, monkeypatch):
    st = wandb_standin
    _populate(st, n=2)
    wrong = "k" * 40
    monkeypatch.setenv("WANDB_API_KEY", wrong)
    with pytest.raises(TrackerError) as info:
        load_wandb_runs("ent/proj", **FAST)
    msg = str(info.value)
    assert "WANDB_API_KEY" in msg and "wandb login" in msg
    assert wrong not in msg and API_KEY not in msg


def test_unknown_project_is_a_tracker_error(wandb_standin):
    _populate(wandb_standin, n=2)
    with pytest.raises(TrackerError, match="ENTITY/PROJECT"):
        load_wandb_runs("ent/nope", **FAST)


def test_default_entity_is_used_for_a_bare_project(wandb_standin):
    st = wandb_standin
    _populate(st, n=2)
    assert [r.run_id for r in load_wandb_runs("proj", **FAST)] == ["run000", "run001"]


def test_wait_for_sweep_polls_until_finished_and_nothing_running(wandb_standin, monkeypatch):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="RUNNING", expected=3)
    st.add_run("ent", "proj", id="a", sweep="sw1", state="finished")
    st.add_run("ent", "proj", id="b", sweep="sw1", state="running")
    lines: list[str] = []
    polls = []

    def fake_sleep(seconds):  # advance the "world" between polls
        polls.append(seconds)
        if len(polls) == 1:
            st.projects[("ent", "proj")][1]["state"] = "finished"
            st.add_run("ent", "proj", id="c", sweep="sw1", state="running")
        elif len(polls) == 2:
            st.sweeps["sw1"]["state"] = "FINISHED"
        elif len(polls) == 3:
            st.projects[("ent", "proj")][2]["state"] = "finished"

    monkeypatch.setattr(sweep, "clock", Clock(fake_sleep, sweep.clock.now))
    status = wait_for_sweep("ent/proj", "sw1", timeout=100, poll=5, progress=lines.append)
    assert len(polls) == 3
    assert status["state"] == "FINISHED" and status["active"] == [] and status["runs"] == 3
    assert lines[0] == "sweep sw1: running, 2/3 runs, 1 running or pending"
    assert lines[-1] == "sweep sw1: finished, 3/3 runs, 0 running or pending - done"


def test_wait_for_sweep_is_bounded(wandb_standin, monkeypatch):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="RUNNING")
    st.add_run("ent", "proj", id="a", sweep="sw1", state="running")
    now = [0.0]
    sleeps = []

    def fake_sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(sweep, "clock", Clock(fake_sleep, lambda: now[0]))
    with pytest.raises(TrackerError, match=r"not finished after 8 s .* still active: a \(running\)"):
        wait_for_sweep("ent/proj", "sw1", timeout=10, poll=4, progress=None)
    assert sleeps == [4, 4]  # polls at t=0, 4, 8; a fourth poll would end after the 10 s bound


def test_online_publish_of_known_content_is_skipped(wandb_standin):
    """The online duplicate check: an artifact carrying the report-hash alias means nothing is logged."""

    st = wandb_standin
    st.add_run("ent", "proj", id="r1")
    report = small_report()
    name = artifact_name(project="proj", sweep="sw1")
    st.add_artifact(
        "ent",
        "proj",
        name,
        type="rl-reliable-report",
        digest="d" * 32,
        aliases=["latest", _hash_alias(report_hash(report))],
    )
    n_before = len(st.requests)
    where = publish_wandb(report, project="proj", entity="ent", sweep="sw1", mode="online")
    assert isinstance(where, PublishResult) and not where.created
    assert where.target == f"ent/proj/{name}:{_hash_alias(report_hash(report))}"
    ops = [op for op, _ in st.requests[n_before:]]
    assert "ArtifactMembershipByName" in ops
    assert not any(op.startswith(("UpsertBucket", "CreateArtifact")) for op in ops)  # no run, no artifact created


# ---------------------------------------------------------------------------- CLI (online)
def _grid(st, *, sweep="sw1"):
    """2 algorithms x 2 tasks x 3 seeds in one sweep, hand-made scores, one crashed extra run."""
    scores = {}
    for a_i, algo in enumerate(["ppo", "sac"]):
        for t_i, task in enumerate(["hopper", "walker"]):
            for seed in range(3):
                score = 10.0 * a_i + 3.0 * t_i + seed * 0.5
                scores[(algo, task, seed)] = score
                st.add_run(
                    "ent",
                    "proj",
                    id=f"{algo}-{task}-{seed}",
                    sweep=sweep,
                    config={"rl_reliable_algorithm": algo, "rl_reliable_task": task, "rl_reliable_seed": seed},
                    summary={"rl_reliable_final_score": score},
                    tags=[f"algorithm:{algo}", f"task:{task}"],
                )
    st.add_run(
        "ent",
        "proj",
        id="crashed-1",
        sweep=sweep,
        state="crashed",
        config={"rl_reliable_algorithm": "ppo", "rl_reliable_task": "hopper", "rl_reliable_seed": 9},
    )
    return scores


def test_cli_wait_then_evaluate_matches_evaluate_on_same_scores(wandb_standin, tmp_path, capsys, monkeypatch):
    import pandas as pd

    from rl_reliable_logger.cli.main import main

    st = wandb_standin
    scores = _grid(st)
    st.add_sweep("ent", "proj", "sw1", state="FINISHED", expected=13)
    monkeypatch.setenv("WANDB_X_GRAPHQL_RETRY_MAX", "2")
    stats = [
        "--seed",
        "0",
        "--reps",
        "200",
        "--profile-reps",
        "200",
        "--improvement-reps",
        "200",
        "--quiet",
        "--no-figures",
    ]
    rc = main(
        [
            "wandb",
            "ent/proj",
            "--sweep",
            "sw1",
            "--wait",
            "--poll",
            "0.1",
            "--publish",
            "none",
            "--out",
            str(tmp_path / "w"),
            *stats,
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "sweep sw1: finished, 13/13 runs, 0 running or pending - done" in err
    assert "1 crashed" in err
    csv = tmp_path / "s.csv"
    pd.DataFrame([{"algorithm": a, "task": t, "seed": s, "score": v} for (a, t, s), v in scores.items()]).to_csv(
        csv, index=False
    )
    assert main(["evaluate", str(csv), "--out", str(tmp_path / "e"), *stats]) == 0
    for name in ("aggregates", "per_task", "improvement", "profiles", "differences", "ranks"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "e" / f"{name}.csv"), pd.read_csv(tmp_path / "w" / f"{name}.csv")
        )
    # hand check: ppo's mean over tasks of per-task means = (0.5 + 3.5) / 2 = 2.0
    agg = pd.read_csv(tmp_path / "w" / "aggregates.csv")
    assert agg.query("algorithm == 'ppo' and metric == 'mean'")["point"].item() == pytest.approx(2.0)
    prov = json.loads((tmp_path / "w" / "provenance.json").read_text())
    assert prov["source"]["kind"] == "wandb" and prov["source"]["sweep"] == "sw1"
    assert prov["source"]["excluded"] == [
        {
            "run_id": "crashed-1",
            "name": "crashed-1",
            "state": "crashed",
            "algorithm": "ppo",
            "task": "hopper",
            "seed": "9",
        }
    ]


def test_cli_field_flags_and_filter(wandb_standin, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    st = wandb_standin
    for i in range(8):
        st.add_run(
            "ent",
            "proj",
            id=f"r{i}",
            config={"algo": "A" if i < 4 else "B", "env": "E1" if i % 2 else "E2", "s": i},
            summary={"ret": float(i)},
            tags=["keep" if i != 7 else "drop"],
        )
    stats = [
        "--seed",
        "0",
        "--reps",
        "200",
        "--profile-reps",
        "200",
        "--improvement-reps",
        "200",
        "--quiet",
        "--no-figures",
    ]
    rc = main(
        [
            "wandb",
            "ent/proj",
            "--filter",
            '{"tags": {"$in": ["keep"]}}',
            "--algorithm-key",
            "config.algo",
            "--task-key",
            "config.env",
            "--seed-key",
            "config.s",
            "--score-key",
            "summary.ret",
            "--drop-invalid",
            "--out",
            str(tmp_path / "o"),
            "--publish",
            "none",
            *stats,
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0, err
    import pandas as pd

    used = pd.read_csv(tmp_path / "o" / "scores.csv")
    assert "r7" not in set(used["tracker_run_id"])  # filtered out server-side
    rc = main(["wandb", "ent/proj", "--filter", "[1]", *stats])
    assert rc == 2 and "must be a JSON object" in capsys.readouterr().err
    rc = main(["wandb", "ent/proj", "--wait", *stats])
    assert rc == 2 and "--wait needs --sweep" in capsys.readouterr().err
