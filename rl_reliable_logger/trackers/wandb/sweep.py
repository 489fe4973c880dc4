"""Waiting for a W&B sweep: poll until it is finished and none of its runs is running or pending.

There is no completion hook in W&B; this is the bounded poll behind ``rl-reliable wandb --wait``.
A run that says "running" but sent no heartbeat for ``stale_after`` seconds is treated as crashed
(not waited for, named once; see ``trackers/base/heartbeat``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...data.counts import plural
from ...errors import TrackerError
from ...wording import kw, said
from ..base.clients import client_options, moved_client_options
from ..base.heartbeat import DEFAULT_STALE_AFTER, is_stale, silence
from ..base.retry import TRANSIENT, classify
from .client import public_api, split_path, wandb_errors
from .source import CLIENT_KEYS, DEFAULT_PER_PAGE, combine_filters

_UNFINISHED_STATES = ("running", "pending")


def sweep_status(
    path: str, sweep: str, *, api: Any = None, stale_after: float | None = DEFAULT_STALE_AFTER
) -> dict[str, Any]:
    """One poll: the sweep's state, expected/seen run counts, runs still running or pending (``active``)
    and running runs whose heartbeat is older than ``stale_after`` seconds (``stale``, not active)."""
    entity, project = split_path(path)
    api = api or public_api()
    with wandb_errors(f"reading sweep {sweep}"):
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
        active_ids, stale_ids = [], []
        for r in active:
            heartbeat = getattr(r, "heartbeat_at", None)
            if is_stale(str(r.state), heartbeat, stale_after):
                stale_ids.append(f"{r.id} (last heartbeat {silence(heartbeat) or 0:.0f} s ago)")
            else:
                active_ids.append(f"{r.id} ({r.state})")
        total = api.runs(f"{entity}/{project}", filters={"sweep": sweep}, per_page=1, lazy=True)
        n_runs = len(total)
    return {
        "state": str(sw.state or "").upper(),
        "expected": getattr(sw, "expected_run_count", None),
        "runs": n_runs,
        "active": active_ids,
        "stale": stale_ids,
    }


#: Sweep states that end a wait without a result to wait for.
FAILED_STATES = ("FAILED", "CRASHED", "CANCELED")


def _expected_runs(status: dict[str, Any], expect_runs: int | None) -> int | None:
    return int(expect_runs) if expect_runs is not None else status.get("expected")


@dataclass(frozen=True)
class Clock:
    """The time a sweep wait reads and sleeps by."""

    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], float] = time.monotonic


#: The clock of :func:`wait_for_sweep`: a test hook (a test sets a simulated one, ``Clock(fake_sleep, fake_now)``).
clock = Clock()


def wait_for_sweep(
    path: str,
    sweep: str,
    *,
    timeout: float = 6 * 3600,
    poll: float = 30.0,
    expect_runs: int | None = None,
    progress: Callable[[str], None] | None = print,
    stale_after: float | None = DEFAULT_STALE_AFTER,
    client_kwargs: Mapping[str, Any] | None = None,
    **legacy: Any,
) -> dict[str, Any]:
    """Block until the sweep is FINISHED, none of its runs is running or pending and enough runs exist.

    A poll that fails for a transient cause (timeout, server error, rate limit, connection) is
    retried at the next poll, for the whole ``timeout``: an outage in the middle of a long wait
    does not end it; authentication and not-found failures end it at once. A sweep that ends
    FAILED, CRASHED or CANCELED ends the wait with a ``TrackerError`` saying so. ``expect_runs``
    (default: the sweep's expected run count, known for grid sweeps) must be reached. A running run
    whose last heartbeat is older than ``stale_after`` seconds (None: never) is treated as crashed:
    not waited for, and named once through ``progress``. Raises
    ``TrackerError`` after ``timeout`` seconds, saying what is still going. ``progress`` receives
    one line per poll. Returns the last status (see :func:`sweep_status`). ``client_kwargs`` holds the W&B
    client's options (``timeout``, ``api_key``, ``base_url`` or ``api``; see :data:`~.source.CLIENT_KEYS`). The wait
    reads the time by :data:`clock` (tests simulate the hours of a wait by replacing it).

    Example:
        >>> wait_for_sweep("my-team/hopper", "abc123", timeout=3600, poll=60)  # doctest: +SKIP
    """
    client = client_options(
        moved_client_options(client_kwargs, legacy, where="wait_for_sweep()"), CLIENT_KEYS, tracker="W&B"
    )
    api, tick = client.get("api"), clock
    start = tick.now()
    status: dict[str, Any] | None = None
    last_failure = ""
    named: set[str] = set()
    while True:
        try:
            if api is None:
                api = public_api(
                    timeout=client.get("timeout"), api_key=client.get("api_key"), base_url=client.get("base_url")
                )
            status = sweep_status(path, sweep, api=api, stale_after=stale_after)
        except TrackerError as err:
            cause = classify(err)
            if cause not in TRANSIENT:
                raise
            last_failure = f"{cause}: {err}"
            if progress:
                progress(f"sweep {sweep}: poll failed ({cause}); trying again in {poll:.0f} s")
        else:
            last_failure = ""
            fresh = [r for r in status["stale"] if r.split(" ", 1)[0] not in named]
            if fresh and progress:
                progress(
                    f"sweep {sweep}: treating {plural(len(fresh), 'run')} as crashed: they say running but sent no heartbeat "
                    f"for over {stale_after:.0f} s: {', '.join(fresh[:10])}" + (" ..." if len(fresh) > 10 else "")
                )
            named.update(r.split(" ", 1)[0] for r in status["stale"])
            state = status["state"]
            if state in FAILED_STATES:
                raise TrackerError(
                    f"sweep {sweep} ended {state} with {plural(status['runs'], 'run')}: nothing more to wait for. "
                    "Analyse the finished runs without waiting, or restart the sweep."
                )
            expected = _expected_runs(status, expect_runs)
            enough = expected is None or status["runs"] >= expected
            done = state == "FINISHED" and not status["active"] and enough
            shown = f"/{expected}" if expected else ""
            line = (
                f"sweep {sweep}: {state.lower()}, {status['runs']}{shown} runs, "
                f"{len(status['active'])} running or pending"
                + (f", {len(status['stale'])} stale (treated as crashed)" if status["stale"] else "")
            )
            if progress:
                progress(line + (" - done" if done else ""))
            if done:
                return status
            if state == "FINISHED" and not status["active"] and not enough and expect_runs is None:
                # a grid sweep whose agent gave up: the server will not start the missing runs
                raise TrackerError(
                    said(
                        f"sweep {sweep} is finished with {status['runs']} of {expected} expected runs and none "
                        "running: some runs were never started. Pass ",
                        kw("expect_runs="),
                        " to wait for fewer, or analyse now without waiting.",
                    )
                )
        elapsed = tick.now() - start
        if elapsed + poll > timeout:
            if status is None or last_failure:
                raise TrackerError(
                    said(
                        f"could not read sweep {sweep} for {elapsed:.0f} s (last failure: {last_failure}). Check "
                        "the network / WANDB_BASE_URL and retry, or raise ",
                        kw("timeout="),
                        ".",
                    )
                )
            still = ", ".join(status["active"][:10]) or "none, but the sweep is not finished"
            raise TrackerError(
                said(
                    f"sweep {sweep} was not finished after {elapsed:.0f} s (state {status['state']}; still active: "
                    f"{still}). Re-run with a larger ",
                    kw("timeout="),
                    ", stop the sweep (`wandb sweep --stop`), or evaluate now without waiting.",
                )
            )
        tick.sleep(poll)
