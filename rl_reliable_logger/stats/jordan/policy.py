r"""A greedy policy of the interval chain as a linear operator: sorting and prefix sums instead of ``|S| x M`` rows.

Why: the greedy row of state ``s`` for values ``V`` (:func:`.bounds.greedy_rows`, spec section 4.7) gives ``eta`` to
every uncertain neighbour ``s'`` with ``V[s'] > V[s]``, the fixed mass of every other edge (``eta``, ``eta/m`` or
0) and the rest to ``s`` itself. Sorting each neighbour group (:mod:`.pairs`) by ``V`` once per policy turns
"sum of ``x`` over the neighbours that beat ``s``" into one prefix sum, so a product with the policy's matrix costs
``O(|S|)`` after an ``O(|S| log |S|)`` sort, instead of ``O(|S| (nA + nA nE))`` (at 50 algorithms x 26 tasks: 65,000
states of 1,348 neighbours). The edges that are not uncertain are corrected with a sparse matrix over the listed
edges only (their fixed mass minus what the "uncertain" rule gave them).

A policy's evaluation ``(I - gamma P) V = R`` is solved by restarted GMRES, right-preconditioned by the exact
solve of player *q*'s part with the whole diagonal (:mod:`.precondition`). The true residual is checked after
the solve.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .groups import SortedGroups
from .pairs import IntervalStructure
from .precondition import QPreconditioner


class Policy:
    """The greedy policy of ``V`` (rows as :func:`.bounds.greedy_rows`), as the operator ``x -> P x``."""

    def __init__(self, st: IntervalStructure, V: np.ndarray) -> None:
        from scipy import sparse

        self.st = st
        self.V = V
        self.q = SortedGroups(st.q_groups, V)
        self.p = SortedGroups(st.p_groups, V)
        rows = st.rows
        # listed edges: their fixed mass minus the eta that the "uncertain" rule gives a better-valued neighbour
        data = st.weight - st.eta * (V[st.cols] > V[rows])
        S = st.n_states
        self.K = sparse.csr_matrix((data, st.cols, st.indptr), shape=(S, S))
        off = st.eta * (self.q.n_better + self.p.n_better) + np.bincount(rows, weights=data, minlength=S)
        self.diag = 1.0 - off
        self._prec: QPreconditioner | None = None

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``P x``."""
        eta = self.st.eta
        return eta * (self.q.better_sum(x) + self.p.better_sum(x)) + self.K @ x + self.diag * x

    def residual(self, x: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``b - (I - gamma P) x``."""
        return b - x + self.st.gamma * self.apply(x)

    @property
    def preconditioner(self) -> QPreconditioner:
        """Player q's part of this policy, solved exactly (:mod:`.precondition`); built on first use."""
        if self._prec is None:
            self._prec = QPreconditioner(self.st, self.q, self.diag)
        return self._prec


class NotConverged(RuntimeError):
    """GMRES missed the tolerance on a policy evaluation."""


def _gmres(op: Any, b: np.ndarray, x0: np.ndarray | None, rtol: float, restart: int, maxiter: int) -> np.ndarray:
    from scipy.sparse.linalg import gmres

    try:
        u, _ = gmres(op, b, x0=x0, rtol=rtol, atol=0.0, restart=restart, maxiter=maxiter)
    except TypeError:  # pragma: no cover - scipy < 1.12 spells it tol
        u, _ = gmres(op, b, x0=x0, tol=rtol, atol=0.0, restart=restart, maxiter=maxiter)
    return u


def evaluate(policy: Policy, R: np.ndarray, x0: np.ndarray | None = None, *, rtol: float = 1e-12) -> np.ndarray:
    """``V`` with ``(I - gamma P) V = R`` for the policy; raises :class:`NotConverged` if GMRES cannot reach it.

    Success means a true relative residual ``<= 100 rtol`` (the check of :class:`.chain.ChainSolver`). GMRES itself
    aims at ``10 rtol``: the true residual of these near-singular systems (``gamma = 1 - 1/|S|``) has a round-off
    floor near ``rtol`` at tens of thousands of states, and a GMRES aiming below it restarts hundreds of times.
    """
    from scipy.sparse.linalg import LinearOperator

    S = policy.st.n_states
    prec = policy.preconditioner

    def matvec(u: np.ndarray) -> np.ndarray:
        x = prec.solve(np.ravel(u))
        return x - policy.st.gamma * policy.apply(x)

    op = LinearOperator((S, S), matvec=matvec, dtype=float)
    u0 = None if x0 is None else prec.forward(np.asarray(x0, dtype=float))
    norm_b = max(float(np.linalg.norm(R)), 1e-300)
    for restart, maxiter in ((min(S, 60), 10), (min(S, 200), 20)):
        u = _gmres(op, R, u0, 10.0 * rtol, restart, maxiter)
        x = prec.solve(u)
        if np.linalg.norm(policy.residual(x, R)) <= 100.0 * rtol * norm_b:
            return x
        u0 = u
    raise NotConverged(f"GMRES did not reach a relative residual of {100 * rtol:g} on a {S}-state policy")
