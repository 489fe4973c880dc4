"""Runs that say "running" but stopped sending heartbeats: treated as crashed.

A training process killed hard (machine lost, OOM killer, ``kill -9``) never tells its tracker; the
run stays "running" until the server notices, and a sweep post-hook waiting for it would wait for
hours. A run whose last heartbeat is older than ``stale_after`` seconds is treated as crashed: it
is not waited for, it is named on the console, and it is left out like any other crashed run
(``include_unfinished=True`` keeps it, as it keeps crashed runs).

A tracker that records a heartbeat per run uses this; a tracker without one (runs with a start time
and metric time stamps only) leaves its running runs out as unfinished, as before.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable

from ...data.counts import plural
from .records import RunRecord

#: Default bound: 10 minutes without a heartbeat. Much longer than a tracker client's own retry waits (at most 60 s
#: apart), so a short network outage on the training machine does not turn a live run into a crashed one.
DEFAULT_STALE_AFTER = 600.0
#: The state a stale run is given (the one the other crashed runs have).
CRASHED = "crashed"


def parse_time(stamp: object) -> _dt.datetime | None:
    """A tracker time stamp (ISO 8601; no zone means UTC) as an aware datetime, or None."""
    if isinstance(stamp, _dt.datetime):
        when = stamp
    elif isinstance(stamp, str) and stamp.strip():
        try:
            when = _dt.datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.timezone.utc)


def silence(heartbeat: object, now: _dt.datetime | None = None) -> float | None:
    """Seconds since ``heartbeat`` (None when it is missing or unreadable)."""
    when = parse_time(heartbeat)
    if when is None:
        return None
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return max(0.0, (now - when).total_seconds())


def is_stale(state: str, heartbeat: object, stale_after: float | None, now: _dt.datetime | None = None) -> bool:
    """A "running" run whose last heartbeat is older than ``stale_after`` seconds (None: never stale)."""
    if stale_after is None or str(state).lower() != "running":
        return False
    quiet = silence(heartbeat, now)
    return quiet is not None and quiet > stale_after


def mark_stale(records: Iterable[RunRecord], stale_after: float | None, now: _dt.datetime | None = None) -> list[str]:
    """Give stale running records the state ``crashed``; return a label per run (for the console)."""
    named = []
    for rec in records:
        heartbeat = rec.attrs.get("heartbeat_at")
        if is_stale(rec.state, heartbeat, stale_after, now):
            quiet = silence(heartbeat, now) or 0.0
            rec.state = CRASHED
            rec.attrs["stale_heartbeat"] = heartbeat
            named.append(f"{rec.run_id} (last heartbeat {quiet:.0f} s ago)")
    return named


def stale_warning(named: list[str], stale_after: float, tracker: str) -> str:
    """The one console line naming the runs treated as crashed."""
    shown = ", ".join(named[:10]) + (" ..." if len(named) > 10 else "")
    return (
        f"treated {plural(len(named), 'run', tracker)} as crashed: they say running but sent no heartbeat for over "
        f"{stale_after:.0f} s: {shown}"
    )


__all__ = ["CRASHED", "DEFAULT_STALE_AFTER", "is_stale", "mark_stale", "parse_time", "silence", "stale_warning"]
