"""lines.one_line: the multi-line texts tracker clients raise become one redacted line that keeps
the cause (shapes taken from real MLflow, SQLAlchemy, requests and W&B errors)."""

from __future__ import annotations

import pytest

from rl_reliable_logger.lines import MAX_LINE, one_line
from rl_reliable_logger.trackers.base.messages import describe_failure, describe_os_error

HTML_404 = """API request to endpoint /api/2.0/mlflow/experiments/get-by-name failed with error code 404 != 200. \
Response body: '<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
        <style>body { color: red }</style>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 404</p>
        <p>Message: File not found &amp; gone.</p>
    </body>
</html>
'"""
JSON_403 = """PERMISSION_DENIED: {
  "error_code": "PERMISSION_DENIED",
  "message": "User alice lacks READ permission"
}"""
SQL = """(sqlite3.DatabaseError) file is not a database
[SQL: SELECT name FROM sqlite_master WHERE type='table']
(Background on this error at: https://sqlalche.me/e/21/4xp6)"""
TRACEBACK = """wandb: ERROR Run initialization has timed out
Traceback (most recent call last):
  File "/x/wandb/sdk/wandb_init.py", line 1, in init
    raise CommError("timed out")
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
wandb.errors.CommError: timed out after 90 s"""
BULLETS = """some runs cannot be used:
  - 3 run(s) lack tags.x: a, b, c
  - duplicate seed 1 for A / t
Name the right fields."""


@pytest.mark.parametrize(
    "text, kept, dropped",
    [
        (HTML_404, ["error code 404", "File not found & gone.", "Error code: 404"], ["<", "color: red"]),
        (JSON_403, ['"error_code": "PERMISSION_DENIED"', "User alice lacks READ permission"], []),
        (SQL, ["(sqlite3.DatabaseError) file is not a database"], ["[SQL", "Background on this error"]),
        (TRACEBACK, ["Run initialization has timed out", "CommError: timed out after 90 s"], ['File "', "^^^"]),
        (BULLETS, ["some runs cannot be used: 3 run(s) lack tags.x: a, b, c; duplicate seed 1", "Name the right"], []),
    ],
)
def test_folds_to_one_line_keeping_the_cause(text, kept, dropped):
    line = one_line(text)
    assert "\n" not in line and "\r" not in line and "  " not in line
    for part in kept:
        assert part in line, (part, line)
    for part in dropped:
        assert part not in line, (part, line)


def test_redacts_before_folding_and_bounds_the_length():
    line = one_line("failed at http://bob:s3cr3tpw@host:5000/api?token=abcdef\n" + "x" * 5000)
    assert "s3cr3tpw" not in line and "abcdef" not in line and "bob:***@host" in line
    assert len(line) == MAX_LINE and line.endswith("…")


def test_describe_failure_uses_the_servers_message_and_the_class_name():
    class RestException(Exception):
        __module__ = "mlflow.exceptions"

        def __init__(self, message: str) -> None:
            super().__init__(f"wrapped: {message}")
            self.message = message

    text = describe_failure(RestException(JSON_403))
    assert text.startswith("RestException: PERMISSION_DENIED:") and "\n" not in text and "wrapped" not in text


def test_os_errors_name_the_file_not_the_class():
    err = OSError(28, "No space left on device", "/results/aggregates.csv")
    assert describe_os_error(err) == "No space left on device: /results/aggregates.csv"


def test_a_text_of_noise_lines_only_is_still_redacted():
    """When every line is noise (an SQL echo carrying a URI), the fallback is the redacted text, not the raw one."""
    text = "[SQL: SELECT 1 -- postgresql://alice:hunter2@db.example/mlflow]"
    line = one_line(text)
    assert "hunter2" not in line and "db.example" in line
