"""Run independent figure jobs in forked worker processes when that is safe and worth it.

A figure is drawn from the Report alone and saved with fixed metadata, so its bytes do not depend
on which process draws it: the results bundle is the same with one worker or many (a test checks
this). Workers are forked, not spawned: a spawned worker would spend a second re-importing pandas
and matplotlib, more than a figure costs. Forking is only used on Linux (macOS system libraries
are not fork-safe); anywhere else, with one CPU, or if the pool cannot start, jobs run in this process.

Example:
    >>> run_jobs(len, [[1], [1, 2]], workers=1)
    [1, 2]
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["available_cpus", "default_workers", "run_jobs"]

T = TypeVar("T")
R = TypeVar("R")

# The job function and its items, inherited by forked workers (nothing is pickled on the way in).
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def available_cpus() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_workers(n_jobs: int) -> int:
    """Worker processes for ``n_jobs`` figures: one per CPU (at most 4) on Linux, else 1."""
    if not sys.platform.startswith("linux") or n_jobs < 2:
        return 1
    return max(1, min(available_cpus(), 4, n_jobs))


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """Move every object of this process out of the garbage collector's sight while workers fork.

    A forked worker shares this process's memory until it writes to a page. Its garbage collector
    would walk every inherited object (pandas, numba, scipy, the Report: hundreds of MB), writing to
    each object's header and so copying nearly every page: in the main job that cost the workers
    ≈ 0.6 s of CPU and 20,000 page copies. Frozen objects are never walked (``gc.freeze``, the
    pattern Python's documentation gives for pre-fork servers); they are unfrozen here as soon as
    the workers exist. An application that froze objects itself is left as it was.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run(index: int) -> Any:
    assert _JOB is not None
    fn, items = _JOB
    return fn(items[index])


def run_jobs(fn: Callable[[T], R], items: Sequence[T], *, workers: int, order: Sequence[int] | None = None) -> list[R]:
    """``[fn(item) for item in items]``, computed by up to ``workers`` forked processes.

    ``order`` is the order to start the jobs in (longest first balances the workers); results
    come back in the order of ``items``. ``fn`` must return picklable values and catch its own
    errors if a failure should not stop the other jobs.
    """
    global _JOB
    if workers <= 1 or len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    order = list(range(len(items))) if order is None else list(order)
    _JOB = (fn, items)
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns on fork() in a process with threads (numba's idle thread pool):
            # the workers only draw figures and exit, they never touch numba or its locks.
            warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks", DeprecationWarning)
            try:
                with _frozen_heap():
                    pool = multiprocessing.get_context("fork").Pool(min(workers, len(items)))
            except (OSError, AssertionError, ValueError):  # e.g. inside a daemonic process: draw here
                return [fn(item) for item in items]
        try:
            done = pool.map(_run, order, chunksize=1)
            pool.close()
        finally:
            pool.terminate()
            pool.join()
    finally:
        _JOB = None
    results: list[Any] = [None] * len(items)
    for index, value in zip(order, done):
        results[index] = value
    return results
