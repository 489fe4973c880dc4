"""Waiting for a W&B sweep: poll until it is finished and none of its runs is running or pending.

There is no completion hook in W&B; this is the bounded poll behind ``rl-reliable wandb --wait``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...errors import TrackerError
from ..base.messages import kw
from .client import _api, _errors, split_path
from .source import DEFAULT_PER_PAGE, combine_filters

_UNFINISHED_STATES = ("running", "pending")


def sweep_status(path: str, sweep: str, *, api: Any = None) -> dict[str, Any]:
    """One poll: the sweep's state, expected/seen run counts and runs still running or pending."""
    entity, project = split_path(path)
    api = api or _api()
    with _errors(f"reading sweep {sweep}"):
        entity = entity or api.default_entity
        api.flush()  # Api caches runs and sweeps; every poll must see fresh state
        sw = api.sweep(f"{entity}/{project}/{sweep}")
        sw.load(force=True)  # flush() leaves the sweep cache alone
        active = api.runs(
            f"{entity}/{project}",
            filters=combine_filters(sweep, None, _UNFINISHED_STATES),
            per_page=DEFAULT_PER_PAGE,
            lazy=False,
        )
        active_ids = [f"{r.id} ({r.state})" for r in active]
        total = api.runs(f"{entity}/{project}", filters={"sweep": sweep}, per_page=1, lazy=True)
        n_runs = len(total)
    return {
        "state": str(sw.state or "").upper(),
        "expected": getattr(sw, "expected_run_count", None),
        "runs": n_runs,
        "active": active_ids,
    }


def wait_for_sweep(
    path: str,
    sweep: str,
    *,
    timeout: float = 6 * 3600,
    poll: float = 30.0,
    progress: Callable[[str], None] | None = print,
    api: Any = None,
    _sleep: Callable[[float], None] = time.sleep,
    _clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Block until the sweep is FINISHED (or CANCELED) and none of its runs is running or pending.

    Raises ``TrackerError`` after ``timeout`` seconds, saying what is still going. ``progress``
    receives one line per poll. Returns the last status (see :func:`sweep_status`).

    Example:
        >>> wait_for_sweep("my-team/hopper", "abc123", timeout=3600, poll=60)  # doctest: +SKIP
    """
    api = api or _api()
    start = _clock()
    while True:
        status = sweep_status(path, sweep, api=api)
        done = status["state"] in ("FINISHED", "CANCELED") and not status["active"]
        expected = f"/{status['expected']}" if status["expected"] else ""
        line = (
            f"sweep {sweep}: {status['state'].lower()}, {status['runs']}{expected} runs, "
            f"{len(status['active'])} running or pending"
        )
        if progress:
            progress(line + (" - done" if done else ""))
        if done:
            return status
        elapsed = _clock() - start
        if elapsed + poll > timeout:
            still = ", ".join(status["active"][:10]) or "none, but the sweep is not finished"
            raise TrackerError(
                f"sweep {sweep} was not finished after {elapsed:.0f} s (state {status['state']}; still active: {still}). "
                f"Re-run with a larger {kw('timeout=')}, stop the sweep (`wandb sweep --stop`), or evaluate now without waiting."
            )
        _sleep(poll)
