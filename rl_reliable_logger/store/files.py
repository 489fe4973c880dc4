"""One file replaced atomically under its lock (:func:`write_file`), and a private folder a Sink uploads from
(:func:`write_private`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .disk import fsync, read_no_follow, write_new
from .encode import encode
from .kinds import WRITERS, BundleError
from .lock import folder_lock
from .manifest import safe_relpath
from .steps import reached


def write_file(
    path: str | os.PathLike,
    data: bytes | Callable[[bytes | None], bytes],
    *,
    kind: str,
    exclusive: bool = False,
    mode: int = 0o644,
    wait: float | None = None,
) -> Path:
    """Replace one file atomically under its lock: a temporary sibling is written, flushed, renamed over it.

    ``data`` may be a function of the file's current bytes (None: no file yet), called under the lock, so two
    writers updating one record cannot lose each other's change. ``exclusive``: refuse a file that exists. A
    reader sees the old file or the new one, never half of one; a kill leaves at most a hidden
    ``.<name>.<pid>.tmp`` (readers skip hidden files; the next write of the file removes it).
    """
    if kind not in WRITERS or WRITERS[kind].bundle:
        raise ValueError(f"not a file kind: {kind!r}")
    target = Path(path)
    with folder_lock(target, wait=wait):
        reached("locked")
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise BundleError(f"{target}: not a regular file (a link or a folder); it is never replaced")
        if exclusive and target.exists():
            raise BundleError(f"{target}: exists already; it is never replaced")
        _remove_stale(target)
        body = data(read_no_follow(target) if target.exists() else None) if callable(data) else data
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            write_new(tmp, body)
            os.chmod(tmp, mode)
            reached("written")
            os.replace(tmp, target)
            fsync(target.parent)
            reached("renamed")
        except BaseException as err:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if isinstance(err, OSError) and err.errno and not err.filename:  # a full disk names no file: name it
                raise OSError(err.errno, err.strerror, str(target)) from err
            raise
    return target


def _remove_stale(target: Path) -> None:
    """Remove the temporary files killed writers left beside ``target``: this file's (we hold its lock) and, in the
    folder, those of processes that are gone (``.<name>.<pid>.tmp``; a live process's are never touched)."""
    for stale in target.parent.glob(".*.tmp"):
        name, _, pid = stale.name[: -len(".tmp")].rpartition(".")
        if pid.isdigit() and (name == f".{target.name}" or not _alive(int(pid))):
            with contextlib.suppress(OSError):
                stale.unlink()


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def write_private(folder: str | os.PathLike, files: Mapping[str, Any]) -> list[Path]:
    """Write ``files`` (name -> content, :func:`encode`) into a private temporary folder this process made (what a
    Sink uploads): no lock or swap, since nobody else writes or reads there."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, content in files.items():
        if not safe_relpath(rel):
            raise BundleError(f"{rel!r}: unsafe file name")
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(rel, content))
        written.append(path)
    return written
