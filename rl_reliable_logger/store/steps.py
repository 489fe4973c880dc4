"""The steps of a write, and the hook a test kills a writer at: the kill is real, the recovery is the code users run.

Tests set :data:`fault_hook` in a child process (``from rl_reliable_logger.store import steps;
steps.fault_hook = ...``) to kill that process at one step (``tests/contract``).
"""

from __future__ import annotations

from collections.abc import Callable

#: The steps of a bundle write, in order; a kill at any of them leaves the previous or the new bundle for the next
#: reader (:func:`.bundle.recover_swap`). ``aside`` exists only when a previous bundle is replaced.
BUNDLE_STEPS = ("locked", "filled", "manifest", "aside", "swapped", "done")
#: The steps of a single-file write (:func:`.files.write_file`).
FILE_STEPS = ("locked", "written", "renamed")

#: Called with each step's name as a write reaches it; None in normal use.
fault_hook: Callable[[str], None] | None = None


def reached(step: str) -> None:
    """A write reached ``step`` (:data:`BUNDLE_STEPS`, :data:`FILE_STEPS`): call the hook, if a test set one."""
    if fault_hook is not None:
        fault_hook(step)
