"""The joint-strategy chain: neighbour structure, transition matrices, one-chain solver.

See :mod:`.solver` for the stationary distributions of a whole batch of bootstrap chains at once and
:mod:`.point` for the equilibrium of one game.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .ecdf import POPULATION_M, SQRT_EPS


@dataclass(frozen=True)
class ChainStructure:
    """Neighbour structure of the joint-strategy chain for ``nA`` algorithms and ``nE`` tasks.

    ``nbr[s, m]`` is the state reached by the ``m``-th deviation from ``s``: slots ``0..nA-2`` are player
    *p*'s deviations, the next ``nA*nE-1`` are player *q*'s, the last slot is ``s`` itself.
    """

    n_alg: int
    n_env: int
    n_states: int
    eta: float
    gamma: float
    nbr: np.ndarray  # (S, M) int64, last column = s
    is_p: np.ndarray  # (M-1,) bool: True for p-deviation slots

    @property
    def n_slots(self) -> int:
        return self.nbr.shape[1]


@lru_cache(maxsize=16)
def chain_structure(n_alg: int, n_env: int) -> ChainStructure:
    """Build (and cache) the neighbour index arrays; no Python loop over states."""
    if n_alg < 1 or n_env < 1:
        raise ValueError("need at least one algorithm and one task")
    n_q = n_alg * n_env
    n_states = n_alg * n_q
    n_nbr = (n_alg - 1) + (n_q - 1)
    eta = 1.0 / n_nbr if n_nbr > 0 else 0.0
    gamma = (n_states - 1) / n_states
    i_idx, j_idx, k_idx = (a.ravel() for a in np.indices((n_alg, n_env, n_alg)))
    others_a = np.array([[x for x in range(n_alg) if x != i] for i in range(n_alg)], dtype=np.int64).reshape(
        n_alg, n_alg - 1
    )
    others_q = np.array([[x for x in range(n_q) if x != q] for q in range(n_q)], dtype=np.int64).reshape(n_q, n_q - 1)
    nbr_p = (others_a[i_idx] * n_env + j_idx[:, None]) * n_alg + k_idx[:, None]
    nbr_q = i_idx[:, None] * n_q + others_q[j_idx * n_alg + k_idx]
    nbr = np.concatenate([nbr_p, nbr_q, np.arange(n_states)[:, None]], axis=1)
    is_p = np.concatenate([np.ones(n_alg - 1, bool), np.zeros(n_q - 1, bool)])
    nbr.setflags(write=False)
    is_p.setflags(write=False)
    return ChainStructure(n_alg, n_env, n_states, eta, gamma, nbr, is_p)


def point_codes(mu_flat: np.ndarray, cs: ChainStructure) -> np.ndarray:
    """Slot codes of the point chain: 2 = strict improvement (eta), 1 = tie (eta/m), 0 = none.

    ``mu_flat`` has shape ``(..., S)``; codes have shape ``(..., S, M-1)``. Player *p* improves when the
    neighbour's payoff is larger, player *q* when it is smaller; the strict test comes first, then
    ``isapprox`` (spec section 2, Q5).
    """
    mu_flat = np.asarray(mu_flat, dtype=float)
    n_p = cs.n_alg - 1
    cur = mu_flat[..., :, None]
    new = mu_flat[..., cs.nbr[:, :-1]]
    diff = new - cur
    better = np.empty(diff.shape, dtype=bool)
    np.greater(diff[..., :n_p], 0.0, out=better[..., :n_p])
    np.less(diff[..., n_p:], 0.0, out=better[..., n_p:])
    if np.all(mu_flat >= 0):
        scale = np.maximum(new, cur)
    else:
        scale = np.maximum(np.abs(new), np.abs(cur))
    scale *= SQRT_EPS
    np.abs(diff, out=diff)
    tie = diff <= scale
    tie &= ~better
    codes = better.view(np.int8) * np.int8(2)
    codes += tie.view(np.int8)
    return codes


def dense_from_slots(slot_values: np.ndarray, cs: ChainStructure, out: np.ndarray | None = None) -> np.ndarray:
    """Dense ``(..., S, S)`` matrix with ``M[s, nbr[s, m]] = slot_values[..., s, m]`` (all M slots)."""
    S = cs.n_states
    shape = slot_values.shape[:-2] + (S, S)
    dense = np.zeros(shape) if out is None else out
    if out is not None:
        dense.fill(0.0)
    flat = dense.reshape(-1, S * S)
    idx = (np.arange(S)[:, None] * S + cs.nbr).ravel()
    flat[:, idx] = slot_values.reshape(-1, S * cs.n_slots)
    return dense


def chain_slots(codes: np.ndarray, cs: ChainStructure, m: float) -> np.ndarray:
    """Slot probabilities (..., S, M) from codes (..., S, M-1); the diagonal makes rows sum to 1."""
    table = np.array([0.0, cs.eta / m, cs.eta])
    off = table[codes]
    diag = 1.0 - off.sum(axis=-1, keepdims=True)
    return np.concatenate([off, diag], axis=-1)


def transition_matrix(mu: np.ndarray, *, m: float = POPULATION_M) -> np.ndarray:
    """Dense saturated alpha-Rank transition matrix ``C`` (|S| x |S|) of the payoffs ``mu`` (spec section 2)."""
    mu = np.asarray(mu, dtype=float)
    n_alg, n_env, _ = mu.shape
    cs = chain_structure(n_alg, n_env)
    return dense_from_slots(chain_slots(point_codes(mu.ravel(), cs), cs, m), cs)


def restart_vector(cs: ChainStructure) -> np.ndarray:
    return np.full(cs.n_states, (1.0 - cs.gamma) / cs.n_states)


#: Chains with at most this many states are solved densely (LAPACK); larger ones iteratively.
DENSE_MAX_STATES = 600
#: Beyond this many states the dense fallback of a solve GMRES cannot finish (8 |S|^2 bytes) is refused (here and
#: for PBP's policy evaluations, :func:`.bounds.optimise_structured`).
DENSE_FALLBACK_MAX = 8000


def gmres_call(
    op: Any, b: np.ndarray, x0: np.ndarray | None, rtol: float, restart: int, maxiter: int
) -> tuple[np.ndarray, int]:
    """scipy's GMRES with a relative tolerance only, on every supported scipy (``rtol=``, or ``tol=`` before 1.12)."""
    from scipy.sparse.linalg import gmres

    try:
        return gmres(op, b, x0=x0, rtol=rtol, atol=0.0, restart=restart, maxiter=maxiter)
    except TypeError:  # pragma: no cover - scipy < 1.12 spells it tol
        return gmres(op, b, x0=x0, tol=rtol, atol=0.0, restart=restart, maxiter=maxiter)


