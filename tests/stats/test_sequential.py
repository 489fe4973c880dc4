"""Group-sequential boundaries: the error spent per look, checked against a Monte-Carlo of the canonical process."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import registry
from rl_reliable_logger.stats import sequential as sq

MEAN = registry.get_metric("mean")


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


def _unit(seed: int, size: int = 4000) -> np.ndarray:
    """Replicates with mean 0 and standard deviation exactly 1."""
    draws = np.random.default_rng(seed).standard_normal(size)
    return (draws - draws.mean()) / draws.std(ddof=1)


def test_holm_recycles_a_decided_pairs_level_where_bonferroni_does_not() -> None:
    cells = [bs.Cells.from_array(np.random.default_rng(s).normal(size=(5, 40))) for s in (0, 1)]
    times = [0.5, 1.0]
    half = {
        m: float(sq.repeated_interval(_unit(1), np.array(0.0), sq.boundaries(times, 0.05 / m)[-1], cells)[1])
        for m in (1, 2)
    }
    assert half[1] < half[2]
    point = (half[1] + half[2]) / 2  # decided at alpha, not at alpha / 2
    args = ([_unit(0) + 10.0, _unit(1) + point], [10.0, point], [cells, cells], [times, times], [])
    holm = sq.look_at_pairs(*args, sq.Procedure(alpha=0.05, pairs=2, decided=0, multiplicity="holm"))
    bonferroni = sq.look_at_pairs(*args, sq.Procedure(alpha=0.05, pairs=2, decided=0, multiplicity="bonferroni"))
    assert list(holm.decided) == [True, True] and list(bonferroni.decided) == [True, False]
    assert list(holm.level) == [0.025, 0.05] and list(bonferroni.level) == [0.025, 0.025]  # the level it took
    assert holm.low[1] > 0 and bonferroni.low[1] < 0 < bonferroni.high[1]
    # a pair decided at an earlier look passes its level on too
    later = sq.look_at_pairs(*(a[1:] for a in args), sq.Procedure(alpha=0.05, pairs=2, decided=1, multiplicity="holm"))
    assert list(later.decided) == [True] and later.level[0] == 0.05


def test_step_down_moves_one_level_per_decision_and_never_undecides() -> None:
    crossing = np.array([[True, True, True], [False, True, True], [False, False, True], [False, False, False]])
    decided, column = sq.step_down(lambda j: crossing[:, j], 3)
    assert list(decided) == [True, True, True, False] and column == 2
    stuck = np.array([[False, True], [False, True]])  # nothing crosses at the first level: nothing is decided
    decided, column = sq.step_down(lambda j: stuck[:, j], 2)
    assert not decided.any() and column == 0
    assert list(sq.pair_levels(0.06, 3, 1)) == [0.03, 0.06] and list(sq.pair_levels(0.06, 3, 1, "bonferroni")) == [0.02]


def test_conditional_power_is_one_half_on_the_boundary_and_grows_with_the_estimate() -> None:
    assert float(sq.conditional_power(2.0 * np.sqrt(0.5), 0.5, 2.0)) == pytest.approx(0.5, abs=1e-4)
    power = sq.conditional_power(np.array([0.0, 1.0, 2.0, -2.0]), 0.5, 2.0)
    assert np.all(np.diff(power[:3]) > 0) and power[2] == pytest.approx(power[3]) and power[0] < 0.01


def _null_watch(rng: np.random.Generator, bound_of, looks: int = 3, runs: int = 9, reps: int = 100) -> bool:
    """One watch of 3 equal algorithms on 4 normal tasks; True when any pair is decided (a false decision)."""
    data = rng.normal(size=(3, 4, runs))
    pairs, decided, targets = [(0, 1), (0, 2), (1, 2)], {}, sq.look_targets(runs, looks)
    times: dict[tuple[int, int], list[float]] = {p: [] for p in pairs}
    for k in range(looks):
        open_pairs = [p for p in pairs if p not in decided]
        if not open_pairs:
            break
        cells = [bs.Cells.from_array(data[a, :, : targets[k]]) for a in range(3)]
        dist = [MEAN(bs.draw(cells[a], reps, rng)) for a in range(3)]
        point = [float(MEAN(bs.original(cells[a]))[0]) for a in range(3)]
        for p in open_pairs:
            times[p].append(1.0 if k == looks - 1 else targets[k] / runs)
        future = [float(n) / runs for n in targets[k + 1 : -1]] + [1.0] if k < looks - 1 else []
        result = bound_of(
            [dist[x] - dist[y] for x, y in open_pairs],
            [point[x] - point[y] for x, y in open_pairs],
            [[cells[x], cells[y]] for x, y in open_pairs],
            [times[p] for p in open_pairs],
            future,
            sum(decided.values()),
        )
        for p, rejected, futile in zip(open_pairs, result.decided, result.futile):
            if rejected or futile:
                decided[p] = bool(rejected)
    return any(decided.values())


def test_the_family_wise_error_over_looks_and_pairs_holds_in_a_seeded_null_simulation() -> None:
    def holm(*args):
        return sq.look_at_pairs(*args[:5], sq.Procedure(alpha=0.05, pairs=3, decided=args[5], futility=0.1))

    def peeking(diffs, points, cells, times, future, decided):  # every look at the fixed 95% interval
        lows, highs = zip(*(sq.repeated_interval(d, np.asarray(p), 1.96, c) for d, p, c in zip(diffs, points, cells)))
        return sq.PairsLook(
            *(np.zeros(0),) * 4, (np.array(lows) > 0) | (np.array(highs) < 0), np.zeros(len(diffs), bool), np.zeros(0)
        )

    trials = 200
    streams = np.random.SeedSequence(35).spawn(trials)
    error = np.mean([_null_watch(np.random.default_rng(s), holm) for s in streams])
    assert error < 0.05 + 3 * np.sqrt(0.05 * 0.95 / trials)
    naive = np.mean([_null_watch(np.random.default_rng(s), peeking) for s in streams[:100]])
    assert naive > 0.05 + 3 * np.sqrt(0.05 * 0.95 / 100)  # the simulation does see an inflated error
