"""Jordan et al. (2020): spec test vectors T0/T1/T2, chain properties, interval validity and coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger.render.writer import save_tables
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import jordan as jd
from rl_reliable_logger.stats.jordan import bounds as jbounds
from rl_reliable_logger.stats.jordan import chain as jchain
from rl_reliable_logger.stats.jordan import payoffs as jpayoffs

# --------------------------------------------------------------------------- spec data
T1_ENV0 = [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10], [0, 0, 6, 6, 12]]
T1_ENV1 = [[10, 20, 30, 40, 50], [0, 0, 25, 60, 60], [15, 25, 35, 45, 55]]
T1 = [[T1_ENV0[i], T1_ENV1[i]] for i in range(3)]


def _t2():
    u = (np.arange(1, 201) - 0.5) / 200
    env0 = [10 * u, 12 * u**2, np.where(u < 0.3, 0.0, 4 + 4 * u)]
    env1 = [100 * np.sqrt(u), 100 * u, 30 + 40 * u]
    return [[env0[i], env1[i]] for i in range(3)]


T2 = _t2()


def _mu_from(env_mats):
    """(nA, nE, nA) from a list over envs of (nA x nA) matrices [row i, column k]."""
    return np.stack([np.asarray(m, float) for m in env_mats], axis=1)


# --------------------------------------------------------------------------- T0
def test_t0_closed_form():
    mu = np.array([[[0.5, 0.8]], [[0.2, 0.5]]])
    cs = jd.chain_structure(2, 1)
    assert cs.eta == pytest.approx(0.5) and cs.gamma == pytest.approx(0.75)
    C = jd.transition_matrix(mu)
    # our state order is (i, k) with k fastest: (0,0), (0,1), (1,0), (1,1)
    expected = np.array(
        [
            [1.0, 0.0, 0.0, 0.0],  # (0,0) absorbing
            [0.5, 0.5, 0.0, 0.0],  # (0,1) -> (0,0)
            [0.5, 0.0, 0.5, 0.0],  # (1,0) -> (0,0)
            [0.0, 0.5, 0.5, 0.0],  # (1,1) -> (1,0), (0,1)
        ]
    )
    np.testing.assert_allclose(C, expected, atol=1e-15)
    eq = jd.equilibrium(mu)
    np.testing.assert_allclose(eq.pi.ravel(), [53 / 80, 11 / 80, 11 / 80, 1 / 16], atol=1e-12)
    np.testing.assert_allclose(eq.sigma_p, [0.8, 0.2], atol=1e-12)
    np.testing.assert_allclose(eq.sigma_q[0], [0.8, 0.2], atol=1e-12)
    np.testing.assert_allclose(eq.y, [0.56, 0.26], atol=1e-12)


# --------------------------------------------------------------------------- T1
def test_t1_payoffs_chain_and_aggregate():
    mu = jd.payoff_matrix(T1)
    np.testing.assert_allclose(
        mu,
        _mu_from(
            [
                [[0.5, 0.4, 0.56], [0.6, 0.5, 0.64], [0.44, 0.44, 0.5]],
                [[0.5, 0.52, 0.4], [0.48, 0.5, 0.48], [0.6, 0.56, 0.5]],
            ]
        ),
        atol=1e-12,
    )
    assert mu[0, 0, 1] == 0.4  # computed from integer counts: exact
    cs = jd.chain_structure(3, 2)
    assert cs.eta == pytest.approx(1 / 7) and cs.gamma == pytest.approx(17 / 18) and cs.n_states == 18
    C = jd.transition_matrix(mu)
    idx = lambda i, j, k: (i * 2 + j) * 3 + k
    row = C[idx(0, 0, 0)]
    assert row[idx(1, 0, 0)] == pytest.approx(1 / 7)
    assert row[idx(0, 0, 1)] == pytest.approx(1 / 7)
    assert row[idx(0, 1, 2)] == pytest.approx(1 / 7)
    assert row[idx(0, 1, 0)] == pytest.approx(1 / 350)
    assert row[idx(0, 0, 0)] == pytest.approx(0.568571, abs=1e-6)
    assert np.count_nonzero(row) == 5
    eq = jd.equilibrium(mu)
    np.testing.assert_allclose(eq.sigma_q, [[0.147753, 0.322263, 0.029055], [0.139824, 0.039189, 0.321917]], atol=1e-6)
    np.testing.assert_allclose(eq.sigma_p, [0.170173, 0.414364, 0.415463], atol=1e-6)
    np.testing.assert_allclose(eq.y, [0.438109, 0.509608, 0.488133], atol=1e-6)


def test_t1_pbp_both_tie_rules():
    assert jd.dkw_epsilon(5, 0.05 / 6) == pytest.approx(0.740313, abs=1e-6)
    lo, hi = jd.pbp_payoff_bounds(T1, 0.05)
    off = ~np.eye(3, dtype=bool)
    for j in range(2):
        assert np.all(lo[:, j, :][off] == 0.0) and np.all(hi[:, j, :][off] == 1.0)
    authors = jd.jordan_evaluate(T1, method="pbp", tie_rule="authors")
    np.testing.assert_allclose(authors.low, 0.021638, atol=1e-6)
    np.testing.assert_allclose(authors.high, 0.978362, atol=1e-6)
    strict = jd.jordan_evaluate(T1, method="pbp")  # default: strict
    np.testing.assert_allclose(strict.low, 0.015556, atol=1e-6)
    np.testing.assert_allclose(strict.high, 0.984444, atol=1e-6)


def test_t1_pbpt_variants():
    from scipy import stats

    assert stats.t.ppf(1 - 0.05 / 6 / 2, 4) == pytest.approx(4.851008, abs=1e-6)
    lo, hi = jd.pbpt_payoff_bounds(T1, 0.05)
    half = 4.851008 * 0.316228 / np.sqrt(5)
    assert lo[0, 0, 1] == pytest.approx(0.4 - half, abs=1e-6) and hi[0, 0, 1] == pytest.approx(0.4 + half, abs=1e-6)
    authors = jd.jordan_evaluate(T1, method="pbp-t", tie_rule="authors", min_sign="abs")
    np.testing.assert_allclose(authors.low, [0.219373, 0.516900, 0.415779], atol=1e-6)
    np.testing.assert_allclose(authors.high, [1.053131, 1.502521, 1.325827], atol=1e-6)
    signed = jd.jordan_evaluate(T1, method="pbp-t", tie_rule="authors")  # default: signed minimum
    np.testing.assert_allclose(signed.low, [-0.219373, -0.516900, -0.415779], atol=1e-6)
    strict_abs = jd.jordan_evaluate(T1, method="pbp-t", min_sign="abs")
    np.testing.assert_allclose(strict_abs.low, [0.221805, 0.519315, 0.418313], atol=1e-6)
    np.testing.assert_allclose(strict_abs.high, [1.054522, 1.504801, 1.328035], atol=1e-6)
    clipped = jd.jordan_evaluate(T1, method="pbp-t", clip_t=True)
    assert np.all(clipped.low >= 0) and np.all(clipped.high <= 1)
    assert np.all(clipped.low >= signed.low - 1e-12) and np.all(clipped.high <= signed.high + 1e-12)


# --------------------------------------------------------------------------- T2
def test_t2_point_values():
    s = jd.as_samples(T2)
    sup, warnings = jd.resolve_support(s)
    np.testing.assert_allclose(sup, [[0.0, 11.940075], [0.25, 99.874922]], atol=1e-6)
    assert warnings and "observed" in warnings[0]
    mu = jd.payoff_matrix(T2)
    np.testing.assert_allclose(
        mu,
        _mu_from(
            [
                [[0.5, 0.60855, 0.538], [0.39145, 0.5, 0.4818], [0.462, 0.5182, 0.5]],
                [[0.5, 0.6665, 0.73665], [0.3335, 0.5, 0.5], [0.26335, 0.5, 0.5]],
            ]
        ),
        atol=1e-9,
    )
    eq = jd.equilibrium(mu)
    np.testing.assert_allclose(eq.sigma_q, [[0.349282, 0.022433, 0.048791], [0.536897, 0.022807, 0.019790]], atol=1e-6)
    np.testing.assert_allclose(eq.sigma_p, [0.805556, 0.102558, 0.091887], atol=1e-6)
    np.testing.assert_allclose(eq.y, [0.512770, 0.371804, 0.360079], atol=1e-6)


@pytest.mark.parametrize("tie_rule", ["strict", "authors"])
def test_t2_pbp(tie_rule):
    assert jd.dkw_epsilon(200, 0.05 / 6) == pytest.approx(0.117054, abs=1e-6)
    lo, hi = jd.pbp_payoff_bounds(T2, 0.05)
    np.testing.assert_allclose(
        lo,
        _mu_from(
            [
                [[0.5, 0.402187, 0.339009], [0.196399, 0.5, 0.282809], [0.302863, 0.355791, 0.5]],
                [[0.5, 0.450098, 0.528515], [0.152979, 0.5, 0.317453], [0.107866, 0.317453, 0.5]],
            ]
        ),
        atol=1e-6,
    )
    np.testing.assert_allclose(
        hi,
        _mu_from(
            [
                [[0.5, 0.803601, 0.697137], [0.597813, 0.5, 0.644209], [0.682406, 0.738606, 0.5]],
                [[0.5, 0.847021, 0.892134], [0.549902, 0.5, 0.682547], [0.471485, 0.682547, 0.5]],
            ]
        ),
        atol=1e-6,
    )
    assert jd.interval_chain(lo, hi, tie_rule=tie_rule).n_uncertain == 108
    res = jd.jordan_evaluate(T2, method="pbp", tie_rule=tie_rule)
    np.testing.assert_allclose(res.low, [0.365781, 0.181849, 0.165454], atol=1e-6)
    np.testing.assert_allclose(res.high, [0.850485, 0.654879, 0.712446], atol=1e-6)
    assert res.rank.tolist() == [1, 2, 3]
    assert res.rank_worst.tolist() == [3, 3, 3] and res.rank_best.tolist() == [1, 1, 1]


@pytest.mark.parametrize("tie_rule", ["strict", "authors"])
def test_t2_pbpt(tie_rule):
    res = jd.jordan_evaluate(T2, method="pbp-t", tie_rule=tie_rule)
    np.testing.assert_allclose(res.low, [0.494671, 0.305516, 0.295675], atol=1e-6)
    np.testing.assert_allclose(res.high, [0.591575, 0.505961, 0.486792], atol=1e-6)
    assert list(zip(res.rank_worst, res.rank_best)) == [(2, 1), (3, 1), (3, 2)]


def test_t2_with_known_support():
    with pytest.raises(ValueError, match="outside"):
        jd.jordan_evaluate(T2, support=[(0.0, 11.9), (0.0, 100.0)])  # env0 reaches 11.94
    res = jd.jordan_evaluate(T2, support=[(0.0, 12.0), (0.0, 100.0)])
    assert res.warnings == []
    # a wider known range can only widen the PBP interval
    base = jd.jordan_evaluate(T2)
    assert np.all(res.low <= base.low + 1e-9) and np.all(res.high >= base.high - 1e-9)


# --------------------------------------------------------------------------- chain properties
def _random_samples(rng, n_alg, n_env, n, discrete=False):
    out = []
    for _ in range(n_alg):
        row = []
        for _ in range(n_env):
            if discrete:
                row.append(rng.integers(0, 4, size=n).astype(float))
            else:
                row.append(rng.normal(rng.normal(), rng.uniform(0.5, 2), size=n))
        out.append(row)
    return out


def test_closed_form_equals_power_iteration():
    rng = np.random.default_rng(1)
    for n_alg, n_env in [(2, 1), (3, 2), (4, 2)]:
        mu = jd.payoff_matrix(_random_samples(rng, n_alg, n_env, 7, discrete=True))
        C = jd.transition_matrix(mu)
        pi = jd.stationary_distribution(C)
        np.testing.assert_allclose(pi, jd.power_iteration(C), atol=1e-12)
        np.testing.assert_allclose(jd.equilibrium(mu).pi.ravel(), pi, atol=1e-14)
        assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    mu = jd.payoff_matrix(T1)
    np.testing.assert_allclose(
        jd.stationary_distribution(jd.transition_matrix(mu)), jd.power_iteration(jd.transition_matrix(mu)), atol=1e-12
    )


def test_chain_is_stochastic():
    rng = np.random.default_rng(2)
    mu = jd.payoff_matrix(_random_samples(rng, 4, 3, 6, discrete=True))
    C = jd.transition_matrix(mu)
    S = C.shape[0]
    gamma = (S - 1) / S
    G = gamma * C + (1 - gamma) / S
    assert np.all(C >= 0)
    np.testing.assert_allclose(C.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(G.sum(axis=1), 1.0, atol=1e-12)
    # only single-player deviations have mass: off-diagonal entries per row <= 1/eta
    assert (np.count_nonzero(C - np.diag(np.diag(C)), axis=1) <= 1 / jd.chain_structure(4, 3).eta).all()


def test_eq2_equals_eq5():
    rng = np.random.default_rng(3)
    mu = jd.payoff_matrix(_random_samples(rng, 3, 3, 9))
    eq = jd.equilibrium(mu)
    cs = jd.chain_structure(3, 3)
    A = np.eye(cs.n_states) - cs.gamma * jd.transition_matrix(mu)
    for i in range(3):
        r = np.broadcast_to(mu[i], (3, 3, 3)).ravel()
        y5 = (1 - cs.gamma) / cs.n_states * np.ones(cs.n_states) @ np.linalg.solve(A, r)
        assert y5 == pytest.approx(eq.y[i], abs=1e-12)


def test_state_order_does_not_matter():
    rng = np.random.default_rng(4)
    mu = jd.payoff_matrix(_random_samples(rng, 3, 2, 8))
    C = jd.transition_matrix(mu)
    perm = rng.permutation(C.shape[0])
    pi_perm = jd.stationary_distribution(C[np.ix_(perm, perm)])
    np.testing.assert_allclose(pi_perm, jd.stationary_distribution(C)[perm], atol=1e-14)
    # relabelling algorithms and tasks permutes every output accordingly
    samples = _random_samples(rng, 3, 3, 30)
    pa, pe = [2, 0, 1], [1, 2, 0]
    shuffled = [[samples[a][e] for e in pe] for a in pa]
    for method in ("none", "pbp", "pbp-t"):
        base = jd.jordan_evaluate(samples, method=method)
        moved = jd.jordan_evaluate(shuffled, method=method)
        np.testing.assert_allclose(moved.y, base.y[pa], atol=1e-12)
        np.testing.assert_allclose(moved.low, base.low[pa], atol=1e-9)
        np.testing.assert_allclose(moved.high, base.high[pa], atol=1e-9)


def test_iterative_solver_matches_dense():
    rng = np.random.default_rng(5)
    samples = _random_samples(rng, 4, 3, 25)
    mu = jd.payoff_matrix(samples)
    dense = jd.equilibrium(mu, solver="dense")
    it = jd.equilibrium(mu, solver="iterative")
    np.testing.assert_allclose(it.pi, dense.pi, atol=1e-14)
    a = jd.jordan_evaluate(samples, method="pbp-t", solver="dense")
    b = jd.jordan_evaluate(samples, method="pbp-t", solver="iterative")
    np.testing.assert_allclose(b.low, a.low, atol=1e-9)
    np.testing.assert_allclose(b.high, a.high, atol=1e-9)


def test_fast_greedy_equals_knapsack():
    rng = np.random.default_rng(6)
    lo, hi = jd.pbpt_payoff_bounds(_random_samples(rng, 3, 2, 12), 0.05)
    chain = jd.interval_chain(lo, hi)
    nbr = chain.structure.nbr
    for _ in range(5):
        V = rng.normal(size=chain.structure.n_states)
        fast, ref = jbounds.greedy_rows(chain, V), jbounds.greedy_rows_knapsack(chain, V)
        np.testing.assert_allclose((fast * V[nbr]).sum(1), (ref * V[nbr]).sum(1), atol=1e-12)
        for rows in (fast, ref):
            np.testing.assert_allclose(rows.sum(1), 1.0, atol=1e-12)
            assert np.all(rows >= chain.lower - 1e-15) and np.all(rows <= chain.upper + 1e-15)


# --------------------------------------------------------------------------- interval validity
def _random_feasible_rows(chain, rng):
    rows = chain.lower.copy()
    budget = chain.budget.copy()
    order = np.argsort(rng.random(chain.cap.shape), axis=1)
    for s in range(rows.shape[0]):
        for m in order[s]:
            d = min(chain.cap[s, m] * rng.random(), budget[s])
            rows[s, m] += d
            budget[s] -= d
        rows[s, -1] += budget[s]  # the diagonal absorbs what is left (its cap is the whole budget)
    return rows


def test_pbp_contains_point_and_every_feasible_chain():
    rng = np.random.default_rng(7)
    samples = _random_samples(rng, 3, 2, 40)
    res = jd.jordan_evaluate(samples, method="pbp")
    assert np.all(res.low <= res.y) and np.all(res.y <= res.high)
    chain = jd.interval_chain(res.mu_low, res.mu_high)
    cs = chain.structure
    for _ in range(20):
        rows = _random_feasible_rows(chain, rng)
        assert np.all(rows <= chain.upper + 1e-12)
        P = jchain.dense_from_slots(rows, cs)
        pi = jd.stationary_distribution(P)
        for i in range(3):
            r_lo = np.broadcast_to(res.mu_low[i], (3, 2, 3)).ravel()
            r_hi = np.broadcast_to(res.mu_high[i], (3, 2, 3)).ravel()
            assert res.low[i] - 1e-9 <= pi @ r_lo <= pi @ r_hi <= res.high[i] + 1e-9


def test_strict_rule_point_chain_in_uncertainty_set():
    """Thm 1 needs the true chain inside the relaxation; with the point payoffs as 'truth' it must be."""
    rng = np.random.default_rng(8)
    samples = _random_samples(rng, 3, 2, 15, discrete=True)  # many exact ties
    mu = jd.payoff_matrix(samples)
    lo, hi = jd.pbp_payoff_bounds(samples, 0.05)
    assert np.all(lo <= mu + 1e-12) and np.all(mu <= hi + 1e-12)
    chain = jd.interval_chain(lo, hi, tie_rule="strict")
    cs = chain.structure
    C = jd.transition_matrix(mu)
    rows = C[np.arange(cs.n_states)[:, None], cs.nbr]
    assert np.all(rows >= chain.lower - 1e-15) and np.all(rows <= chain.upper + 1e-15)


def test_pbp_contains_pbpt_typically():
    rng = np.random.default_rng(9)
    for _ in range(3):
        samples = _random_samples(rng, 3, 3, 60)
        sup = [(-15.0, 15.0)] * 3
        pbp = jd.jordan_evaluate(samples, method="pbp", support=sup)
        t = jd.jordan_evaluate(samples, method="pbp-t")
        assert np.all(pbp.low <= t.low + 1e-12) and np.all(pbp.high >= t.high - 1e-12)


def _true_mu(pmfs):
    """Exact payoffs for discrete distributions on 0..K-1: mu_ijk = sum_x P_i(x) F_k(x); self = 1/2."""
    pmfs = np.asarray(pmfs, float)  # (nA, nE, K)
    cdf = np.cumsum(pmfs, axis=-1)
    mu = np.einsum("ijx,kjx->ijk", pmfs, cdf)
    n_alg = pmfs.shape[0]
    mu[np.arange(n_alg), :, np.arange(n_alg)] = 0.5
    return mu


def test_pbp_coverage_in_simulation():
    """PBP holds for all algorithms at once with probability >= 1 - delta (it is conservative)."""
    rng = np.random.default_rng(10)
    n_alg, n_env, K, n, trials, delta = 3, 2, 5, 30, 60, 0.05
    pmfs = rng.dirichlet(np.ones(K), size=(n_alg, n_env))
    y_true = jd.equilibrium(_true_mu(pmfs)).y
    fails_pbp = 0
    for _ in range(trials):
        samples = [[rng.choice(K, size=n, p=pmfs[i, j]).astype(float) for j in range(n_env)] for i in range(n_alg)]
        res = jd.jordan_evaluate(samples, method="pbp", delta=delta, support=(0.0, K - 1.0))
        fails_pbp += bool(np.any((y_true < res.low - 1e-12) | (y_true > res.high + 1e-12)))
    assert fails_pbp / trials <= delta


# --------------------------------------------------------------------------- edge cases
def test_ties_identical_algorithms_share_rank():
    rng = np.random.default_rng(11)
    base = [rng.normal(size=20), rng.normal(size=20)]
    samples = [[x.copy() for x in base] for _ in range(3)]
    for method in ("pbp", "pbp-t", "bootstrap"):
        res = jd.jordan_evaluate(samples, method=method, reps=200, seed=0)
        np.testing.assert_allclose(res.y, res.y[0], atol=1e-12)
        assert res.rank.tolist() == [1, 1, 1]
        assert np.all(res.low <= res.y + 1e-12) and np.all(res.y <= res.high + 1e-12)


def test_exact_payoff_tie_uses_eta_over_m():
    mu = np.array([[[0.5, 0.5]], [[0.5, 0.5]]])  # every payoff equal: every edge is a tie
    C = jd.transition_matrix(mu)
    eta = jd.chain_structure(2, 1).eta
    off = C - np.diag(np.diag(C))
    np.testing.assert_allclose(off[off > 0], eta / jd.POPULATION_M)
    np.testing.assert_allclose(jd.equilibrium(mu).y, [0.5, 0.5])


def test_single_algorithm():
    res = jd.jordan_evaluate([[np.array([1.0, 2.0, 3.0]), np.array([0.0, 5.0])]], method="pbp")
    assert res.y.tolist() == [0.5] and res.low.tolist() == [0.5] and res.high.tolist() == [0.5]
    assert res.rank.tolist() == [1] and res.rank_worst.tolist() == [1] and res.rank_best.tolist() == [1]
    assert any("single algorithm" in w for w in res.warnings)


def test_disjoint_supports():
    rng = np.random.default_rng(12)
    n = 200
    low, high = rng.uniform(0, 1, size=n), rng.uniform(2, 3, size=n)
    samples = [[low, high + 0.0], [high.copy(), low.copy()]]  # A loses env0, wins env1; B the opposite
    mu = jd.payoff_matrix(samples)
    assert mu[0, 0, 1] == 0.0 and mu[1, 0, 0] == 1.0 and mu[0, 1, 1] == 1.0 and mu[1, 1, 0] == 0.0
    res = jd.jordan_evaluate(samples, method="pbp", support=(0.0, 3.0))
    assert res.y[0] == pytest.approx(res.y[1], abs=1e-12)
    assert res.rank.tolist() == [1, 1]
    eps = jd.dkw_epsilon(n, 0.05 / 4)
    # Anderson with both CDFs uncertain: [(1 - eps)^2, 1] and [0, 1 - (1 - eps)^2]
    assert res.mu_low[1, 0, 0] == pytest.approx((1 - eps) ** 2) and res.mu_high[1, 0, 0] == 1.0
    assert res.mu_low[0, 0, 1] == 0.0 and res.mu_high[0, 0, 1] == pytest.approx(1 - (1 - eps) ** 2)
    assert np.all(res.low <= res.y) and np.all(res.y <= res.high)


def test_unequal_sample_sizes():
    rng = np.random.default_rng(13)
    samples = [[rng.normal(size=n) for n in (5, 40)], [rng.normal(0.5, size=n) for n in (17, 3)]]
    for method in ("pbp", "pbp-t", "bootstrap"):
        res = jd.jordan_evaluate(samples, method=method, reps=300, seed=1)
        assert np.all(res.low <= res.y + 1e-12) and np.all(res.y <= res.high + 1e-12)


def test_input_validation():
    with pytest.raises(ValueError):
        jd.jordan_evaluate([[np.array([1.0, np.nan])]])
    with pytest.raises(ValueError):
        jd.jordan_evaluate(T1, method="nope")
    with pytest.raises(ValueError):
        jd.jordan_evaluate(T1, delta=1.5)
    with pytest.raises(ValueError):
        jd.jordan_evaluate(T1, tie_rule="loose")
    with pytest.raises(ValueError, match="PBP-t"):
        jd.jordan_evaluate([[np.array([1.0])], [np.array([2.0])]], method="pbp-t")


# --------------------------------------------------------------------------- bootstrap
def test_bootstrap_is_seeded_bit_identical():
    a = jd.bootstrap_aggregate(T1, reps=300, seed=3)
    b = jd.bootstrap_aggregate(T1, reps=300, seed=np.random.default_rng(3))
    assert a.shape == (300, 3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, jd.bootstrap_aggregate(T1, reps=300, seed=4))
    r1 = jd.jordan_evaluate(T2, method="bootstrap", reps=400, seed=7)
    r2 = jd.jordan_evaluate(T2, method="bootstrap", reps=400, seed=7)
    assert np.array_equal(r1.low, r2.low) and np.array_equal(r1.high, r2.high)


def test_bootstrap_replicate_is_the_point_pipeline():
    """A replicate whose weights are all 1 reproduces the point estimate (checks the weighted payoffs)."""
    s = jd.as_samples(T2)
    pos = jpayoffs.positions(s)
    mu = jd.payoff_matrix(s, presorted=True)
    for i in range(3):
        for j in range(2):
            for k in range(3):
                if i != k:
                    n_i, n_k = s[i][j].size, s[k][j].size
                    cum = np.arange(n_k + 1)
                    assert np.ones(n_i) @ cum[pos[i][j][k]] / (n_i * n_k) == mu[i, j, k]


def test_bootstrap_iterative_path_matches_dense():
    rng = np.random.default_rng(14)
    samples = _random_samples(rng, 3, 2, 15)
    a = jd.bootstrap_aggregate(samples, reps=50, seed=0, solver="dense")
    b = jd.bootstrap_aggregate(samples, reps=50, seed=0, solver="iterative")
    np.testing.assert_allclose(a, b, atol=1e-10)


def _replicate_payoffs(samples, reps, seed):
    """Payoffs of bootstrap-like replicates (ties included: scores on a coarse grid)."""
    rng = np.random.default_rng(seed)
    s = jd.as_samples(samples)
    out = []
    for _ in range(reps):
        out.append(jd.payoff_matrix([[rng.choice(x, x.size) for x in row] for row in s]))
    return np.stack(out)


@pytest.mark.parametrize("shape", [(2, 1, 4), (3, 2, 5), (5, 4, 6), (4, 3, 40)])
def test_batched_solver_matches_dense_solve(shape):
    """The structured batched solver gives the exact stationary distribution of every replicate chain."""
    n_alg, n_env, n = shape
    rng = np.random.default_rng(sum(shape))
    samples = [[np.round(rng.normal(0.3 * i, 1.0, n), 1) for _ in range(n_env)] for i in range(n_alg)]
    mu = _replicate_payoffs(samples, 12, 1)
    pi = jd.stationary_batch(mu, m=jd.POPULATION_M)
    for r in range(mu.shape[0]):
        ref = jd.stationary_distribution(jd.transition_matrix(mu[r]))
        np.testing.assert_allclose(pi[r], ref, rtol=1e-10, atol=1e-14)


def test_batched_solver_hands_near_ties_to_the_general_solver():
    """Two distinct payoffs within the chain's tie tolerance break the structure: the exact solve is used."""
    mu = jd.payoff_matrix(T1)
    mu[0, 1, 2] = mu[0, 0, 1] * (1 + 1e-12)  # distinct from, but isapprox-equal to, another payoff of block 0
    ref = jd.stationary_distribution(jd.transition_matrix(mu))
    pi = jd.stationary_batch(mu[None], m=jd.POPULATION_M)[0]
    np.testing.assert_allclose(pi, ref, rtol=1e-10, atol=1e-14)


