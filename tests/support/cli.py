"""Running the ``rl-reliable`` command in-process in tests."""

from __future__ import annotations

from typing import Any

from rl_reliable_logger.cli.main import main


def run_cli(capsys: Any, *argv: object) -> tuple[int, str, str]:
    """``rl-reliable ARGV`` in this process: (exit code, stdout, stderr); arguments are turned into text."""
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err
