"""How a run's final score is read: the score key (a fallback list) and the score rule over a history.

The final score and the learning curve are separate inputs. The score key (``summary.final_score``,
``metrics.eval_return``; several keys form a fallback list for mixed conventions: the first one a run
has is used) gives the final score. The score rule says how:

* ``last`` (default): the key's stored value (a summary value, a latest metric value);
* ``mean-last-N``: the mean of the key's last N logged values (its history);
* ``at-budget:STEP``: the key's last logged value at or before STEP (runs that stop short are named);
* ``max``: the best logged value (biased upwards: maximising over noisy evaluations).

The curve key is only the learning curve; it never replaces the final score.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...wording import kw, said

MAX_BIAS_WARNING = (
    "score rule 'max' takes each run's best logged evaluation: this is biased upwards (the maximum of "
    "noisy evaluations overstates what the final policy achieves, more so for runs evaluated more often); "
    "prefer 'last', 'mean-last-N' or 'at-budget:STEP' for headline numbers"
)
_RULE = re.compile(r"^(last|max|mean-last-(\d+)|at-budget[:= ]\s*(\S+))$")


@dataclass(frozen=True)
class ScoreRule:
    """A parsed score rule: ``kind`` is last, max, mean-last or at-budget."""

    kind: str
    n: int = 0
    budget: float = 0.0

    @property
    def needs_history(self) -> bool:
        return self.kind != "last"

    def __str__(self) -> str:
        if self.kind == "mean-last":
            return f"mean-last-{self.n}"
        if self.kind == "at-budget":
            return f"at-budget:{self.budget:g}"
        return self.kind

    def apply(self, points: Sequence[tuple[Any, Any]]) -> tuple[float | None, str | None]:
        """(score, problem) from a run's (step, value) points, in any order; a problem names why there is no score:
        no points, a step or value that is no number (a reported string, a NaN step), too few points.

        Example:
            >>> ScoreRule("max").apply([(2, 1.5), (1, 3.0)]), ScoreRule("max").apply([(1, "3.0")])
            ((3.0, None), (None, "non-numeric value '3.0' logged at step 1"))
        """
        if not points:
            return None, "no logged history"
        bad = next((why for why in map(_point_problem, points) if why is not None), None)
        if bad is not None:
            return None, bad
        points = sorted(points, key=lambda point: float(point[0]))
        if self.kind == "last":
            return points[-1][1], None
        if self.kind == "max":
            missing = next((s for s, v in points if not finite_number(v)), None)
            if missing is not None:  # max() would skip a NaN after a number, and return it before one
                return None, f"non-finite value logged at step {float(missing):g}"
            return max(v for _, v in points), None
        if self.kind == "mean-last":
            tail = [v for _, v in points[-self.n :]]
            if len(tail) < self.n:
                return None, f"only {len(tail)} logged value(s), fewer than the {self.n} of mean-last-{self.n}"
            return sum(tail) / len(tail), None
        before = [v for s, v in points if s <= self.budget]
        if points[-1][0] < self.budget:
            return None, f"stopped short of the budget step {self.budget:g}"
        if not before:
            return None, f"no value logged at or before step {self.budget:g}"
        return before[-1], None


def _number(value: Any) -> bool:
    """A real number (numpy's too), not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def finite_number(value: Any) -> bool:
    """A real number a float holds and that is finite (an integer of 400 digits is not)."""
    try:
        return _number(value) and math.isfinite(float(value))
    except OverflowError:
        return False


def _point_problem(point: tuple[Any, Any]) -> str | None:
    """Why one (step, value) point cannot be scored: a step that is no finite number (a NaN timestep orders the
    history arbitrarily), a value that is no number; a NaN value is left to the rule (``max`` names it)."""
    step, value = point
    if not finite_number(step):
        return f"a logged step is {step!r}, not a finite number"
    if not _number(value):
        return f"non-numeric value {value!r} logged at step {float(step):g}"
    if isinstance(value, numbers.Integral) and not finite_number(value):  # an integer no float holds
        return f"a value of {len(str(value)):,} digits, too large for a number, logged at step {float(step):g}"
    return None


def parse_score_rule(text: str | ScoreRule | None) -> ScoreRule:
    """``last``, ``max``, ``mean-last-N`` or ``at-budget:STEP`` (also ``at-budget STEP``).

    Example:
        >>> parse_score_rule("mean-last-5"), str(parse_score_rule("at-budget 1e6"))
        (ScoreRule(kind='mean-last', n=5, budget=0.0), 'at-budget:1e+06')
    """
    if isinstance(text, ScoreRule):
        return text
    if text is None:
        return ScoreRule("last")
    m = _RULE.match(str(text).strip())
    bad = ValueError(
        said(
            kw("score_rule="),
            f" {text!r} is not a score rule: use last, mean-last-N (e.g. mean-last-5), at-budget:STEP (e.g. "
            "at-budget:1000000) or max",
        )
    )
    if not m:
        raise bad
    if m.group(1) in ("last", "max"):
        return ScoreRule(m.group(1))
    if m.group(2) is not None:
        n = int(m.group(2))
        if n < 1:
            raise bad
        return ScoreRule("mean-last", n=n)
    try:
        budget = float(m.group(3))
    except ValueError:
        raise bad from None
    if not math.isfinite(budget):
        raise bad
    return ScoreRule("at-budget", budget=budget)


def score_refs(score: str | Sequence[str]) -> list[str]:
    """A score key or fallback list (``"summary.a,summary.b"`` or a list) as a list of references."""
    parts = [score] if isinstance(score, str) else list(score)
    out = [p.strip() for part in parts for p in str(part).split(",") if p.strip()]
    if not out:
        raise ValueError(said(kw("score="), " is empty: name the field with the final score"))
    return list(dict.fromkeys(out))


def history_name(ref: str) -> str:
    """The history name of a field reference: ``summary.eval/return`` -> ``eval/return``."""
    kind, sep, key = ref.partition(".")
    return key if sep and kind in ("summary", "metrics") else ref


#: In a score or curve key, the seed label of a run that logs several seeds (``metrics.eval/return_seed{seed}``).
SEED_PLACEHOLDER = "{seed}"


@functools.lru_cache(maxsize=256)
def seed_pattern(key: str) -> re.Pattern[str] | None:
    """The pattern of a key with a ``{seed}`` placeholder, or None without one.

    The placeholder matches a whole number written in ASCII digits, kept as written (``0``, ``17``, ``007``: the
    label is text, so ``007`` and ``7`` are two seeds), so ``eval/return_seed{seed}`` never takes
    ``eval/return_seed_mean`` or ``eval/return_seed0_std`` for a seed.

    Example:
        >>> pattern = seed_pattern("eval/return_seed{seed}")
        >>> pattern.fullmatch("eval/return_seed17").group("seed"), pattern.fullmatch("eval/return_seed0_std")
        ('17', None)
    """
    if SEED_PLACEHOLDER not in key:
        return None
    first, *rest = key.split(SEED_PLACEHOLDER)
    # the first placeholder captures the label, any further one must repeat it
    groups = ["(?P<seed>[0-9]+)"] + ["(?P=seed)"] * (len(rest) - 1)
    return re.compile(re.escape(first) + "".join(group + re.escape(part) for group, part in zip(groups, rest)))


def with_seed(key: str, label: str | None) -> str:
    """``key`` with its ``{seed}`` placeholder filled by ``label`` (``key`` itself when ``label`` is None)."""
    return key if label is None else key.replace(SEED_PLACEHOLDER, label)


def key_wanted(name: str, keys: Collection[str]) -> bool:
    """True when ``name`` is one of ``keys`` or matches one of them that has a ``{seed}`` placeholder."""
    return name in keys or any(pattern.fullmatch(name) for pattern in filter(None, map(seed_pattern, keys)))


def expand_keys(keys: Iterable[str], names: Iterable[str]) -> list[str]:
    """``keys`` with each ``{seed}`` key replaced by the ``names`` that match it (a run's logged keys).

    Example:
        >>> expand_keys(["loss", "ret_{seed}"], ["ret_1", "ret_0", "loss"])
        ['loss', 'ret_0', 'ret_1']
    """
    names = sorted(set(names))
    out: list[str] = []
    for key in keys:
        pattern = seed_pattern(key)
        out += [key] if pattern is None else [name for name in names if pattern.fullmatch(name)]
    return list(dict.fromkeys(out))


def final_value_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable final score (None if it is): booleans, text, non-finite."""
    if isinstance(value, bool) or (hasattr(value, "dtype") and str(getattr(value, "dtype", "")) == "bool"):
        return f"boolean final score {value!r}"
    if isinstance(value, str):
        return f"non-numeric final score {value[:40]!r}" + (f" ({len(value):,} characters)" if len(value) > 40 else "")
    try:
        number = float(value)
    except OverflowError:  # an integer no float holds (10**400)
        return f"final score {str(value)[:12]}... ({len(str(value)):,} digits), too large for a number"
    except (TypeError, ValueError):
        return f"non-numeric final score {value!r}"
    if not math.isfinite(number):
        return f"non-finite final score {number!r}"
    return None