def test_bootstrap_batched_solver_matches_per_replicate_solves():
    rng = np.random.default_rng(5)
    samples = [[np.round(rng.normal(0.2 * i, 1.0, 6), 1) for _ in range(3)] for i in range(4)]
    a = jd.bootstrap_aggregate(samples, reps=40, seed=1)
    b = jd.bootstrap_aggregate(samples, reps=40, seed=1, solver="dense")
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_bootstrap_does_not_depend_on_chunk_size():
    """The numpy solver once swept every chain of a block until the slowest converged: a chain's result
    depended on which replicates shared its chunk."""
    rng = np.random.default_rng(6)
    samples = [[rng.normal(0.2 * i, 1.0, 5 + (i + j) % 3) for j in range(3)] for i in range(3)]
    a = jd.bootstrap_aggregate(samples, reps=80, seed=2)
    for chunk_bytes in (1, 3000):  # one replicate per chunk, a few
        np.testing.assert_array_equal(jd.bootstrap_aggregate(samples, reps=80, seed=2, chunk_bytes=chunk_bytes), a)


def test_bootstrap_uses_the_shared_engine_draws():
    """Replicate r of algorithm i is the shared engine's draw r from algorithm i's spawned stream."""
    s = jd.as_samples(T2)
    reps = 7
    streams = np.random.default_rng(11).spawn(len(s))
    counts = [bs.draw(bs.Cells.from_list(row), reps, g).counts() for row, g in zip(s, streams)]
    mu = jd.payoffs_from_counts(s, counts)
    for r in range(reps):
        resampled = [
            [
                np.repeat(x, counts[i][r, off : off + x.size].astype(int))
                for x, off in zip(row, np.cumsum([0] + [x.size for x in row])[:-1])
            ]
            for i, row in enumerate(s)
        ]
        np.testing.assert_array_equal(mu[r], jd.payoff_matrix(resampled))
    y = jd.bootstrap_aggregate(T2, reps=reps, seed=11)
    for r in range(reps):
        np.testing.assert_allclose(y[r], jd.equilibrium(mu[r]).y, rtol=1e-10)


