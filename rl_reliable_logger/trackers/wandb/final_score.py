"""End of training on W&B: the convention ``log_final_score`` writes onto a run.

Config ``rl_reliable_algorithm`` / ``rl_reliable_task`` / ``rl_reliable_seed``, tags
``algorithm:<A>`` / ``task:<T>`` and summary ``rl_reliable_final_score``; the W&B Source reads
exactly these by default.

Two kinds of run: the live run of ``wandb.init`` (its writes go to wandb's own run log first, which
``wandb sync`` can resend) and a finished run of the Public API (``wandb.Api().run(path)``, written
with one ``run.update()`` under the retry policy). When a write fails, the score goes to a pending
file (:mod:`..base.pending`); :func:`push_pending` sends such a file later.
"""

from __future__ import annotations

import os
from typing import Any

from ...errors import InputError, TrackerError
from ...lines import one_line
from ...redaction import redact
from ...wording import Message, message_of, said
from ..base.final_score import FinalScore, check_final_score
from ..base.pending import PendingScore, report_failure
from ..base.request import DEFAULT_KEYS
from ..base.retry import DEFAULT_RETRY_FOR, OutOfTime, RetryPolicy, classify
from .client import (
    check_reachable,
    import_wandb,
    is_client_error,
    no_answer_cause,
    public_api,
    server_url,
    wandb_errors,
)
from .names import LABEL, NAME

#: W&B's limit on the length of one tag.
_MAX_TAG = 64


