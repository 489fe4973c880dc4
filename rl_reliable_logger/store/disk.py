"""Files on disk, never through a link: create one (flushed to disk), flush a folder, read one, list a folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .kinds import BundleError


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (never following or replacing anything) with ``data``, flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def fsync(path: Path) -> None:
    """Flush ``path`` (a file, or a folder's entries after a rename) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_no_follow(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise BundleError(f"{path}: cannot be read without following a link ({err.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def walk(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(files, folders, other entries) under ``root`` as relative POSIX paths; symlinks are never followed."""
    files: list[str] = []
    dirs: list[str] = []
    other: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for name in list(dirnames):
            rel = (base / name).relative_to(root).as_posix()
            if (base / name).is_symlink():
                other.append(rel)
                dirnames.remove(name)
            else:
                dirs.append(rel)
        for name in filenames:
            rel = (base / name).relative_to(root).as_posix()
            mode = os.lstat(base / name).st_mode
            (files if stat.S_ISREG(mode) else other).append(rel)
    return sorted(files), sorted(dirs), sorted(other)