def test_bootstrap_progress_callback_counts_replicates():
    seen = []
    jd.bootstrap_aggregate(T1, reps=30, seed=0, progress=seen.append, chunk_bytes=20_000)
    assert sum(seen) == 30 and len(seen) > 1


def test_bootstrap_split_options():
    a = jd.jordan_evaluate(T2, method="bootstrap", reps=2000, seed=0)
    b = jd.jordan_evaluate(T2, method="bootstrap", reps=2000, seed=0, bootstrap_split="algorithms")
    assert np.all(b.low >= a.low - 1e-12) and np.all(b.high <= a.high + 1e-12)
    assert a.info["alpha"] == pytest.approx(0.05 / 6) and b.info["alpha"] == pytest.approx(0.05 / 3)


# --------------------------------------------------------------------------- reporting helpers
def test_ranks_formulas():
    rank, worst, best = jd.ranks([0.46, 0.45, 0.16, 0.09], [0.39, 0.38, 0.08, 0.03], [0.55, 0.56, 0.31, 0.23])
    assert rank.tolist() == [1, 2, 3, 4]
    assert worst.tolist() == [2, 2, 4, 4]
    assert best.tolist() == [1, 1, 3, 3]


def test_best_rank_is_never_below_the_rank():
    """Equal zero-width intervals (every score equal) touch: neither algorithm surely beats the other, so each is
    best 1, not 2 (``hi <= lo`` counted a touch as a sure loss). On random intervals holding their points,
    ``best <= rank <= worst`` always."""
    rank, worst, best = jd.ranks([0.75, 0.75], [0.75, 0.75], [0.75, 0.75])
    assert rank.tolist() == [1, 1] and best.tolist() == [1, 1] and worst.tolist() == [2, 2]
    rng = np.random.default_rng(0)
    for _ in range(200):
        y = rng.choice([0.1, 0.2, 0.3], size=4)  # ties and touching intervals are common
        lo, hi = y - rng.choice([0.0, 0.1], size=4), y + rng.choice([0.0, 0.1], size=4)
        rank, worst, best = jd.ranks(y, lo, hi)
        assert (best <= rank).all() and (rank <= worst).all(), (y, lo, hi, rank, worst, best)


