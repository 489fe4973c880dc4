"""Simultaneous intervals on the aggregate: PBP and PBP-t payoff bounds, the interval chain, policy iteration."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ...executors import Executor, resolve
from .. import distributions
from .chain import DENSE_FALLBACK_MAX, DENSE_MAX_STATES, ChainSolver, ChainStructure, chain_structure, single_thread
from .ecdf import (
    DEFAULT_DELTA,
    POPULATION_M,
    Samples,
    approx,
    as_samples,
    cell_sizes,
    dkw_epsilon,
    resolve_support,
    split_cells,
)
from .pairs import IntervalStructure, interval_structure
from .policy import NotConverged, Policy, evaluate


def anderson_mean_bounds(
    z: np.ndarray, eps: float, a: float, b: float, g: Callable[[np.ndarray], np.ndarray] | None = None
) -> tuple[float, float]:
    """Anderson's bounds on ``E g(Y)`` for ``Y in [a, b]`` from a sorted sample ``z`` (spec section 4.4).

    ``g`` must be nondecreasing; the identity by default (the per-task mean interval).
    """
    z = np.sort(np.asarray(z, dtype=float))
    n = z.size
    g = (lambda v: v) if g is None else g
    t = np.arange(n + 1) / n
    gz = np.asarray(g(np.concatenate([[a], z, [b]])), dtype=float)  # g(z_0..z_{n+1})
    upper = gz[-1] - np.sum(np.diff(gz[1:]) * np.maximum(t[1:] - eps, 0.0))
    lower = gz[n] - np.sum(np.diff(gz[: n + 1]) * np.minimum(t[:-1] + eps, 1.0))
    return float(lower), float(upper)


def pbp_payoff_bounds(
    samples: Samples, delta: float = DEFAULT_DELTA, support: np.ndarray | None = None, *, presorted: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """PBP payoff intervals ``[mu^-, mu^+]`` (spec section 4 steps 1-5), each ``(nA, nE, nA)``.

    ``support`` is the ``(nE, 2)`` array of score bounds (see :func:`resolve_support`).
    """
    s = [list(row) for row in samples] if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    if support is None:
        support, _ = resolve_support(s, None)
    sizes = cell_sizes(s)
    eps = np.asarray(dkw_epsilon(sizes, split_cells(delta, n_alg, n_env)))
    lo = np.empty((n_alg, n_env, n_alg))
    hi = np.empty((n_alg, n_env, n_alg))
    for j in range(n_env):
        a, b = support[j]
        # every algorithm's points [a, z_i, b], concatenated, and every normaliser's band at all of them at once
        # (one pass per (task, normaliser) instead of one per (task, normaliser, algorithm))
        pts = np.concatenate([np.concatenate([[a], s[i][j], [b]]) for i in range(n_alg)])
        ends = np.cumsum([s[i][j].size + 2 for i in range(n_alg)])
        f = np.stack([np.searchsorted(s[k][j], pts, side="right") / s[k][j].size for k in range(n_alg)])
        e_k = eps[:, j][:, None]
        inside_lo, top = pts < a, pts >= b
        g_lo = np.where(top, 1.0, np.where(inside_lo, 0.0, np.maximum(f - e_k, 0.0)))
        g_hi = np.where(top, 1.0, np.where(inside_lo, 0.0, np.minimum(f + e_k, 1.0)))
        for i in range(n_alg):
            n = s[i][j].size
            seg = slice(ends[i] - n - 2, ends[i])
            gl, gh = g_lo[:, seg], g_hi[:, seg]
            t = np.arange(n + 1) / n
            e_i = eps[i, j]
            # upper: g(b) - sum_{t=1..n} [g(z_{t+1}) - g(z_t)] max(t/n - eps, 0), z_{n+1} = b
            hi[i, j] = gh[:, -1] - np.diff(gh[:, 1:], axis=1) @ np.maximum(t[1:] - e_i, 0.0)
            # lower: g(z_n) - sum_{t=0..n-1} [g(z_{t+1}) - g(z_t)] min(t/n + eps, 1), z_0 = a
            lo[i, j] = gl[:, n] - np.diff(gl[:, : n + 1], axis=1) @ np.minimum(t[:-1] + e_i, 1.0)
    diag = np.arange(n_alg)
    lo[diag, :, diag] = 0.5  # Q1: self-normalised payoffs are exactly 1/2
    hi[diag, :, diag] = 0.5
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


_T_SPLITS = ("cells", "pairs", "means")


def t_delta(delta: float, n_alg: int, n_env: int, split: str) -> float:
    if split == "cells":
        return delta / (n_alg * n_env)
    if split == "pairs":
        return delta / (n_alg * n_alg * n_env)
    if split == "means":
        return delta / max(n_alg * (n_alg - 1) * n_env, 1)
    raise ValueError(f"t_split must be one of {_T_SPLITS}, got {split!r}")


def pbpt_payoff_bounds(
    samples: Samples,
    delta: float = DEFAULT_DELTA,
    *,
    t_split: str = "cells",
    clip: bool = False,
    presorted: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """PBP-t payoff intervals: Student-t intervals on ``mean_t F_kj(x_ij,t)`` (spec section 5; Q6, Q7)."""
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    d = t_delta(delta, n_alg, n_env, t_split)
    lo = np.full((n_alg, n_env, n_alg), 0.5)
    hi = np.full((n_alg, n_env, n_alg), 0.5)
    for j in range(n_env):
        for i in range(n_alg):
            n = s[i][j].size
            if n < 2:
                raise ValueError(f"PBP-t needs at least 2 runs per (algorithm, task); algorithm {i}, task {j} has {n}")
            tstar = distributions.t_ppf(1.0 - d / 2.0, n - 1)
            for k in range(n_alg):
                if i == k:
                    continue
                v = np.searchsorted(s[k][j], s[i][j], side="right") / s[k][j].size
                half = tstar * v.std(ddof=1) / math.sqrt(n)
                lo[i, j, k] = v.mean() - half
                hi[i, j, k] = v.mean() + half
    if clip:
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return lo, hi


# --------------------------------------------------------------------------- interval chain + optimisation
@dataclass
class IntervalChain:
    """Row-wise bounds of the uncertainty set: slot values in ``[lower, lower + cap]`` with row sum 1."""

    structure: ChainStructure
    lower: np.ndarray  # (S, M) incl. diagonal slot
    cap: np.ndarray  # (S, M) upper - lower
    n_uncertain: int  # off-diagonal uncertain edges

    @property
    def upper(self) -> np.ndarray:
        return self.lower + self.cap

    @property
    def budget(self) -> np.ndarray:
        return 1.0 - self.lower.sum(axis=1)


_TIE_RULES = ("strict", "authors")


def interval_chain(
    mu_lo: np.ndarray, mu_hi: np.ndarray, *, tie_rule: str = "strict", m: float = POPULATION_M
) -> IntervalChain:
    """Interval transition matrix from payoff intervals (spec section 4 step 6; Q5)."""
    if tie_rule not in _TIE_RULES:
        raise ValueError(f"tie_rule must be one of {_TIE_RULES}, got {tie_rule!r}")
    mu_lo = np.asarray(mu_lo, dtype=float)
    mu_hi = np.asarray(mu_hi, dtype=float)
    n_alg, n_env, _ = mu_lo.shape
    cs = chain_structure(n_alg, n_env)
    lo_flat, hi_flat = mu_lo.ravel(), mu_hi.ravel()
    off = cs.nbr[:, :-1]
    is_p = cs.is_p
    # Player interval: p -> [lo, hi]; q -> [-hi, -lo].
    lo_s = np.where(is_p, lo_flat[:, None], -hi_flat[:, None])
    hi_s = np.where(is_p, hi_flat[:, None], -lo_flat[:, None])
    lo_n = np.where(is_p, lo_flat[off], -hi_flat[off])
    hi_n = np.where(is_p, hi_flat[off], -lo_flat[off])
    certain_up = lo_n > hi_s
    certain_zero = ~certain_up & (lo_s > hi_n)
    same = approx(lo_n, lo_s) & approx(hi_n, hi_s)
    if tie_rule == "strict":
        certain_zero &= ~approx(lo_s, hi_n)
        same &= approx(lo_s, hi_s) & approx(lo_n, hi_n)
    tie = ~certain_up & ~certain_zero & same
    uncertain = ~certain_up & ~certain_zero & ~tie
    eta = cs.eta
    lower_off = np.where(certain_up, eta, 0.0) + np.where(tie, eta / m, 0.0)
    cap_off = np.where(uncertain, eta, 0.0)
    diag_lo = 1.0 - (lower_off + cap_off).sum(axis=1)
    diag_cap = cap_off.sum(axis=1)
    lower = np.concatenate([lower_off, diag_lo[:, None]], axis=1)
    cap = np.concatenate([cap_off, diag_cap[:, None]], axis=1)
    return IntervalChain(cs, lower, cap, int(uncertain.sum()))


def greedy_rows_knapsack(chain: IntervalChain, V: np.ndarray) -> np.ndarray:
    """Exact ``argmax_{x in P_s} x . V`` for every row at once: the fractional knapsack of spec section 4.7.

    Uncertain slots are filled in decreasing order of ``V`` (stable: slot order breaks ties) until the
    row's free mass ``1 - sum(lower)`` is spent. General caps; see :func:`greedy_rows` for the fast path.
    """
    nbr = chain.structure.nbr
    key = V[nbr]
    order = np.argsort(-key, axis=1, kind="stable")
    cap_sorted = np.take_along_axis(chain.cap, order, axis=1)
    before = np.cumsum(cap_sorted, axis=1) - cap_sorted
    alloc_sorted = np.clip(chain.budget[:, None] - before, 0.0, cap_sorted)
    alloc = np.empty_like(alloc_sorted)
    np.put_along_axis(alloc, order, alloc_sorted, axis=1)
    return chain.lower + alloc


def greedy_rows(chain: IntervalChain, V: np.ndarray) -> np.ndarray:
    """The same optimum as :func:`greedy_rows_knapsack` without sorting.

    Every uncertain off-diagonal slot has capacity ``eta`` and the diagonal's capacity equals the row's
    whole free mass, so the knapsack gives ``eta`` to each uncertain neighbour whose value beats the state's
    own and the rest to the diagonal. Neighbours tied with the state's own value get nothing (any split is
    optimal; this choice is deterministic).
    """
    cs = chain.structure
    off = cs.nbr[:, :-1]
    rows = chain.lower.copy()
    better = V[off] > V[:, None]
    rows[:, :-1] += np.where(better, chain.cap[:, :-1], 0.0)
    rows[:, -1] = 1.0 - rows[:, :-1].sum(axis=1)
    return rows


@dataclass
class OptResult:
    value: float
    iterations: int
    V: np.ndarray
    slack: float


def _certified(
    V: np.ndarray, R: np.ndarray, best: np.ndarray, gamma: float, sign: float, min_sign: str, offset: float = 0.0
):
    """The bound from the last policy's values ``V + offset`` plus the certified slack (see
    :func:`optimise_aggregate`); ``R`` and ``best`` are the reward and greedy values for the same offset."""
    slack = max(0.0, float(np.max(R + gamma * best - V)))
    if min_sign == "abs":
        return (1.0 - gamma) * float(np.mean(np.abs(V + offset))) + slack, slack
    return sign * ((1.0 - gamma) * (float(np.mean(V)) + offset) + slack), slack


def _signed_reward(reward: np.ndarray, maximise: bool, min_sign: str) -> tuple[float, np.ndarray]:
    """``min_sign`` checked, and the sign and reward of the maximisation both optimisers run (a minimisation
    maximises ``-r``)."""
    if min_sign not in ("signed", "abs"):
        raise ValueError(f"min_sign must be 'signed' or 'abs', got {min_sign!r}")
    sign = 1.0 if maximise else -1.0
    return sign, np.asarray(reward, dtype=float).ravel() * sign


def optimise_aggregate(
    chain: IntervalChain,
    reward: np.ndarray,
    *,
    maximise: bool = True,
    min_sign: str = "signed",
    max_iter: int = 400,
    V0: np.ndarray | None = None,
    solver: str = "auto",
    preconditioner: ChainSolver | None = None,
) -> OptResult:
    """``max`` (or ``min``) over the uncertainty set of ``(1-gamma)/|S| 1^T (I - gamma P)^{-1} r``.

    Policy iteration (spec section 4 step 7; Q6, Q10): the greedy step is the exact fractional knapsack
    of every row at once; the evaluation is one linear solve. A row only changes when that improves its
    greedy value by more than ``1e-11 * max(1, |V|)``; the loop ends when no row does (or after
    ``max_iter``). The returned value adds the certified slack ``max(0, max_s (T V - V)(s))`` (Bellman
    residual, ``(1-gamma) mean(V*) <= (1-gamma) mean(V) + max(TV - V)``), so an early stop or round-off
    can only widen the interval, never shrink it. The slack is about 1e-12 in practice.
    ``preconditioner``: a :class:`ChainSolver` of this chain whose block factorisation preconditions the first
    evaluation (:func:`aggregate_bounds` shares the one of the V = 0 policy, where every optimisation starts).
    """
    sign, R = _signed_reward(reward, maximise, min_sign)
    cs = chain.structure
    V = np.zeros(cs.n_states) if V0 is None else np.asarray(V0, dtype=float).ravel() * sign
    rows = greedy_rows(chain, V)
    V = ChainSolver(rows, cs, solver=solver, preconditioner=preconditioner).solve(R)
    # Successive policies differ in fewer and fewer rows, so one factorisation of a policy's blocks preconditions
    # the next evaluations too. It is redone when a solve needed the dense fallback or twice the GMRES iterations
    # of the solve right after it was made (the policy has moved too far from it).
    factorised: ChainSolver | None = None
    fresh_matvecs = 0
    it = 1
    while True:
        cand = greedy_rows(chain, V)
        vals = V[cs.nbr]
        best = np.einsum("sm,sm->s", cand, vals)
        gain = best - np.einsum("sm,sm->s", rows, vals)
        improve = gain > 1e-11 * max(1.0, float(np.max(np.abs(V))))
        if not improve.any() or it >= max_iter:
            break
        rows[improve] = cand[improve]
        evaluation = ChainSolver(rows, cs, solver=solver, preconditioner=factorised)
        V = evaluation.solve(R, x0=V)
        if factorised is None:
            factorised, fresh_matvecs = evaluation, evaluation.matvecs
        if evaluation.fallbacks or evaluation.matvecs > 2 * max(fresh_matvecs, 5):
            factorised = None
        it += 1
    value, slack = _certified(V, R, best, cs.gamma, sign, min_sign)
    return OptResult(value, it, V, slack)


def optimise_structured(
    st: IntervalStructure,
    reward: np.ndarray,
    *,
    maximise: bool = True,
    min_sign: str = "signed",
    max_iter: int = 400,
    dense_chain: Callable[[], IntervalChain] | None = None,
) -> OptResult:
    """:func:`optimise_aggregate` on an :class:`IntervalStructure`, without any ``|S| x M`` array.

    Policy iteration on whole greedy policies: each policy is the greedy policy of one value vector (so it is an
    operator of :mod:`.policy`, sorted once). The loop continues while some row's greedy value beats its current
    one by more than ``1e-11 * max(1, |V|)`` (the test of :func:`optimise_aggregate`); every row then takes its
    greedy row, which is at least as good up to round-off. The same certified slack is added, so the bound is as
    valid and, at convergence, the same optimum to round-off. ``dense_chain`` builds the full chain for the dense
    solve of an evaluation GMRES cannot finish (only offered up to 8000 states).
    """
    sign, R = _signed_reward(reward, maximise, min_sign)

    def solve(policy: Policy, x0: np.ndarray | None) -> np.ndarray:
        try:
            return evaluate(policy, R, x0)
        except NotConverged:
            if dense_chain is None or st.n_states > DENSE_FALLBACK_MAX:
                raise
            chain = dense_chain()
            return ChainSolver(greedy_rows(chain, policy.V), chain.structure, solver="dense").solve(R)

    policy = Policy(st, np.zeros(st.n_states))
    V = solve(policy, None)
    it = 1
    while True:
        cand = Policy(st, V)
        # greedy values, centred: P V = P (V - c) + c (see Policy.apply_centred)
        best, c = cand.apply_centred(V)
        gain = best - policy.apply(V - c)
        if not (gain > 1e-11 * max(1.0, float(np.max(np.abs(V))))).any() or it >= max_iter:
            break
        policy = cand
        V = solve(policy, V)
        it += 1
    value, slack = _certified(V - c, R - (1.0 - st.gamma) * c, best, st.gamma, sign, min_sign, offset=c)
    return OptResult(value, it, V, slack)


class _Rules(NamedTuple):
    """The optimisation's rules, passed to every executor unit."""

    tie_rule: str
    min_sign: str
    m: float
    max_iter: int


