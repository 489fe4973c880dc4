"""Outages during a sweep post-hook, against the loopback stand-in (real wandb 0.31 client through wandb-core).

Time is simulated for the waits between polls (``sweep.clock``); every request goes over HTTP.
"""

from __future__ import annotations

import pytest

pytest.importorskip("wandb")

import requests

from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.base.retry import RetryPolicy, classify, retry_after
from rl_reliable_logger.trackers.wandb import sweep
from rl_reliable_logger.trackers.wandb.client import public_api
from rl_reliable_logger.trackers.wandb.sweep import Clock, wait_for_sweep


class _World:
    """A fake clock and sleep that run a script of changes to the stand-in between polls (the wait's clock from
    when it is made, to the end of the test)."""

    current: _World | None = None

    def __init__(self, script):
        self.now = 0.0
        self.polls = 0
        self.script = script
        _World.current = self

    def sleep(self, seconds):
        self.now += seconds
        self.polls += 1
        self.script(self.polls)

    def clock(self):
        return self.now


@pytest.fixture(autouse=True)
def _simulated_time(monkeypatch):
    """The sweep wait reads the test's :class:`_World` once one is made (real time before)."""
    import time

    world = lambda: _World.current
    monkeypatch.setattr(
        sweep,
        "clock",
        Clock(
            lambda s: world().sleep(s) if world() else time.sleep(s),
            lambda: world().clock() if world() else time.monotonic(),
        ),
    )
    yield
    _World.current = None


def _api_fast():
    return public_api(timeout=3)  # a failing poll ends after 3 s (wandb-core retries the 500s within it)


def test_a_60_second_outage_during_the_wait_is_survived(wandb_standin):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="RUNNING", expected=2)
    st.add_run("ent", "proj", id="a", sweep="sw1", state="finished")
    st.add_run("ent", "proj", id="b", sweep="sw1", state="running")

    def script(poll):
        if poll == 1:  # the server goes down for two polls (60 s at poll=30)
            st.fail("*", 500, times=10_000)
        elif poll == 3:
            st.faults.clear()
            st.projects[("ent", "proj")][1]["state"] = "finished"
            st.sweeps["sw1"]["state"] = "FINISHED"

    _World(script)
    lines: list[str] = []
    status = wait_for_sweep(
        "ent/proj", "sw1", timeout=600, poll=30, progress=lines.append, client_kwargs={"api": _api_fast()},
    )  # fmt: skip
    assert status["state"] == "FINISHED" and status["runs"] == 2
    failed = [ln for ln in lines if "poll failed" in ln]
    # wandb-core keeps retrying the 500s past the client's own timeout; the cause is still named as it is
    assert len(failed) == 2 and all("poll failed (server error)" in ln for ln in failed), failed
    assert lines[-1].endswith("- done")


def test_a_persistent_outage_ends_with_the_cause(wandb_standin):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="RUNNING")
    api = _api_fast()
    st.fail("*", 500, times=10_000)
    world = _World(lambda poll: None)
    with pytest.raises(TrackerError, match=r"could not read sweep sw1 for \d+ s \(last failure: server error"):
        wait_for_sweep("ent/proj", "sw1", timeout=50, poll=30, progress=None, api=api)
    assert world.polls == 1  # polls at 0 and 30 s; the next would pass the bound


def test_auth_failure_during_the_wait_ends_it_at_once(wandb_standin, monkeypatch):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="RUNNING")
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    world = _World(lambda poll: None)
    with pytest.raises(TrackerError, match="authentication"):
        wait_for_sweep("ent/proj", "sw1", timeout=600, poll=30, progress=None)
    assert world.polls == 0


@pytest.mark.parametrize("state", ["CANCELED", "FAILED", "CRASHED"])
def test_failed_sweeps_end_the_wait(wandb_standin, state):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state=state, expected=4)
    st.add_run("ent", "proj", id="a", sweep="sw1", state="finished")
    world = _World(lambda poll: None)
    with pytest.raises(TrackerError, match=f"sweep sw1 ended {state} with 1 run"):
        wait_for_sweep(
            "ent/proj", "sw1", timeout=600, poll=30, progress=None, client_kwargs={"api": _api_fast()},
        )  # fmt: skip
    assert world.polls == 0


