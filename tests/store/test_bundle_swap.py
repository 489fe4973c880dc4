"""A results folder survives a writer killed (SIGKILL, no clean-up) at any step of the bundle swap: the
next writer, or ``rl-reliable report``, finds the old or the new bundle complete at ``--out``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rl_reliable_logger.render.writer import save_report
from rl_reliable_logger.store.bundle import check_output_folder, read_bundle, recover_swap, write_bundle
from rl_reliable_logger.store.kinds import BundleError
from tests.support.cli import run_cli
from tests.support.reports import small_report

#: The child writes a bundle and kills itself with SIGKILL at one step of write_bundle.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from rl_reliable_logger.store import bundle

    out, step = sys.argv[1], sys.argv[2]
    real_rename, calls = os.rename, []

    def kill():
        os.kill(os.getpid(), signal.SIGKILL)

    def rename(a, b):
        calls.append(a)
        if step == f"before_rename{len(calls)}":
            kill()
        real_rename(a, b)
        if step == f"after_rename{len(calls)}":
            kill()

    os.rename = rename

    def fill(tmp):
        (tmp / "a.txt").write_text("new")
        if step == "fill":
            kill()

    bundle.write_bundle(out, fill, digest="new")
    """
)

#: (step, which bundle is at --out afterwards)
STEPS = [
    ("fill", "old"),  # killed while writing the new files
    ("before_rename1", "old"),  # new bundle complete, nothing moved yet
    ("after_rename1", "new"),  # old moved aside, new not yet in place: --out is missing
    ("after_rename2", "new"),  # new in place, old not yet deleted
]


def _old_bundle(out: Path) -> None:
    write_bundle(out, lambda tmp: (tmp / "a.txt").write_text("old"), digest="old")


def _kill_at(out: Path, step: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(out), step], env=env, capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()


@pytest.mark.parametrize(("step", "expected"), STEPS)
def test_a_writer_killed_at_any_step_leaves_a_complete_bundle_for_the_next_run(tmp_path, step, expected):
    out = tmp_path / "results"
    _old_bundle(out)
    _kill_at(out, step)
    if step == "after_rename1":
        assert not out.exists()  # the state the issue found: neither bundle at --out
    check_output_folder(out)  # what the next `evaluate --out` does first
    bundle = read_bundle(out)
    assert bundle.report_hash == expected
    assert bundle.contents["a.txt"] == expected.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no leftovers of the killed writer


def test_rl_reliable_report_restores_a_bundle_moved_aside_by_a_killed_writer(tmp_path, capsys):
    out = save_report(small_report(), tmp_path / "results", figures=False)
    digest = read_bundle(out).report_hash
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    aside = tmp_path / f".results.rl-reliable-old-{int(dead.stdout)}-x1"  # what a writer killed mid-swap leaves
    aside.mkdir()
    os.rename(out, aside / "bundle")
    code, stdout, err = run_cli(capsys, "report", out, "--quiet")
    assert code == 0, err
    assert "restored the previous results bundle" in err
    assert read_bundle(out).report_hash == digest and (out / "report.html").exists()
    assert not aside.exists()


def test_leftovers_of_a_running_writer_are_never_touched(tmp_path):
    out = tmp_path / "results"
    _old_bundle(out)
    mine = tmp_path / f".results.rl-reliable-new-{os.getpid()}-abc"
    holder = subprocess.Popen(  # a live writer of the folder: it holds the lock while its new folder exists
        [sys.executable, "-c", HOLDER, str(out), str(mine)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(BundleError, match=r"another rl-reliable process \(pid \d+\) is writing it; waited 0.2 s"):
            recover_swap(out, wait=0.2)
        assert mine.is_dir() and read_bundle(out).report_hash == "old"
    finally:
        holder.kill()
        holder.wait()
    assert recover_swap(out) is None  # its writer is gone: the bundle was never missing, the leftover is removed
    assert not mine.exists()


#: A child that takes the folder's lock, makes a new-bundle folder as a writer would, says so and waits.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from rl_reliable_logger.store import lock

    with lock.folder_lock(sys.argv[1]):
        Path(sys.argv[2]).mkdir()
        print("locked", flush=True)
        time.sleep(600)
    """
)
