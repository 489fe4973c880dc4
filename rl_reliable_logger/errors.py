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

from collections.abc import Sequence


class RLReliableError(Exception):
    """Base class of every error the package raises on purpose."""


class InputError(RLReliableError, ValueError):
    """Unusable input scores, files or options. ``problems`` lists every offending item as text."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class TrackerError(RLReliableError, RuntimeError):
    """A tracker could not be read or written (network, auth, not found); the message says what to do."""


class ReliabilityWarning(UserWarning):
    """What ``evaluate()`` warns about (the same lines ``report.warnings`` keeps and the CLI prints)."""


#: The name used before 0.2; kept so that ``except ScoreTableError`` keeps working.
ScoreTableError = InputError