def test_expected_run_count_of_a_grid(wandb_standin):
    st = wandb_standin
    st.add_sweep("ent", "proj", "sw1", state="FINISHED", expected=3)
    st.add_run("ent", "proj", id="a", sweep="sw1", state="finished")
    st.add_run("ent", "proj", id="b", sweep="sw1", state="failed")
    _World(lambda poll: None)
    kwargs = dict(timeout=600, poll=30, progress=None, client_kwargs={"api": _api_fast()})
    with pytest.raises(TrackerError, match="2 of 3 expected runs and none running"):
        wait_for_sweep("ent/proj", "sw1", **kwargs)
    assert wait_for_sweep("ent/proj", "sw1", expect_runs=2, **kwargs)["runs"] == 2


def _http_error(status: int, headers: dict[str, str]) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers)
    return requests.HTTPError(f"{status} Client Error", response=response)


def test_retry_after_is_honoured_and_the_total_is_bounded():
    calls, sleeps = [], []
    clock = [0.0]

    def sleep(seconds):
        sleeps.append(seconds)
        clock[0] += seconds

    def flaky():
        calls.append(clock[0])
        if len(calls) < 3:
            raise _http_error(429, {"Retry-After": "7"})
        return "ok"

    policy = RetryPolicy(total=60, sleep=sleep, clock=lambda: clock[0])
    assert policy.call(flaky, "reading") == "ok"
    assert sleeps == [7.0, 7.0]

    def down():
        raise _http_error(503, {})

    sleeps.clear()
    clock[0] = 0.0
    with pytest.raises(
        TrackerError, match=r"^reading failed \(server error\): 503 .*\. Gave up after \d attempts"
    ) as info:
        RetryPolicy(total=20, base=2, max_wait=60, sleep=sleep, clock=lambda: clock[0]).call(down, "reading")
    assert isinstance(info.value.__cause__, requests.HTTPError) and "20 s (`retry_for=`)" in str(info.value)
    assert sum(sleeps) <= 20 and len(sleeps) >= 2
    assert all(2 * 2**i <= s <= 2 * 2**i * 1.25 for i, s in enumerate(sleeps))  # exponential, jitter ≤ 25 %


def test_causes_are_named():
    assert classify(_http_error(401, {})) == "authentication"
    assert classify(_http_error(404, {})) == "not found"
    assert classify(_http_error(502, {})) == "server error"
    assert classify(_http_error(429, {"Retry-After": "3"})) == "rate limit"
    assert retry_after(_http_error(429, {"Retry-After": "3"})) == 3.0
    assert classify(TimeoutError("read")) == "timeout"
    assert classify(RuntimeError("service process is busy and did not respond in time")) == "timeout"
    with pytest.raises(ValueError):  # not transient: never retried
        RetryPolicy(total=60, sleep=lambda s: None).call(lambda: (_ for _ in ()).throw(ValueError("bad")), "x")


