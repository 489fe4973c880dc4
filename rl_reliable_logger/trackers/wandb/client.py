"""W&B client plumbing: a ``wandb.Api`` from the environment with a per-request timeout, one clear error type.

``wandb`` is imported inside these functions, so ``import rl_reliable_logger`` never pays for it.
The API key is taken only from the environment (``WANDB_API_KEY``) or wandb's own login
(``wandb login`` / netrc); it is never printed or passed around (messages go through ``redact``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import TrackerError
from ...redaction import redact
from ...wording import Message, kw, said
from ..base.retry import RetryPolicy, classify, first_contact_problem

#: The server a client talks to when neither ``base_url`` nor ``WANDB_BASE_URL`` names one.
DEFAULT_BASE_URL = "https://api.wandb.ai"
#: How long the probe that names the cause of a request that got no answer waits for a TCP connection: a
#: refused port answers at once; a silent host costs the ``--retry-for`` promise at most this.
CAUSE_PROBE_TIMEOUT = 0.5


# ---------------------------------------------------------------------------- client plumbing
def import_wandb() -> Any:
    try:
        import wandb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TrackerError(
            "the W&B adapter needs the `wandb` package (0.31 or newer): pip install 'rl_reliable_logger[wandb]'"
        ) from exc
    return wandb


def split_path(path: str) -> tuple[str | None, str]:
    """``ENTITY/PROJECT`` or ``PROJECT`` -> (entity or None, project)."""
    parts = [p for p in str(path).strip().split("/") if p]
    if len(parts) == 1:
        return None, parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise TrackerError(f"bad W&B path {path!r}: use ENTITY/PROJECT (e.g. my-team/hopper-sweep) or PROJECT")


def server_url(base_url: str | None = None) -> str:
    """The W&B server of a client: ``base_url``, else ``WANDB_BASE_URL``, else W&B's cloud (no trailing ``/``)."""
    return str(base_url or os.environ.get("WANDB_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def check_reachable(retry: RetryPolicy | None, base_url: str | None = None) -> None:
    """Say at once that nothing answers at the W&B server's port, when the time budget waits for no starting server.

    With a zero budget (``retry_for=0``, or no policy) or a command line without ``--retry-for``
    (``wait_for_start`` false), a refused first connection is a wrong port or a stopped server: one TCP
    connection says so in a moment, where wandb-core would retry it until the client's timeout (about
    20 s) and the message would call it a timeout. A budget given to wait for a server (``--retry-for S``)
    is used to wait instead. Raises :class:`TrackerError`; never names the URL's password.
    """
    if retry is not None and retry.total > 0 and retry.wait_for_start:
        return
    url = server_url(base_url)
    problem = first_contact_problem(url)
    if problem:
        err = TrackerError(
            said(
                f"could not connect to the W&B server at {redact(url)} ({problem}): nothing answers there. Check "
                "that the server is running and that WANDB_BASE_URL (or the base_url client option) names it; pass ",
                kw("retry_for="),
                " SECONDS (more than 0) to wait for a server that is still starting.",
            )
        )
        err.tracker_cause = "connection"  # type: ignore[attr-defined]
        raise err


def request_timeout(retry: RetryPolicy) -> float | None:
    """The per-request client timeout under ``retry``'s time budget: wandb's own (None) unless
    ``WANDB_HTTP_TIMEOUT`` asks for more than the budget's request timeout, which the budget's promise
    (its total plus one request timeout) would not keep; then that request timeout (at least 1 s)."""
    try:
        asked = float(os.environ.get("WANDB_HTTP_TIMEOUT") or 0)
    except ValueError:
        return None  # wandb reads the variable itself and says what is wrong with it
    limit = max(1.0, retry.request_timeout)
    return limit if asked > limit else None


def no_answer_cause(base_url: str | None = None) -> str | None:
    """Why a request that got no answer got none, when one short TCP connection can tell (a refused port, an
    unknown host), else None (the port is open: the server itself was silent; or a proxy is in the way)."""
    problem = first_contact_problem(server_url(base_url), timeout=CAUSE_PROBE_TIMEOUT)
    return None if problem is None or problem.startswith("no answer from") else problem


# ---------------------------------------------------------------------------- the cause behind a client timeout
#: What wandb-core writes to its debug log before each retry of a failed HTTP request (status, URL, body)
#: and of a request that got no answer (``error`` names the URL and the transport failure).
_RETRY_LINES = ("api: retrying HTTP error", "api: retrying error")
_TAIL_BYTES = 256 * 1024


def _core_logs() -> list[Path]:
    """wandb-core debug logs that may hold this process's requests.

    The log of the wandb-core this process talks to (found through ``/proc`` on Linux: its command
    line names the pid of the process that started it: this one, or the parent named by
    ``WANDB_SERVICE``, which child processes share), else the newest ``core-debug-*.log`` files of
    the cache folder (``WANDB_CACHE_DIR``, else the user cache folder).
    """
    found: list[Path] = []
    proc = Path("/proc")
    if proc.is_dir():
        owners = {str(os.getpid()).encode()}
        shared = re.match(r"^\d+-(\d+)-", os.environ.get("WANDB_SERVICE", ""))
        if shared:
            owners.add(shared.group(1).encode())
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
                if not any(a.endswith(b"wandb-core") for a in args) or not owners & set(args):
                    continue
                for fd in (entry / "fd").iterdir():
                    target = os.readlink(fd)
                    if re.search(r"core-debug-[^/]*\.log$", target):
                        found.append(Path(target))
            except OSError:
                continue
    if found:
        return found
    cache = Path(os.environ.get("WANDB_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    logs = sorted((cache / "wandb" / "logs").glob("core-debug-*.log"), key=lambda p: p.stat().st_mtime)
    return logs[-3:]


def last_core_failure(base_url: str, since: float) -> tuple[int | None, str] | None:
    """(status, body) of the last HTTP error wandb-core retried against ``base_url`` after ``since``, or
    (None, error) for the last request it retried without an answer (connection refused, DNS, reset).

    wandb 0.31 logs each retry in its debug log (``"api: retrying HTTP error"`` with status, URL and
    body; ``"api: retrying error"`` with the transport error). When the Python client stops waiting first
    (its public ``wandb.Api(timeout=)``), its exception only says "did not respond in time"; this line says
    what actually happened. None when no such line is found.
    """
    best: tuple[float, int | None, str] | None = None
    base = base_url.rstrip("/")
    for log in _core_logs():
        try:
            with open(log, "rb") as fh:
                fh.seek(max(0, log.stat().st_size - _TAIL_BYTES))
                lines = fh.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for line in lines:
            if not any(marker in line for marker in _RETRY_LINES):
                continue
            try:
                entry = json.loads(line)
                when = _log_time(str(entry.get("time", "")))
                if entry.get("status") is not None:
                    status: int | None = int(entry["status"])
                    text, ours = str(entry.get("body", "")), str(entry.get("url", "")).startswith(base)
                else:
                    status, text = None, str(entry.get("error", ""))
                    ours = f'"{base}/' in text or f'"{base}"' in text
            except (ValueError, TypeError, AttributeError):
                continue
            if when is None or when < since or not ours:
                continue
            if best is None or when >= best[0]:
                best = (when, status, " ".join(text.split())[:200])
    return None if best is None else (best[1], best[2])


def _log_time(text: str) -> float | None:
    import datetime as dt

    match = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?", text)
    if not match:
        return None
    stamp = dt.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp() + float(match.group(2) or 0)


_UNREACHABLE = r"connection refused|dial tcp|no such host|connection reset"
_SERVER_HINT = (
    "the W&B server kept failing after wandb's retries; try again later (status page: https://status.wandb.com)."
)


def _transport_cause(
    exc: BaseException, base_url: str, since: float | None
) -> tuple[str, str, tuple[int | None, str] | None]:
    """(cause, text, the last failure wandb-core retried) of a client failure: a request wandb-core was still
    retrying when the client stopped waiting is named by core's log, else by one short probe of the port."""
    text = " ".join(str(exc).split())[:600] or type(exc).__name__
    low = text.lower()
    cause = classify(exc)
    # wandb words an unreachable server as failing to verify credentials: the transport cause comes first
    if "did not respond in time" in low:
        cause = "timeout"
    elif re.search(_UNREACHABLE, low):
        cause = "connection"
    seen = last_core_failure(base_url, since - 1.0) if cause == "timeout" and since is not None else None
    if seen is not None and seen[0] is None and re.search(_UNREACHABLE, seen[1].lower()):
        # wandb-core kept retrying a server that never answered: the transport error is the cause
        cause = "connection"
        text = f"{text} (wandb-core was retrying: {seen[1].split(': ', 1)[-1]})"
    elif seen is None and cause == "timeout":
        # wandb-core retries a refused connection until the client stops waiting: one short probe names it
        refused = no_answer_cause(base_url)
        if refused:
            cause, text = "connection", f"{text} ({refused} at {urlsplit(base_url).netloc.rpartition('@')[2]})"
    return cause, text, seen


def describe_error(exc: BaseException, what: str, since: float | None = None) -> TrackerError:
    """One clear message for every client failure; never includes the API key.

    When the client timed out while wandb-core was still retrying (``since``: when the request
    started), the last HTTP error core retried names the real cause (server error, rate limit).
    """
    name = type(exc).__name__
    base_url = server_url()
    shown_url = redact(base_url)
    cause, text, seen = _transport_cause(exc, base_url, since)
    low = text.lower()
    if seen is not None and seen[0] is not None and (seen[0] == 429 or 500 <= seen[0] < 600):
        status, body = seen
        cause = "rate limit" if status == 429 else "server error"
        hint: Message | str = (
            said(
                "W&B rate-limited the requests; wait and retry (a sweep post-hook retries for ",
                kw("retry_for="),
                " seconds).",
            )
            if status == 429
            else "The W&B server kept failing; try again later (status page: https://status.wandb.com)."
        )
        err = TrackerError(
            said(
                f"W&B request failed ({cause}) while {what} at {shown_url}: the server answered HTTP {status} "
                f"({redact(body) or 'no message'}) and wandb was still retrying when the client stopped waiting "
                "(its timeout: wandb.Api(timeout=), by default WANDB_HTTP_TIMEOUT, 19 s). ",
                hint,
            )
        )
        err.tracker_cause = cause  # type: ignore[attr-defined]
        return err
    if cause == "timeout":
        hint = "the W&B server did not answer in time; check that it is running and answering, and the network / WANDB_BASE_URL."
    elif cause == "connection":
        hint = "the W&B server could not be reached; check that it is running and WANDB_BASE_URL / the network."
    elif cause == "server error":
        hint = _SERVER_HINT
    elif (
        name in ("AuthenticationError", "UsageError")
        or "api key" in low
        or re.search(r"\b40[13]\b", low)  # a status, never a port such as 127.0.0.1:40107
        or "not logged in" in low
        or "credentials" in low
        or "permission" in low
    ):
        hint = (
            "W&B rejected the credentials or none are configured. Set WANDB_API_KEY in the environment "
            "or run `wandb login` (and WANDB_BASE_URL for a self-hosted server), then retry."
        )
    elif re.search(r"\b429\b", low) or "rate limit" in low:
        hint = said(
            "W&B rate-limited the requests (HTTP 429) and retries ran out; wait a minute and retry, or use a larger ",
            kw("per_page="),
            ".",
        )
    elif "did not respond in time" in low or "timeout" in low or "timed out" in low:
        hint = "the W&B server did not answer in time; check that it is running and answering, and the network / WANDB_BASE_URL."
    elif re.search(r"\b5\d\d\b", low) or "giving up" in low:
        hint = _SERVER_HINT
    elif "could not find" in low or "not found" in low:
        hint = "check the ENTITY/PROJECT spelling (and that your key can see it)."
    else:
        hint = "see the message above."
    if cause in ("connection", "timeout") and name == "AuthenticationError":
        # wandb's words for a server that never answered the login check: no credentials were looked at
        name, text = "no answer", re.sub(r"^Failed to verify credentials with \S+?:? (?=\S)", "", text)
    text = redact(text).rstrip(". ")
    if isinstance(hint, str):
        hint = hint[0].upper() + hint[1:]
    err = TrackerError(said(f"W&B request failed ({cause}) while {what} at {shown_url}: {name}: {text}. ", hint))
    err.tracker_cause = cause  # type: ignore[attr-defined]
    return err


@contextlib.contextmanager
def wandb_errors(what: str) -> Iterator[None]:
    since = time.time()
    try:
        yield
    except TrackerError:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if not is_client_error(exc):
            raise  # a bug or bad input, not a tracker failure: keep the real traceback
        raise describe_error(exc, what, since) from None


def is_client_error(exc: BaseException) -> bool:
    """wandb's own errors (auth, comm, wandb-core API failures) and network OS errors."""
    module = type(exc).__module__ or ""
    if module.startswith("wandb"):
        return True
    if isinstance(exc, (OSError, TimeoutError, ConnectionError)):
        return True
    # wandb's Public API raises plain ValueError for a missing project ("Could not find project X")
    return isinstance(exc, ValueError) and "could not find" in str(exc).lower()


def new_run_id() -> str:
    import secrets
    import string

    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(8))


def public_api(*, timeout: float | None = None, api_key: str | None = None, base_url: str | None = None) -> Any:
    """A ``wandb.Api`` using only the environment / wandb login for the key (never prompting).

    ``timeout`` (seconds; None: wandb's default, ``WANDB_HTTP_TIMEOUT``) is the public ``wandb.Api(timeout=)``:
    a call gives up after it even while wandb-core is still retrying 5xx/429 (wandb 0.31 then drops the
    request), so our own :class:`RetryPolicy` loop and deadlines bound the whole call. ``api_key`` and
    ``base_url`` (None: the environment's) are the public ``wandb.Api(api_key=, overrides={"base_url": ...})``.
    wandb's internal ``x_`` settings are never set.
    """
    wandb = import_wandb()
    with wandb_errors("connecting"):
        return wandb.Api(
            overrides={"base_url": base_url} if base_url else None,
            timeout=int(timeout) if timeout is not None else None,
            api_key=api_key,
        )
