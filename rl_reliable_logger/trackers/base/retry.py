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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from ...lines import one_line
from ...notes import note
from ...wording import Message, kw, message_of, said

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import TrackerError

T = TypeVar("T")

#: Causes worth retrying: the server may answer later.
TRANSIENT = frozenset({"timeout", "server error", "rate limit", "connection"})
#: Default total retry time for post-hooks: long enough for a restart or a rate-limit window.
DEFAULT_RETRY_FOR = 300.0
#: How long one request may run past the time budget before the caller stops waiting for it.
REQUEST_TIMEOUT = 20.0
#: While waiting on a request, say so this often (seconds).
PROGRESS_EVERY = 10.0

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


class OutOfTime(TimeoutError):
    """An attempt was still running when the time budget plus one request timeout ran out (it is left behind)."""


def _say(line: str) -> None:
    """Progress as a note (the command line's console while a command runs, else stderr): an outage being waited
    out is never silent."""
    note(line)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@dataclass
class RetryPolicy:
    """A wall-clock time budget for one tracker call: ``total`` seconds of retrying, plus one request timeout.

    Transient failures are retried with waits of ``base * 2^n`` (up to ``max_wait``, plus up to 25 %
    random jitter so many post-hooks do not retry in lockstep; a server's ``Retry-After`` replaces
    the computed wait), as long as the next attempt starts within ``total`` seconds of the call.
    With ``bounded`` (the default) each attempt runs in a worker thread and the caller stops waiting
    ``request_timeout`` seconds after the budget ends, whatever the tracker client does inside
    (its own HTTP retries and timeouts included); the abandoned attempt is left to finish in
    the background. Nothing process-wide changes: the deadline belongs to this call alone.
    ``progress`` receives one line per retry, and every ``progress_every`` seconds while waiting.

    Example:
        >>> RetryPolicy(total=0).call(lambda: 42, "answering")
        42
    """

    total: float = DEFAULT_RETRY_FOR
    base: float = 2.0
    max_wait: float = 60.0
    jitter: float = 0.25
    request_timeout: float = REQUEST_TIMEOUT
    progress_every: float = PROGRESS_EVERY
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)
    progress: Callable[[str], None] | None = field(default=_say, repr=False)
    #: (start, budget, request timeout) of the whole call when this policy is one step of it (:meth:`Deadline.step`): messages
    #: then count attempts' time from that start and name that budget.
    whole: tuple[float, float, float] | None = field(default=None, repr=False)
    #: Whether a server that has never answered is waited for too. False (the command line without an explicit
    #: ``--retry-for``): a refused first connection is reported at once, and the budget serves outages of a
    #: server that has answered.
    wait_for_start: bool = True

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
        bounded: bool = True,
        explain: Callable[[BaseException], Message | str] | None = None,
    ) -> T:
        """``fn()``, retried on transient failures within the budget.

        A failure that is not transient is raised as it is. When the budget is used up, a
        :class:`TrackerError` says what failed (``explain(exc)``, else the failure itself), how many
        attempts were made in how long, and the budget (``retry_for=``).
        """
        say = on_retry or self.progress
        start = self.clock()
        hard_end = start + max(0.0, self.total) + max(0.0, self.request_timeout)
        attempt = 0
        while True:
            try:
                return self._attempt(fn, what, attempt, hard_end, say) if bounded else fn()
            except OutOfTime as exc:
                raise self._gave_up(exc, what, attempt + 1, start, explain) from None
            except Exception as exc:
                is_transient = transient(exc) if transient else classify(exc) in TRANSIENT
                if not is_transient:
                    raise
                delay = self.wait(attempt, exc)
                left = start + self.total - self.clock()
                if delay > left:
                    raise self._gave_up(exc, what, attempt + 1, start, explain) from exc
                if say:
                    say(
                        f"{what} failed ({classify(exc)}); attempt {attempt + 2} in {delay:.0f} s "
                        f"({left:.0f} s left of the {self._budget():g} s time budget)"
                    )
                self.sleep(delay)
                attempt += 1

    def _budget(self) -> float:
        """The budget messages name: the whole call's when this is one of its steps."""
        return self.whole[1] if self.whole is not None else self.total

    def _attempt(
        self, fn: Callable[[], T], what: str, attempt: int, hard_end: float, say: Callable[[str], None] | None
    ) -> T:
        """Run ``fn`` in a daemon thread; stop waiting at ``hard_end`` (raise OutOfTime), saying progress."""
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name=f"rl-reliable: {what}", daemon=True).start()
        while True:
            left = hard_end - self.clock()
            if done.wait(timeout=max(0.0, min(left, self.progress_every))):
                break
            left = hard_end - self.clock()
            if left <= 0:
                raise OutOfTime(f"no answer within the time budget ({_plural(attempt + 1, 'attempt')})")
            if say:
                spent = left <= self.request_timeout  # only the last request's own timeout is left
                say(
                    f"still waiting for an answer ({what}): attempt {attempt + 1}, "
                    + (
                        f"the {self._budget():g} s time budget is spent; this last request gets {left:.0f} s more"
                        if spent
                        else f"{left - self.request_timeout:.0f} s left of the {self._budget():g} s time budget"
                    )
                )
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _gave_up(
        self,
        exc: BaseException,
        what: str,
        attempts: int,
        start: float,
        explain: Callable[[BaseException], Message | str] | None,
    ) -> TrackerError:
        """The one message of an exhausted budget: the failure, then attempts, time and budget, in sentences."""
        from ...errors import TrackerError

        if explain is not None:
            base = said(explain(exc))
        elif isinstance(exc, TrackerError):
            base = message_of(exc)
        else:
            base = said(f"{what} failed ({classify(exc)}): {one_line(exc, limit=300)}")
        base = base.rstrip()
        if not base.endswith((".", "!", "?")):
            base = said(base, ".")
        if self.whole is not None:
            start = self.whole[0]
        total, last = self._budget(), self.whole[2] if self.whole is not None else self.request_timeout
        spent = max(0.0, self.clock() - start)
        budget = (
            said("the time budget (", kw("retry_for="), ") is 0 s, so nothing was retried")
            if total <= 0
            else said(f"the time budget is {total:g} s (", kw("retry_for="), f") plus {last:g} s for the last request")
        )
        err = TrackerError(said(base, f" Gave up after {_plural(attempts, 'attempt')} in {spent:.0f} s: ", budget, "."))
        err.tracker_cause = classify(exc)  # type: ignore[attr-defined]
        return err


