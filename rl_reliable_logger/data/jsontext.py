"""The one JSON reader of users' files: JSON parsed without guessing, every refusal one sentence naming the file.

``json.loads`` accepts text that cannot be read without a guess, and fails on some of it with a message that names
nothing the user wrote: a key written twice in one object keeps the last value without a word (marl-eval silently
lost a run), an integer beyond float64 (``10**400``) becomes an ``OverflowError`` wherever it is first used as a
number, an integer of more than 4,300 digits is CPython's ``ValueError`` about string conversion, and
100,000 nested brackets are a ``RecursionError``. Every reader of a JSON file (score files, marl-eval, the
header line of SB3's ``monitor.csv``, Ray Tune's state and result files) calls :func:`loads` or
:func:`read_json`, which refuse each of these with an :class:`~rl_reliable_logger.errors.InputError` naming the
file (and the key or the number) and saying what to do. ``NaN`` and ``Infinity`` are read as the floats they
name (each reader refuses a non-finite score in its own words).

Example:
    >>> loads('{"score": 1.5}', "run.json")
    {'score': 1.5}
    >>> loads('{"score": 1, "score": 2}', "run.json")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.errors.InputError: run.json: key 'score' appears twice in one object (1 and 2); which value is meant cannot be told: keep one
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from ..errors import InputError
from .files import MAX_INPUT_BYTES, read_text

__all__ = ["JsonProblem", "MAX_DIGITS", "loads", "parse", "read_json"]

#: Digits of the largest integer a float64 holds (``1.8e308``): a longer integer is refused before it is converted.
MAX_DIGITS = len(str(int(sys.float_info.max)))


class JsonProblem(ValueError):
    """JSON that cannot be read without guessing; ``str()`` says why (without the file: the caller names it)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: ``{"score": 1, "score": 2}`` would keep one value silently."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonProblem(
                f"key {key!r} appears twice in one object ({repr(out[key])[:40]} and {repr(value)[:40]}); "
                "which value is meant cannot be told: keep one"
            )
        out[key] = value
    return out


def _integer(text: str) -> int:
    """An integer literal no float can hold is refused by its length, before any conversion (CPython refuses to
    convert more than 4,300 digits, and a float of ``10**400`` overflows)."""
    digits = len(text.lstrip("-"))
    if digits <= MAX_DIGITS:
        value = int(text)
        if abs(value) <= sys.float_info.max:
            return value
    raise JsonProblem(
        f"the integer {text[:12]}... ({digits:,} digits) is too large for a number (at most ~1e308); "
        "write it as a float (e.g. 1e300) or leave it out"
    )


def parse(text: str) -> Any:
    """``text`` parsed as JSON, or :class:`JsonProblem` saying why not (a syntax error with its line and column,
    a key written twice, an integer beyond float64, nesting too deep to parse)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_int=_integer)
    except json.JSONDecodeError as err:
        raise JsonProblem(f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise JsonProblem("the JSON is nested too deeply to read (thousands of levels); the file is flat") from None


def loads(text: str, where: str | os.PathLike[str]) -> Any:
    """:func:`parse`, a problem an InputError ``"<where>: <why>"``."""
    try:
        return parse(text)
    except JsonProblem as err:
        raise InputError(f"{os.fspath(where)}: {err}") from None


def read_json(path: str | os.PathLike[str], what: str = "input", *, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON in the file ``path`` (opened by the one opener, :func:`~.files.read_text`), checked by
    :func:`parse`; every problem an InputError naming the file."""
    return loads(read_text(path, what, max_bytes=max_bytes), path)
