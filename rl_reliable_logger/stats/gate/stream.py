"""One look of the gate, the one decision function, and a replay of a whole stream on known differences.

:func:`look` is what every gate call computes (``looks/`` reads the ledger into its arguments and writes its
result back); :func:`replay` runs it over a stream of candidates whose paired differences are all known in
advance, look by look at the planned seeds, as a research loop would (the study and the tests use it, so they
measure the very function the gate ships).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import online
from .candidate import Plan, design, judge, next_seeds
from .estimate import adjusted_effect, repeated_interval
from .paired import paired_look
from .student import upper_boundaries

#: Outcomes that end a candidate.
FINAL = ("screened", "keep", "futile", "exhausted")


@dataclass(frozen=True)
class Tests:
    """The stream's ended tests (candidates that passed the screen), in order: each one's level, whether it was a
    SAFFRON candidate, whether it was kept."""

    levels: tuple[float, ...] = ()
    candidate: tuple[bool, ...] = ()
    rejected: tuple[bool, ...] = ()

    def add(self, level: float, candidate: bool, rejected: bool) -> Tests:
        return Tests((*self.levels, level), (*self.candidate, candidate), (*self.rejected, rejected))


@dataclass(frozen=True)
class Look:
    """One look at a candidate: its ``outcome`` (``candidate.OUTCOMES``), paired seeds, mean, sd and se of the
    differences, ``z``; the candidate's ``level`` (NaN until it passed the screen: not yet a test), this look's
    boundary ``bound`` (z scale), the ``interval`` of candidate - incumbent at it, the ``estimate`` (median-unbiased
    once ended, else the mean), whether it is a SAFFRON candidate, the paired seeds the next look needs (0 once
    ended), and the stream's charged error and budget after it."""

    outcome: str
    seeds: int
    mean: float
    sd: float
    se: float
    z: float
    level: float
    bound: float
    interval: tuple[float, float]
    estimate: float
    candidate: bool
    next_seeds: int
    charged: float
    budget: float

    @property
    def final(self) -> bool:
        return self.outcome in FINAL

    @property
    def tested(self) -> bool:
        """Whether the candidate is a test of the stream (passed the screen, or one look at ``max_seeds``)."""
        return math.isfinite(self.level)


def look(
    plan: Plan,
    rule: online.Rule,
    tests: Tests,
    earlier: Sequence[tuple[int, float]],
    differences: np.ndarray,
    min_effect: float,
    *,
    estimate: bool = True,
) -> Look:
    """Look at a candidate's ``differences`` (all its paired seeds so far, candidate - incumbent), given its
    ``earlier`` looks ((seeds, z) each) and the stream's ended ``tests``.

    ``estimate=False`` skips the median-unbiased estimate of an ended candidate (the mean is returned): the study
    computes it only where it reports it.
    """
    stats = paired_look(np.asarray(differences, dtype=float), min_effect)
    seeds = [n for n, _ in earlier] + [stats.seeds]
    zs = [z for _, z in earlier] + [stats.z]
    spent_now, room = _wealth(rule, tests)
    if stats.seeds > plan.max_seeds:
        raise ValueError(f"{stats.seeds} paired seeds is more than max_seeds ({plan.max_seeds})")
    if stats.seeds < plan.screen_seeds:
        return Look("too_few", stats.seeds, stats.mean, stats.sd, stats.se, stats.z, math.nan, math.inf,
                    (-math.inf, math.inf), stats.mean, False, plan.screen_seeds, spent_now, room)  # fmt: skip
    level = online.level(rule, tests.candidate, tests.rejected)
    verdict = judge(plan, seeds, zs, level, rule.candidacy_level)
    screened = verdict.outcome == "screened"
    times, lower = design(plan, seeds)
    value = stats.mean
    if estimate and verdict.outcome in ("keep", "futile", "exhausted"):
        upper = upper_boundaries(seeds, lower, level, plan.spending, plan.max_seeds)
        value = adjusted_effect(stats, min_effect, times, lower, upper.tolist())
    interval = repeated_interval(stats, verdict.bound)
    following = 0 if verdict.outcome in FINAL else next_seeds(plan, stats.seeds)
    if verdict.outcome in FINAL and not screened:
        after = tests.add(level, verdict.candidate, verdict.outcome == "keep")
        spent_now, room = _wealth(rule, after)
    return Look(
        verdict.outcome,
        stats.seeds,
        stats.mean,
        stats.sd,
        stats.se,
        stats.z,
        math.nan if screened else level,
        verdict.bound,
        interval,
        value,
        verdict.candidate,
        following,
        spent_now,
        room,
    )


def _wealth(rule: online.Rule, tests: Tests) -> tuple[float, float]:
    return online.charged(rule, tests.levels, tests.candidate), online.budget(rule, sum(tests.rejected))


@dataclass
class Replay:
    """A replayed stream: per candidate its last look, and the ended tests."""

    looks: list[Look] = field(default_factory=list)
    tests: Tests = field(default_factory=Tests)

    @property
    def kept(self) -> np.ndarray:
        return np.array([lk.outcome == "keep" for lk in self.looks], dtype=bool)

    @property
    def seeds(self) -> np.ndarray:
        return np.array([lk.seeds for lk in self.looks], dtype=int)


def replay(
    plan: Plan, rule: online.Rule, differences: np.ndarray, min_effect: float, *, estimate: bool = False
) -> Replay:
    """Run the gate over candidates whose paired differences (one row each, ``max_seeds`` columns, in seed order)
    are known: each candidate looked at on its first ``screen_seeds``, then at the seeds each look asks for."""
    rows = np.asarray(differences, dtype=float)
    if rows.ndim != 2 or rows.shape[1] < plan.max_seeds:
        raise ValueError(f"one row of at least max_seeds ({plan.max_seeds}) differences per candidate")
    out = Replay()
    for row in rows:
        earlier: list[tuple[int, float]] = []
        n = plan.screen_seeds
        while True:
            now = look(plan, rule, out.tests, earlier, row[:n], min_effect, estimate=estimate)
            if now.final:
                break
            earlier.append((now.seeds, now.z))
            n = now.next_seeds
        out.looks.append(now)
        if now.tested:
            out.tests = out.tests.add(now.level, now.candidate, now.outcome == "keep")
    return out
