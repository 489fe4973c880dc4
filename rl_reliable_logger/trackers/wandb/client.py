"""W&B client plumbing: a ``wandb.Api`` from the environment, bounded retries, one clear error type.

``wandb`` is imported inside these functions, so ``import rl_reliable_logger`` never pays for it.
The API key is taken only from the environment (``WANDB_API_KEY``) or wandb's own login
(``wandb login`` / netrc); it is never printed or passed around (messages go through ``redact``).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

from ...errors import TrackerError
from ...redaction import redact
from ..base.retry import classify


# ---------------------------------------------------------------------------- client plumbing
def _import_wandb() -> Any:
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


def _configure_retries(retry_max: int | None, retry_wait_max: float | None, timeout: float | None) -> None:
    """Pass retry/timeout limits to wandb-core (where 0.31 retries 5xx/429) through wandb's settings."""
    if retry_max is None and retry_wait_max is None and timeout is None:
        return
    wandb = _import_wandb()
    kwargs: dict[str, Any] = {}
    if retry_max is not None:
        kwargs["x_graphql_retry_max"] = int(retry_max)
    if retry_wait_max is not None:
        kwargs["x_graphql_retry_wait_max_seconds"] = float(retry_wait_max)
    if timeout is not None:
        kwargs["x_graphql_timeout_seconds"] = float(timeout)
    wandb.setup(settings=wandb.Settings(**kwargs))


def _describe_error(exc: BaseException, what: str) -> TrackerError:
    """One clear message for every client failure; never includes the API key."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:600] or name
    base_url = os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")
    low = text.lower()
    if (
        name in ("AuthenticationError", "UsageError")
        or "api key" in low
        or "401" in low
        or "not logged in" in low
        or "credentials" in low
        or "permission" in low
        or "403" in low
    ):
        hint = (
            "W&B rejected the credentials or none are configured. Set WANDB_API_KEY in the environment "
            "or run `wandb login` (and WANDB_BASE_URL for a self-hosted server), then retry."
        )
    elif "429" in low or "rate limit" in low:
        hint = "W&B rate-limited the requests (HTTP 429) and retries ran out; wait a minute and retry, or use a larger `per_page=`."
    elif "did not respond in time" in low or "timeout" in low or "timed out" in low:
        hint = "the W&B server did not answer in time; check the network / WANDB_BASE_URL, or raise WANDB_HTTP_TIMEOUT."
    elif re.search(r"\b5\d\d\b", low) or "giving up" in low:
        hint = "the W&B server kept failing after wandb's retries; try again later (status page: https://status.wandb.com)."
    elif "could not find" in low or "not found" in low:
        hint = "check the ENTITY/PROJECT spelling (and that your key can see it)."
    else:
        hint = "see the message above."
    cause = classify(exc)
    err = TrackerError(f"W&B request failed ({cause}) while {what} at {base_url}: {name}: {redact(text)}. {hint}")
    err.tracker_cause = cause  # type: ignore[attr-defined]
    return err


@contextlib.contextmanager
def _errors(what: str) -> Iterator[None]:
    try:
        yield
    except TrackerError:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if not _is_client_error(exc):
            raise  # a bug or bad input, not a tracker failure: keep the real traceback
        raise _describe_error(exc, what) from None


def _is_client_error(exc: BaseException) -> bool:
    """wandb's own errors (auth, comm, wandb-core API failures) and network OS errors."""
    module = type(exc).__module__ or ""
    if module.startswith("wandb"):
        return True
    if isinstance(exc, (OSError, TimeoutError, ConnectionError)):
        return True
    # wandb's Public API raises plain ValueError for a missing project ("Could not find project X")
    return isinstance(exc, ValueError) and "could not find" in str(exc).lower()


def _new_run_id() -> str:
    import secrets
    import string

    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(8))


def _api(*, timeout: float | None = None, retry_max: int | None = None, retry_wait_max: float | None = None) -> Any:
    """A ``wandb.Api`` using only the environment / wandb login for the key (never prompting)."""
    wandb = _import_wandb()
    _configure_retries(retry_max, retry_wait_max, None)
    with _errors("connecting"):
        return wandb.Api(timeout=int(timeout) if timeout is not None else None)
