r"""A greedy policy of the interval chain as a linear operator: sorting and prefix sums instead of ``|S| x M`` rows.

Why: the greedy row of state ``s`` for values ``V`` (:func:`.bounds.greedy_rows`, spec section 4.7) gives ``eta`` to
every uncertain neighbour ``s'`` with ``V[s'] > V[s]``, the fixed mass of every other edge (``eta``, ``eta/m`` or
0) and the rest to ``s`` itself. Sorting each neighbour group (:mod:`.pairs`) by ``V`` once per policy turns
"sum of ``x`` over the neighbours that beat ``s``" into one prefix sum, so a product with the policy's matrix costs
``O(|S|)`` after an ``O(|S| log |S|)`` sort, instead of ``O(|S| (nA + nA nE))`` (at 50 algorithms x 26 tasks: 65,000
states of 1,348 neighbours). The edges that are not uncertain are corrected with a sparse matrix over the listed
edges only (their fixed mass minus what the "uncertain" rule gave them).

A policy's evaluation ``(I - gamma P) V = R`` is solved by restarted GMRES, right-preconditioned by the exact
solve of player *q*'s part with the whole diagonal (:mod:`.precondition`), inside iterative refinement on the true
residual (:func:`evaluate`).
"""

from __future__ import annotations

import numpy as np

from .chain import gmres_call
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

    def apply_centred(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """``(P (x - c), c)`` with ``c`` the mean of ``x``: ``P x = P (x - c) + c`` (rows sum to 1).

        Why: values are about ``|S|`` times the rewards with a large common part; prefix sums over the centred
        values keep their round-off relative to the differences, which decide the policy and the residual.
        """
        c = float(np.mean(x))
        return self.apply(x - c), c

    def times(self, x: np.ndarray) -> np.ndarray:
        """``(I - gamma P) x``, with the common part of ``x`` taken out exactly (see :meth:`apply_centred`)."""
        px, c = self.apply_centred(x)
        return (1.0 - self.st.gamma) * c + (x - c) - self.st.gamma * px

    def residual(self, x: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``b - (I - gamma P) x``."""
        return b - self.times(x)

    @property
    def preconditioner(self) -> QPreconditioner:
        """Player q's part of this policy, solved exactly (:mod:`.precondition`); built on first use."""
        if self._prec is None:
            self._prec = QPreconditioner(self.st, self.q, self.diag)
        return self._prec


#: Rounds of iterative refinement before an evaluation gives up.
_ROUNDS = 8


class NotConverged(RuntimeError):
    """GMRES missed the tolerance on a policy evaluation."""


def evaluate(policy: Policy, R: np.ndarray, x0: np.ndarray | None = None, *, rtol: float = 1e-12) -> np.ndarray:
    """``V`` with ``(I - gamma P) V = R`` for the policy; raises :class:`NotConverged` if GMRES cannot reach it.

    Success means a true relative residual ``<= 100 rtol`` (the check of :class:`.chain.ChainSolver`). Iterative
    refinement around GMRES: each round solves for the correction of the current true residual. Why: the
    preconditioner's recurrence carries round-off relative to the size of what it solves (sums of tens of
    thousands of terms of both signs, scaled by up to ``|S|/n``), which puts a floor near ``1e-10`` under a
    single solve on some policies; a correction is small, so is its round-off. Each round asks GMRES for the
    remaining factor only (at most ``1e-9``: aiming at the floor makes it restart hundreds of times).
    """
    from scipy.sparse.linalg import LinearOperator

    S = policy.st.n_states
    prec = policy.preconditioner

    def matvec(u: np.ndarray) -> np.ndarray:
        return policy.times(prec.solve(np.ravel(u)))

    op = LinearOperator((S, S), matvec=matvec, dtype=float)
    target = 100.0 * rtol * max(float(np.linalg.norm(R)), 1e-300)
    x = np.zeros(S) if x0 is None else np.asarray(x0, dtype=float).copy()
    for _ in range(_ROUNDS):
        res = policy.residual(x, R)
        norm = float(np.linalg.norm(res))
        if norm <= target:
            return x
        inner = min(max(0.1 * target / norm, 1e-9), 0.5)
        x += prec.solve(gmres_call(op, res, None, inner, min(S, 60), 10)[0])
    if float(np.linalg.norm(policy.residual(x, R))) <= target:
        return x
    raise NotConverged(f"GMRES did not reach a relative residual of {100 * rtol:g} on a {S}-state policy")
