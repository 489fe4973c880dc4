"""What tests share with other test processes (pytest-xdist workers, another run on the same machine): ports and
machine-wide resources. Each helper makes its sharing safe; tests/conftest.py wraps them as fixtures."""

from __future__ import annotations

import contextlib
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    """A loopback port free right now (the kernel picks it). Another process can take it before a server binds it,
    so a server started on it should be retried on a new port if it exits with 'address already in use'."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_taken(log: str) -> bool:
    """Whether a server's log says its port was taken (the race :func:`free_port` leaves open)."""
    return "address already in use" in log.lower() or "[Errno 98]" in log


@contextlib.contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Hold the machine-wide lock ``name`` (a file in the temp folder) while the block runs: every test process
    (xdist workers, other runs) waits here until the holder is done. For resources that are global to the machine
    whatever the test does, such as a local Ray cluster (``/tmp/ray``, its worker ports)."""
    try:
        import fcntl
    except ModuleNotFoundError:  # not POSIX: no lock, as before
        yield
        return
    path = Path(tempfile.gettempdir()) / f"rl-reliable-tests-{name}.lock"
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # interrupted by the test's timeout like any wait
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
