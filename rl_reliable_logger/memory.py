"""How much memory this process can use, and how a size is written in messages.

Top level (like ``errors.py``) because every layer checks sizes before it allocates: ``data/`` before it
reads a file, ``analysis/`` before the bootstrap and ``plan``'s simulation.
"""

from __future__ import annotations

import os

from .wording import Message, kw, said

__all__ = ["DEFAULT_CHUNK_BYTES", "LIBRARIES_BYTES", "available_memory", "check_libraries", "format_bytes",
           "out_of_memory"]  # fmt: skip

#: Memory budget (bytes) for one chunk of bootstrap replicates; tune with ``chunk_bytes=`` where offered.
DEFAULT_CHUNK_BYTES = 64 * 2**20
#: Address space that loading numpy and pandas takes at least, before any work (measured on Linux x86-64 with numpy 2
#: and pandas 3: about 345 MB of ``VmSize`` beyond the interpreter, more with scipy; it depends on the machine's
#: thread arenas and BLAS). Below this bound the imports cannot succeed; above it the analysis estimates decide.
LIBRARIES_BYTES = 320 * 2**20


def format_bytes(n: float) -> str:
    """``1536`` → ``1.5 KB``: a memory size as a message shows it."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PB"  # pragma: no cover


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def _machine() -> float | None:
    """MemAvailable (what the kernel can give without swapping), else the free pages."""
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            return float(line.split()[1]) * 1024
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


#: A cgroup v1 "no limit" is a huge page-aligned number, not a word.
_NO_LIMIT = 2**60

#: (limit, usage) files of the memory cgroup: v2, then v1.
_CGROUP_FILES = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
)


def _cgroup() -> float | None:
    """What the memory cgroup (a container's or a batch job's limit) still allows."""
    for limit_file, used_file in _CGROUP_FILES:
        limit, used = _read(limit_file), _read(used_file)
        if limit is None or used is None:
            continue
        try:
            cap = float(limit.strip())
        except ValueError:  # "max"
            return None
        return None if cap >= _NO_LIMIT else cap - float(used.strip() or 0)
    return None


def _rlimits() -> list[float]:
    """What ``ulimit -v`` (RLIMIT_AS, the address space) and ``ulimit -d`` (RLIMIT_DATA) still allow this process,
    from its current sizes in ``/proc/self/status`` (VmSize, VmData)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return []
    status = {
        line.split(":")[0]: float(line.split()[1]) * 1024
        for line in (_read("/proc/self/status") or "").splitlines()
        if line.startswith(("VmSize:", "VmData:")) and len(line.split()) >= 2
    }
    left = []
    for limit_kind, used_key in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft = resource.getrlimit(limit_kind)[0]
        if soft != resource.RLIM_INFINITY and soft >= 0:
            left.append(max(0.0, float(soft) - status.get(used_key, 0.0)))
    return left


def available_memory() -> float | None:
    """Bytes of memory this process can still use: the smallest of the machine's available memory, what the
    memory cgroup still allows and what the process's limits (``ulimit -v`` / ``-d``) leave; None if unknown.

    A batch scheduler's limit is usually one of the last two: the machine may have 100 GB free while the job may
    use 4; a check against the machine alone let a run end in ``MemoryError`` (or a failed import) instead of a
    sentence with the estimate."""
    found = [x for x in (_machine(), _cgroup(), *_rlimits()) if x is not None]
    return max(0.0, min(found)) if found else None


def check_libraries() -> str | None:
    """The sentence refusing to start when ``ulimit -v`` / ``-d`` leaves less than :data:`LIBRARIES_BYTES` (None:
    enough, or no such limit). Checked by the command line before it imports anything large: under such a limit
    the imports themselves fail, somewhere inside numpy or pandas (a ``MemoryError``, or CPython's
    ``SystemError: error return without exception set``)."""
    left = _rlimits()
    if not left or min(left) >= LIBRARIES_BYTES:
        return None
    return (
        f"loading numpy and pandas would need about {format_bytes(LIBRARIES_BYTES)} of memory or more (address "
        f"space) before any work, but the process's limit (`ulimit -v`/`-d`) leaves about {format_bytes(min(left))}; "
        "raise the limit (e.g. `ulimit -v 4000000`) or run where more memory is allowed"
    )


#: CPython's words when a C allocation failed without raising (seen under ``ulimit -v``): memory, not a bug.
_SILENT_FAILURE = "error return without exception set"

#: How the dynamic loader says a module's segments did not fit (``ImportError`` under ``ulimit -v``).
_LOADER_OUT_OF_MEMORY = ("failed to map segment", "cannot allocate memory", "out of memory")


def out_of_memory(err: BaseException) -> Message | None:
    """The one sentence for an exception that means memory ran out (``MemoryError``, or an import whose shared
    library could not be mapped); None for any other. The last resort of the command line: every size the
    package can estimate is checked before it is allocated, this catches what slipped through."""
    if not isinstance(err, MemoryError) and not (
        isinstance(err, ImportError) and any(text in str(err).lower() for text in _LOADER_OUT_OF_MEMORY)
    ):
        if not (isinstance(err, SystemError) and _SILENT_FAILURE in str(err)):
            return None
    try:
        avail = available_memory()
    except (MemoryError, SystemError):  # even reading the limits failed: say so without them
        avail = None
    left = f"about {format_bytes(avail)} was still available" if avail is not None else "the limit is unknown"
    return said(
        f"ran out of memory ({left}: the smallest of the machine's free memory, the memory cgroup's limit and "
        "`ulimit -v`/`-d`); raise the job's memory limit, or analyse less at a time (",
        kw("only_tasks="),
        ", fewer ",
        kw("reps="),
        ")",
    )
