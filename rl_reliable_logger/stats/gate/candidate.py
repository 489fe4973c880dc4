"""One candidate's sequential paired test: the screen, the looks after it, and the verdict of a look (pure arrays).

The plan (:class:`Plan`): at most ``max_seeds`` paired seeds; the first look at ``screen_seeds`` or more is the
**screen** (``Z_1 < screen`` discards the candidate: not on course to beat the incumbent by the minimum effect,
before it becomes a test of the stream); a
candidate that passes is a test of the stream at the level the stream gives it (``online``), with ``looks`` more
looks planned up to ``max_seeds`` (:func:`planned_seeds`). At each later look k it is **kept** when
``Z_k >= b_k`` (``student.upper_boundaries`` at its level, given its screen: exact for normal differences), **discarded** when
``Z_k <= futility`` before the last seeds (futility, binding: the gate ends it) or when ``max_seeds`` are reached
without a keep, and otherwise needs more seeds. The looks need not fall where planned: the boundaries depend only
on the information fractions seen so far (error spending), so a look at any number of seeds keeps the level.

Whether the candidate is a *candidate* in SAFFRON's sense (its p-value at most λ) is the same test at level λ:
it crossed, at some look it took, the upper boundary of level λ (the boundaries decrease as the level grows, so a
keep at a level <= λ always is one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import sequential as sq
from .student import upper_boundaries

#: The verdict of a look: ``screened`` (discarded at the screen, not a test), ``keep``, ``futile`` (discarded:
#: fell below the futility boundary), ``exhausted`` (discarded: ``max_seeds`` without a keep), ``run_more``
#: (more seeds needed), ``too_few`` (fewer seeds than the screen needs: not a look yet).
OUTCOMES = ("screened", "keep", "futile", "exhausted", "run_more", "too_few")


@dataclass(frozen=True)
class Plan:
    """The design of every candidate of a stream: ``max_seeds`` paired seeds at most, the screen after
    ``screen_seeds`` with threshold ``screen`` (z scale), ``futility`` (z scale) at the looks after it, ``looks``
    planned looks after the screen, the error ``spending`` function over them (``obf`` or ``pocock``)."""

    max_seeds: int = 10
    screen_seeds: int = 3
    screen: float = 0.75
    futility: float = 0.5
    looks: int = 3
    spending: str = "obf"

    def __post_init__(self) -> None:
        if self.max_seeds < 3:
            raise ValueError(f"max_seeds must be at least 3, got {self.max_seeds}")
        if not 3 <= self.screen_seeds <= self.max_seeds:
            raise ValueError(f"screen_seeds must be in 3..max_seeds ({self.max_seeds}), got {self.screen_seeds}")
        if self.looks < 1:
            raise ValueError(f"looks must be at least 1, got {self.looks}")
        if self.spending not in sq.SPENDING:
            raise ValueError(f"spending must be one of {', '.join(sq.SPENDING)}, got {self.spending!r}")
        if not (math.isfinite(self.screen) and math.isfinite(self.futility)):
            raise ValueError("screen and futility must be finite z values")


def planned_seeds(plan: Plan) -> np.ndarray:
    """Paired seeds at each planned look: the screen's, then ``looks`` steps up to ``max_seeds`` (rounded up).

    >>> planned_seeds(Plan(max_seeds=10, screen_seeds=3, looks=3)).tolist()
    [3, 6, 8, 10]
    """
    n1, n = plan.screen_seeds, plan.max_seeds
    later = [n1 + -(-j * (n - n1) // plan.looks) for j in range(1, plan.looks + 1)]
    return np.unique(np.array([n1, *later]))


def next_seeds(plan: Plan, seeds: int) -> int:
    """Paired seeds the next look should have, after a look at ``seeds``: the next planned count above it."""
    ahead = [int(n) for n in planned_seeds(plan) if n > seeds]
    return ahead[0] if ahead else plan.max_seeds


def design(plan: Plan, seeds: Sequence[int]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Information fractions and lower boundaries (z scale) of looks at ``seeds``: the screen at the first (unless
    it has ``max_seeds`` already: one fixed-sample look, no screen), futility at the later ones before the last."""
    times = tuple(int(n) / plan.max_seeds for n in seeds)
    if times[0] >= 1.0:
        return (1.0,), (-math.inf,)
    lower = tuple([plan.screen] + [plan.futility if t < 1.0 else -math.inf for t in times[1:]])
    return times, lower


@dataclass(frozen=True)
class Verdict:
    """A look's outcome (one of :data:`OUTCOMES`), the upper boundary of this look at the candidate's level and
    at λ (z scale; inf at the screen look), and whether the candidate is a SAFFRON candidate so far."""

    outcome: str
    bound: float
    candidacy_bound: float
    candidate: bool


def judge(plan: Plan, seeds: Sequence[int], z: Sequence[float], level: float, candidacy_level: float) -> Verdict:
    """The verdict of the last of a candidate's looks (``seeds`` and ``z`` per look so far, increasing seeds).

    ``level`` is the candidate's level from the stream (used once it passed the screen); ``candidacy_level``
    is SAFFRON's λ (``level <= candidacy_level``).
    """
    if len(seeds) != len(z) or not len(seeds):
        raise ValueError("one z per look, at least one look")
    if any(b <= a for a, b in zip(seeds, seeds[1:])):
        raise ValueError(f"each look needs more seeds than the last, got {list(seeds)}")
    if level > candidacy_level:
        raise ValueError(f"the level ({level}) must not exceed the candidacy level ({candidacy_level})")
    if seeds[0] < plan.screen_seeds:
        return Verdict("too_few", math.inf, math.inf, False)
    times, lower = design(plan, seeds)
    single = times == (1.0,)
    if not single and len(times) == 1 and z[0] < plan.screen:
        return Verdict("screened", math.inf, math.inf, False)
    n = [int(v) for v in seeds]
    bounds = upper_boundaries(n, lower, level, plan.spending, plan.max_seeds) if level > 0 else np.full(len(n), np.inf)
    lam = upper_boundaries(n, lower, candidacy_level, plan.spending, plan.max_seeds)
    candidate = any(_crosses(float(v), float(b)) for v, b in zip(z, lam))
    k = len(times) - 1
    now = float(z[k])
    if _crosses(now, float(bounds[k])):
        outcome = "keep"
    elif times[k] >= 1.0:
        outcome = "exhausted"
    elif k > 0 and now <= lower[k]:
        outcome = "futile"
    else:
        outcome = "run_more"
    return Verdict(outcome, float(bounds[k]), float(lam[k]), candidate)


def _crosses(z: float, bound: float) -> bool:
    """Whether ``z`` is at or above a boundary a look can cross (an infinite one, the screen's, never is)."""
    return math.isfinite(bound) and z >= bound
