"""End of training on W&B: the convention ``log_final_score`` writes onto a run.

Config ``rl_reliable_algorithm`` / ``rl_reliable_task`` / ``rl_reliable_seed``, tags
``algorithm:<A>`` / ``task:<T>`` and summary ``rl_reliable_final_score``; the W&B Source reads
exactly these by default.
"""

from __future__ import annotations

from typing import Any

from ...errors import TrackerError
from ..base.final_score import check_final_score
from ..base.records import DEFAULT_KEYS
from .client import _import_wandb


def write_final_score(score: float, algorithm: str, task: str, seed: Any, run: Any = None) -> None:
    """Write the end-of-training convention onto a W&B run (the active one by default).

    Config ``rl_reliable_algorithm`` / ``rl_reliable_task`` / ``rl_reliable_seed``, tags
    ``algorithm:<A>`` and ``task:<T>``, and summary ``rl_reliable_final_score``. The score goes to
    the summary only, never to history: at finish a pending history row overwrites a summary key of
    the same name, so a key that is also logged could lose the final score.

    Example:
        >>> write_final_score(1234.5, "PPO", "Hopper-v4", 3)   # inside wandb.init(...)  # doctest: +SKIP
    """
    wandb = _import_wandb()
    run = run if run is not None else wandb.run
    if run is None:
        raise TrackerError(
            "no active W&B run: call log_final_score after `wandb.init(...)` and before `run.finish()`, "
            "or pass run=<the wandb Run> (needed for runs made with reinit='create_new')"
        )
    checked = check_final_score(score, algorithm=algorithm, task=task, seed=seed)
    value, algorithm, task, seed = checked.score, checked.algorithm, checked.task, checked.seed
    key = DEFAULT_KEYS["score"]
    run.config.update(
        {DEFAULT_KEYS["algorithm"]: algorithm, DEFAULT_KEYS["task"]: task, DEFAULT_KEYS["seed"]: seed},
        allow_val_change=True,
    )
    run.summary[key] = value
    wanted = [f"algorithm:{algorithm}", f"task:{task}"]
    current = list(run.tags or ())
    new_tags = current + [t for t in wanted if t not in current and len(t) <= 64]
    if new_tags != current:
        run.tags = tuple(new_tags)