def write_final_score(
    score: Any,
    algorithm: Any,
    task: Any,
    seed: Any,
    run: Any = None,
    *,
    retry_for: float | None = None,
    pending_dir: str | os.PathLike[str] | None = None,
    on_failure: str = "warn",
) -> None:
    """Write the end-of-training convention onto a W&B run (the active one by default).

    Config ``rl_reliable_algorithm`` / ``rl_reliable_task`` / ``rl_reliable_seed``, tags
    ``algorithm:<A>`` and ``task:<T>``, and summary ``rl_reliable_final_score``. The score goes to
    the summary only, never to history: at finish a pending history row overwrites a summary key of
    the same name, so a key that is also logged could lose the final score. ``run`` may also be a
    Public API run (``wandb.Api().run(path)``), written with ``run.update()``, retried for
    ``retry_for`` seconds (default 300). A failed write saves the score to a pending file.

    Example:
        >>> write_final_score(1234.5, "PPO", "Hopper-v4", 3)   # inside wandb.init(...)  # doctest: +SKIP
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    wandb = import_wandb()
    run = run if run is not None else wandb.run
    if run is None:
        raise TrackerError(
            "no active W&B run: call log_final_score after `wandb.init(...)` and before `run.finish()`, "
            "or pass run=<the wandb Run> (needed for runs made with reinit='create_new')"
        )
    try:
        if _is_public(run):
            _write_public(run, checked, RetryPolicy(total=DEFAULT_RETRY_FOR if retry_for is None else retry_for))
        else:
            _write_live(run, checked)
    except Exception as err:
        if isinstance(err, ValueError) and not is_client_error(err):
            raise  # a clash with what the run already says: nothing to save for later
        if not isinstance(err, TrackerError) and not is_client_error(err):
            raise
        target = _target(run)
        report_failure(
            checked,
            tracker=NAME,
            label=LABEL,
            target=target,
            error=err,
            directory=pending_dir,
            on_failure=on_failure,
        )


def _is_public(run: Any) -> bool:
    return type(run).__module__.startswith("wandb.apis")


def _target(run: Any) -> dict[str, Any]:
    """What a pending file records of the run: enough to find it again, no key."""
    settings = getattr(run, "settings", None)
    base_url = getattr(settings, "base_url", None) or os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai"
    return {
        "run_id": str(run.id),
        "entity": str(getattr(run, "entity", "") or ""),
        "project": str(getattr(run, "project", "") or ""),
        "base_url": str(base_url).rstrip("/"),
    }


def _wanted(checked: FinalScore) -> dict[str, Any]:
    return {
        DEFAULT_KEYS["algorithm"]: checked.algorithm,
        DEFAULT_KEYS["task"]: checked.task,
        DEFAULT_KEYS["seed"]: checked.seed,
    }


def _new_tags(current: Any, checked: FinalScore) -> list[str]:
    tags = list(current or ())
    wanted = [f"algorithm:{checked.algorithm}", f"task:{checked.task}"]
    return tags + [t for t in wanted if t not in tags and len(t) <= _MAX_TAG]


def _write_live(run: Any, checked: FinalScore) -> None:
    run.config.update(_wanted(checked), allow_val_change=True)
    run.summary[DEFAULT_KEYS["score"]] = checked.score
    current = list(run.tags or ())
    tags = _new_tags(current, checked)
    if tags != current:
        run.tags = tuple(tags)


def _config_value(config: Any, key: str) -> Any:
    value = dict(config or {}).get(key)
    return value.get("value") if isinstance(value, dict) and "value" in value else value


def _write_public(run: Any, checked: FinalScore, retry: RetryPolicy) -> str:
    """A finished run through the Public API: check, set, ``run.update()`` (retried); "written" or "already"."""
    wanted = _wanted(checked)
    clash = {
        k: (_config_value(run.config, k), v)
        for k, v in wanted.items()
        if _config_value(run.config, k) is not None and str(_config_value(run.config, k)) != str(v)
    }
    if clash:
        detail = ", ".join(f"{k} is {old!r}, new {new!r}" for k, (old, new) in clash.items())
        raise ValueError(
            f"log_final_score: run {run.id} already has {detail}; one run is one (algorithm, task, "
            "seed). Nothing was logged."
        )
    key = DEFAULT_KEYS["score"]
    tags = _new_tags(run.tags, checked)
    if (
        run.summary.get(key) == checked.score
        and tags == list(run.tags or ())
        and not any(_config_value(run.config, k) is None for k in wanted)
    ):
        return "already"
    for k, v in wanted.items():
        run.config[k] = v
    run.tags = tags
    run.summary[key] = checked.score

    _call(retry, f"writing the final score of run {run.id}", run.update)
    return "written"


def _call(retry: RetryPolicy, what: str, fn: Any) -> Any:
    """``fn()`` with each attempt's wandb errors made TrackerErrors (which name the cause), retried.

    A zero budget checks the server's port first (a refused one fails at once, not after wandb-core's own
    retries); a request still unanswered when the budget ran out is named by a short probe of that port.
    """
    check_reachable(retry)

    def once() -> Any:
        with wandb_errors(what):
            return fn()

    return retry.call(once, what, explain=lambda err: _explain(err, what))


def _explain(err: BaseException, what: str) -> Message | str:
    """The failure of an exhausted budget in words: a TrackerError's own, else the cause of a request left
    without an answer (a refused port, when the probe can tell) and the server to check."""
    if isinstance(err, TrackerError):
        return message_of(err)
    url = server_url()
    refused = no_answer_cause(url) if isinstance(err, OutOfTime) else None
    return said(
        f"{what} failed ({'connection' if refused else classify(err)}: {refused + '; ' if refused else ''}"
        f"{one_line(err, limit=300)}) at {redact(url)}. Check that the W&B server is running and that "
        "WANDB_BASE_URL names it."
    )


def push_pending(item: PendingScore, *, retry: RetryPolicy | None = None) -> str:
    """Send one pending W&B score to the run it names (and no other); ``"written"`` or ``"already"``.

    The server must be the one recorded in the file (``WANDB_BASE_URL``), so a score is never sent
    to another W&B. A run that already has a *different* final score is left alone (InputError).
    """
    here = (os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").rstrip("/")
    there = str(item.run.get("base_url") or "https://api.wandb.ai").rstrip("/")
    if here != there:
        raise InputError(
            f"{item.path.name}: the score belongs to the W&B server {there}, but WANDB_BASE_URL is {here}; "
            "set WANDB_BASE_URL to that server to push it"
        )
    entity, project = item.run.get("entity"), item.run.get("project")
    if not entity or not project:
        raise InputError(f"{item.path.name}: the pending file does not record the run's entity and project")
    path = f"{entity}/{project}/{item.run_id}"
    run = _call(retry or RetryPolicy(total=0), f"reading run {path}", lambda: public_api().run(path))
    old = run.summary.get(DEFAULT_KEYS["score"])
    if old is not None and old != item.score:
        raise InputError(
            f"{item.path.name}: run {item.run_id} already has {DEFAULT_KEYS['score']} = {old!r}, not the saved "
            f"{item.score!r}; left unchanged (remove the pending file if the run's value is the right one)"
        )
    checked = FinalScore(item.score, item.algorithm, item.task, item.seed)
    return _write_public(run, checked, retry or RetryPolicy(total=0))
