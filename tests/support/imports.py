"""Which modules a piece of code imports, in a fresh interpreter (so nothing this test process loaded counts)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Sequence


def modules_loaded(code: str, names: Sequence[str], timeout: float = 120) -> list[str]:
    """Run ``code`` in a fresh ``python -c`` and return which of ``names`` are in ``sys.modules`` after it, sorted;
    a failure of the code fails the test with its stderr."""
    script = f"{code}\nimport sys\nprint(sorted(m for m in {tuple(names)!r} if m in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])  # the printed list of names