@dataclass
class Deadline:
    """One wall-clock budget shared by the steps of one tracker call (e.g. a whole publish).

    The call ends by ``start + total + request_timeout`` (the :class:`RetryPolicy`'s promise), whatever
    the steps: :meth:`step` is the policy for the next step (its retries and its last request end at
    that same moment), :meth:`timeout` the client-side timeout to hand to a library call that has its
    own (an init or upload timeout), and :meth:`waiting`
    prints progress while such a call blocks. Nothing process-wide changes: the deadline is this call's.
    """

    policy: RetryPolicy
    start: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = self.policy.clock()

    @property
    def end(self) -> float:
        """When the call must have ended: the budget plus one request timeout after the start."""
        return self.start + max(0.0, self.policy.total) + max(0.0, self.policy.request_timeout)

    def left(self) -> float:
        """Seconds until :attr:`end` (0 once it has passed)."""
        return max(0.0, self.end - self.policy.clock())

    def spent(self) -> bool:
        return self.left() <= 0.0

    def step(self) -> RetryPolicy:
        """The policy of the next step: retries within what is left of the budget, ending by :attr:`end`."""
        budget_left = max(0.0, self.start + max(0.0, self.policy.total) - self.policy.clock())
        last = max(0.0, self.left() - budget_left)
        whole = self.policy.whole or (self.start, self.policy.total, self.policy.request_timeout)
        return replace(self.policy, total=budget_left, request_timeout=last, whole=whole)

    def timeout(self, reserve: float = 0.0, floor: float = 1.0) -> float:
        """A client timeout for one blocking library call: what is left, minus ``reserve`` seconds kept for
        the steps after it, at least ``floor`` (a library reads 0 as "wait forever")."""
        return max(floor, self.left() - reserve)

    def out_of_time(self, what: str, attempts: int = 1, exc: BaseException | None = None) -> TrackerError:
        """The one message of a spent budget (the same words as :meth:`RetryPolicy.call`'s)."""
        cause = exc if exc is not None else OutOfTime(f"no answer within the time budget while {what}")
        return self.policy._gave_up(cause, what, attempts, self.start, None)

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """Say every ``progress_every`` seconds that ``what`` is still being waited for, and how long is left."""
        say = self.policy.progress
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(self.policy.progress_every):
                if say:
                    budget_left = max(0.0, self.start + max(0.0, self.policy.total) - self.policy.clock())
                    say(
                        f"still waiting for an answer ({what}): attempt 1, {budget_left:.0f} s left of the "
                        f"{self.policy.total:g} s time budget"
                    )

        ticker = threading.Thread(target=tick, name=f"rl-reliable progress: {what}", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()


def no_retries() -> RetryPolicy:
    """A policy that never retries (the tracker client's own retries still apply)."""
    return RetryPolicy(total=0.0)


def describe(exc: BaseException) -> str:
    """``timeout`` / ``server error`` / ... for messages."""
    return classify(exc)


__all__ = [
    "DEFAULT_RETRY_FOR",
    "Deadline",
    "REQUEST_TIMEOUT",
    "TRANSIENT",
    "OutOfTime",
    "RetryPolicy",
    "classify",
    "describe",
    "no_retries",
    "retry_after",
]


def first_contact_problem(uri: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at ``uri``'s host and port (a refused connection, an unknown host, silence for
    ``timeout`` seconds), or None when a connection opens (or goes through a proxy, which this cannot probe).

    A tracker's own client (MLflow's, wandb-core) retries a refused connection for minutes before it raises; this
    one TCP connection says at once that a port is closed.

    Example:
        >>> first_contact_problem("http://127.0.0.1:9")   # the discard port: nothing listens here
        'connection refused'
    """
    import socket
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    host = parts.hostname
    if not host or urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(host):
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        socket.create_connection((host, port), timeout=timeout).close()
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror:
        return f"the host name {host!r} does not resolve"
    except TimeoutError:
        return f"no answer from {host}:{port} in {timeout:g} s"
    except (OSError, ValueError) as err:
        return one_line(err, limit=200)
    return None
