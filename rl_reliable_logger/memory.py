"""How much memory this process can use, and how a size is written in messages.

Top level (like ``errors.py``) because every layer checks sizes before it allocates: ``data/`` before it
reads a file, ``analysis/`` before the bootstrap and ``plan``'s simulation.
"""

from __future__ import annotations

import os

__all__ = ["available_memory", "format_bytes"]


def format_bytes(n: float) -> str:
    """``1536`` → ``1.5 KB``: a memory size as a message shows it."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PB"  # pragma: no cover


def available_memory() -> float | None:
    """Bytes of memory this process can still use: MemAvailable, capped by a cgroup limit; None if unknown."""
    found: list[float] = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(float(line.split()[1]) * 1024)
                    break
    except OSError:
        pass
    if not found:
        try:
            found.append(float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")))
        except (ValueError, OSError, AttributeError):
            pass
    try:
        limit = open("/sys/fs/cgroup/memory.max").read().strip()
        used = open("/sys/fs/cgroup/memory.current").read().strip()
        if limit != "max":
            found.append(float(limit) - float(used))
    except (OSError, ValueError):
        pass
    return min(found) if found else None
