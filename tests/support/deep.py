"""Folders nested deeper than Python's recursion limit, made and removed without recursion (``os.makedirs`` and
``shutil.rmtree`` recurse once per level, so pytest could not clean up a 1,100-level tree after the test)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def _remove(top: Path) -> None:
    """``top`` and everything under it, deepest first, without recursion (links are removed, never followed)."""
    stack, order = [str(top)], []
    while stack:
        folder = stack.pop()
        order.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for folder in reversed(order):
        os.rmdir(folder)


@contextlib.contextmanager
def nested(root: Path, depth: int, name: str = "a") -> Iterator[Path]:
    """``root/a/a/.../a`` (``depth`` levels); the deepest folder is yielded and the whole tree removed after."""
    here = root
    for _ in range(depth):
        here = here / name
        here.mkdir()
    try:
        yield here
    finally:
        _remove(root / name)
