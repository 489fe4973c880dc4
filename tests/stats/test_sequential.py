"""Group-sequential boundaries: the error spent per look, checked against a Monte-Carlo of the canonical process."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import sequential as sq


@pytest.mark.parametrize("spending", sq.SPENDING)
def test_spending_sums_to_alpha_and_obf_boundaries_decrease(spending: str) -> None:
    times = np.arange(1, 5) / 4
    bounds = sq.boundaries(times, 0.05, spending)
    crossing = sq.crossing_probabilities(times, bounds)
    assert crossing.sum() == pytest.approx(0.05, abs=1e-6)
    assert np.allclose(crossing, np.diff(np.concatenate([[0.0], sq.spent(times, 0.05, spending)])), atol=1e-6)
    assert float(sq.spent(1.0, 0.05, spending)) == pytest.approx(0.05)
    if spending == "obf":
        assert (np.diff(bounds) < 0).all() and bounds[0] > 3.5 and 1.96 < bounds[-1] < 2.1
    # a single look is the fixed two-sided test
    assert sq.boundaries([1.0], 0.05, spending)[0] == pytest.approx(1.959964, abs=1e-5)


def test_boundaries_hold_the_error_in_a_monte_carlo_of_unequal_looks() -> None:
    times = np.array([0.3, 0.55, 0.8, 1.0])
    bounds = sq.boundaries(times, 0.05)
    rng = np.random.default_rng(1)
    paths = (rng.standard_normal((200_000, 4)) * np.sqrt(np.diff(np.concatenate([[0.0], times])))).cumsum(axis=1)
    rejected = (np.abs(paths) / np.sqrt(times) >= bounds).any(axis=1).mean()
    assert abs(rejected - 0.05) < 3 * np.sqrt(0.05 * 0.95 / 200_000)


def test_times_must_increase_and_spending_be_known() -> None:
    with pytest.raises(ValueError, match="increase strictly"):
        sq.boundaries([0.5, 0.5], 0.05)
    with pytest.raises(ValueError, match="spending"):
        sq.spent(0.5, 0.05, "linear")


def test_repeated_interval_widens_with_the_bound_and_decides_by_sign() -> None:
    cells = [bs.Cells.from_array(np.random.default_rng(s).normal(size=(5, 3))) for s in (0, 1)]
    dist = np.random.default_rng(2).normal(1.0, 0.2, size=2000)
    lows, highs = zip(*(sq.repeated_interval(dist, np.array(1.0), c, cells) for c in (2.0, 3.0, 4.0)))
    assert np.all(np.diff(lows) < 0) and np.all(np.diff(highs) > 0)
    # the small-sample expansion: wider than the plain normal interval at the same critical value
    assert highs[0] - 1.0 > 2.0 * dist.std(ddof=1)
    assert list(sq.decide(np.array([0.1, -2, -1]), np.array([1, -0.1, 1]))) == ["x>y", "y>x", "undecided"]
    assert list(sq.decide(np.array([0.1]), np.array([1.0]), lower_is_better=True)) == ["y>x"]
    assert list(sq.look_targets(10, 4)) == [3, 5, 8, 10]