# ---------------------------------------------------------------------------- stale heartbeats
def _ago(seconds: float) -> str:
    import datetime as dt

    return (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def _convention(algorithm, task, seed, score=None):
    config = {"rl_reliable_algorithm": algorithm, "rl_reliable_task": task, "rl_reliable_seed": seed}
    return {"config": config, "summary": {} if score is None else {"rl_reliable_final_score": score}}


def _stuck_sweep(st, heartbeat_age: float | None):
    st.add_sweep("ent", "proj", "sw1", state="FINISHED", expected=3)
    st.add_run("ent", "proj", id="a0", sweep="sw1", **_convention("PPO", "Pong", 0, 10.0))
    st.add_run("ent", "proj", id="a1", sweep="sw1", **_convention("PPO", "Pong", 1, 12.0))
    stuck = st.add_run("ent", "proj", id="b2", sweep="sw1", state="running", **_convention("PPO", "Pong", 2, 11.0))
    if heartbeat_age is not None:
        stuck["heartbeatAt"] = _ago(heartbeat_age)


def test_a_run_without_heartbeat_is_treated_as_crashed_during_the_wait(wandb_standin):
    _stuck_sweep(wandb_standin, heartbeat_age=7200)
    world = _World(lambda poll: None)
    lines: list[str] = []
    kwargs = dict(timeout=600, poll=30, client_kwargs={"api": _api_fast()})
    status = wait_for_sweep("ent/proj", "sw1", stale_after=600, progress=lines.append, **kwargs)
    assert status["active"] == [] and status["stale"][0].startswith("b2 (last heartbeat 7")
    assert world.polls == 0 and lines[-1].endswith("- done")
    assert any(ln.startswith("sweep sw1: treating 1 run as crashed") and "b2" in ln for ln in lines)
    with pytest.raises(TrackerError, match=r"was not finished after .* still active: b2 \(running\)"):
        wait_for_sweep("ent/proj", "sw1", stale_after=None, progress=None, **kwargs)  # the bound can be switched off


def test_a_live_run_is_still_waited_for(wandb_standin):
    _stuck_sweep(wandb_standin, heartbeat_age=None)  # the stand-in's running runs heartbeat now
    _World(lambda poll: None)
    with pytest.raises(TrackerError, match=r"still active: b2 \(running\)"):
        wait_for_sweep("ent/proj", "sw1", timeout=100, poll=30, progress=None, client_kwargs={"api": _api_fast()},
                       stale_after=600)  # fmt: skip


def test_cli_wait_names_the_stale_run_and_leaves_it_out_like_a_crashed_one(wandb_standin, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main
    from rl_reliable_logger.trackers.wandb.source import WandbSource

    _stuck_sweep(wandb_standin, heartbeat_age=3600)
    args = ["wandb", "ent/proj", "--sweep", "sw1", "--wait", "--poll", "1", "--wait-timeout", "60", "--retry-for", "0"]
    args += ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--publish", "none", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "out"), "--no-figures"]) == 0
    err = capsys.readouterr().err
    assert "sweep sw1: treating 1 run as crashed: they say running but sent no heartbeat for over 600 s: b2" in err
    assert "treated 1 W&B run as crashed" in err and "left out 1 unfinished W&B run (1 crashed)" in err
    table = WandbSource(path="ent/proj", sweep="sw1").table(include_unfinished=True)  # kept like a crashed run
    assert sorted(table.frame.tracker_run_id) == ["a0", "a1", "b2"] and set(table.frame.state) == {
        "finished",
        "crashed",
    }


# ---------------------------------------------------------------------------- the cause behind a client timeout
CAUSE_SCRIPT = """
import sys
sys.path.insert(0, {repo!r})
from rl_reliable_logger.trackers.wandb.source import load_wandb_runs
from rl_reliable_logger.errors import TrackerError
try:
    load_wandb_runs('ent/proj', timeout=4)
except TrackerError as err:
    print('TrackerError:', getattr(err, 'tracker_cause', None), err)
"""


@pytest.mark.parametrize(("status", "delay", "cause"), [(500, 0.0, "server error"), (429, 1.5, "rate limit")])
def test_a_failure_window_longer_than_the_client_timeout_names_the_real_cause(wandb_standin, status, delay, cause):
    """wandb-core retries 5xx/429; the Python client gives up after its timeout ("did not respond
    in time"). The message names what the server answered. In a subprocess: the busy core must not leak."""
    import os
    import subprocess
    import sys

    from tests.support.paths import REPO

    st = wandb_standin
    st.add_run("ent", "proj", id="r1")
    st.fail("Runs", status, delay=delay, times=10_000)
    script = CAUSE_SCRIPT.format(repo=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    text = out.stdout.strip()
    assert text.startswith(f"TrackerError: {cause} W&B request failed ({cause}) while listing runs of ent/proj"), (
        text + out.stderr[-2000:]
    )
    assert f"the server answered HTTP {status} (injected {status})" in text and "did not respond in time" not in text
    assert st.ops().count("Runs") >= 2  # wandb-core was retrying when the client stopped waiting


def test_a_client_timeout_at_a_refused_port_names_the_refusal_without_the_password(monkeypatch):
    """wandb-core retries a refused connection until the client stops waiting, and wandb then says it failed to
    verify the credentials: one probe of the port says what happened; the URL's password is never shown."""
    import socket

    import wandb.errors

    from rl_reliable_logger.trackers.wandb.client import describe_error

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://bob:S3CRET@127.0.0.1:{port}"
    monkeypatch.setenv("WANDB_BASE_URL", url)
    timeout = wandb.errors.AuthenticationError(
        f"Failed to verify credentials with {url}: Failed to execute API request: the service process is busy and "
        "did not respond in time"
    )
    err = describe_error(timeout, "connecting")
    text = str(err)
    assert getattr(err, "tracker_cause", None) == "connection"
    assert text.startswith(f"W&B request failed (connection) while connecting at http://bob:***@127.0.0.1:{port}: ")
    assert f"(connection refused at 127.0.0.1:{port})" in text and "could not be reached" in text
    assert "S3CRET" not in text and "credentials" not in text
