"""The one-line end-of-training call: record a run's final score in a documented convention.

``log_final_score(score, algorithm=..., task=..., seed=...)`` writes, on the active tracker run, the
names of ``trackers.base.request.DEFAULT_KEYS`` (``rl_reliable_algorithm``, ``rl_reliable_task``,
``rl_reliable_seed``, ``rl_reliable_final_score``), where each tracker keeps such fields: its plugin's
source role's ``default_refs`` and its final-score role (``trackers/<name>/``) say exactly where. Each tracker's
command reads exactly these names by default, so no field flags are needed in the common case.

A score is never lost: when the tracker still fails after the retry policy (``retry_for`` seconds,
default 300), the score is saved to a JSON file in the pending folder (``pending_dir``, else
``RL_RELIABLE_PENDING_DIR``, else ``./rl-reliable-pending``), a warning names it (once), and
``rl-reliable pending DIR --push`` sends it later (see ``trackers/base/pending.py``).
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import TrackerError
from . import registry
from .base.final_score import check_final_score
from .base.roles import FinalScoreRole


def log_final_score(
    score: float,
    *,
    algorithm: str,
    task: str,
    seed: int | str,
    run: Any = None,
    retry_for: float | None = None,
    pending_dir: str | os.PathLike[str] | None = None,
    on_failure: str = "warn",
) -> str:
    """Record the final score of this run on the active run of a registered tracker.

    Args:
        score: the run's final evaluation score (e.g. mean return of the last evaluation).
        algorithm, task, seed: how the run is grouped in the analysis.
        run: a run of one of the trackers (its client's Run object, or a run id), or None for the active
            run of whichever tracker has one (each final-score role's ``has_active_run``, in its ``detect_order``).
        retry_for: seconds of retries of transient tracker failures (default 300).
        pending_dir: where a score the tracker did not take is saved (default below).
        on_failure: what happens after the score was saved to a pending file: ``"warn"`` (default:
            a :class:`~rl_reliable_logger.trackers.base.pending.PendingScoreWarning`, the call
            returns, so the training script ends normally and its run is not marked failed because
            of the score) or ``"raise"`` (a ``PendingScoreError``, a TrackerError with ``.path``).

    Raises:
        ValueError: the score is a boolean, text or not finite, or a field is empty (nothing written).
        TrackerError: no run to write to; or ``on_failure="raise"`` and the write failed.

    Returns:
        The name of the tracker written to (or whose score was saved to a pending file).

    Example:
        >>> log_final_score(412.0, algorithm="PPO", task="CartPole-v1", seed=3)  # doctest: +SKIP
    """
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    if on_failure not in ("warn", "raise"):
        raise ValueError(f"log_final_score: on_failure must be 'warn' or 'raise', got {on_failure!r}")
    name, role = _detect(run)
    kwargs: dict[str, Any] = {"run": run, "retry_for": retry_for, "pending_dir": pending_dir, "on_failure": on_failure}
    role.write(checked.score, checked.algorithm, checked.task, checked.seed, **kwargs)
    return name


def _detect(run: Any) -> tuple[str, FinalScoreRole]:
    """The tracker of ``run``, else of the active run, and its final-score role (asked in each ``detect_order``)."""
    ordered = sorted(
        ((p.name, p.final_score) for p in registry.final_score_writers() if p.final_score is not None),
        key=lambda named: named[1].detect_order,
    )
    for name, role in ordered:
        if run is not None and role.owns_run(run):
            return name, role
        if run is None and role.has_active_run():
            return name, role
    raise TrackerError(
        "log_final_score: no active tracker run. Call it inside "
        + " or ".join(role.start_hint for _, role in ordered)
        + ", or pass run=<"
        + " | ".join(role.run_hint for _, role in ordered)
        + ">."
    )
