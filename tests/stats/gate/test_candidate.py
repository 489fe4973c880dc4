"""A candidate's plan and the verdict of each of its looks: too few seeds, screened, run more, keep, futile,
exhausted, the one fixed look, and SAFFRON candidacy."""

from __future__ import annotations

import math

import pytest

from rl_reliable_logger.stats.gate import candidate as gc
from rl_reliable_logger.stats.gate import student as st

PLAN = gc.Plan(max_seeds=10, screen_seeds=3, screen=0.75, futility=0.5, looks=3)


def test_the_planned_looks_step_up_to_max_seeds() -> None:
    assert gc.planned_seeds(PLAN).tolist() == [3, 6, 8, 10]
    assert [gc.next_seeds(PLAN, n) for n in (3, 5, 6, 9)] == [6, 6, 8, 10]
    assert gc.planned_seeds(gc.Plan(max_seeds=4, screen_seeds=3, looks=3)).tolist() == [3, 4]


def test_each_outcome_of_a_look() -> None:
    judge = gc.judge
    assert judge(PLAN, [2], [5.0], 0.01, 0.25).outcome == "too_few"
    assert judge(PLAN, [3], [0.7], 0.01, 0.25).outcome == "screened"
    assert judge(PLAN, [3], [0.8], 0.01, 0.25).outcome == "run_more"
    assert judge(PLAN, [3, 6], [0.8, 0.4], 0.01, 0.25).outcome == "futile"
    assert judge(PLAN, [3, 6, 8, 10], [0.8, 1.0, 1.5, 2.0], 0.01, 0.25).outcome == "exhausted"
    bound = st.upper_boundaries([3, 6], [0.75, 0.5], 0.01, "obf", 10)[1]
    kept = judge(PLAN, [3, 6], [0.8, bound + 1e-9], 0.01, 0.25)
    assert kept.outcome == "keep" and kept.bound == pytest.approx(bound) and kept.candidate
    assert judge(PLAN, [3, 6], [0.8, bound - 1e-6], 0.01, 0.25).outcome == "run_more"


def test_the_last_look_has_no_futility_and_one_look_at_every_seed_has_no_screen() -> None:
    last = gc.judge(PLAN, [3, 10], [0.8, 0.1], 0.01, 0.25)
    assert last.outcome == "exhausted"
    assert gc.design(PLAN, [3, 6, 10]) == ((0.3, 0.6, 1.0), (0.75, 0.5, -math.inf))
    assert gc.judge(PLAN, [10], [2.5], 0.01, 0.25).outcome == "keep"  # z_0.99 = 2.33
    single = gc.judge(PLAN, [10], [2.0], 0.01, 0.25)
    assert single.outcome == "exhausted" and single.candidate  # above z_0.75 = 0.67: a SAFFRON candidate


def test_candidacy_is_the_same_test_at_lambda() -> None:
    lam = st.upper_boundaries([3, 6], [0.75, 0.5], 0.25, "obf", 10)[1]
    assert gc.judge(PLAN, [3, 6], [0.8, lam + 1e-6], 0.01, 0.25).candidate
    assert not gc.judge(PLAN, [3, 6], [0.8, lam - 1e-6], 0.01, 0.25).candidate
    assert not gc.judge(PLAN, [3], [0.8], 0.01, 0.25).candidate  # the screen look is no test yet


def test_bad_plans_and_looks_are_refused() -> None:
    with pytest.raises(ValueError, match="screen_seeds"):
        gc.Plan(screen_seeds=2)
    with pytest.raises(ValueError, match="max_seeds"):
        gc.Plan(max_seeds=2)
    with pytest.raises(ValueError, match="spending"):
        gc.Plan(spending="linear")
    with pytest.raises(ValueError, match="finite"):
        gc.Plan(screen=math.inf)
    with pytest.raises(ValueError, match="more seeds than the last"):
        gc.judge(PLAN, [3, 3], [1.0, 1.0], 0.01, 0.25)
    with pytest.raises(ValueError, match="must not exceed the candidacy level"):
        gc.judge(PLAN, [3], [1.0], 0.3, 0.25)
