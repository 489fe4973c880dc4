"""Final scores that could not be written to their tracker: saved locally, read back, pushed later.

When ``log_final_score`` still fails after the retry policy (server down at the end of training,
rate limit, expired key), the checked score is written to a JSON file in the pending folder
(``pending_dir=``, else ``RL_RELIABLE_PENDING_DIR``, else ``./rl-reliable-pending``) and its path is
named by a PendingScoreWarning (said once), so the score is never lost. ``rl-reliable pending DIR`` lists such files and
``--push`` re-sends each one to the run it names (and to no other run), once the tracker is back.

File names are built only from validated characters (tracker, a run id matching ``[A-Za-z0-9_-]``
or a hash of it, a UTC time stamp, a random suffix); the file is written through the one writer
(``store.files.write_file``: a temporary name, flushed, renamed), so a reader never sees half a file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import secrets
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError, TrackerError, caller_stacklevel
from ...lines import one_line
from ...redaction import redact
from .final_score import FinalScore
from .retry import classify

#: Environment variable naming the pending folder.
PENDING_DIR_ENV = "RL_RELIABLE_PENDING_DIR"
#: The pending folder when neither ``pending_dir=`` nor the environment variable names one.
DEFAULT_PENDING_DIR = "rl-reliable-pending"
#: Sub-folder where pushed files are moved (kept as a record, never listed as pending).
PUSHED_DIR = "pushed"
FORMAT = "rl-reliable-pending-score"
VERSION = 1
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: A tracker's name as a file records it (the plugin's ``name``); which trackers exist is the registry's business.
_TRACKER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class PendingScoreWarning(UserWarning):
    """A final score could not be written to its tracker and was saved to a pending file instead."""


class PendingScoreError(TrackerError):
    """``on_failure="raise"``: the tracker write failed; ``path`` is the pending file holding the score."""

    def __init__(self, message: str, path: Path):
        super().__init__(message)
        self.path = path


def pending_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """``directory``, else ``$RL_RELIABLE_PENDING_DIR``, else ``./rl-reliable-pending`` (absolute)."""
    return Path(directory or os.environ.get(PENDING_DIR_ENV) or DEFAULT_PENDING_DIR).absolute()


def _id_part(run_id: str) -> str:
    """A run id as it may appear in a file name: itself when plain, else a hash of it."""
    text = str(run_id)
    return text if _SAFE_ID.match(text) else "h" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_name(tracker: str, run_id: str, now: _dt.datetime) -> str:
    if not _TRACKER_NAME.match(str(tracker)):
        raise ValueError(f"not a tracker name: {tracker!r}")
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    return f"{tracker}-{_id_part(run_id)}-{stamp}-{secrets.token_hex(3)}.json"


def _atomic_write(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON through the one writer: a new file only (never replacing one), flushed, renamed into
    place, readable by its owner only (it may name a tracker's address)."""
    from ...store.files import write_file

    text = json.dumps(dict(data), indent=1, sort_keys=True, allow_nan=False) + "\n"
    write_file(path, text.encode("utf-8"), kind="pending", exclusive=True, mode=0o600)


def save_pending(
    checked: FinalScore,
    *,
    tracker: str,
    target: Mapping[str, Any],
    error: BaseException,
    directory: str | os.PathLike[str] | None = None,
) -> Path:
    """Write one pending score file and return its path.

    ``tracker`` is the plugin's name; ``target`` names the run (``run_id`` and what the tracker's
    ``push_pending`` needs to find it again). Secrets in it and in the error text are redacted.
    """
    folder = pending_dir(directory)
    now = _dt.datetime.now(_dt.timezone.utc)
    run_id = str(target["run_id"])
    run: dict[str, Any] = {k: (redact(str(v)) if isinstance(v, str) else v) for k, v in target.items()}
    run["run_id"] = run_id  # the run id is needed as it is (it is never a secret)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "tracker": tracker,
        "run": run,
        "score": checked.score,
        "algorithm": checked.algorithm,
        "task": checked.task,
        "seed": checked.seed,
        "written_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cause": classify(error),
        "error": one_line(error, limit=600),
    }
    path = folder / _file_name(tracker, run_id, now)
    _atomic_write(path, data)
    return path


def report_failure(
    checked: FinalScore,
    *,
    tracker: str,
    label: str,
    target: Mapping[str, Any],
    error: BaseException,
    directory: str | os.PathLike[str] | None = None,
    on_failure: str = "warn",
) -> Path:
    """Save the score (:func:`save_pending`), then warn (default) or raise: the message is shown once.

    The one message both trackers give, in whole sentences: what failed, where the score was saved
    and the command that sends it. ``on_failure="raise"`` raises :class:`PendingScoreError` (a
    TrackerError) chained to ``error``; ``"warn"`` issues a :class:`PendingScoreWarning` (shown on
    stderr by Python's default warning filter) and returns. ``label`` is the tracker's name for people
    (the plugin's ``label``).
    """
    why = _sentences(error)
    try:
        path = save_pending(checked, tracker=tracker, target=target, error=error, directory=directory)
    except (OSError, InputError) as disk:  # the last resort failed too: say the score itself so it can be copied
        message = (
            f"log_final_score: could not write the final score to {label} run {target['run_id']}. {why} "
            f"Saving it to {pending_dir(directory)} failed too ({one_line(disk, limit=200)}). The score of run "
            f"{target['run_id']} ({checked.algorithm} / {checked.task} seed {checked.seed}) is {checked.score!r}."
        )
        raise TrackerError(message) from error
    message = kept_message(
        label,
        f"log_final_score: could not write the final score to {label} run {target['run_id']}. {why}",
        "score",
        path,
        f"rl-reliable pending {path.parent} --push",
    )
    if on_failure == "raise":
        raise PendingScoreError(message, path) from error
    warnings.warn(message, PendingScoreWarning, stacklevel=caller_stacklevel())
    return path


