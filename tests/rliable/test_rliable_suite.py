"""rliable's own test files, unchanged, against the drop-in imported under the name ``rliable``.

rliable's tests are not in its wheel or sdist (only in its repository, google-research/rliable, under
``tests/rliable/``), and they are not committed here: put a copy of its ``*_test.py`` files in
``benchmarks/.rliable-venv/rliable_tests/`` (the venv folder is git-ignored) or point ``RLIABLE_TESTS_DIR`` at
them. They use ``absl``: they run in this interpreter when it has ``absl``, else in rliable's venv
(``bash benchmarks/rliable/setup_rliable_venv.sh``), with the drop-in aliased (``run_rliable_suite.py``). Skipped
with the reason when either is missing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

VENV = REPO / "benchmarks" / ".rliable-venv"
RUNNER = Path(__file__).with_name("run_rliable_suite.py")


def _tests_dir() -> Path | None:
    for folder in (os.environ.get("RLIABLE_TESTS_DIR"), VENV / "rliable_tests"):
        if folder and any(Path(folder).glob("*_test.py")):
            return Path(folder)
    return None


def _python() -> str | None:
    if importlib.util.find_spec("absl") is not None:
        return sys.executable
    venv_python = VENV / "bin" / "python"
    return str(venv_python) if venv_python.exists() else None


def test_rliable_own_test_files_pass_against_the_drop_in() -> None:
    folder, python = _tests_dir(), _python()
    if folder is None:
        pytest.skip(
            "rliable's test files are not available: copy tests/rliable/*_test.py of google-research/rliable into "
            f"{VENV / 'rliable_tests'} or set RLIABLE_TESTS_DIR"
        )
    if python is None:
        pytest.skip(
            "rliable's tests need absl: install absl-py here or run bash benchmarks/rliable/setup_rliable_venv.sh"
        )
    proc = subprocess.run([python, str(RUNNER), str(folder)], capture_output=True, text=True, timeout=900)
    found = re.search(r"RESULT run=(\d+) failures=(\d+) errors=(\d+)", proc.stdout)
    assert found, proc.stdout[-2000:] + proc.stderr[-3000:]
    run, failures, errors = map(int, found.groups())
    assert run >= 11 and failures == 0 and errors == 0, proc.stderr[-3000:]
    assert proc.returncode == 0
