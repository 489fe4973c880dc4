r"""Stationary distributions of a whole batch of bootstrap chains at once, using their structure.

Why not one linear solve per chain: at the paper's size (11 algorithms, 15 tasks, |S| = 1815 states) a
sparse solve takes ~50 ms, so 10,000 replicates took ~5 minutes. The saturated chain has structure that
makes each solve O(|S|) per sweep:

* inside a *block* (fixed algorithm ``i`` of player *p*), player *q* moves from ``(j, k)`` to every
  ``(j', k')`` with a strictly lower payoff with probability ``eta`` and to every tied one with
  ``eta/m``. Sorting the block by payoff (descending) makes the block's part of
  ``pi^T (I - gamma C) = b^T`` a recurrence over groups of equal payoffs, solved exactly in one pass;
* player *p*'s moves (``i -> i'`` at fixed ``(j, k)``, to every strictly larger payoff) couple the blocks.
  They are handled by block-Jacobi sweeps with an *iterative aggregation-disaggregation* step after each
  sweep (Koury, McAllister & Stewart 1984): the ``nA`` block totals are corrected exactly by an
  ``nA x nA`` solve. It converges to 1e-13 in ~15 sweeps on real data.

Exact ties are what the structure assumes. Payoffs are ratios of integer counts, so equal rationals
are bitwise equal and distinct ones differ by far more than the chain's tie tolerance
(``sqrt(eps)`` relative); a chain where two *distinct* payoffs are within that tolerance (possible
only with hundreds of runs per cell) or that does not converge is solved by :class:`.chain.ChainSolver`
instead, so every chain gets the exact answer of spec section 2.

Computed in numpy, vectorised over a block of replicates.
"""

from __future__ import annotations

import numpy as np

from .chain import ChainSolver, chain_slots, chain_structure, point_codes, restart_vector
from .ecdf import SQRT_EPS

#: Convergence threshold of the sweeps: max |change| <= TOL * max(pi).
TOL = 1e-13
#: Sweeps before a chain is handed to the general solver.
MAX_SWEEPS = 200
#: Replicates per vectorised numpy block (bounds memory: ~ 20 |S| nA floats each).
_NUMPY_BLOCK = 64

OK, NEAR_TIE, NOT_CONVERGED = 0, 1, 2


def _constants(n_alg: int, n_q: int, m: float) -> tuple[float, float, float, float, float]:
    n_states = n_alg * n_q
    eta = 1.0 / ((n_alg - 1) + (n_q - 1))
    gamma = (n_states - 1) / n_states
    return eta, gamma, (1.0 - gamma) / n_states, gamma * eta / m, gamma * eta


