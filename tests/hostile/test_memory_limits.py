"""Limits a batch scheduler sets: the memory pre-check uses the smallest of the machine's free memory, the memory
cgroup and the process's ``ulimit -v`` / ``-d``; what does not fit is one sentence with the estimate, exit 2.
Under ``ulimit -v 400000`` the paper-default evaluate used to end in ``error: MemoryError`` (exit 1)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from rl_reliable_logger.cli.main import main
from tests.support.paths import REPO

pytestmark = pytest.mark.timeout(600)
EXAMPLE = str(REPO / "examples" / "atari100k_scores.csv")
IMPORTS = "import numpy, pandas, scipy, rl_reliable_logger.cli.main, rl_reliable_logger.analysis.evaluation"


def _limited(limit: int, *argv: str) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("RL_RELIABLE_DEBUG", None)
    return subprocess.run(
        [sys.executable, *argv], preexec_fn=cap, env=env, capture_output=True, text=True, timeout=300, cwd=REPO
    )


def _address_space_after_imports() -> int:
    """VmSize of an interpreter that imported what evaluate needs (thread arenas make it machine dependent)."""
    code = f"{IMPORTS}\nprint(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1])"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                         capture_output=True, text=True, check=True)  # fmt: skip
    return int(out.stdout) * 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc")
def test_an_address_space_limit_is_the_available_memory():
    limit = _address_space_after_imports() + 2**30
    done = _limited(limit, "-c", f"{IMPORTS}\nfrom rl_reliable_logger.memory import available_memory as a; print(a())")
    assert done.returncode == 0, done.stderr
    assert 0 < float(done.stdout) <= 2**30 + 32 * 2**20, done.stdout  # VmSize varies by a few MB


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc")
def test_paper_default_evaluate_under_an_address_space_limit_is_refused_with_the_estimate():
    """Room for the interpreter and its libraries plus 40 MB: the bootstrap does not fit, and says so."""
    limit = _address_space_after_imports() + 40 * 2**20
    done = _limited(limit, "-m", "rl_reliable_logger.cli", "evaluate", EXAMPLE, "--quiet", "--no-figures")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and "MemoryError" not in line, line
    assert line.startswith("error: ") and "would need about" in line and "is available" in line, line


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc")
def test_too_little_address_space_to_import_the_libraries_is_one_sentence():
    """Below what the imports need (the interpreter alone starts): a MemoryError or a library whose segments
    could not be mapped becomes the last-resort sentence, exit 2. Where the imports still fit (smaller libraries,
    e.g. at the dependency floors), the memory pre-check refuses with its estimate instead: one sentence either way."""
    limit = _address_space_after_imports() // 2
    done = _limited(limit, "-m", "rl_reliable_logger.cli", "evaluate", EXAMPLE, "--quiet", "--no-figures")
    refused = "would need about" in done.stderr and "of memory" in done.stderr
    assert done.stderr.startswith("error: ran out of memory (") or refused, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    # the status is 2, unless the interpreter itself crashes on its way out with no memory left (SIGSEGV, 139)
    assert done.returncode in (2, -11, 139), done.returncode


def test_a_memory_error_anywhere_is_one_sentence_and_exit_2(tmp_path, capsys, monkeypatch):
    from rl_reliable_logger.cli import evaluate as evaluate_command

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(evaluate_command, "run_and_report", boom)
    path = tmp_path / "s.csv"
    path.write_text("algorithm,task,seed,score\nA,t,0,1\nA,t,1,2\nB,t,0,2\nB,t,1,3\n")
    assert main(["evaluate", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ran out of memory (about ") and err.count("\n") == 1, err


def test_only_memory_errors_are_worded_as_memory():
    from rl_reliable_logger.memory import out_of_memory

    assert out_of_memory(MemoryError()) is not None
    assert out_of_memory(ImportError("libopenblas.so: failed to map segment from shared object")) is not None
    assert out_of_memory(ImportError("No module named 'x'")) is None
    assert out_of_memory(ValueError("failed to map segment")) is None