def test_quantile_bands():
    s = [[np.array([3.0, 1.0, 2.0, 2.0])], [np.array([0.0, 5.0])]]
    bands = jd.quantile_bands(s, 0.05)
    b = bands[0][0]
    np.testing.assert_allclose(b["score"], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(b["cdf"], [0.25, 0.75, 1.0])
    eps = jd.dkw_epsilon(4, 0.05 / 2)
    np.testing.assert_allclose(b["cdf_low"], np.maximum([0.25 - eps, 0.75 - eps, 1 - eps], 0))
    np.testing.assert_allclose(b["cdf_high"], np.minimum([0.25 + eps, 0.75 + eps, 1 + eps], 1))
    big = jd.quantile_bands([[np.arange(5000.0)]], max_points=100)[0][0]
    assert big["score"].size == 100 and big["score"][0] == 0 and big["score"][-1] == 4999 and big["cdf"][-1] == 1.0


def test_anderson_identity_bounds_contain_mean():
    rng = np.random.default_rng(15)
    z = rng.uniform(0, 1, size=50)
    lo, hi = jd.anderson_mean_bounds(z, jd.dkw_epsilon(50, 0.05), 0.0, 1.0)
    assert lo <= z.mean() <= hi and 0 <= lo and hi <= 1


def test_percentile_scores_mixture():
    s = jd.as_samples([[np.array([1.0, 2.0, 3.0, 4.0])], [np.array([2.0, 2.0, 10.0, 11.0])]])
    x = np.array([0.0, 2.0, 5.0, 20.0])
    np.testing.assert_allclose(jd.percentile_scores(s, [0.5, 0.5], x, 0, presorted=True), [0.0, 0.5, 0.75, 1.0])


@pytest.mark.slow
@pytest.mark.timeout(600)  # a hang guard; the time itself is measured by benchmarks/speed/bench_scale_jordan.py
def test_paper_scale_pbp_is_certified():
    """nA = 11, nE = 15 (|S| = 1815, the paper's size): the PBP interval holds the point, with certified bounds."""
    rng = np.random.default_rng(16)
    samples = _random_samples(rng, 11, 15, 100)
    res = jd.jordan_evaluate(samples, method="pbp", support=(-12.0, 12.0))
    assert res.info["n_states"] == 1815
    assert np.all(res.low <= res.y) and np.all(res.y <= res.high)
    assert res.info["max_slack"] < 1e-6


# --------------------------------------------------------------------------- bridge + figure
def _table(n_alg=3, tasks=("x", "y"), n=12, seed=0):
    from rl_reliable_logger import ScoreTable

    rng = np.random.default_rng(seed)
    rows = [
        {"algorithm": f"A{i}", "task": t, "seed": s, "score": (i * 0.4 + rng.normal()) * (10 if t == "y" else 1)}
        for i in range(n_alg)
        for t in tasks
        for s in range(n)
    ]
    return ScoreTable(pd.DataFrame(rows))


def test_jordan_tables_schema_and_values():
    from rl_reliable_logger.analysis.jordan import jordan_tables

    table = _table()
    tables, warnings = jordan_tables(table, method="pbp-t", delta=0.1)
    agg = tables["jordan"]
    assert list(agg.columns)[:7] == ["algorithm", "aggregate", "low", "high", "rank", "method", "delta"]
    assert {"rank_worst", "rank_best"} <= set(agg.columns)
    assert agg["method"].eq("pbp-t").all() and agg["delta"].eq(0.1).all()
    samples = [[table.cells()[(a, t)] for t in table.tasks] for a in table.algorithms]
    ref = jd.jordan_evaluate(samples, method="pbp-t", delta=0.1)
    np.testing.assert_allclose(agg["aggregate"], ref.y)
    np.testing.assert_allclose(agg["low"], ref.low)
    q = tables["jordan_quantiles"]
    assert list(q.columns) == ["algorithm", "task", "score", "cdf", "cdf_low", "cdf_high"]
    eps = jd.dkw_epsilon(12, 0.1 / 6)
    np.testing.assert_allclose(q["cdf_high"], np.minimum(q["cdf"] + eps, 1.0))
    assert any("no coverage guarantee" in w for w in warnings)
    tables, warnings = jordan_tables(table, method="pbp")
    assert any("score range" in w for w in warnings)
    tables, warnings = jordan_tables(table, method="pbp", score_range={"x": (-50, 50), "y": (-500, 500)})
    assert not any("score range" in w for w in warnings)
    with pytest.raises(ValueError):
        jordan_tables(table, method="pbp", score_range={"x": (-50, 50)})


def test_percentile_normalize_and_evaluate():
    from rl_reliable_logger import evaluate
    from rl_reliable_logger.data.percentiles import percentile_normalize

    table = _table()
    norm = percentile_normalize(table)
    assert norm.frame["score"].between(0, 1).all()
    np.testing.assert_allclose(norm.frame["raw_score"], table.frame["score"])
    # scale invariance: the percentile does not depend on each task's units
    scaled = table.with_scores(
        table.frame["score"] * np.where(table.frame["task"] == "x", 1000.0, 0.001), keep_raw=False
    )
    np.testing.assert_allclose(percentile_normalize(scaled).frame["score"], norm.frame["score"])
    uni = percentile_normalize(table, weights="uniform")
    x = table.frame[table.frame["task"] == "x"]
    first = x["score"].iloc[0]
    expected = np.mean([(x.loc[x["algorithm"] == a, "score"] <= first).mean() for a in table.algorithms])
    assert uni.frame["score"].iloc[0] == pytest.approx(expected)
    report = evaluate(table, normalize="percentiles", reps=200, profile_reps=50, improvement_reps=50, seed=0)
    assert report.headline("iqm")["point"].between(0, 1).all()


def test_quantile_plot():
    import matplotlib

    matplotlib.use("Agg")
    from rl_reliable_logger.analysis.jordan import jordan_tables
    from rl_reliable_logger.render.jordan_figures import plot_quantile_functions

    tables, _ = jordan_tables(_table(tasks=("x", "y", "z")), method="pbp-t")
    fig = plot_quantile_functions(tables["jordan_quantiles"])
    visible = [a for a in fig.axes if a.get_visible()]
    assert len(visible) == 3 and visible[0].get_xlabel() == "cumulative probability"
    from matplotlib.figure import Figure

    fig2 = Figure()
    ax = fig2.add_subplot()
    assert plot_quantile_functions(tables["jordan_quantiles"], tasks=["y"], ax=ax) is fig2
    with pytest.raises(ValueError):
        plot_quantile_functions(tables["jordan_quantiles"], ax=ax)
    with pytest.raises(ValueError):
        plot_quantile_functions(tables["jordan_quantiles"], tasks=["nope"])


def test_tables_round_trip_through_report(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from rl_reliable_logger.analysis.jordan import jordan_tables
    from rl_reliable_logger.analysis.report import Report
    from rl_reliable_logger.render.jordan_figures import plot_quantile_functions

    tables, _ = jordan_tables(_table(), method="bootstrap", reps=300, seed=0)
    save_tables(Report(extra=tables), tmp_path)
    loaded = Report.load(tmp_path) if (tmp_path / "aggregates.csv").exists() else None
    assert loaded is not None
    pd.testing.assert_frame_equal(loaded.extra["jordan"], tables["jordan"], check_dtype=False)
    fig = plot_quantile_functions(loaded)
    assert len([a for a in fig.axes if a.get_visible()]) == 2


def test_pbp_with_reused_factorisations_equals_dense_solves():
    """936 states: the default path (GMRES, block factorisations shared across policy evaluations) against exact
    dense solves of every evaluation: equal up to the certified slack of each bound."""
    rng = np.random.default_rng(4)
    samples = _random_samples(rng, 6, 26, 10)
    lo, hi = jbounds.pbp_payoff_bounds(jd.as_samples(samples), 0.05, np.array([[-12.0, 12.0]] * 26))
    fast = jbounds.aggregate_bounds(lo, hi)
    dense = jbounds.aggregate_bounds(lo, hi, solver="dense")
    tol = 2 * max(fast[2]["max_slack"], dense[2]["max_slack"]) + 1e-12
    np.testing.assert_allclose(fast[0], dense[0], rtol=0, atol=tol)
    np.testing.assert_allclose(fast[1], dense[1], rtol=0, atol=tol)
    assert fast[2]["max_slack"] < 1e-6