def _bound(
    unit: tuple[int, bool],
    *,
    payoffs: tuple[np.ndarray, np.ndarray],
    rules: _Rules,
    chain: IntervalChain | None,
    structure: IntervalStructure | None,
) -> tuple[float, int, float]:
    """One of the ``2 nA`` optimisations (an executor unit): ``(value, iterations, slack)`` of algorithm
    ``unit[0]``'s upper (``unit[1]``) or lower bound; ``payoffs``: the payoff intervals' ends."""
    i, maximise = unit
    mu_lo, mu_hi = payoffs
    tie_rule, min_sign, m, max_iter = rules
    mu = mu_hi if maximise else mu_lo
    reward = np.broadcast_to(mu[i], mu.shape).ravel()
    with single_thread():
        if structure is not None:
            res = optimise_structured(
                structure,
                reward,
                maximise=maximise,
                min_sign=min_sign,
                max_iter=max_iter,
                dense_chain=partial(interval_chain, mu_lo, mu_hi, tie_rule=tie_rule, m=m),
            )
        else:
            assert chain is not None
            res = optimise_aggregate(
                chain, reward, maximise=maximise, min_sign=min_sign, max_iter=max_iter, solver="dense"
            )
    return res.value, res.iterations, res.slack


def aggregate_bounds(
    mu_lo: np.ndarray,
    mu_hi: np.ndarray,
    *,
    tie_rule: str = "strict",
    min_sign: str = "signed",
    m: float = POPULATION_M,
    max_iter: int = 400,
    solver: str = "auto",
    executor: str | Executor | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``(y^-, y^+)`` for every algorithm from payoff intervals (spec section 4 steps 6-7).

    ``y^+_i`` maximises over the uncertainty set with reward ``r^+_i(s) = mu^+[i, j(s), k(s)]``; ``y^-_i``
    minimises with ``r^-_i``. ``2 nA`` policy iterations in all, independent units of ``executor`` (see
    :mod:`rl_reliable_logger.executors`; serial by default): each depends on its inputs only, so every executor
    gives the same numbers (bit for bit when BLAS starts with the same number of threads; else to round-off).
    ``solver``: ``"dense"`` evaluates every policy by a dense LAPACK solve of the full chain
    (:func:`optimise_aggregate`); ``"iterative"`` uses the sorted operators of :mod:`.policy` and GMRES
    (:func:`optimise_structured`); ``"auto"`` the first up to ``DENSE_MAX_STATES`` states, else the second.
    """
    if tie_rule not in _TIE_RULES:
        raise ValueError(f"tie_rule must be one of {_TIE_RULES}, got {tie_rule!r}")
    if solver not in ("auto", "dense", "iterative"):
        raise ValueError(f"solver must be 'auto', 'dense' or 'iterative', got {solver!r}")
    mu_lo = np.asarray(mu_lo, dtype=float)
    mu_hi = np.asarray(mu_hi, dtype=float)
    n_alg, n_env, _ = mu_lo.shape
    n_states = n_alg * n_env * n_alg
    dense = solver == "dense" or (solver == "auto" and n_states <= DENSE_MAX_STATES) or n_alg == 1
    chain = interval_chain(mu_lo, mu_hi, tie_rule=tie_rule, m=m) if dense else None
    structure = None if dense else interval_structure(mu_lo, mu_hi, tie_rule=tie_rule, m=m)
    fn = partial(
        _bound,
        payoffs=(mu_lo, mu_hi),
        rules=_Rules(tie_rule, min_sign, m, max_iter),
        chain=chain,
        structure=structure,
    )
    units = [(i, maximise) for i in range(n_alg) for maximise in (True, False)]
    results = resolve(executor).map(fn, units)
    values = np.array([r[0] for r in results]).reshape(n_alg, 2)
    info = {
        "n_uncertain": chain.n_uncertain if chain is not None else structure.n_uncertain,  # type: ignore[union-attr]
        "iterations": [r[1] for r in results],
        "max_slack": max(r[2] for r in results),
        "tie_rule": tie_rule,
        "min_sign": min_sign,
    }
    return values[:, 1].copy(), values[:, 0].copy(), info