class single_thread:
    """Limit BLAS to one thread while solving many small systems (threadpoolctl, if installed).

    Multi-threaded BLAS on 165 x 165 blocks is slower than one thread, and catastrophically so on a
    busy machine; the big dense solves are not affected because large chains use the iterative path.
    """

    def __enter__(self):
        try:
            from threadpoolctl import threadpool_limits

            self._ctx = threadpool_limits(limits=1, user_api="blas")
        except Exception:  # pragma: no cover - optional dependency
            self._ctx = None
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.restore_original_limits()
        return False


class ChainSolver:
    """Solves ``(I - gamma P) x = b`` (or the transposed system) for a chain given by slot values.

    ``rows[s, m]`` is ``P[s, nbr[s, m]]``. Small chains (``|S| <= DENSE_MAX_STATES``) use a dense LAPACK
    solve. Larger ones never form the ``|S| x |S|`` matrix: a sparse matrix (``|S| * M`` entries) and
    restarted GMRES, right-preconditioned by the exact LU of the block diagonal over the first coordinate
    ``i`` (the ``nA`` blocks of player *q*'s moves, which carry most of the transition mass), so the
    residual it checks is the true one. It converges in 10-25 iterations on the paper's 1815-state chains.
    If the true relative residual misses ``100 * rtol``, the dense solve is used instead (up to 8000 states).
    ``preconditioner``: another solver of the same chain structure (another policy of an interval chain) whose
    block factorisation is reused instead of factorising these rows' blocks (``nA`` LUs of ``(nA nE)^2``
    blocks, the cost that grew fastest with the number of algorithms).
    """

    def __init__(
        self,
        rows: np.ndarray,
        cs: ChainStructure,
        *,
        solver: str = "auto",
        rtol: float = 1e-12,
        preconditioner: ChainSolver | None = None,
    ) -> None:
        if solver not in ("auto", "dense", "iterative"):
            raise ValueError(f"solver must be 'auto', 'dense' or 'iterative', got {solver!r}")
        self.cs = cs
        self.rows = rows
        self.rtol = rtol
        S = cs.n_states
        self.dense = solver == "dense" or (solver == "auto" and S <= DENSE_MAX_STATES) or cs.n_alg == 1
        self._A: np.ndarray | None = None
        self._blocks: np.ndarray
        self._lu: list[tuple[np.ndarray, np.ndarray]]
        self.fallbacks = 0
        self.matvecs = 0  # GMRES iterations of every solve so far (how well the preconditioner fits)
        if self.dense:
            return
        import scipy.linalg as sla
        from scipy import sparse

        data = rows * -cs.gamma
        data[:, -1] += 1.0
        indptr = np.arange(S + 1, dtype=np.int64) * cs.n_slots
        self._sp = sparse.csr_matrix((data.ravel(), cs.nbr.ravel(), indptr), shape=(S, S))
        self._spT: Any = None
        if preconditioner is not None and not preconditioner.dense:
            # another policy of the same chain: its blocks are still a good preconditioner (GMRES checks the true
            # residual, so the answer does not depend on it; only the iteration count does)
            self._blocks, self._lu = preconditioner._blocks, preconditioner._lu
            return
        nA, nQ = cs.n_alg, cs.n_alg * cs.n_env
        q_slots = slice(nA - 1, cs.n_slots)  # q-deviations and self: all inside the block of i
        blocks = np.zeros((S, nQ))
        blocks[np.arange(S)[:, None], cs.nbr[:, q_slots] % nQ] = data[:, q_slots]
        self._blocks = blocks.reshape(nA, nQ, nQ)
        (getrf,) = sla.get_lapack_funcs(("getrf",), (self._blocks,))
        self._lu = []
        for i in range(nA):
            lu, piv, info = getrf(self._blocks[i])
            if info != 0:  # pragma: no cover - blocks are strictly diagonally dominant
                raise np.linalg.LinAlgError(f"singular preconditioner block {i}")
            self._lu.append((lu, piv))

    def _dense_matrix(self) -> np.ndarray:
        if self._A is None:
            cs = self.cs
            A = dense_from_slots(self.rows * -cs.gamma, cs)
            A[np.diag_indices(cs.n_states)] += 1.0
            self._A = A
        return self._A

    def solve(self, b: np.ndarray, *, transpose: bool = False, x0: np.ndarray | None = None) -> np.ndarray:
        """Solve ``A x = b`` (``A^T x = b`` if ``transpose``); ``x0`` is an optional starting guess."""
        b = np.asarray(b, dtype=float)
        if self.dense:
            A = self._dense_matrix()
            return np.linalg.solve(A.T if transpose else A, b)
        from scipy.sparse.linalg import LinearOperator

        cs = self.cs
        S, nA, nQ = cs.n_states, cs.n_alg, cs.n_alg * cs.n_env
        if transpose and self._spT is None:
            from scipy import sparse

            # the CSR arrays of A are the CSC arrays of A^T: no conversion needed
            self._spT = sparse.csc_matrix((self._sp.data, self._sp.indices, self._sp.indptr), shape=self._sp.shape)
        A = self._spT if transpose else self._sp
        trans = 1 if transpose else 0
        lus = self._lu

        import scipy.linalg as sla

        (getrs,) = sla.get_lapack_funcs(("getrs",), (self._blocks,))  # looked up here: LAPACK handles do not pickle

        def prec(u: np.ndarray) -> np.ndarray:
            u = np.ravel(u).reshape(nA, nQ)
            return np.concatenate([getrs(lu, piv, u[i], trans=trans)[0] for i, (lu, piv) in enumerate(lus)])

        def matvec(u: np.ndarray) -> np.ndarray:
            self.matvecs += 1
            return A @ prec(u)

        op = LinearOperator((S, S), matvec=matvec, dtype=float)
        u0 = None
        if x0 is not None:
            blocks = np.swapaxes(self._blocks, 1, 2) if transpose else self._blocks
            u0 = np.matmul(blocks, np.asarray(x0, float).reshape(nA, nQ, 1)).reshape(S)
        norm_b = max(float(np.linalg.norm(b)), 1e-300)
        for restart, maxiter in ((min(S, 60), 10), (min(S, 200), 20)):
            u, _ = gmres_call(op, b, u0, self.rtol, restart=restart, maxiter=maxiter)
            x = prec(u)
            if np.linalg.norm(b - A @ x) <= 100.0 * self.rtol * norm_b:
                return x
            u0 = u
        self.fallbacks += 1
        if S > DENSE_FALLBACK_MAX:
            raise RuntimeError(
                f"the iterative solver did not converge on a {S}-state chain and the dense fallback would need "
                f"{8 * S * S / 2**30:.1f} GB; reduce the number of algorithms or tasks"
            )
        A = self._dense_matrix()
        return np.linalg.solve(A.T if transpose else A, b)


def stationary_distribution(C: np.ndarray, gamma: float | None = None) -> np.ndarray:
    """Closed form ``pi^T = (1-gamma)/|S| 1^T (I - gamma C)^{-1}`` from a dense ``C`` (one linear solve)."""
    S = C.shape[-1]
    if gamma is None:
        gamma = (S - 1) / S
    A = np.eye(S) - gamma * C
    b = np.full(C.shape[:-2] + (S, 1), (1.0 - gamma) / S)
    return np.linalg.solve(np.swapaxes(A, -1, -2), b)[..., 0]


def power_iteration(
    C: np.ndarray, gamma: float | None = None, *, tol: float = 1e-15, max_iter: int = 10_000_000
) -> np.ndarray:
    """Stationary distribution of ``G = gamma C + (1-gamma)/|S| 11^T`` by power iteration (for tests)."""
    S = C.shape[0]
    if gamma is None:
        gamma = (S - 1) / S
    pi = np.full(S, 1.0 / S)
    for _ in range(max_iter):
        new = gamma * (pi @ C) + (1.0 - gamma) / S * pi.sum()
        if np.max(np.abs(new - pi)) < tol:
            return new
        pi = new
    return pi