class PendingPublishError(TrackerError):
    """A publish ran out of its time budget; ``path`` holds what was kept to send later (named in the message)."""

    def __init__(self, message: str, path: Path):
        super().__init__(message)
        self.path = path


def kept_message(label: str, why: str, what: str, path: Path, command: str) -> str:
    """The one wording of "the tracker failed, this was kept locally, send it later like this" (scores and
    reports, both trackers): ``why`` (whole sentences), then where ``what`` was saved and the command."""
    why = why.rstrip()
    if not why.endswith((".", "…", "!", "?")):
        why += "."
    return f"{why} The {what} was saved to {path}; send it when {label} is back with: {command}"


def _sentences(error: BaseException) -> str:
    """The failure as whole sentences (its own text when it is ours, else its cause and first line)."""
    text = one_line(error, limit=700)
    if not isinstance(error, TrackerError):
        text = f"The tracker failed ({classify(error)}): {text}"
    return text if text.endswith((".", "…", "!", "?")) else text + "."


@dataclass(frozen=True)
class PendingScore:
    """One pending file, read back and checked."""

    path: Path
    tracker: str
    run: dict[str, Any]
    score: float
    algorithm: str
    task: str
    seed: int | str
    written_at: str
    cause: str
    error: str

    @property
    def run_id(self) -> str:
        return str(self.run["run_id"])

    def describe(self, where: str) -> str:
        """One line for ``rl-reliable pending``; ``where``: the run's place in words (its plugin's
        ``pending_location``)."""
        return (
            f"{self.path.name}: {self.tracker} run {self.run_id} at {where}: {self.algorithm} / {self.task} "
            f"seed {self.seed} score {self.score!r} (saved {self.written_at}, {self.cause})"
        )


def read_pending(path: str | os.PathLike[str]) -> PendingScore:
    """Read and check one pending file; an InputError names the file and what is wrong."""
    from .final_score import check_final_score

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise InputError(f"{p}: not a readable pending score file ({str(err)[:200] or 'nested too deeply'})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f'{p}: not a pending score file (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise InputError(f"{p}: pending file version {data.get('version')!r}; this version reads {VERSION}")
    tracker, run = data.get("tracker"), data.get("run")
    if not isinstance(tracker, str) or not _TRACKER_NAME.match(tracker) or not isinstance(run, dict):
        raise InputError(f"{p}: the pending file does not name a tracker and a run")
    if not isinstance(run.get("run_id"), str):
        raise InputError(f"{p}: the pending file does not name a run id")
    try:
        checked = check_final_score(
            data.get("score"), algorithm=data.get("algorithm"), task=data.get("task"), seed=data.get("seed")
        )
    except ValueError as err:
        raise InputError(f"{p}: {err}") from None
    return PendingScore(
        p,
        tracker,
        dict(run),
        checked.score,
        checked.algorithm,
        checked.task,
        checked.seed,
        str(data.get("written_at", "")),
        str(data.get("cause", "")),
        str(data.get("error", "")),
    )


def list_pending(directory: str | os.PathLike[str] | None = None) -> tuple[list[PendingScore], list[str]]:
    """(pending scores, problems) of the ``*.json`` files directly in ``directory`` (pushed ones are not listed)."""
    folder = pending_dir(directory)
    if not folder.is_dir():
        raise InputError(f"no pending folder {folder}")
    found: list[PendingScore] = []
    problems: list[str] = []
    for p in sorted(folder.glob("*.json")):
        if p.name.startswith(".") or not p.is_file() or p.is_symlink():
            continue
        try:
            found.append(read_pending(p))
        except InputError as err:
            problems.append(str(err))
    return found, problems


def mark_pushed(item: PendingScore) -> Path:
    """Move a pushed file into ``<folder>/pushed/`` (a record; it is no longer pending)."""
    done = item.path.parent / PUSHED_DIR
    if done.is_symlink() or (done.exists() and not done.is_dir()):
        raise InputError(f"{done}: not a folder (a link or a file); the pushed file stays in {item.path.parent}")
    done.mkdir(exist_ok=True)
    target = done / item.path.name
    try:
        os.replace(item.path, target)
    except FileNotFoundError:
        if target.exists():  # another `pending --push` at the same time moved it first: pushed all the same
            return target
        raise
    return target


__all__ = [
    "DEFAULT_PENDING_DIR",
    "PENDING_DIR_ENV",
    "PendingScore",
    "PendingPublishError",
    "PendingScoreError",
    "PendingScoreWarning",
    "kept_message",
    "list_pending",
    "mark_pushed",
    "pending_dir",
    "read_pending",
    "report_failure",
    "save_pending",
]
