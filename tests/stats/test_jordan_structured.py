"""Jordan PBP's structured policy evaluation (stats/jordan/pairs, groups, policy, precondition) against dense
references built from the full ``|S| x M`` interval chain."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from rl_reliable_logger.stats import jordan as jd
from rl_reliable_logger.stats.jordan import bounds as jbounds
from rl_reliable_logger.stats.jordan import chain as jchain
from rl_reliable_logger.stats.jordan import pairs as jpairs
from rl_reliable_logger.stats.jordan import policy as jpolicy
from rl_reliable_logger.stats.jordan.ecdf import cell_sizes, dkw_epsilon, split_cells


def _intervals(kind: str, n_alg: int = 4, n_env: int = 5, seed: int = 0):
    """Payoff intervals of three regimes: wide (PBP, 10 runs: almost every edge uncertain), narrow (PBP-t with 100
    runs and spread means: many certain edges) and clipped (PBP-t clipped to [0, 1]: point intervals at 0 and 1)."""
    rng = np.random.default_rng(seed)
    if kind == "wide":
        loc = rng.normal(size=(n_alg, n_env))
        s = jd.as_samples([[rng.normal(loc[a, t], 1.0, size=10) for t in range(n_env)] for a in range(n_alg)])
        support, _ = jd.resolve_support(s, None)
        return jbounds.pbp_payoff_bounds(s, 0.05, support, presorted=True)
    if kind == "narrow":
        loc = 3 * rng.normal(size=(n_alg, n_env))
        s = jd.as_samples([[rng.normal(loc[a, t], 1.0, size=100) for t in range(n_env)] for a in range(n_alg)])
        return jbounds.pbpt_payoff_bounds(s, 0.05, presorted=True)
    loc = 10 * rng.normal(size=(n_alg, n_env))
    s = jd.as_samples([[rng.normal(loc[a, t], 1.0, size=30) for t in range(n_env)] for a in range(n_alg)])
    return jbounds.pbpt_payoff_bounds(s, 0.05, clip=True, presorted=True)


def _dense_policy(chain: jbounds.IntervalChain, V: np.ndarray) -> np.ndarray:
    return jchain.dense_from_slots(jbounds.greedy_rows(chain, V), chain.structure)


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random values with many exact ties (the structured sums must treat them as the strict ``>`` does)."""
    V = rng.normal(size=n)
    V[rng.random(n) < 0.3] = 0.25
    return V


@pytest.mark.parametrize("kind", ["wide", "narrow", "clipped"])
@pytest.mark.parametrize("tie_rule", ["strict", "authors"])
def test_structure_lists_exactly_the_edges_that_are_not_uncertain(kind, tie_rule):
    lo, hi = _intervals(kind)
    chain = jbounds.interval_chain(lo, hi, tie_rule=tie_rule)
    st = jpairs.interval_structure(lo, hi, tie_rule=tie_rule)
    assert st.n_uncertain == chain.n_uncertain
    # the listed edges' fixed masses are the chain's lower bounds, and nothing else has a lower bound
    cs = chain.structure
    dense_lower = jchain.dense_from_slots(np.concatenate([chain.lower[:, :-1], np.zeros((cs.n_states, 1))], 1), cs)
    listed = np.zeros_like(dense_lower)
    listed[st.rows, st.cols] = st.weight
    np.testing.assert_array_equal(listed, dense_lower)
    capped = jchain.dense_from_slots(np.concatenate([chain.cap[:, :-1], np.zeros((cs.n_states, 1))], 1), cs) > 0
    assert not capped[st.rows, st.cols].any()


@pytest.mark.parametrize("kind", ["wide", "narrow", "clipped"])
@pytest.mark.parametrize("tie_rule", ["strict", "authors"])
def test_policy_operator_is_the_greedy_policy_matrix(kind, tie_rule):
    lo, hi = _intervals(kind, seed=1)
    chain = jbounds.interval_chain(lo, hi, tie_rule=tie_rule)
    st = jpairs.interval_structure(lo, hi, tie_rule=tie_rule)
    rng = np.random.default_rng(2)
    for V in (np.zeros(st.n_states), _values(rng, st.n_states), _values(rng, st.n_states)):
        P = _dense_policy(chain, V)
        policy = jpolicy.Policy(st, V)
        x = rng.normal(size=st.n_states)
        np.testing.assert_allclose(policy.apply(x), P @ x, rtol=0, atol=1e-13)
        np.testing.assert_allclose(policy.diag, np.diag(P), rtol=0, atol=1e-13)
        np.testing.assert_allclose(policy.apply(np.ones(st.n_states)), 1.0, rtol=0, atol=1e-13)