# --------------------------------------------------------------------------- numpy engine
def _groups(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For ``v`` sorted along the last axis: last-of-group flags, group start/end of each position, near ties."""
    n = v.shape[-1]
    t = np.arange(n)
    first = np.ones(v.shape, bool)
    first[..., 1:] = v[..., 1:] != v[..., :-1]
    last = np.ones(v.shape, bool)
    last[..., :-1] = first[..., 1:]
    start = np.maximum.accumulate(np.where(first, t, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, t, n - 1), -1), axis=-1), -1)
    d = np.abs(np.diff(v, axis=-1))
    near = ((d > 0) & (d <= SQRT_EPS * np.maximum(np.abs(v[..., 1:]), np.abs(v[..., :-1])))).any(axis=-1)
    return last, start, end, near


def _group_sum(x: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    cs = np.cumsum(x, axis=-1)
    return np.take_along_axis(cs, end, -1) - np.take_along_axis(cs - x, start, -1)


def _numpy_block(mu: np.ndarray, m: float, pi0: np.ndarray, tol: float, max_sweeps: int):
    reps, n_alg, n_q = mu.shape
    eta, gamma, b, c, g = _constants(n_alg, n_q, m)
    # player q: each block sorted by payoff, descending (q moves down)
    oq = np.argsort(-mu, axis=2, kind="stable")
    lq, sq, eq, near_q = _groups(-np.take_along_axis(mu, oq, axis=2))
    out_q = eta * (n_q - 1 - eq) + (eta / m) * (eq - sq)
    # player p: each (j, k) sorted over algorithms, ascending (p moves up)
    mu_t = np.swapaxes(mu, 1, 2)
    op = np.argsort(mu_t, axis=2, kind="stable")
    _, sp, ep, near_p = _groups(np.take_along_axis(mu_t, op, axis=2))
    out_p_sorted = eta * (n_alg - 1 - ep) + (eta / m) * (ep - sp)
    out_p = np.empty_like(out_p_sorted)
    np.put_along_axis(out_p, op, out_p_sorted, axis=2)
    out_p = np.take_along_axis(np.swapaxes(out_p, 1, 2), oq, axis=2)
    inv_a = 1.0 / (1.0 - gamma * (1.0 - (out_q + out_p)) + c)  # q-sorted order
    H = _group_sum(inv_a, sq, eq)
    D = 1.0 - c * H
    alpha = np.where(lq, 1.0 + g * H / D, 1.0)
    P = np.cumprod(alpha, axis=-1)
    P_excl = P / alpha
    # p-moves between blocks, for the aggregation step: w[r, I, J, q] = P(I -> J at q)
    w = eta * (mu[:, None, :, :] > mu[:, :, None, :]) + (eta / m) * (mu[:, None, :, :] == mu[:, :, None, :])
    diag = np.arange(n_alg)
    w[:, diag, diag, :] = 0.0
    totals = np.full((reps, n_alg, 1), n_q * b)
    pi = np.broadcast_to(pi0.reshape(1, n_alg, n_q), mu.shape).copy()
    status = np.where(near_q.any(axis=1) | near_p.any(axis=1), NEAR_TIE, NOT_CONVERGED)
    for _ in range(max_sweeps):
        pt = np.take_along_axis(np.swapaxes(pi, 1, 2), op, axis=2)
        cs = np.cumsum(pt, axis=2)
        below = np.take_along_axis(cs - pt, sp, 2)
        tied = np.take_along_axis(cs, ep, 2) - below - pt
        inflow = np.empty_like(pt)
        np.put_along_axis(inflow, op, eta * below + (eta / m) * tied, axis=2)
        r0 = b + gamma * np.take_along_axis(np.swapaxes(inflow, 1, 2), oq, axis=2)
        R0 = _group_sum(r0 * inv_a, sq, eq)
        beta = np.where(lq, R0 / D, 0.0)
        A = P_excl * (np.cumsum(beta / P, axis=-1) - beta / P)  # q-inflow from strictly higher groups
        T = (R0 + g * A * H) / D
        new = np.empty_like(pi)
        np.put_along_axis(new, oq, (r0 + g * A + c * T) * inv_a, axis=2)
        X = new.sum(axis=2)
        F = np.einsum("riq,rijq->rij", new, w)
        G = -gamma * F
        G[:, diag, diag] += X - gamma * (X - F.sum(axis=2))
        new *= np.linalg.solve(np.swapaxes(G, 1, 2), totals)[:, :, 0][:, :, None]
        done = np.abs(new - pi).max(axis=(1, 2)) <= tol * new.max(axis=(1, 2))
        # a chain stops at its own convergence: extra sweeps while other chains of the block converge would
        # make its result depend on which replicates share the block
        active = status == NOT_CONVERGED
        pi = np.where(active[:, None, None], new, pi)
        status = np.where(active & done, OK, status)
        if (status != NOT_CONVERGED).all():
            break
    return pi.reshape(reps, -1), status


# --------------------------------------------------------------------------- entry point
def stationary_batch(
    mu: np.ndarray,
    *,
    m: float,
    pi0: np.ndarray | None = None,
    tol: float = TOL,
    max_sweeps: int = MAX_SWEEPS,
) -> np.ndarray:
    """Stationary distributions ``(R, |S|)`` of the point chains of payoffs ``mu`` ``(R, nA, nE, nA)``.

    ``pi0`` (``|S|``,) is the starting guess (the full-data solution is a good one). Chains the structured solve cannot take (see the module
    doc) are solved one by one with :class:`.chain.ChainSolver`.
    """
    mu = np.ascontiguousarray(mu, dtype=float)
    reps, n_alg, n_env, _ = mu.shape
    n_q = n_env * n_alg
    if n_alg < 2:
        raise ValueError("the batched solver needs at least two algorithms")
    flat = mu.reshape(reps, n_alg, n_q)
    start = np.full(n_alg * n_q, 1.0 / (n_alg * n_q)) if pi0 is None else np.asarray(pi0, float).ravel()
    parts = [_numpy_block(flat[i : i + _NUMPY_BLOCK], m, start, tol, max_sweeps) for i in range(0, reps, _NUMPY_BLOCK)]
    out = np.concatenate([p[0] for p in parts])
    status = np.concatenate([p[1] for p in parts])
    bad = np.flatnonzero(status != OK)
    if bad.size:
        cs = chain_structure(n_alg, n_env)
        for r in bad:
            slots = chain_slots(point_codes(mu[r].ravel(), cs), cs, m)
            out[r] = ChainSolver(slots, cs).solve(restart_vector(cs), transpose=True)
    return out
