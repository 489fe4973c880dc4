"""The layout pattern: which parts of a run folder's path (relative to the log folder) name its fields.

Shared by every Source that reads run folders or files by their paths (TensorBoard, Stable-Baselines3, marl-eval).

``{algorithm}/{task}/seed_{seed}`` reads ``PPO/Pong/seed_3`` as algorithm ``PPO``, task ``Pong``, seed ``3``.
Any other ``{name}`` (a Python identifier) is a hyperparameter column (``{algorithm}/lr_{lr}/{task}/{seed}``).
A field matches one path component or part of one (never a ``/``); two fields must be separated by literal
text, or which characters belong to which would be a guess. ``*`` matches any text within one folder name and
is read as nothing: ``{task}/seed_{seed}/*`` skips a folder level (Stable-Baselines3's ``PPO_1`` run counter in
TensorBoard logs), ``{task}__{algorithm}__{seed}__*`` skips CleanRL's time stamp; a field needs literal text between
it and a ``*``. The names read from paths are untrusted text:
they stay values in the table (never file names) and are validated as names by the ScoreTable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import InputError
from ...wording import kw, said
from .request import ROW_COLUMNS

REQUIRED = ("algorithm", "task", "seed")
_FIELD = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT = re.compile(r"[+-]?[0-9]+")


_SHOWN = 10  # candidate folders named when none fits


@dataclass(frozen=True)
class Layout:
    """A parsed, validated layout pattern."""

    pattern: str
    fields: tuple[str, ...]
    regex: re.Pattern[str]
    greedy: re.Pattern[str]

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """The fields that are neither algorithm, task nor seed, in pattern order."""
        return tuple(f for f in self.fields if f not in REQUIRED)

    def match(self, relative: str) -> dict[str, object] | None:
        """The fields of a run folder's relative POSIX path, or None when it does not fit the layout.

        Example:
            >>> parse_layout("{algorithm}/{task}/seed_{seed}").match("PPO/Pong/seed_3")
            {'algorithm': 'PPO', 'task': 'Pong', 'seed': 3}
        """
        m = self.regex.fullmatch(relative)
        if m is None:
            return None
        other = self.greedy.fullmatch(relative)
        if other is not None and other.groupdict() != m.groupdict():
            raise InputError(
                f"run folder {relative!r} fits layout {self.pattern!r} in two ways ({_shown(m)} or {_shown(other)}): "
                "a value contains the text that separates two fields; put the fields in separate folders."
            )
        return {name: _value(name, m.group(name)) for name in self.fields}

    def none_fits(self, logdir: object, candidates: list[str], files: str) -> InputError:
        """The error when no run folder under ``logdir`` fits: the ``candidates`` (folders holding ``files``) shown,
        at most 10, so the user can write the layout of their paths."""
        shown = ", ".join(map(repr, candidates[:_SHOWN])) + (" ..." if len(candidates) > _SHOWN else "")
        return InputError(
            f"no run folder in {str(logdir)!r} fits the layout {self.pattern!r}"
            + (f" (folders with {files}: {shown})" if candidates else f" (no {files} found)")
            + "; pass the layout of the run folders' paths relative to the log folder."
        )


def _shown(m: re.Match[str]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in m.groupdict().items())


def _value(name: str, text: str) -> object:
    """A path part as a value: algorithm and task names and seed labels stay text as written (``007``, Arabic-Indic
    digits), except a seed written as a plain whole number (``3``: the same label as the number); a hyperparameter
    written in ASCII as a number is a number (``0.001``), anything else text.

    Example:
        >>> _value("seed", "3"), _value("seed", "007"), _value("task", "7"), _value("lr", "1e-3")
        (3, '007', '7', 0.001)
    """
    if name in ("algorithm", "task") or not text.isascii():
        return text
    if _INT.fullmatch(text):
        number = int(text)
        return number if str(number) == text else text  # 007, +3, -0: a label as written
    if name == "seed":
        return text
    try:
        value = float(text)
    except ValueError:
        return text
    return value if value == value and abs(value) != float("inf") else text


def _bad(pattern: str, why: str) -> InputError:
    return InputError(
        said(
            kw("layout="),
            f" {pattern!r} {why}; write it like '{{algorithm}}/{{task}}/seed_{{seed}}' (relative to the log "
            f"folder, '/' between folders, '*' for text to skip, other {{name}} fields for hyperparameters).",
        )
    )


def parse_layout(pattern: str, required: tuple[str, ...] = REQUIRED) -> Layout:
    """Validate ``pattern`` and compile it; an InputError says what is wrong with it. ``required``: the fields it
    must have (``()`` for a pattern over files whose runs are named inside them, e.g. marl-eval's JSON).

    Example:
        >>> parse_layout("{algorithm}/lr_{lr}/{task}/{seed}").hyperparameters
        ('lr',)
        >>> parse_layout("{algorithm}/{task}/seed_{seed}/*").match("SAC/Hopper-v4/seed_2/SAC_1")
        {'algorithm': 'SAC', 'task': 'Hopper-v4', 'seed': 2}
    """
    text = str(pattern).strip().strip("/")
    if not text:
        raise _bad(pattern, "is empty")
    if "\\" in text or any(part in ("", ".", "..") for part in text.split("/")):
        raise _bad(pattern, "has an empty, '.' or '..' folder, or a backslash")
    pieces = _FIELD.split(text)  # literal, name, literal, name, ..., literal
    literals, names = pieces[0::2], pieces[1::2]
    if any("{" in lit or "}" in lit for lit in literals):
        raise _bad(pattern, "has an unbalanced '{' or '}'")
    for name in names:
        if not _NAME.match(name):
            raise _bad(pattern, f"has the field {{{name}}}, which is not a name (letters, digits, _)")
    reserved = [n for n in names if n in ROW_COLUMNS]
    if reserved:
        raise _bad(
            pattern,
            f"has the field {{{reserved[0]}}}, a column every run's row has of its own (the logged steps, the score, "
            "the run): name that part of the path otherwise",
        )
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise _bad(pattern, f"names {', '.join(duplicated)} twice")
    absent = [n for n in required if n not in names]
    if absent:
        raise _bad(pattern, f"has no {', '.join('{' + n + '}' for n in absent)}")
    if any(lit == "" for lit in literals[1:-1]):
        raise _bad(pattern, "has two fields with nothing between them, so where one ends cannot be told")
    touching = [
        i for i, lit in enumerate(literals) if (i > 0 and lit.startswith("*")) or (i < len(names) and lit.endswith("*"))
    ]
    if touching:
        raise _bad(pattern, "has a field next to '*' with nothing between them, so where the field ends cannot be told")

    def literal(text: str, lazy: str) -> str:  # '*': any text within one folder name, read as nothing
        return f"[^/]*{lazy}".join(re.escape(part) for part in text.split("*"))

    def compiled(lazy: str) -> re.Pattern[str]:
        return re.compile(
            "".join(
                literal(piece, lazy) if i % 2 == 0 else f"(?P<{piece}>[^/]+{lazy})" for i, piece in enumerate(pieces)
            )
        )

    return Layout(text, tuple(names), compiled("?"), compiled(""))