@pytest.mark.parametrize("kind", ["wide", "narrow", "clipped"])
def test_preconditioner_is_an_exact_solve_of_its_model(kind):
    lo, hi = _intervals(kind, seed=3)
    st = jpairs.interval_structure(lo, hi)
    rng = np.random.default_rng(4)
    policy = jpolicy.Policy(st, _values(rng, st.n_states))
    prec = policy.preconditioner
    r = rng.normal(size=st.n_states)
    np.testing.assert_allclose(prec.forward(prec.solve(r)), r, rtol=0, atol=1e-10)
    np.testing.assert_allclose(prec.solve(prec.forward(r)), r, rtol=0, atol=1e-10)


def test_preconditioner_model_is_player_q_part_when_only_point_ties_are_listed():
    """Wide PBP intervals: the only listed edges are the ties between the point payoffs mu[i, j, i] = 1/2, so the
    model must be exactly ``I - gamma (player q's part of P, with the whole diagonal)``."""
    lo, hi = _intervals("wide", n_alg=3, n_env=4, seed=5)
    chain = jbounds.interval_chain(lo, hi)
    st = jpairs.interval_structure(lo, hi)
    assert set(np.unique(st.kind)) == {jpairs.TIE}
    V = _values(np.random.default_rng(6), st.n_states)
    P = _dense_policy(chain, V)
    same_i = np.equal.outer(np.arange(st.n_states) // (st.n_states // st.n_alg), np.arange(st.n_states) // 12)
    model = np.eye(st.n_states) - st.gamma * np.where(same_i, P, 0.0)
    prec = jpolicy.Policy(st, V).preconditioner
    got = np.stack([prec.forward(e) for e in np.eye(st.n_states)], axis=1)
    np.testing.assert_allclose(got, model, rtol=0, atol=1e-14)


@pytest.mark.parametrize("kind", ["wide", "narrow", "clipped"])
def test_policy_evaluation_equals_a_dense_solve(kind):
    lo, hi = _intervals(kind, seed=7)
    chain = jbounds.interval_chain(lo, hi)
    st = jpairs.interval_structure(lo, hi)
    rng = np.random.default_rng(8)
    V = _values(rng, st.n_states)
    R = hi[1].ravel()[np.arange(st.n_states) % (st.n_states // st.n_alg)]
    A = np.eye(st.n_states) - st.gamma * _dense_policy(chain, V)
    ref = np.linalg.solve(A, R)
    got = jpolicy.evaluate(jpolicy.Policy(st, V), R)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=0)


@pytest.mark.parametrize("kind", ["wide", "narrow", "clipped"])
@pytest.mark.parametrize("min_sign", ["signed", "abs"])
def test_structured_bounds_equal_dense_policy_iteration(kind, min_sign):
    """The whole optimisation: every bound within the two runs' certified slacks of the dense path's, plus 1e-10
    relative (GMRES accepts a relative residual of 1e-10, where LAPACK reaches round-off)."""
    lo, hi = _intervals(kind, n_alg=4, n_env=6, seed=9)
    fast = jbounds.aggregate_bounds(lo, hi, solver="iterative", min_sign=min_sign)
    dense = jbounds.aggregate_bounds(lo, hi, solver="dense", min_sign=min_sign)
    tol = fast[2]["max_slack"] + dense[2]["max_slack"] + 1e-10
    np.testing.assert_allclose(fast[0], dense[0], rtol=0, atol=tol)
    np.testing.assert_allclose(fast[1], dense[1], rtol=0, atol=tol)
    assert fast[2]["n_uncertain"] == dense[2]["n_uncertain"]
    assert fast[2]["max_slack"] < 1e-8


def test_large_chains_take_the_structured_path_and_agree_with_the_dense_one():
    """936 states (> DENSE_MAX_STATES): ``auto`` is the structured path; its bounds contain the point aggregate."""
    lo, hi = _intervals("wide", n_alg=6, n_env=26, seed=10)
    assert 6 * 26 * 6 > jd.DENSE_MAX_STATES
    auto = jbounds.aggregate_bounds(lo, hi)
    dense = jbounds.aggregate_bounds(lo, hi, solver="dense")
    tol = auto[2]["max_slack"] + dense[2]["max_slack"] + 1e-10
    np.testing.assert_allclose(auto[0], dense[0], rtol=0, atol=tol)
    np.testing.assert_allclose(auto[1], dense[1], rtol=0, atol=tol)


def test_point_equilibrium_of_a_large_chain_equals_the_general_solver():
    rng = np.random.default_rng(11)
    samples = [[rng.normal(rng.normal(), 1.0, size=6) for _ in range(26)] for _ in range(6)]
    mu = jd.payoff_matrix(samples)
    auto = jd.equilibrium(mu)  # 936 states: the structured solver
    general = jd.equilibrium(mu, solver="iterative")
    np.testing.assert_allclose(auto.pi, general.pi, rtol=0, atol=1e-13)
    np.testing.assert_allclose(auto.y, general.y, rtol=1e-10)


def _band(xs_k, e, sign, a, b, v):
    """The normaliser's DKW band (lower for ``sign = -1``), exact outside the support ``[a, b]``."""
    g = np.clip(np.searchsorted(xs_k, v, side="right") / xs_k.size + sign * e, 0.0, 1.0)
    return np.where(v >= b, 1.0, np.where(v < a, 0.0, g))


def _pbp_bounds_per_pair(s, delta, support):
    """PBP payoff intervals pair by pair (spec section 4 steps 1-5), the direct way, as a reference."""
    n_alg, n_env = len(s), len(s[0])
    eps = np.asarray(dkw_epsilon(cell_sizes(s), split_cells(delta, n_alg, n_env)))
    lo = np.full((n_alg, n_env, n_alg), 0.5)
    hi = np.full((n_alg, n_env, n_alg), 0.5)
    for j in range(n_env):
        a, b = support[j]
        for k in range(n_alg):
            for i in range(n_alg):
                if i == k:
                    continue
                lo[i, j, k] = jbounds.anderson_mean_bounds(
                    s[i][j], eps[i, j], a, b, partial(_band, s[k][j], eps[k, j], -1, a, b)
                )[0]
                hi[i, j, k] = jbounds.anderson_mean_bounds(
                    s[i][j], eps[i, j], a, b, partial(_band, s[k][j], eps[k, j], 1, a, b)
                )[1]
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


def test_pbp_payoff_bounds_equal_the_pair_by_pair_computation():
    rng = np.random.default_rng(12)
    s = jd.as_samples([[rng.normal(rng.normal(), 1.0, size=rng.integers(2, 9)) for _ in range(3)] for _ in range(4)])
    support, _ = jd.resolve_support(s, None)
    got = jbounds.pbp_payoff_bounds(s, 0.05, support, presorted=True)
    ref = _pbp_bounds_per_pair(s, 0.05, support)
    np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(got[1], ref[1], rtol=0, atol=1e-14)


def test_an_evaluation_gmres_cannot_finish_falls_back_to_the_dense_solve(monkeypatch):
    lo, hi = _intervals("wide", seed=13)
    st = jpairs.interval_structure(lo, hi)
    reward = hi[0].ravel()[np.arange(st.n_states) % (st.n_states // st.n_alg)]
    ref = jbounds.optimise_structured(st, reward)
    monkeypatch.setattr(jpolicy, "_ROUNDS", 0)  # no refinement round: every evaluation misses its tolerance
    with pytest.raises(jpolicy.NotConverged):
        jbounds.optimise_structured(st, reward)
    dense = jbounds.optimise_structured(st, reward, dense_chain=lambda: jbounds.interval_chain(lo, hi))
    assert abs(dense.value - ref.value) <= dense.slack + ref.slack + 1e-10
