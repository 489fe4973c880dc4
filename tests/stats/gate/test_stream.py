"""The gate over whole streams: the false-discovery rate held over short streams with a fixed seed (a procedure
without stream control fails the same check), the estimate after selection, and the edge cases of a look."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl_reliable_logger.stats.gate import candidate as gc
from rl_reliable_logger.stats.gate import online
from rl_reliable_logger.stats.gate import stream as gs
from rl_reliable_logger.stats.gate.paired import paired_look

PLAN = gc.Plan()
RULE = online.Rule()
MARGIN = 0.2


def _any_false_keep(differences: np.ndarray, control: bool) -> bool:
    """Whether a stream of candidates at the margin keeps any: the gate, or (``control=False``) the same
    sequential test of each candidate at level α with no stream control, the broken procedure the check must catch."""
    if control:
        return bool(gs.replay(PLAN, RULE, differences, MARGIN).kept.any())
    for row in differences:
        seeds, zs = [], []
        for n in gc.planned_seeds(PLAN):
            seeds.append(int(n))
            zs.append(paired_look(row[:n], MARGIN).z)
            outcome = gc.judge(PLAN, seeds, zs, RULE.alpha, RULE.alpha).outcome
            if outcome == "keep":
                return True
            if outcome != "run_more":
                break
    return False


def test_with_every_candidate_at_the_margin_few_streams_keep_anything() -> None:
    """300 streams of 40 candidates whose effect is exactly min_effect (the hardest null): P(any keep) <= α."""
    rng = np.random.default_rng(2026)
    streams = [rng.normal(MARGIN, 1.3, size=(40, PLAN.max_seeds)) for _ in range(300)]
    held = np.mean([_any_false_keep(d, control=True) for d in streams])
    broken = np.mean([_any_false_keep(d, control=False) for d in streams])
    tolerance = RULE.alpha + 3 * math.sqrt(RULE.alpha * (1 - RULE.alpha) / len(streams))
    assert held <= tolerance
    assert broken > 3 * tolerance  # the same check fails a gate without stream control


def test_the_false_discovery_rate_holds_with_real_improvements() -> None:
    rng = np.random.default_rng(7)
    fdp, power = [], []
    for _ in range(120):
        real = rng.random(30) < 0.3
        effects = np.where(real, MARGIN + 1.5, MARGIN)
        out = gs.replay(PLAN, RULE, rng.normal(effects[:, None], 1.0, size=(30, PLAN.max_seeds)), MARGIN)
        kept = out.kept
        fdp.append((kept & ~real).sum() / max(kept.sum(), 1))
        power.append(kept[real].mean() if real.any() else np.nan)
    assert np.mean(fdp) <= RULE.alpha + 3 * np.std(fdp) / math.sqrt(len(fdp))
    assert np.nanmean(power) > 0.5


def _run(d: np.ndarray, tests: gs.Tests | None = None) -> gs.Look:
    earlier: list[tuple[int, float]] = []
    n = PLAN.screen_seeds
    while True:
        now = gs.look(PLAN, RULE, tests or gs.Tests(), earlier, d[:n], MARGIN)
        if now.final:
            return now
        earlier.append((now.seeds, now.z))
        n = now.next_seeds


def test_edge_cases_of_a_look() -> None:
    ties = _run(np.zeros(10))
    assert ties.outcome == "screened" and not ties.tested and ties.seeds == 3
    sure = _run(np.full(10, 0.5))  # no spread, above the margin on every seed
    assert sure.outcome == "keep" and sure.seeds == 6 and sure.interval == (0.5, 0.5)
    one = gs.look(PLAN, RULE, gs.Tests(), [], np.array([3.0]), MARGIN)
    assert one.outcome == "too_few" and one.next_seeds == 3 and not one.final
    flat = _run(np.array([1.0, 1.2, 0.9, 0.25, 0.3, 0.1, 0.4, 0.2, 0.3, 0.35]))
    assert flat.outcome in ("futile", "exhausted") and flat.level > 0
    end = gs.look(PLAN, RULE, gs.Tests(), [(3, 1.0), (6, 0.9), (8, 0.8)], np.linspace(-1, 1.6, 10), MARGIN)
    assert end.outcome == "exhausted" and end.next_seeds == 0
    with pytest.raises(ValueError, match="more than max_seeds"):
        gs.look(PLAN, RULE, gs.Tests(), [], np.ones(11), MARGIN)


def test_a_keep_reports_its_level_interval_and_a_shrunken_estimate() -> None:
    d = np.array([2.1, 1.7, 2.6, 1.9, 2.4, 2.2, 1.8, 2.5, 2.0, 2.3])
    kept = _run(d)
    assert kept.outcome == "keep"
    assert kept.level == pytest.approx(online.level(RULE, [], []))
    assert kept.interval[0] > MARGIN  # kept exactly when the interval's lower end is above the margin
    assert kept.estimate < kept.mean  # the screen and the early stop are paid for
    assert kept.charged == 0.0 and kept.budget == pytest.approx(RULE.alpha)  # a keep is a candidate; earns α


def test_an_ended_test_charges_the_stream() -> None:
    d = np.array([1.0, 1.2, 0.9, -0.5, -0.3, -0.4, 0.4, 0.2, 0.3, 0.35])
    ended = _run(d)
    assert ended.outcome == "futile" and ended.seeds == 6 and not ended.candidate
    assert ended.charged == pytest.approx(ended.level / (1 - RULE.lam))
    replayed = gs.replay(PLAN, RULE, d[None, :], MARGIN)
    assert replayed.tests.levels == (pytest.approx(ended.level),) and replayed.looks[0].outcome == ended.outcome
    with pytest.raises(ValueError, match="max_seeds"):
        gs.replay(PLAN, RULE, d[None, :5], MARGIN)
