"""The checks of ``log_final_score``, shared by every tracker: the trackers only write.

One set of rules and one exception type (``ValueError``) whatever the tracker: a score must be a real,
finite number (``True``, ``"12.5"`` and NaN are refused, nothing is written); algorithm and task are
non-empty strings; a seed is a whole number (``3.0`` becomes ``3``, numpy scalars become Python ones)
or a non-empty label.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FinalScore:
    """A checked final score, ready for a tracker to write."""

    score: float
    algorithm: str
    task: str
    seed: int | str


def _seed(seed: Any) -> int | str:
    if hasattr(seed, "item") and not isinstance(seed, (str, bytes)):
        seed = seed.item()  # numpy scalar -> Python
    if isinstance(seed, bool):
        raise ValueError(f"log_final_score: the seed must be a whole number or a label, got {seed!r}")
    if isinstance(seed, numbers.Integral):
        return int(seed)
    if isinstance(seed, numbers.Real):
        if not math.isfinite(float(seed)) or not float(seed).is_integer():
            raise ValueError(f"log_final_score: the seed must be a whole number or a label, got {seed!r}")
        return int(float(seed))
    if isinstance(seed, str) and seed.strip():
        return seed
    raise ValueError(f"log_final_score: the seed must be a whole number or a non-empty label, got {seed!r}")


def check_final_score(score: Any, *, algorithm: Any, task: Any, seed: Any) -> FinalScore:
    """Validate what ``log_final_score`` was given; ``ValueError`` (nothing written) when it is not usable.

    Example:
        >>> check_final_score(12, algorithm="PPO", task="Hopper", seed=3.0)
        FinalScore(score=12.0, algorithm='PPO', task='Hopper', seed=3)
    """
    if hasattr(score, "item") and not isinstance(score, (str, bytes)):
        score = score.item()
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise ValueError(
            f"log_final_score: the score must be a real number, got {type(score).__name__} {score!r}; nothing was "
            "written. Pass the evaluation result itself (e.g. float(mean_return))."
        )
    value = float(score)
    for name, v in (("algorithm", algorithm), ("task", task)):
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"log_final_score: {name} must be a non-empty string, got {v!r}; nothing was written.")
    if not math.isfinite(value):
        raise ValueError(
            f"log_final_score: refusing non-finite score {value!r} for {algorithm} / {task} seed {seed}; nothing "
            "was written and the run is unchanged. Fix the evaluation (e.g. a diverged return) and call again."
        )
    return FinalScore(value, algorithm, task, _seed(seed))
