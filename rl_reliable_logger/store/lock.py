"""The write lock of a folder or file: two writers of one target never both write; a killed holder's lock is released
by the operating system."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .kinds import BundleError

#: Seconds a writer waits for another process writing the same folder or file before it refuses in one sentence.
LOCK_WAIT = 60.0


_LOCK = ".rl-reliable-lock"


#: Locks this process holds: (lock path, thread) -> [fd, depth]. A nested write of the same folder re-enters.
_HELD: dict[tuple[str, int], list[int]] = {}


def _lock_path(target: Path) -> Path:
    out = Path(os.path.abspath(target))
    return out.parent / f".{out.name}{_LOCK}"


@contextlib.contextmanager
def folder_lock(target: str | os.PathLike, *, wait: float | None = None) -> Iterator[None]:
    """Hold the write lock of a folder or file (``.<name>.rl-reliable-lock`` beside it, removed on release).

    Two writers of one folder cannot both write: the second waits up to ``wait`` seconds (default
    :data:`LOCK_WAIT`, read when called), then refuses with a
    :class:`BundleError` naming the folder and the process holding it. A killed holder's lock is released by
    the operating system. The lock is re-entrant within a thread (a watch holds it from reading its state to
    writing it back, and the write inside takes it again).
    """
    path = _lock_path(Path(target))
    key = (str(path), threading.get_ident())
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    fd = _acquire(path, Path(target), LOCK_WAIT if wait is None else wait)
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):
            os.unlink(path)  # before closing: a waiter that opened this file sees it is gone and opens anew
        os.close(fd)


def _acquire(path: Path, target: Path, wait: float) -> int:
    """The fd of ``path`` locked exclusively (flock), waiting up to ``wait`` seconds."""
    deadline = time.monotonic() + max(0.0, float(wait))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BundleError(f"{target}: cannot be written ({err.strerror or err})") from None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as err:
            raise BundleError(f"{target}: cannot be written; its lock file {path.name} cannot be made "
                              f"({err.strerror or err})") from None  # fmt: skip
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise BundleError(
                    f"{target}: another rl-reliable process{holder} is writing it; waited {wait:g} s. "
                    "Run again once it has finished, or write to another folder"
                ) from None
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
            continue
        try:
            same = os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if same:  # else the previous holder removed it between our open and our lock: take the new one
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""
