"""The exact null law of the screened sequential t statistics: its one-step law against a simulation, the level
of its boundaries in a simulation of t statistics (normal differences, any variance), each look spending its
share, nesting across levels, and held below the margin."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from rl_reliable_logger.stats import sequential as sq
from rl_reliable_logger.stats.gate import student as st

SEEDS = [3, 4, 6, 8, 10]
LOWER = [0.75, 0.5, 0.5, 0.5, -math.inf]


def _rho(y: np.ndarray) -> np.ndarray:
    return y.sum(axis=1) / np.sqrt(y.shape[1] * (y**2).sum(axis=1))


@pytest.mark.parametrize(("seeds", "added"), [(3, 1), (3, 3), (6, 4)])
def test_one_step_of_the_chain_matches_a_simulation(seeds: int, added: int) -> None:
    rng = np.random.default_rng(1)
    y = rng.standard_normal((400_000, seeds + added)) * 3.7  # any variance
    before, after = _rho(y[:, :seeds]), _rho(y)
    edges = np.linspace(0.2, 0.6, 201)
    t = math.sqrt(seeds - 1) * edges / np.sqrt(1 - edges**2)
    mass = np.diff(special.stdtr(seeds - 1, t))  # ρ of the first look in [0.2, 0.6], cell by cell
    for c in (-0.4, 0.3, 0.6):
        exact = float(mass @ st.step_cdf((edges[1:] + edges[:-1]) / 2, np.array([c]), seeds, added)[:, 0])
        observed = float(((before >= 0.2) & (before <= 0.6) & (after <= c)).mean())
        assert abs(observed - exact) < 4 * math.sqrt(exact * (1 - exact) / y.shape[0]) + 2e-4


def _t_looks(d: np.ndarray, seeds: list[int], margin: float = 0.0) -> np.ndarray:
    out = []
    for n in seeds:
        x = d[:, :n]
        t = (x.mean(axis=1) - margin) / (x.std(axis=1, ddof=1) / math.sqrt(n))
        out.append(-special.ndtri(special.stdtr(n - 1, -t)))  # paired.t_to_z, vectorised
    return np.array(out).T


def _level(z: np.ndarray, lower: list[float], upper: np.ndarray) -> tuple[float, int]:
    """P(crossing an upper boundary before falling below a lower one | the screen passed), and how many passed."""
    passed = z[:, 0] >= lower[0]
    alive, crossed = passed.copy(), np.zeros(z.shape[0], dtype=bool)
    for k in range(1, z.shape[1]):
        now = alive & (z[:, k] >= upper[k])
        crossed |= now
        alive &= ~now & (z[:, k] > lower[k])
    return float(crossed.sum() / passed.sum()), int(passed.sum())


@pytest.fixture(scope="module")
def normal_looks() -> np.ndarray:
    rng = np.random.default_rng(7)
    return _t_looks(rng.normal(0.0, 2.5, size=(600_000, 10)), SEEDS)


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_the_boundaries_hold_the_level_of_t_statistics_exactly(normal_looks: np.ndarray, alpha: float) -> None:
    upper = st.upper_boundaries(SEEDS, LOWER, alpha, "obf", 10)
    observed, passed = _level(normal_looks, LOWER, upper)
    assert abs(observed - alpha) < 3 * math.sqrt(alpha * (1 - alpha) / passed)


def test_each_look_spends_its_share_and_the_grid_is_fine_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    upper = st.upper_boundaries(SEEDS, LOWER, 0.01, "obf", 10)
    shares = st.crossing_probabilities(SEEDS, LOWER, upper, 10)
    u = (np.array(SEEDS[1:]) - 3) / 7
    spent = np.diff(np.concatenate([[0.0], sq.spent(u, 0.01, "obf")]))
    assert shares[0] == 0 and upper[0] == math.inf
    assert shares[1:] == pytest.approx(np.where(spent > st.TINY, spent, 0.0), abs=1e-9)
    # integrated on a grid 3 times finer, with twice the quadrature nodes: within 0.5% of the level
    monkeypatch.setattr(st, "GRID_CELLS", 3 * st.GRID_CELLS)
    monkeypatch.setattr(st, "NODES", 2 * st.NODES)
    assert st.crossing_probabilities(SEEDS, LOWER, upper, 10).sum() == pytest.approx(0.01, rel=5e-3)


@pytest.mark.parametrize("shift", [-0.1, -0.4])
def test_effects_below_the_margin_are_held_below_the_level(shift: float) -> None:
    rng = np.random.default_rng(8)
    z = _t_looks(rng.normal(shift, 1.0, size=(300_000, 10)), SEEDS)
    upper = st.upper_boundaries(SEEDS, LOWER, 0.05, "obf", 10)
    observed, passed = _level(z, LOWER, upper)
    assert observed < 0.05 - 3 * math.sqrt(0.05 / passed)


def test_higher_levels_give_lower_boundaries_so_the_tests_are_nested() -> None:
    bounds = np.array([st.upper_boundaries(SEEDS, LOWER, a, "obf", 10) for a in (0.001, 0.01, 0.05, 0.25)])
    spent = sq.spent((np.array(SEEDS[1:]) - 3) / 7, 0.001, "obf")
    looks = np.flatnonzero(np.diff(np.concatenate([[0.0], spent])) > st.TINY) + 1  # looks that spend at 0.001
    assert (np.diff(bounds[:, looks], axis=0) < 0).all()


def test_one_look_at_every_seed_is_the_fixed_sample_test() -> None:
    assert st.upper_boundaries([10], [-math.inf], 0.01, "obf", 10)[0] == pytest.approx(float(special.ndtri(0.99)))
    assert st.t_of_rho(st.rho_of_t(2.5, 7), 7) == pytest.approx(2.5)
    assert st.rho_of_t(math.inf, 5) == 1.0 and st.t_of_rho(-1.0, 5) == -math.inf


def test_bad_looks_are_refused() -> None:
    with pytest.raises(ValueError, match="increasing seeds in 3..10"):
        st.upper_boundaries([2, 5], [0.0, -math.inf], 0.05, "obf", 10)
    with pytest.raises(ValueError, match="increasing seeds"):
        st.upper_boundaries([4, 4], [0.0, -math.inf], 0.05, "obf", 10)
    with pytest.raises(ValueError, match="increasing seeds"):
        st.upper_boundaries([4, 12], [0.0, -math.inf], 0.05, "obf", 10)
    with pytest.raises(ValueError, match="alpha"):
        st.upper_boundaries([4, 10], [0.0, -math.inf], 0.0, "obf", 10)


def test_the_screen_is_paid_for_not_ignored(normal_looks: np.ndarray) -> None:
    """Boundaries computed as if there were no screen give a candidate that passed it far more than its level:
    the test must be the conditional one."""
    seeds, lower = [3, 10], [0.75, -math.inf]
    screened = st.upper_boundaries(seeds, lower, 0.05, "obf", 10)
    unscreened = st.upper_boundaries(seeds, [-math.inf, -math.inf], 0.05, "obf", 10)
    assert screened[1] > unscreened[1] + 0.4
    z = normal_looks[:, [0, 4]]  # the looks at 3 and 10 seeds
    held, passed = _level(z, lower, screened)
    ignored, _ = _level(z, lower, unscreened)
    assert abs(held - 0.05) < 3 * math.sqrt(0.05 * 0.95 / passed)
    assert ignored > 0.1
