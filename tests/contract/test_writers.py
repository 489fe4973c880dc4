"""The writer half of the contract battery: every writer the package registers (``store.kinds.WRITERS``) meets the
same hostile corpus, so a writer added later is attacked by construction (its case goes in
``tests/support/writers.py``; without one, the first test fails).

For every writer:

* names a spreadsheet would execute, numbers-as-text and quotes: no CSV cell can run in a spreadsheet, YAML and
  shell lines keep them as text, and the package reads every name back exactly;
* a real process killed (SIGKILL) at each step of the write: the next reader finds the previous or the new
  content whole (a watch never loses its history), and the next write leaves nothing behind;
* two writers at once: the second waits within its budget, then refuses in one sentence naming the target; the
  first completes (a pending score, one file per score, lets both succeed);
* a full disk at each step: the error names the target and the previous content stays, with no leftovers.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rl_reliable_logger.data.csvcells import TRIGGERS
from rl_reliable_logger.store import kinds, lock, steps
from tests.support.paths import REPO
from tests.support.writers import CASES

pytestmark = [pytest.mark.filterwarnings("ignore::rl_reliable_logger.errors.ReliabilityWarning")]

KINDS = sorted(kinds.WRITERS)
#: First characters a spreadsheet executes (the escape, a leading ', is not one).
FORMULA = tuple(c for c in TRIGGERS if c != "'")


def _steps(kind: str) -> tuple[str, ...]:
    return steps.BUNDLE_STEPS if kinds.WRITERS[kind].bundle else steps.FILE_STEPS


#: Steps after which the new content is the one in place (the swap or rename happened, or is completed on reading).
NEW_FROM = {"aside", "swapped", "done", "renamed"}
KILL_POINTS = [(kind, step) for kind in KINDS for step in _steps(kind)]


def _child(kind: str, target: Path, version: int, step: str, action: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore")
    argv = [sys.executable, "-m", "tests.support.writers", kind, str(target), str(version), step, action]
    return subprocess.Popen(argv, env=env, cwd=REPO, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def _leftovers(folder: Path) -> list[str]:
    """Temporary files or folders of a write, or lock files, beside the target."""
    return sorted(p.name for p in folder.iterdir() if ".rl-reliable-" in p.name or p.name.endswith(".tmp"))


def _written_files(target: Path) -> list[Path]:
    return sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]


def test_every_registered_writer_has_a_case():
    assert sorted(CASES) == KINDS, "a writer in store.kinds.WRITERS needs a case in tests/support/writers.py"


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_names_run_nowhere_and_read_back_exactly(tmp_path, kind):
    case = CASES[kind]
    if not case.names:  # race_tune's end record: Tune's trial id only, and never an id that is no plain file name
        pytest.skip("this writer stores no names (test_trial_end_records: a hostile trial id is never written)")
    target = tmp_path / case.target
    case.write(target, 1)
    seen = case.read(target).names
    assert seen == case.names  # read back by the package exactly as written
    assert any(n.startswith(("=", "+", "-", "@")) for n in seen), seen  # the corpus reached this writer
    for path in _written_files(target):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".csv":
            for row in csv.reader(text.splitlines()):
                for cell in row:
                    if cell.startswith(FORMULA):
                        float(cell)  # only a number may start like a formula (-0.5); names start with '

        elif path.suffix == ".yaml":
            values = [v for p in yaml.safe_load(text)["parameters"].values() for v in p["values"]]
            assert {v for v in values if isinstance(v, str)} <= seen, values  # names stay text, as written
        elif path.suffix == ".txt":  # shell lines (mlflow-params.txt): each value one quoted word
            for line in text.splitlines():
                words = shlex.split(line)
                assert {w.split("=", 1)[1] for w in words if w != "-P"} - seen <= {str(n) for n in range(100)}
        elif path.suffix == ".json":
            json.loads(text)
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "step"), KILL_POINTS)
def test_a_writer_killed_at_any_step_leaves_the_old_or_new_content_whole(tmp_path, kind, step):
    case = CASES[kind]
    target = tmp_path / case.target
    case.write(target, 1)
    child = _child(kind, target, 2, step, "kill")
    _out, err = child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL, err[-2000:]
    expected = case.after([1, 2]) if step in NEW_FROM else case.after([1])
    assert case.read(target).version == expected  # the next reader: whole, and for a watch its looks kept
    case.write(target, 3)  # the next writer completes, and removes what the killed one left
    assert case.read(target).version == case.after([1, 2, 3] if expected == case.after([1, 2]) else [1, 3])
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_two_writers_at_once_never_both_write_one_target(tmp_path, kind, monkeypatch):
    case = CASES[kind]
    target = tmp_path / case.target
    case.write(target, 1)
    step = "filled" if kinds.WRITERS[kind].bundle else "written"
    first = _child(kind, target, 2, step, "hold")  # holds the lock in the middle of its write
    try:
        assert first.stdout is not None
        held = json.loads(first.stdout.readline() or "{}")
        assert held.get("held") == step, first.stderr.read() if first.stderr else ""
        monkeypatch.setattr(lock, "LOCK_WAIT", 0.3)
        if case.shared:
            with pytest.raises(kinds.BundleError) as refused:
                case.write(target, 3)
            message = str(refused.value)
            assert message.startswith(str(target)) and "\n" not in message
            assert f"another rl-reliable process (pid {held['pid']}) is writing it; waited 0.3 s" in message
        else:
            case.write(target, 3)  # its own file: both succeed
        first.communicate(input="\n", timeout=300)
        assert first.returncode == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert case.read(target).version == (case.after([1, 2]) if case.shared else case.after([1, 2, 3]))
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(("kind", "step"), [(k, s) for k in KINDS for s in ("filled", "manifest", "written")
                                             if s in _steps(k)])  # fmt: skip
def test_a_full_disk_names_the_target_and_keeps_the_previous_content(tmp_path, kind, step, monkeypatch):
    case = CASES[kind]
    target = tmp_path / case.target
    case.write(target, 1)

    def full(reached: str) -> None:
        if reached == step:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(steps, "fault_hook", full)
    with pytest.raises(OSError) as failed:
        case.write(target, 2)
    assert failed.value.errno == errno.ENOSPC
    assert str(failed.value.filename).startswith(str(target))  # a full disk names no file: the writer names it
    monkeypatch.setattr(steps, "fault_hook", None)
    assert case.read(target).version == case.after([1])
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_without_write_permission_is_one_sentence_and_keeps_the_content(tmp_path, kind):
    case = CASES[kind]
    target = tmp_path / case.target
    case.write(target, 1)
    tmp_path.chmod(0o500)
    try:
        with pytest.raises((kinds.BundleError, PermissionError)):
            case.write(target, 2)
    finally:
        tmp_path.chmod(0o700)
    assert case.read(target).version == case.after([1])
