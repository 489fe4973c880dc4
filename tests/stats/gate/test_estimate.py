"""The estimate after a candidate's test ended and the interval of a look: the plain mean when nothing was
selected, shrunk after a screen and an early keep, nearer the truth than the mean in a simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl_reliable_logger.stats.gate import candidate as gc
from rl_reliable_logger.stats.gate import estimate as ge
from rl_reliable_logger.stats.gate import online
from rl_reliable_logger.stats.gate import stream as gs
from rl_reliable_logger.stats.gate import student as st
from rl_reliable_logger.stats.gate.paired import paired_look


def test_one_look_at_every_seed_estimates_the_mean() -> None:
    look = paired_look(np.array([0.3, 1.1, 0.8, 0.2, 0.9, 1.4, 0.7, 0.5, 1.0, 0.6]), 0.2)
    upper = st.upper_boundaries([10], [-math.inf], 0.01, "obf", 10)
    assert ge.adjusted_effect(look, 0.2, (1.0,), (-math.inf,), tuple(upper)) == pytest.approx(look.mean, abs=1e-5)


def test_no_spread_estimates_the_difference_itself() -> None:
    look = paired_look(np.full(6, 0.5), 0.2)
    assert ge.adjusted_effect(look, 0.2, (0.3, 0.6), (0.75, 0.5), (math.inf, 4.0)) == 0.5


def test_the_interval_is_the_keep_test_and_unbounded_at_the_screen() -> None:
    look = paired_look(np.array([0.9, 1.4, 0.7, 1.2, 1.1, 1.3]), 0.25)
    low, high = ge.repeated_interval(look, 2.0)
    assert low > 0.25 and (low + high) / 2 == pytest.approx(look.mean)
    assert (low > 0.25) == (look.z >= 2.0)
    low, _ = ge.repeated_interval(look, look.z)  # at the boundary the lower end is the margin
    assert low == pytest.approx(0.25)
    assert ge.repeated_interval(look, math.inf) == (-math.inf, math.inf)


def test_a_kept_candidates_estimate_leans_upward_less_than_its_mean() -> None:
    """Candidates with a true effect of 1.2 (seed sd 1) through the screen and the looks: the mean at the look a
    kept one stopped at leans upward by about 0.3; the estimate by well under that."""
    plan, rule, truth = gc.Plan(), online.Rule(), 1.2
    rng = np.random.default_rng(3)
    est, mean = [], []
    for _ in range(250):
        d = rng.normal(truth, 1.0, 10)
        earlier: list[tuple[int, float]] = []
        n = plan.screen_seeds
        while True:
            now = gs.look(plan, rule, gs.Tests(), earlier, d[:n], 0.2)
            if now.final:
                break
            earlier.append((now.seeds, now.z))
            n = now.next_seeds
        if now.outcome == "keep":
            est.append(now.estimate)
            mean.append(now.mean)
    lean, naive = np.mean(est) - truth, np.mean(mean) - truth
    assert len(est) > 60 and naive > 0.2
    assert abs(lean) < 0.7 * naive
