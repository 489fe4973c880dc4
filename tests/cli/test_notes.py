"""A note of the library (``rl_reliable_logger.notes.note``: a tracker's retry progress, a publish's notes) reaches
the terminal through one chokepoint: as a library, one ``note:`` line on stderr in the library's words, redacted;
under a command, the console's ``note:`` line in flag words, redacted, said once per command."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from rl_reliable_logger.cli import common
from rl_reliable_logger.trackers.base.retry import RetryPolicy

TRACKERS = Path(__file__).resolve().parents[2] / "rl_reliable_logger" / "trackers"

#: A tracker address with a password and a token in it (as ``tests/cli/test_tracker_errors_cli.py`` builds one).
SECRET_URL = "http://alice:hunter2pw@127.0.0.1:5000/?token=tok98765"


class _Refused(ConnectionError):
    pass


def _one_retry(what: str) -> None:
    """One call that fails once (a refused connection: transient) and then answers, with its retry said as a note
    by the policy's default progress."""
    tries = iter([_Refused("connection refused"), None])

    def answer() -> int:
        failure = next(tries)
        if failure is not None:
            raise failure
        return 1

    policy = RetryPolicy(total=100.0, jitter=0.0, sleep=lambda s: None, clock=lambda: 0.0, rng=random.Random(0))
    assert policy.call(answer, what, bounded=False) == 1


def test_a_tracker_note_is_redacted_as_a_library_and_on_the_command_line(capsys):
    _one_retry(f"reaching {SECRET_URL}")
    library = capsys.readouterr().err
    with common.console():
        _one_retry(f"reaching {SECRET_URL}")
    console = capsys.readouterr().err
    for err in (library, console):
        assert err.startswith("note: reaching http://alice:***@127.0.0.1:5000/?token=*** failed (connection)"), err
        assert "hunter2pw" not in err and "tok98765" not in err and err.count("\n") == 1, err


def test_a_note_said_twice_in_one_command_is_printed_once(capsys):
    with common.console():
        _one_retry("looking up experiment 'exp'")
        _one_retry("looking up experiment 'exp'")  # the same line again: said once per command
    err = capsys.readouterr().err
    line = (
        "note: looking up experiment 'exp' failed (connection); attempt 2 in 2 s (100 s left of the 100 s time budget)"
    )
    assert err == line + "\n"
    _one_retry("looking up experiment 'exp'")  # as a library, after the command: every note is printed, as before
    _one_retry("looking up experiment 'exp'")
    assert capsys.readouterr().err == 2 * err


def test_nested_consoles_give_the_routing_back(capsys):
    from rl_reliable_logger.notes import note

    with common.console():
        with common.console():
            note("inner")
            note("inner")
        note("inner")  # the outer command's console: not said there yet
        note("outer")
    note("library")
    assert capsys.readouterr().err == "note: inner\nnote: inner\nnote: outer\nnote: library\n"


def _stderr_prints(tree: ast.AST) -> list[int]:
    """Lines that print to stderr or write to it: ``print(..., file=sys.stderr)``, ``sys.stderr.write(...)``."""

    def stderr(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr in ("stderr", "__stderr__")) or (
            isinstance(node, ast.Name) and node.id == "stderr"
        )

    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            if any(k.arg == "file" and stderr(k.value) for k in node.keywords):
                lines.append(node.lineno)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("write", "writelines"):
            if stderr(node.func.value):
                lines.append(node.lineno)
    return lines


def test_no_tracker_prints_to_stderr_itself():
    """Every note of a tracker goes through ``notes.note`` (the one chokepoint): no module under ``trackers/``
    prints to stderr (code only: a docstring's example is text)."""
    found = [
        f"{path.relative_to(TRACKERS).as_posix()}:{line}"
        for path in sorted(TRACKERS.rglob("*.py"))
        for line in _stderr_prints(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, found
    planted = ast.parse(
        '"""print("x", file=sys.stderr)"""\nimport sys\nprint("x", file=sys.stderr)\nsys.stderr.write("y")\n'
    )
    assert _stderr_prints(planted) == [3, 4]  # the scan finds what it looks for, and skips the docstring
