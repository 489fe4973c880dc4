"""The one way every input file is opened: only regular files, of a sane size, named in every refusal.

Opening a FIFO blocks until a writer appears (``mkfifo in.csv`` hung ``evaluate`` forever, a FIFO named like an
event file hung ``rl-reliable tensorboard``) and a device such as ``/dev/zero`` never ends, so every reader of a
user's file (score files, reference tables, W&B transaction logs, TensorBoard event files, Ray Tune's JSON and CSV
files) asks this module. Three calls, all refusing with an :class:`~rl_reliable_logger.errors.InputError` that
names the path and says what to do:

* :func:`check_regular_file` (``os.stat``: follows symlinks, never blocks on a FIFO): before a reader that opens the
  path itself (pandas, pyarrow);
* :func:`open_input`: the file opened for reading in binary, with ``O_NONBLOCK`` and checked again on the open
  descriptor (a path swapped for a FIFO between the check and the open cannot block), then made blocking again;
  ``max_bytes`` refuses a file larger than a format can sensibly hold;
* :func:`read_text` / :func:`read_bytes`: the whole (small) file, through :func:`open_input`.

:func:`walk` lists the folders under a log folder (without recursion, symbolic links to folders not followed), for
the Sources that find their runs by folder (TensorBoard, Stable-Baselines3, marl-eval).

Relative and absolute paths are alike (a path is a path: no URI parsing, no scheme); a symlink loop is named as
such. Missing files: :func:`check_regular_file` lets them pass (the reader names them), :func:`open_input` names them.

Example:
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "run.json")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('{"score": 1}')
    >>> read_text(path, "run")
    '{"score": 1}'
    >>> os.mkfifo(os.path.join(folder, "pipe.json"))
    >>> read_text(os.path.join(folder, "pipe.json"), "run")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.errors.InputError: ...pipe.json: is a FIFO (named pipe), not a regular file; give the path of the run file itself
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import InputError

__all__ = ["MAX_INPUT_BYTES", "check_regular_file", "file_kind", "open_input", "read_bytes", "read_text", "walk"]

#: The default ceiling of :func:`open_input`: no log, state or result file we read is anywhere near it.
MAX_INPUT_BYTES = 8 << 30

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


def _os_problem(path: str | os.PathLike[str], err: OSError, what: str) -> InputError:
    if err.errno == errno.ELOOP:
        return InputError(f"{os.fspath(path)}: is a symbolic link loop; give the path of the {what} file itself")
    if isinstance(err, FileNotFoundError):
        return InputError(f"{os.fspath(path)}: no such {what} file")
    return InputError(f"{os.fspath(path)}: cannot read the {what} ({err.strerror or err})")


def _refusal(path: str | os.PathLike[str], mode: int, what: str) -> InputError:
    return InputError(
        f"{os.fspath(path)}: is {file_kind(mode)}, not a regular file; give the path of the {what} file itself"
    )


def _too_large(path: str | os.PathLike[str], size: int, limit: int, what: str) -> InputError:
    return InputError(
        f"{os.fspath(path)}: is {size:,} bytes, more than any {what} file should hold ({limit:,}); "
        "check that this is the right file"
    )


def check_regular_file(path: str | os.PathLike[str], what: str = "input") -> None:
    """Raise :class:`InputError` naming ``path`` unless it is (a link to) a regular file; missing files pass
    (the reader says "no such file")."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as err:
        raise _os_problem(path, err, what) from None
    if not stat.S_ISREG(mode):
        raise _refusal(path, mode, what)


def open_input(path: str | os.PathLike[str], what: str = "input", *, max_bytes: int = MAX_INPUT_BYTES) -> BinaryIO:
    """``path`` opened for reading (binary, buffered), once it is known to be a regular file of at most
    ``max_bytes``: the caller closes it (``with open_input(p, "event") as fh: ...``).

    The open itself cannot block (``O_NONBLOCK``), and the kind and size are checked on the open descriptor, so
    what is read is what was checked.
    """
    check_regular_file(path, what)  # a clear word before anything is opened
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise _os_problem(path, err, what) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refusal(path, info.st_mode, what)
        if info.st_size > max_bytes:
            raise _too_large(path, info.st_size, max_bytes, what)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


#: Bytes read at a time past a file's recorded size (a file that grows while it is read).
_CHUNK = 1 << 20


def read_bytes(path: str | os.PathLike[str], what: str = "input", *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The whole of ``path`` (see :func:`open_input`), at most ``max_bytes + 1`` bytes; a read error is an InputError
    naming it.

    Reads what the file holds, never ``max_bytes`` at once: a buffered ``read(n)`` reserves ``n`` bytes before it
    reads one, so a 3 KB file "ran out of memory" under a 2 GB address-space limit.
    """
    with open_input(path, what, max_bytes=max_bytes) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            parts = [fh.read(min(size + 1, max_bytes + 1))]
            total = len(parts[0])
            while parts[-1] and total <= max_bytes:  # the file grew after fstat: the rest, a chunk at a time
                parts.append(fh.read(min(_CHUNK, max_bytes + 1 - total)))
                total += len(parts[-1])
            return b"".join(parts)
        except OSError as err:
            raise _os_problem(path, err, what) from None


def walk(root: str | os.PathLike[str]) -> Iterator[tuple[str, list[str]]]:
    """``(folder, file names)`` of ``root`` and every folder under it, top-down, folders and files in name order;
    ``folder`` is relative to ``root`` in POSIX form (``"."`` for ``root`` itself).

    What :func:`os.walk` gives with sorted folders, without recursion: ``os.walk`` recurses once per level before
    Python 3.12, so 1,100 nested folders ended in a ``RecursionError``. Symbolic links to folders are not followed
    (a link loop or a link out of ``root`` is not read), and a folder that cannot be listed is passed over, as
    ``os.walk`` passes it.

    Example:
        >>> import tempfile, pathlib
        >>> top = pathlib.Path(tempfile.mkdtemp())
        >>> (top / "b" / "c").mkdir(parents=True); _ = (top / "b" / "c" / "x.json").write_text("{}")
        >>> list(walk(top))
        [('.', []), ('b', []), ('b/c', ['x.json'])]
    """
    stack = [""]
    while stack:
        relative = stack.pop()
        folder = os.path.join(root, relative) if relative else os.fspath(root)
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        folders: list[str] = []
        files: list[str] = []
        for entry in listed:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            (folders if is_folder else files).append(entry.name)
        yield (relative.replace(os.sep, "/") or "."), sorted(files)
        stack.extend(os.path.join(relative, name) for name in sorted(folders, reverse=True))


def read_text(path: str | os.PathLike[str], what: str = "input", *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The whole of ``path`` as UTF-8 text; bytes that are not UTF-8 are an InputError naming the file and byte."""
    data = read_bytes(path, what, max_bytes=max_bytes)
    if len(data) > max_bytes:  # grew while being read
        raise _too_large(path, len(data), max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{os.fspath(path)}: the {what} file is not UTF-8 text (byte {err.start})") from None
