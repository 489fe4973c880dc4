"""Only regular files are read: a FIFO, a device or a socket given as an input is refused before it is opened.

Opening a FIFO blocks until a writer appears (``mkfifo in.csv`` hung ``evaluate`` forever) and a device such as
``/dev/zero`` never ends, so every reader asks :func:`check_regular_file` first. ``os.stat`` follows symlinks (a
link to a regular file is fine, a link to ``/dev/zero`` is not) and never blocks on a FIFO.
"""

from __future__ import annotations

import os
import stat

from ..errors import InputError

__all__ = ["check_regular_file", "file_kind"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in words: ``"a regular file"``, ``"a FIFO (named pipe)"``, ..."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def check_regular_file(path: str | os.PathLike[str], what: str = "input") -> None:
    """Raise :class:`InputError` naming ``path`` unless it is (a link to) a regular file; missing files pass
    (the reader says "no such file")."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as err:
        raise InputError(f"{path}: cannot read the {what} ({err.strerror or err})") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: is {file_kind(mode)}, not a regular file; give the path of the {what} file itself")
