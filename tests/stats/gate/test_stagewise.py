"""The stagewise-ordered tail of the canonical model: the distribution function it claims to be (uniform at the
true drift), increasing in the drift, exact at one look, and integrated finely enough."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from rl_reliable_logger.stats import sequential as sq
from rl_reliable_logger.stats.gate import stagewise as gs

TIMES = (0.3, 0.6, 0.8, 1.0)
LOWER = (0.75, 0.5, 0.5, -math.inf)
UPPER = (math.inf, 3.2, 2.6, 2.1)


def _outcomes(drift: float, n: int, seed: int) -> list[tuple[int, float]]:
    """(look, z) where canonical paths with ``drift`` stop: first upper crossing, a fall below a lower boundary, or
    the last look; paths failing the screen are left out (the tail is given the screen)."""
    t = np.asarray(TIMES)
    steps = np.diff(np.concatenate([[0.0], t]))
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((n, t.size)) * np.sqrt(steps) + drift * steps).cumsum(axis=1) / np.sqrt(t)
    out = []
    for row in z[z[:, 0] >= LOWER[0]]:
        k = 1
        while k < t.size - 1 and LOWER[k] < row[k] < UPPER[k]:
            k += 1
        out.append((k, float(row[k])))
    return out


@pytest.mark.parametrize("drift", [0.0, 1.5])
def test_the_tail_is_uniform_at_the_true_drift(drift: float) -> None:
    """P_θ(an outcome at least as extreme as the one observed) ~ U(0, 1) when θ is the truth: what makes the
    estimate median-unbiased."""
    values = np.array([gs.tail(TIMES, LOWER, UPPER, k, z, drift) for k, z in _outcomes(drift, 2500, seed=6)])
    assert abs(values.mean() - 0.5) < 3 * math.sqrt(1 / 12 / values.size)
    for q in (0.1, 0.25, 0.75):
        assert abs((values <= q).mean() - q) < 3 * math.sqrt(q * (1 - q) / values.size)


def test_the_tail_grows_with_the_drift_and_with_lower_outcomes() -> None:
    tails = [gs.tail(TIMES, LOWER, UPPER, 2, 2.0, d) for d in (-1.0, 0.0, 1.0, 2.0, 4.0)]
    assert np.all(np.diff(tails) > 0)
    assert gs.tail(TIMES, LOWER, UPPER, 2, 1.0) > gs.tail(TIMES, LOWER, UPPER, 2, 2.0)
    # a keep at an earlier look is more extreme than any outcome at a later one
    assert gs.tail(TIMES, LOWER, UPPER, 1, 3.3) < gs.tail(TIMES, LOWER, UPPER, 2, 9.0) + 1e-12


def test_the_screen_look_and_a_single_look_are_normal_tails() -> None:
    assert gs.tail(TIMES, LOWER, UPPER, 0, 1.0) == pytest.approx(special.ndtr(-1.0) / special.ndtr(-0.75))
    assert gs.tail([1.0], [-math.inf], [2.3], 0, 1.0, drift=0.4) == pytest.approx(float(special.ndtr(-0.6)))


def test_the_grid_agrees_with_the_watch_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    coarse = [gs.tail(TIMES, LOWER, UPPER, k, 1.7, 0.8) for k in (1, 2, 3)]
    monkeypatch.setattr(gs, "GRID", sq.GRID)
    fine = [gs.tail(TIMES, LOWER, UPPER, k, 1.7, 0.8) for k in (1, 2, 3)]
    assert coarse == pytest.approx(fine, abs=1e-7)


def test_bad_designs_are_refused() -> None:
    with pytest.raises(ValueError, match="increase strictly"):
        gs.tail([0.5, 0.5], [0.0, 0.0], [math.inf, 2.0], 1, 1.0)
    with pytest.raises(ValueError, match="one lower and one upper boundary per look"):
        gs.tail([0.5, 1.0], [0.0], [math.inf, 2.0], 1, 1.0)
    with pytest.raises(ValueError, match="look must be"):
        gs.tail([0.5, 1.0], [0.0, 0.0], [math.inf, 2.0], 2, 1.0)
