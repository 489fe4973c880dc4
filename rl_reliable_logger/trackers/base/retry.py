"""One retry policy per tracker: bounded total time, exponential backoff with jitter, Retry-After honoured.

The policy is an object handed to a tracker's client explicitly (never process-wide environment
variables, which threads would race on). :func:`classify` names the real cause of a failure
(timeout, server error, rate limit, authentication, not found, connection), so messages say which,
and only transient causes are retried.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

#: Causes worth retrying: the server may answer later.
TRANSIENT = frozenset({"timeout", "server error", "rate limit", "connection"})
#: Default total retry time for post-hooks: long enough for a restart or a rate-limit window.
DEFAULT_RETRY_FOR = 300.0

_CAUSES = (
    ("authentication", re.compile(r"\b(401|403)\b|api key|credentials|not logged in|unauthori[sz]ed|permission", re.I)),
    ("rate limit", re.compile(r"\b429\b|rate.?limit|too many requests", re.I)),
    ("not found", re.compile(r"\b404\b|not found|could not find|does not exist", re.I)),
    ("timeout", re.compile(r"did not respond in time|timed? ?out|timeout", re.I)),
    ("server error", re.compile(r"\b5\d\d\b|giving up after|too many 5\d\d|server error", re.I)),
    (
        "connection",
        re.compile(
            r"connection (refused|reset|aborted)|failed to establish|max retries exceeded|remotedisconnected"
            r"|name ?resolution|nodename nor servname",
            re.I,
        ),
    ),
)


def classify(exc: BaseException) -> str:
    """The cause of a tracker failure: authentication, rate limit, not found, timeout, server error, connection, other."""
    named = getattr(exc, "tracker_cause", None)  # set by a tracker client that already classified it
    if isinstance(named, str):
        return named
    status = _status(exc)
    if status in (401, 403):
        return "authentication"
    if status == 429:
        return "rate limit"
    if status == 404:
        return "not found"
    if status is not None and 500 <= status < 600:
        return "server error"
    text = " ".join(str(e) for e in _chain(exc))
    for cause, pattern in _CAUSES:
        if pattern.search(text):
            return cause
    if any(isinstance(e, TimeoutError) for e in _chain(exc)):
        return "timeout"
    if any(isinstance(e, ConnectionError) for e in _chain(exc)):
        return "connection"
    return "other"


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out and len(out) < 8:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return out


def _status(exc: BaseException) -> int | None:
    for e in _chain(exc):
        response = getattr(e, "response", None)
        for attr in ("status_code", "http_status", "status"):
            value = getattr(response, attr, None)
            if isinstance(value, int) and value >= 100:
                return value
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``Retry-After``: seconds or an HTTP date), if the failure carries it."""
    for e in _chain(exc):
        headers = getattr(getattr(e, "response", None), "headers", None)
        value = None
        if headers is not None:
            try:
                value = headers.get("Retry-After")
            except Exception:
                value = None
        if value is None:
            m = re.search(r"retry-after:?\s*(\d+(\.\d+)?)", str(e), re.I)
            value = m.group(1) if m else None
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(str(value))
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    return None


@dataclass
class RetryPolicy:
    """Retry transient failures for at most ``total`` seconds; waits grow ``base * 2^n`` up to ``max_wait``.

    Each wait gets up to 25 % random jitter (so many post-hooks do not retry in lockstep), and a
    server's ``Retry-After`` replaces the computed wait (still within ``total``).

    Example:
        >>> RetryPolicy(total=0).call(lambda: 42, "answering")
        42
    """

    total: float = DEFAULT_RETRY_FOR
    base: float = 2.0
    max_wait: float = 60.0
    jitter: float = 0.25
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def wait(self, attempt: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            return asked
        return min(self.max_wait, self.base * 2**attempt) * (1 + self.jitter * self.rng.random())

    def call(
        self,
        fn: Callable[[], T],
        what: str,
        *,
        on_retry: Callable[[str], None] | None = None,
        transient: Callable[[BaseException], bool] | None = None,
    ) -> T:
        """``fn()``, retried on transient failures until ``total`` seconds are used; the last failure is re-raised."""
        start = self.clock()
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as exc:
                is_transient = transient(exc) if transient else classify(exc) in TRANSIENT
                if not is_transient:
                    raise
                delay = self.wait(attempt, exc)
                if self.clock() - start + delay > self.total:
                    raise
                if on_retry:
                    on_retry(f"{what} failed ({classify(exc)}); retrying in {delay:.0f} s")
                self.sleep(delay)
                attempt += 1


def no_retries() -> RetryPolicy:
    """A policy that never retries (the tracker client's own retries still apply)."""
    return RetryPolicy(total=0.0)


def describe(exc: BaseException) -> str:
    """``timeout`` / ``server error`` / ... for messages."""
    return classify(exc)


__all__ = ["DEFAULT_RETRY_FOR", "TRANSIENT", "RetryPolicy", "classify", "describe", "no_retries", "retry_after"]
