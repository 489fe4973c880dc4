"""One seed trained more than once (a rerun): the one declaration of ``reruns=`` (``--reruns``) and its rule.

Two runs with the same algorithm, task, seed and configuration are a rerun (Stable-Baselines3's ``PPO_1`` and
``PPO_2`` of one seed, a job restarted by a scheduler) or two configurations not told apart. Which one to keep
cannot be guessed: a user reruns a seed because the first run was broken, so keeping the first would analyse
the broken run, and keeping either pools a configuration silently. The intake (:mod:`.records`) therefore refuses
them by default, naming every run, and keeps one only when told:

* ``refuse`` (default): an error naming the runs and the choices (``--drop-invalid`` does not pick one);
* ``latest``: the run that started last is kept, the others left out and listed;
* ``first``: the run that started first is kept.

"Started" is each Source's :attr:`~.records.RunRecord.started` (a tracker's start time; for a log folder the
time its writer recorded, else its data file's modification time). Runs of one seed whose start times are
unknown or equal are refused even with ``latest`` / ``first``: which came last cannot be told.

Example:
    >>> check_reruns("latest")
    'latest'
    >>> RERUNS_HELP.split(";")[0]
    'what to do with one seed trained more than once (the same algorithm, task, seed and configuration in two runs)'
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

from ...errors import InputError
from ...wording import Keyword, Message, kw, said

#: The choices, each with what it does (the words of ``--help`` and of the messages).
RERUN_CHOICES = {
    "refuse": "an error naming the runs",
    "latest": "keep the run that started last",
    "first": "keep the run that started first",
}
#: The safe default: nothing is chosen for the user.
DEFAULT_RERUNS = "refuse"
#: The keyword (``Source.table(reruns=...)``, ``SourceRequest.reruns``) and its flag.
RERUNS_KEYWORD = "reruns="
RERUNS_FLAG = "--reruns"
RERUNS_HELP = (
    "what to do with one seed trained more than once (the same algorithm, task, seed and configuration in two runs); "
    + "; ".join(f"{name}: {words}" for name, words in RERUN_CHOICES.items())
    + f" (default: {DEFAULT_RERUNS}, since a seed is usually rerun because its first run was broken; the runs left "
    "out are listed)"
)


def check_reruns(value: object) -> str:
    """``value`` if it is one of :data:`RERUN_CHOICES`, else an InputError naming them."""
    if value not in RERUN_CHOICES:
        raise InputError(said(kw(RERUNS_KEYWORD), f" is one of {', '.join(map(repr, RERUN_CHOICES))}, got {value!r}"))
    return str(value)


def rerun_keyword(choice: str) -> Keyword:
    """``reruns='latest'`` as messages write it (the command line reads ``--reruns latest``)."""
    return kw(f"reruns={choice!r}")


def choice_hint() -> Message:
    """How a refused rerun is resolved: the two ways to keep one run named, the default said."""
    return said(
        "pass ",
        rerun_keyword("latest"),
        " to keep the run that started last or ",
        rerun_keyword("first"),
        " the one that started first (by default, ",
        rerun_keyword(DEFAULT_RERUNS),
        ", a seed in two runs is refused)",
    )


def pick_rerun(started: Sequence[float | None], rule: str) -> tuple[int | None, str | None]:
    """``(index of the run to keep, None)`` among the runs of one seed (their start times, in the source's order),
    or ``(None, why)`` when none is kept: ``refuse`` (why None: the default needs no reason), or start times
    unknown or equal (why says so).

    Example:
        >>> pick_rerun([100.0, 250.0], "latest"), pick_rerun([100.0, 250.0], "first"), pick_rerun([1.0, None], "latest")
        ((1, None), (0, None), (None, 'which run started last cannot be told: 1 of them records no start time'))
    """
    if rule == DEFAULT_RERUNS:
        return None, None
    unknown = sum(time is None for time in started)
    if unknown:
        return None, f"which run started last cannot be told: {unknown} of them records no start time"
    times = [float(time) for time in started if time is not None]
    if len(set(times)) < len(times):
        return None, "which run started last cannot be told: two of them record the same start time"
    best = max(times) if rule == "latest" else min(times)
    return times.index(best), None


def start_seconds(stamp: object) -> float | None:
    """A start time as a tracker stores it, in seconds since the epoch: a number of seconds, or an ISO 8601 text
    (W&B's ``2026-11-22T00:31:11.65369Z``; without a zone, UTC); None for anything else.

    Example:
        >>> start_seconds("1970-01-01T00:01:40Z"), start_seconds(100), start_seconds("soon")
        (100.0, 100.0, None)
    """
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return float(stamp) if math.isfinite(stamp) else None
    if not isinstance(stamp, str) or not stamp.strip():
        return None
    text = stamp.strip()
    text = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    head, dot, tail = text.partition(".")  # Python 3.10 reads at most 6 digits of a fraction
    if dot:
        digits = len(tail) - len(tail.lstrip("0123456789"))
        text = f"{head}.{tail[:digits][:6]:0<6}{tail[digits:]}"
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()
