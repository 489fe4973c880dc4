"""The checks of ``log_final_score``, shared by every tracker: the trackers only write.

One set of rules and one exception type (``ValueError``) whatever the tracker: a score must be a real,
finite number within float range (``True``, ``"12.5"``, NaN, ``10**400``, an array or tensor of more than one
element and an object whose ``.item`` is not a method are refused, nothing is written); algorithm and task are
non-empty printable strings (a newline or other control character is refused here, not only at analysis time);
a seed is a whole number (``3.0`` becomes ``3``, numpy scalars become Python ones) or a non-empty label.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from ...data.names import bad_characters


@dataclass(frozen=True)
class FinalScore:
    """A checked final score, ready for a tracker to write."""

    score: float
    algorithm: str
    task: str
    seed: int | str


def _seed(seed: Any) -> int | str:
    if hasattr(seed, "item") and callable(seed.item) and not isinstance(seed, (str, bytes)):
        try:
            seed = seed.item()  # numpy scalar -> Python
        except (ValueError, RuntimeError, TypeError):
            raise ValueError(f"log_final_score: the seed must be one whole number or a label, got {seed!r}") from None
    if isinstance(seed, bool):
        raise ValueError(f"log_final_score: the seed must be a whole number or a label, got {seed!r}")
    if isinstance(seed, numbers.Integral):
        return int(seed)
    if isinstance(seed, numbers.Real):
        if not math.isfinite(float(seed)) or not float(seed).is_integer():
            raise ValueError(f"log_final_score: the seed must be a whole number or a label, got {seed!r}")
        return int(float(seed))
    if isinstance(seed, str) and seed.strip():
        return _name("seed", seed)
    raise ValueError(f"log_final_score: the seed must be a whole number or a non-empty label, got {seed!r}")


def _scalar(score: Any) -> Any:
    """A numpy scalar, 0-d array or one-element tensor as a Python number; anything else as it is."""
    if isinstance(score, (str, bytes)) or not hasattr(score, "item"):
        return score
    size = getattr(score, "size", None)
    size = size() if callable(size) else size  # torch: .size() is a method, numpy: .size an int
    if isinstance(size, int) and size != 1 and not isinstance(size, bool):
        raise ValueError(
            f"log_final_score: the score must be one number, got a {type(score).__name__} of {size} elements; "
            "nothing was written. Pass the evaluation result itself (e.g. float(returns.mean()))."
        )
    if not callable(score.item):
        return score  # refused below as not a real number
    try:
        return score.item()
    except (ValueError, RuntimeError, TypeError) as err:  # e.g. torch: "a Tensor with 2 elements ..."
        raise ValueError(
            f"log_final_score: the score must be one number, got {type(score).__name__} whose .item() failed "
            f"({type(err).__name__}: {str(err)[:120]}); nothing was written. Pass float(...) of the result."
        ) from None


def _name(field: str, value: Any) -> str:
    """A non-empty, printable algorithm/task name: names with control characters are refused at analysis time,
    so they are refused here too, before anything is written."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"log_final_score: {field} must be a non-empty string, got {value!r}; nothing was written.")
    bad = bad_characters(value)
    if bad is not None:
        raise ValueError(
            f"log_final_score: {field} {value!r} holds a control character ({bad}); names must be printable text "
            "(no newline, tab, NUL or bidirectional override). Nothing was written."
        )
    return value


def check_final_score(score: Any, *, algorithm: Any, task: Any, seed: Any) -> FinalScore:
    """Validate what ``log_final_score`` was given; ``ValueError`` (nothing written) when it is not usable.

    Example:
        >>> check_final_score(12, algorithm="PPO", task="Hopper", seed=3.0)
        FinalScore(score=12.0, algorithm='PPO', task='Hopper', seed=3)
    """
    score = _scalar(score)
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise ValueError(
            f"log_final_score: the score must be a real number, got {type(score).__name__} {str(score)[:80]!r}; "
            "nothing was written. Pass the evaluation result itself (e.g. float(mean_return))."
        )
    try:
        value = float(score)
    except OverflowError:  # an int such as 10**400
        raise ValueError(
            f"log_final_score: the score {str(score)[:20]}... ({len(str(abs(score)))} digits) is beyond the range of a "
            "float (about 1.8e308); nothing was written. Check the evaluation."
        ) from None
    algorithm, task = _name("algorithm", algorithm), _name("task", task)
    if not math.isfinite(value):
        raise ValueError(
            f"log_final_score: refusing non-finite score {value!r} for {algorithm} / {task} seed {seed}; nothing "
            "was written and the run is unchanged. Fix the evaluation (e.g. a diverged return) and call again."
        )
    return FinalScore(value, algorithm, task, _seed(seed))
