"""A time budget is a wall-clock promise on W&B too: the ``rl-reliable wandb`` command against a closed port
and a port that accepts connections and never answers, and ``log_final_score`` on a Public API run whose server
answers 500 slowly or has gone away (the real wandb client). A refused port with no budget to wait for a server
is one line at once; every failure is one ``error:`` line, exit 2, no traceback, no library log line, no password.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.trackers.base.retry import REQUEST_TIMEOUT
from tests.support.paths import REPO
from tests.support.wandb_standin import API_KEY

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(tmp_path, url: str, seconds: float | None, *command: str, **extra: str) -> tuple[int, str, float]:
    """(exit code, stderr, seconds) of ``rl-reliable wandb ent/proj`` (or ``rl-reliable COMMAND...``) against
    ``url`` in a subprocess; stderr goes to a file, since the wandb-core the command started may hold a pipe open
    after the command has ended."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        WANDB_BASE_URL=url,
        WANDB_API_KEY=API_KEY,
        WANDB_DIR=str(tmp_path),
        WANDB_CACHE_DIR=str(tmp_path / "cache"),
        WANDB_CONFIG_DIR=str(tmp_path / "config"),
        WANDB_SILENT="true",
        WANDB_ERROR_REPORTING="false",
        **extra,
    )
    budget = [] if seconds is None else ["--retry-for", f"{seconds:g}"]
    command = command or ("wandb", "ent/proj", "--no-figures", "--publish", "none")
    argv = [sys.executable, "-m", "rl_reliable_logger", *command, *budget]
    err = tmp_path / "stderr.txt"
    start = time.monotonic()
    with open(err, "w") as fh:
        proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=fh)
        try:
            code = proc.wait(timeout=150)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = -9
    return code, err.read_text(), time.monotonic() - start


