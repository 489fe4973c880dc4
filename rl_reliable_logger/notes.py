"""The one way the library tells its user something beside its results and its errors: :func:`note`.

A note (a publish that ended an interrupted one, a retry being waited out, where a W&B Report was saved) is a
:class:`~rl_reliable_logger.wording.Message`, put into words by the edge that prints it, like an error. Used as a
library, a note is one line on stderr, ``note: <text>``: the library's words (keywords as ```wandb_report=True```),
redacted (:func:`rl_reliable_logger.redaction.redact`), folded into one line. The command line's console routes every
note to its own ``note:`` line while a command runs (:func:`routed`): flag words (``--wandb-report``), redacted, said
once per command.

Beside ``wording`` and ``lines`` at the floor of the package: it imports nothing above it, so every folder may call it.

Example:
    >>> from rl_reliable_logger.wording import kw, said
    >>> seen = []
    >>> with routed(seen.append):
    ...     note(said(kw("wandb_report=True"), " needs an online W&B server"))
    >>> str(seen[0])
    '`wandb_report=True` needs an online W&B server'
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from .lines import one_line
from .wording import Message, message_of

__all__ = ["note", "note_line", "routed"]

#: Where notes go while an edge routes them (:func:`routed`), innermost last; empty: the library's default line.
#: A list shared by every thread, as the console's own stack: a note said from a worker thread (a retry's progress
#: while a request is waited for) reaches the console of the command that runs it.
_ROUTES: list[Callable[[Message], None]] = []

#: The longest note printed whole (as the console's lines).
LIMIT = 4000


def note(message: Message | str) -> None:
    """Tell the user ``message``: to the edge that routes notes now (the command line's console), else one line
    ``note: <text>`` on stderr, in the library's words, redacted (:func:`note_line`)."""
    message = message_of(message)
    if _ROUTES:
        _ROUTES[-1](message)
        return
    print(note_line(message), file=sys.stderr, flush=True)


def note_line(message: Message | str) -> str:
    """The line a note is printed as without a console: ``note: `` and its text in the library's words, folded
    into one redacted line as every message is (:func:`rl_reliable_logger.lines.one_line`), at most :data:`LIMIT`
    characters.

    Example:
        >>> note_line("saved to https://user:hunter22@host/x\\n  twice")
        'note: saved to https://user:***@host/x; twice'
    """
    return "note: " + one_line(message_of(message), limit=LIMIT)


@contextlib.contextmanager
def routed(say: Callable[[Message], None]) -> Iterator[None]:
    """Within the block, every note goes to ``say`` (which puts it into its words, redacts it and prints it); the
    routing before the block is restored after it, blocks nested or not."""
    _ROUTES.append(say)
    try:
        yield
    finally:
        for i in range(len(_ROUTES) - 1, -1, -1):  # this block's own entry, even when blocks end out of order
            if _ROUTES[i] is say:
                del _ROUTES[i]
                break
