"""The exceptions the package raises on purpose, one per kind of problem.

* :class:`InputError` -- the scores, a file or an option cannot be used as given (a ``ValueError``).
  ``problems`` lists every offending item (run, task, row) as text.
* :class:`TrackerError` -- a tracker could not be read or written (network, authentication, not
  found); the message names the cause and what to do.
* :class:`ReliabilityWarning` -- not an error: the category of the warnings ``evaluate()`` emits through
  Python's :mod:`warnings` (an interval that may not reach its level, runs dropped, ...), so they can be
  filtered (``warnings.simplefilter("ignore", ReliabilityWarning)``) and a notebook shows each once.

Both derive from :class:`RLReliableError`, so ``except RLReliableError`` catches everything the
package reports deliberately; any other exception is a bug.

Example:
    >>> try:
    ...     raise InputError("no rows", ["row 1: empty"])
    ... except RLReliableError as err:
    ...     err.problems
    ['row 1: empty']
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence

from .wording import Message, Said, message_of

#: This package's folder: a warning points at the first frame outside it (the user's line).
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class RLReliableError(Exception):
    """Base class of every error the package raises on purpose. Its message may be a
    :class:`~rl_reliable_logger.wording.Message` (text and the keywords and fields it names): ``str(err)`` is the
    library's words, ``err.message_parts`` (None for plain text) the message an edge (the command line) puts into
    its own words."""

    def __init__(self, message: Message | str = "", *args: object) -> None:
        super().__init__(*((str(message), *args) if message != "" or args else ()))
        self.message_parts: Message | None = message_of(message) if isinstance(message, (Message, Said)) else None


class InputError(RLReliableError, ValueError):
    """Unusable input scores, files or options. ``problems`` lists every offending item as text."""

    def __init__(self, message: Message | str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class TrackerError(RLReliableError, RuntimeError):
    """A tracker could not be read or written (network, auth, not found); the message says what to do."""


class ReliabilityWarning(UserWarning):
    """What ``evaluate()`` warns about (the same lines ``report.warnings`` keeps and the CLI prints); built from a
    :class:`~rl_reliable_logger.wording.Message`, it keeps its parts (``message_parts``) as errors do."""

    def __init__(self, message: Message | str = "", *args: object) -> None:
        super().__init__(*((str(message), *args) if message != "" or args else ()))
        self.message_parts: Message | None = message_of(message) if isinstance(message, (Message, Said)) else None


def caller_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the function calling this that points at the first line
    *outside* this package: the user's call of ``evaluate``, ``to_report``, ``watch``, a publish, whichever
    public entry led there and however deep inside the package the warning is raised.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     warnings.warn("x", ReliabilityWarning, stacklevel=caller_stacklevel())
        >>> seen[0].filename.endswith("errors.py")  # called from outside the package: this very line
        False
    """
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # the function that warns: stacklevel 1
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


#: The name used before 0.2; kept so that ``except ScoreTableError`` keeps working.
ScoreTableError = InputError