def _the_error(stderr: str) -> str:
    """The one line of a failure: one ``error:`` line and nothing else (no traceback, no library log line)."""
    lines = [ln for ln in stderr.splitlines() if not ln.startswith("note: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr and "Retrying" not in stderr and "S3CRET" not in stderr and API_KEY not in stderr
    return lines[0]


@pytest.mark.parametrize("seconds", [0, None], ids=["retry-for-0", "no-retry-for"])
def test_a_refused_port_without_a_budget_to_wait_is_one_line_within_seconds(tmp_path, seconds):
    """``--retry-for 0``, or no ``--retry-for`` at all: a port that refuses the first connection is a wrong port or a
    stopped server, said at once (wandb-core would retry it until the client's timeout, about 20 s, and the budget's
    retries would follow)."""
    port = _closed_port()
    code, stderr, took = _cli(tmp_path, f"http://bob:S3CRET@127.0.0.1:{port}", seconds)
    print(f"W&B refused port, --retry-for {seconds}: exit {code} after {took:.1f} s")
    assert code == 2, stderr
    assert took < 15
    line = _the_error(stderr)
    assert f"could not connect to the W&B server at http://bob:***@127.0.0.1:{port} (connection refused)" in line
    assert "WANDB_BASE_URL" in line and "pass --retry-for SECONDS (more than 0) to wait" in line
    assert "still waiting" not in stderr


def test_a_refused_port_with_a_budget_is_named_when_the_budget_is_spent(tmp_path):
    """With ``--retry-for`` a starting server is waited for; when nothing ever answered, the last line names the
    refused port (one probe), never wandb's "failed to verify credentials" nor the URL's password."""
    port = _closed_port()
    code, stderr, took = _cli(tmp_path, f"http://bob:S3CRET@127.0.0.1:{port}", 5)
    print(f"W&B refused port, --retry-for 5: exit {code} after {took:.1f} s")
    assert code == 2, stderr
    assert took < 5 + REQUEST_TIMEOUT + 25
    line = _the_error(stderr)
    assert f"W&B request failed (connection) while connecting at http://bob:***@127.0.0.1:{port}: " in line
    assert f"connection refused at 127.0.0.1:{port}" in line and "could not be reached" in line
    assert "credentials" not in line and "AuthenticationError" not in line
    assert line.endswith(f"the time budget is 5 s (--retry-for) plus {REQUEST_TIMEOUT:g} s for the last request.")


def test_a_silent_port_is_one_timeout_line_within_one_request_timeout(tmp_path):
    """A port that accepts connections and never answers: ``--retry-for 0`` ends within one request timeout, in one
    line that says the server did not answer (not wandb's "failed to verify credentials") and no password."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # the kernel accepts connections; nothing ever reads or answers them
        port = silent.getsockname()[1]
        code, stderr, took = _cli(tmp_path, f"http://bob:S3CRET@127.0.0.1:{port}", 0)
    print(f"W&B silent port, --retry-for 0: exit {code} after {took:.1f} s")
    assert code == 2, stderr
    assert took < REQUEST_TIMEOUT + 25
    line = _the_error(stderr)
    assert f"W&B request failed (timeout) while connecting at http://bob:***@127.0.0.1:{port}: " in line
    assert "did not answer in time" in line and "credentials" not in line


def test_under_a_budget_a_listing_request_waits_no_longer_than_the_request_timeout(monkeypatch):
    """``WANDB_HTTP_TIMEOUT`` above the budget's request timeout would stretch ``--retry-for``'s promise: each
    listing request is given the request timeout instead (a shorter one, or none, is left to wandb)."""
    from rl_reliable_logger.errors import TrackerError
    from rl_reliable_logger.trackers.base.retry import RetryPolicy
    from rl_reliable_logger.trackers.wandb import source

    seen: list[object] = []

    def api(**kwargs):
        seen.append(kwargs["timeout"])
        raise TrackerError("no server here")

    monkeypatch.setattr(source, "public_api", api)
    with socket.socket() as listening:  # the port check passes: something listens
        listening.bind(("127.0.0.1", 0))
        listening.listen(64)  # never accepted: each port check waits in the backlog
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"
        for asked in ("45", "10", ""):
            monkeypatch.setenv("WANDB_HTTP_TIMEOUT", asked)
            for budget in (RetryPolicy(total=0), RetryPolicy(total=5, sleep=lambda s: None)):
                with pytest.raises(TrackerError, match="no server here"):
                    source.load_wandb_runs("ent/proj", retry=budget, client_kwargs={"base_url": url})
    assert seen == [REQUEST_TIMEOUT, REQUEST_TIMEOUT, None, None, None, None]


def test_closed_port_retry_for_10_ends_within_45_s(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        WANDB_BASE_URL=f"http://127.0.0.1:{port}",
        WANDB_API_KEY=API_KEY,
        WANDB_DIR=str(tmp_path),
        WANDB_CACHE_DIR=str(tmp_path / "cache"),
        WANDB_CONFIG_DIR=str(tmp_path / "config"),
        WANDB_SILENT="true",
        WANDB_ERROR_REPORTING="false",
    )
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger", "wandb", "ent/proj", "--retry-for", "10", "--no-figures"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    took = time.monotonic() - start
    print(f"W&B closed port, --retry-for 10: exit {proc.returncode} after {took:.1f} s")
    assert proc.returncode == 2 and took < 45, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert "W&B request failed (connection)" in line and "could not be reached" in line
    assert "Gave up after" in line and "10 s (--retry-for)" in line


_SLOW_SERVER = """
import sys, time, warnings
sys.path.insert(0, sys.argv[1])
import wandb
from rl_reliable_logger import log_final_score
from tests.support.wandb_standin import FAST_RETRY_SETTINGS

wandb.setup(settings=wandb.Settings(**FAST_RETRY_SETTINGS))
run = wandb.Api().run("ent/proj/r1")
print("READY", flush=True)
sys.stdin.readline()  # the test makes the server fail now
start = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    log_final_score(55.0, algorithm="PPO", task="Hopper", seed=1, run=run, retry_for=5, pending_dir=sys.argv[2])
print(f"returned after {time.monotonic() - start:.1f} s", flush=True)
for w in caught:
    print("WARNING", w.message, flush=True)
sys.stdout.flush()
import os
os._exit(0)  # wandb-core is still retrying the abandoned request; this test does not wait for it
"""


def test_log_final_score_on_a_slow_failing_server_returns_within_the_budget(wandb_standin, tmp_path):
    """In a subprocess: the abandoned request keeps that process's wandb-core busy, never this one's."""
    st = wandb_standin
    st.add_run("ent", "proj", id="r1", config={"lr": 0.1}, summary={"loss": 1.0})
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_SERVER, str(REPO), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "READY"
    st.fail("UpsertBucket", 500, times=10_000, delay=10.0)  # each try takes 10 s and fails
    proc.stdin.write("go\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=120)
    print(f"W&B log_final_score, server 500 after 10 s, retry_for=5: {out.splitlines()[0]}")
    took = float(out.split("returned after ")[1].split(" s")[0])
    assert took < 5 + REQUEST_TIMEOUT + 5, err
    (path,) = tmp_path.glob("wandb-r1-*.json")
    (message,) = [ln for ln in out.splitlines() if ln.startswith("WARNING")]
    assert str(path) in message and "Gave up after" in message and "5 s (`retry_for=`)" in message


_GONE_SERVER = """
import os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import wandb
from rl_reliable_logger import log_final_score

run = wandb.Api().run("ent/proj/r1")
print("READY", flush=True)
sys.stdin.readline()  # the test stops the server now: its port refuses connections
start = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    log_final_score(55.0, algorithm="PPO", task="Hopper", seed=1, run=run, retry_for=0, pending_dir=sys.argv[2])
print(f"returned after {time.monotonic() - start:.1f} s", flush=True)
for w in caught:
    print("WARNING", w.message, flush=True)
os._exit(0)
"""


def test_log_final_score_with_no_budget_on_a_server_gone_away_saves_the_score_at_once(tmp_path, monkeypatch):
    """``retry_for=0`` and a refused port: the score is in a pending file within seconds (not after wandb-core's
    own retries), and the warning says the connection was refused and how to send the score later."""
    from tests.support.wandb_env import isolate_wandb
    from tests.support.wandb_standin import start

    st, server = start()
    st.add_run("ent", "proj", id="r1", config={"lr": 0.1}, summary={"loss": 1.0})
    isolate_wandb(monkeypatch, tmp_path, WANDB_BASE_URL=st.base_url, WANDB_API_KEY=API_KEY)
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _GONE_SERVER, str(REPO), str(tmp_path / "pending")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip() == "READY"
    finally:
        server.shutdown()
        server.server_close()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    out, _ = proc.communicate(timeout=120)
    print(f"W&B log_final_score, server gone, retry_for=0: {out.splitlines()[0]}")
    took = float(out.split("returned after ")[1].split(" s")[0])
    assert took < 5
    (path,) = (tmp_path / "pending").glob("wandb-r1-*.json")
    (message,) = [ln for ln in out.splitlines() if ln.startswith("WARNING")]
    assert str(path) in message and "could not write the final score to W&B run r1" in message
    assert f"could not connect to the W&B server at {st.base_url} (connection refused)" in message


def test_pushing_a_pending_score_to_a_refused_port_keeps_it_and_says_so_at_once(tmp_path):
    """``rl-reliable pending DIR --push`` without ``--retry-for``: a W&B server that refuses the connection is one
    line at once (not 300 s of retries), and the file stays for the next push."""
    from rl_reliable_logger.trackers.base.final_score import FinalScore
    from rl_reliable_logger.trackers.base.pending import save_pending

    url = f"http://127.0.0.1:{_closed_port()}"
    target = {"run_id": "r1", "entity": "ent", "project": "proj", "base_url": url}
    folder = tmp_path / "pending"
    path = save_pending(
        FinalScore(55.0, "PPO", "Hopper", 1), tracker="wandb", target=target, error=OSError("down"), directory=folder
    )
    code, stderr, took = _cli(tmp_path, url, None, "pending", str(folder), "--push")
    print(f"W&B pending --push to a refused port: exit {code} after {took:.1f} s")
    assert code == 2, stderr
    assert took < 15
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith("not pushed: ")]
    assert f"not pushed: {path.name}: could not connect to the W&B server at {url} (connection refused)" in line
    assert path.is_file() and "Traceback" not in stderr and "still waiting" not in stderr
