"""Holm, max-T simultaneous intervals and the letter display, against independent definitions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from rl_reliable_logger.stats.multiplicity import bootstrap_pvalues, holm, letter_display, max_t_intervals


def _holm_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_holm_matches_its_definition():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 12))
        assert holm(p) == pytest.approx(_holm_by_definition(list(p)))


def test_bootstrap_pvalue_is_two_sided_and_never_zero():
    rng = np.random.default_rng(1)
    centred = rng.normal(0, 1, size=(4000, 1))
    assert bootstrap_pvalues(centred)[0] > 0.5
    far = centred + 10
    assert 0 < bootstrap_pvalues(far)[0] < 1e-3
    assert bootstrap_pvalues(centred + 1.96)[0] == pytest.approx(0.05, abs=0.015)


def test_max_t_critical_value_matches_the_gaussian_maximum():
    rng = np.random.default_rng(2)
    p = 15
    dist = rng.normal(0, 1, size=(40_000, p)) * np.arange(1, p + 1)  # different scales are studentised away
    low, high, crit = max_t_intervals(dist, np.zeros(p), 0.95)
    expected = stats.norm.ppf(1 - (1 - 0.95 ** (1 / p)) / 2)  # max of 15 independent |Z|
    assert crit == pytest.approx(expected, rel=0.03)
    assert high == pytest.approx(crit * np.arange(1, p + 1), rel=0.03)
    assert (low == -high).all()
    const = np.ones((100, 2))
    assert max_t_intervals(const, np.array([1.0, 1.0]))[:2] == (pytest.approx([1, 1]), pytest.approx([1, 1]))


def test_letter_display_shares_a_letter_exactly_when_not_distinguishable():
    rng = np.random.default_rng(3)
    names = list("ABCDEF")
    for _ in range(200):
        upper = np.triu(rng.random((6, 6)) < 0.4, 1)
        different = upper | upper.T
        points = rng.normal(size=6)
        display = letter_display(names, points, different)
        for i, j in itertools.combinations(range(6), 2):
            share = bool(set(display[names[i]]) & set(display[names[j]]))
            assert share == (not different[i, j]), (different, display)
    assert letter_display(["x", "y"], [1.0, 2.0], np.zeros((2, 2), bool)) == {"x": "a", "y": "a"}
    assert letter_display(["x", "y"], [1.0, 2.0], ~np.eye(2, dtype=bool)) == {"x": "b", "y": "a"}


def test_max_t_with_degrees_of_freedom_takes_the_critical_value_on_the_t_scale():
    """Issue 16: with estimated standard errors the family needs t-like tails (P(X > Y) covered 0.935–0.948)."""
    rng = np.random.default_rng(4)
    dist = rng.normal(0, 1, size=(20_000, 6)) * np.arange(1, 7)
    low, high, crit = max_t_intervals(dist, np.zeros(6), 0.95)
    df = np.array([4, 8, 16, 32, 64, 1e9])
    low_t, high_t, crit_t = max_t_intervals(dist, np.zeros(6), 0.95, df=df)
    assert crit_t == crit  # the same bootstrap maximum, read on another scale
    sd = dist.std(axis=0, ddof=1)
    np.testing.assert_allclose(high_t, stats.t.ppf(stats.norm.cdf(crit), df) * sd, rtol=1e-12)
    assert (high_t > high).all() and np.diff(high_t / sd).max() < 0  # fewer degrees of freedom: wider
    assert high_t[-1] == pytest.approx(high[-1], rel=1e-6)  # many degrees of freedom: the normal scale
