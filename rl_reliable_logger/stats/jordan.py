r"""Jordan et al. (ICML 2020) evaluation: performance percentiles, the equilibrium aggregate, PBP.

Pure numpy/scipy. The specification is ``specs/jordan2020.md`` (section numbers below refer to it);
``docs/jordan.md`` explains the methods for users. Everything here works on plain arrays:
``samples[i][j]`` is the 1-D array of scores of algorithm ``i`` on environment (task) ``j``.

Pipeline
--------
1. Payoffs ``mu[i, j, k] = E[F_kj(X_ij)]`` (how often algorithm ``i`` on task ``j`` reaches a score at
   least as good as algorithm ``k``), estimated from empirical CDFs (:func:`payoff_matrix`).
2. A two-player zero-sum game: player *p* picks an algorithm ``i``; player *q* picks a task and a
   normalising algorithm ``(j, k)``. Its saturated, alpha-Rank-like response chain ``C`` over the
   ``|S| = nA**2 * nE`` joint strategies (:func:`transition_matrix`), damped like PageRank with
   ``gamma = 1 - 1/|S|``, has stationary distribution
   ``pi^T = (1-gamma)/|S| * 1^T (I - gamma C)^{-1}`` (:func:`stationary_distribution`, one linear solve).
3. The aggregate ``y_i = sum_{j,k} sigma_q(j, k) mu[i, j, k]`` (:func:`equilibrium`).
4. Confidence intervals on ``y`` holding for all algorithms at once: PBP (DKW bands with Massart's
   constant + Anderson's inequality + an optimisation over the interval transition matrices,
   :func:`pbp_payoff_bounds`, :func:`interval_chain`, :func:`optimise_aggregate`), PBP-t
   (:func:`pbpt_payoff_bounds`) and the percentile bootstrap (:func:`bootstrap_aggregate`).
   :func:`jordan_evaluate` runs the whole thing.

State layout: the state ``s = (i, j, k)`` has flat index ``(i * nE + j) * nA + k`` (C order of an
``(nA, nE, nA)`` array), so ``mu.ravel()`` is the payoff of player *p* in every state. The spec notes the
order is irrelevant (tested). Neighbours are stored as an ``(|S|, M)`` index array with
``M = 1/eta + 1`` slots per state (``nA - 1`` *p*-deviations, ``nA*nE - 1`` *q*-deviations, the state
itself last), so the chain and the policy-iteration steps are vectorised over states.

Ambiguity resolutions (spec section 9) -- the defaults are the principled choices; the authors'
behaviour is available for parity and is tested against the spec's vectors T0/T1/T2:

Q1  Self-normalisation. ``mu[i, j, i]`` is fixed at exactly 1/2 with a zero-width interval, as in the
    authors' code (and the true value for continuous scores). Under the "<=" ECDF the true value is
    ``1/2 + P(tie)/2`` for scores with atoms; the aggregate is *defined* with 1/2 here, so every interval
    targets that definition. Not configurable.
Q2  The authors' "samedef" hack (treating pairs of algorithms as identical on some environments) is
    not ported.
Q3  Support ``[a_j, b_j]``. PBP needs known score bounds for every task. ``support=`` takes the
    user's bounds (one pair for all tasks or one per task; scores outside them are an error). Without
    them the pooled observed min/max per task is used, as in the authors' code, and a warning says the
    guarantee is then only approximate.
Q4  ECDF ties. ``F(x) = P(X <= x)`` (right-continuous), the paper's definition; a tied score counts as
    "reached", so ``mu_ijk + mu_kji = 1 + P(tie)``. Point payoffs are computed from integer counts as
    ``count / (n_ij * n_kj)`` (a correctly rounded division), so equal rational values give bitwise
    equal floats and ties in the chain are exact, not at the mercy of summation order.
Q5  Ties in the chains. Point chain: as in the code, the strict ``>`` test comes first, then Julia's
    ``isapprox`` (``|a-b| <= sqrt(eps) * max(|a|, |b|)``) gives ``eta/m``. Interval chain:
    ``tie_rule="strict"`` (default) fixes an edge at ``eta/m`` only when both payoff intervals are
    degenerate and approximately equal (exactly known ties), and fixes an edge at 0 only when the
    order is certain *and* not within the ``isapprox`` tolerance (so the true chain is always inside the
    relaxation, Thm 1). ``tie_rule="authors"`` fixes identical (possibly wide) intervals at ``eta/m``,
    which is not a valid relaxation (spec T1: 0.0156/0.9844 strict vs 0.0216/0.9784 authors).
Q6  Sign of the minimum. ``min_sign="signed"`` (default) returns the signed optimum
    ``-(1-gamma) mean(V)``; ``min_sign="abs"`` reproduces the code's ``(1-gamma) mean(|V|)`` (applied to
    both ends, as in the code). They differ only when the reward can be negative (PBP-t).
    PBP-t payoff intervals are not clipped to ``[0, 1]`` by default (the method as published);
    ``clip_t=True`` intersects them with ``[0, 1]``, which can only help coverage since every payoff
    lies in ``[0, 1]``.
Q7  PBP-t split of delta: ``t_split="cells"`` (default; the notebook and Table 1: ``delta/(nA*nE)``),
    ``"pairs"`` (``bounds_test.jl :TTest``: ``delta/(nA**2*nE)``) or ``"means"``
    (``delta/(nA*(nA-1)*nE)``, a Bonferroni over every estimated mean). PBP-t is not a valid union bound
    under any split (it ignores the uncertainty of the normalising CDF); the documentation says so.
Q8  Bootstrap level. ``bootstrap_split="cells"`` (default, the code and Table 1: each algorithm's
    percentile interval at level ``1 - delta/(nA*nE)``) or ``"algorithms"`` (Bonferroni over the ``nA``
    intervals, ``delta/nA``, the smallest split that targets the joint statement). The default keeps the
    published method: the equilibrium aggregate is a discontinuous function of the payoffs (the chain
    changes when two payoffs swap order), the percentile bootstrap under-covers near such swaps (spec
    Table 2: 6-11% failures at delta = 0.05), and the extra split partly compensates (see
    ``benchmarks/jordan_coverage.py``).
Q9  Failure rate in simulations: ``benchmarks/jordan_coverage.py`` measures coverage against the *true*
    aggregate of known distributions (the principled definition) and also reports the authors'
    cross-trial rate for comparison.
Q10 Optimisation over the uncertainty set: exact policy iteration, deterministic. The greedy row is the
    exact fractional knapsack; since every uncertain off-diagonal slot has capacity ``eta`` and the
    diagonal's capacity is the row's whole free mass, it reduces to "``eta`` to every uncertain neighbour
    whose value beats the state's own, the rest to the diagonal" (no sort; ties go to the diagonal,
    instead of the code's random jitter; equal objective, tested against the sorted knapsack). A row only
    changes when that improves its greedy value by more than ``1e-11 * max(1, |V|)``; the loop stops
    when no row does (cap: ``max_iter=400``). The reported bound adds the certified slack
    ``max_s (T V - V)(s)`` (Bellman residual), so stopping early or round-off can only widen it.
Q11 Unequal ``n_ij``: each distribution's DKW ``eps`` uses its own ``n``; the normaliser's band uses
    ``eps_kj`` and Anderson's bound uses ``eps_ij`` (as in the code).
Q12 The aggregate weights the payoffs by ``sigma_q`` only (paper eq. 2); ``sigma_p`` is returned for
    information.

Performance. The chain is built from the ``(|S|, M)`` neighbour array without loops over states. Up to
``DENSE_MAX_STATES`` (600) states every linear system is solved densely; above that,
:class:`ChainSolver` uses a sparse matrix and GMRES preconditioned by the exact block diagonal of player
*q*'s moves (10-25 iterations), never forming ``|S| x |S|`` matrices. At the paper's size (nA = 11,
nE = 15, |S| = 1815) a PBP interval (22 policy iterations of 5-10 steps each) takes a few seconds; the
bootstrap recomputes the chain for every replicate (about 50 ms each at that size, so 8-10 minutes for
10,000 replicates; replicates whose chain repeats an earlier one reuse its solution).

Other choices. A single algorithm has aggregate 1/2 by definition (degenerate interval). Ranks follow
the spec's formulas, with the algorithm itself excluded from the "certainly better/worse" counts so a
degenerate interval cannot push its own best rank down, and comparisons ignore differences below
``1e-12`` so equal aggregates share a rank despite round-off. The DKW band of the quantile plots uses
``delta/(nA*nE)`` so all bands hold at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import stats as _sps

__all__ = [
    "DEFAULT_DELTA",
    "POPULATION_M",
    "ecdf",
    "dkw_epsilon",
    "as_samples",
    "resolve_support",
    "payoff_matrix",
    "ChainStructure",
    "chain_structure",
    "transition_matrix",
    "stationary_distribution",
    "power_iteration",
    "Equilibrium",
    "equilibrium",
    "percentile_scores",
    "anderson_mean_bounds",
    "pbp_payoff_bounds",
    "pbpt_payoff_bounds",
    "IntervalChain",
    "interval_chain",
    "optimise_aggregate",
    "aggregate_bounds",
    "bootstrap_aggregate",
    "ranks",
    "quantile_bands",
    "JordanResult",
    "jordan_evaluate",
]

#: Default confidence parameter: intervals hold for all algorithms at once with probability 1 - delta.
DEFAULT_DELTA = 0.05
#: Population constant m of the saturated alpha-Rank chain (tie transitions get eta / m).
POPULATION_M = 50
_SQRT_EPS = math.sqrt(np.finfo(float).eps)  # Julia isapprox default rtol, no atol

Method = Literal["pbp", "pbp-t", "bootstrap", "none"]
Samples = Sequence[Sequence[np.ndarray]]


# --------------------------------------------------------------------------- basics
def ecdf(sample: np.ndarray, x: np.ndarray | float, *, is_sorted: bool = False) -> np.ndarray:
    """Right-continuous empirical CDF ``#{t : sample_t <= x} / n`` evaluated at ``x``."""
    s = np.asarray(sample, dtype=float)
    if not is_sorted:
        s = np.sort(s)
    return np.searchsorted(s, np.asarray(x, dtype=float), side="right") / s.size


def dkw_epsilon(n: int | np.ndarray, delta: float) -> np.ndarray | float:
    """Two-sided DKW half-width with Massart's constant: ``sqrt(ln(2/delta) / (2n))``."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    return np.sqrt(np.log(2.0 / delta) / (2.0 * np.asarray(n, dtype=float)))


def _approx(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Julia ``isapprox`` with default tolerances: ``|a-b| <= sqrt(eps) * max(|a|, |b|)``."""
    return np.abs(a - b) <= _SQRT_EPS * np.maximum(np.abs(a), np.abs(b))


def as_samples(samples: Samples) -> list[list[np.ndarray]]:
    """Validate ``samples[i][j]`` (nA x nE non-empty finite 1-D arrays) and return sorted float copies."""
    out: list[list[np.ndarray]] = []
    n_env = None
    for i, row in enumerate(samples):
        row = list(row)
        if n_env is None:
            n_env = len(row)
        if len(row) != n_env or n_env == 0:
            raise ValueError("samples must be a rectangular nA x nE nesting with at least one task")
        cells = []
        for j, x in enumerate(row):
            arr = np.sort(np.asarray(x, dtype=float).ravel())
            if arr.size == 0:
                raise ValueError(f"algorithm {i}, task {j}: no scores")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"algorithm {i}, task {j}: non-finite scores")
            cells.append(arr)
        out.append(cells)
    if not out:
        raise ValueError("samples is empty: need at least one algorithm")
    return out


def _sizes(samples: list[list[np.ndarray]]) -> np.ndarray:
    return np.array([[x.size for x in row] for row in samples], dtype=np.int64)


def resolve_support(
    samples: list[list[np.ndarray]],
    support: tuple[float, float] | Sequence[tuple[float, float]] | np.ndarray | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Score bounds ``[a_j, b_j]`` per task as an ``(nE, 2)`` array, plus warnings (Q3).

    ``support`` may be one ``(low, high)`` pair for every task, one pair per task, or ``None`` for the
    pooled observed range (the authors' choice; the PBP guarantee then only holds approximately).
    """
    n_env = len(samples[0])
    lo = np.array([min(samples[i][j][0] for i in range(len(samples))) for j in range(n_env)])
    hi = np.array([max(samples[i][j][-1] for i in range(len(samples))) for j in range(n_env)])
    if support is None:
        return np.stack([lo, hi], axis=1), [
            "no score range given: PBP uses the observed pooled min/max of each task as the score bounds, "
            "so its guarantee is only approximate (it holds if no future run could score outside the "
            "observed range); give the known range (score_range / --score-range LOW,HIGH) for a valid bound."
        ]
    arr = np.asarray(support, dtype=float)
    if arr.shape == (2,):
        arr = np.tile(arr, (n_env, 1))
    if arr.shape != (n_env, 2):
        raise ValueError(f"support must be (low, high) or one pair per task ({n_env}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 0] > arr[:, 1]):
        raise ValueError(f"support bounds must be finite with low <= high, got {arr.tolist()}")
    bad = [j for j in range(n_env) if lo[j] < arr[j, 0] or hi[j] > arr[j, 1]]
    if bad:
        raise ValueError(
            "scores fall outside the given score range on task index(es) "
            + ", ".join(f"{j} (observed [{lo[j]:g}, {hi[j]:g}] vs range [{arr[j, 0]:g}, {arr[j, 1]:g}])" for j in bad)
        )
    return arr, []


# --------------------------------------------------------------------------- payoffs
def _positions(samples: list[list[np.ndarray]]) -> list[list[list[np.ndarray]]]:
    """``pos[i][j][k][t] = #{u : x_kj,u <= x_ij,t}`` for the sorted samples (fixed across resamples)."""
    n_alg, n_env = len(samples), len(samples[0])
    return [
        [[np.searchsorted(samples[k][j], samples[i][j], side="right") for k in range(n_alg)] for j in range(n_env)]
        for i in range(n_alg)
    ]


def payoff_matrix(samples: Samples, *, presorted: bool = False) -> np.ndarray:
    """Estimated payoffs ``mu[i, j, k] = mean_t F_kj(x_ij,t)`` with ``mu[i, j, i] = 1/2`` (Q1, Q4).

    Computed from integer counts, ``#{(t, u): x_kj,u <= x_ij,t} / (n_ij * n_kj)``, so equal values are
    bitwise equal.
    """
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    mu = np.empty((n_alg, n_env, n_alg))
    for j in range(n_env):
        for i in range(n_alg):
            for k in range(n_alg):
                if i == k:
                    mu[i, j, k] = 0.5
                else:
                    count = int(np.searchsorted(s[k][j], s[i][j], side="right").sum())
                    mu[i, j, k] = count / (s[i][j].size * s[k][j].size)
    return mu


def percentile_scores(
    samples: Samples, weights: np.ndarray, x: np.ndarray, env: int, *, presorted: bool = False
) -> np.ndarray:
    """Performance percentile of scores ``x`` on task ``env``: ``sum_k w[k] * F_k,env(x)`` (spec section 1)."""
    s = samples if presorted else as_samples(samples)
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(s),) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError("weights must be one non-negative weight per algorithm summing to 1")
    x = np.asarray(x, dtype=float)
    return sum(w[k] * ecdf(s[k][env], x, is_sorted=True) for k in range(len(s)))


# --------------------------------------------------------------------------- chain
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


def _point_codes(mu_flat: np.ndarray, cs: ChainStructure) -> np.ndarray:
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
    scale *= _SQRT_EPS
    np.abs(diff, out=diff)
    tie = diff <= scale
    tie &= ~better
    codes = better.view(np.int8) * np.int8(2)
    codes += tie.view(np.int8)
    return codes


def _dense_from_slots(slot_values: np.ndarray, cs: ChainStructure, out: np.ndarray | None = None) -> np.ndarray:
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


def _chain_slots(codes: np.ndarray, cs: ChainStructure, m: float) -> np.ndarray:
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
    return _dense_from_slots(_chain_slots(_point_codes(mu.ravel(), cs), cs, m), cs)


def _restart(cs: ChainStructure) -> np.ndarray:
    return np.full(cs.n_states, (1.0 - cs.gamma) / cs.n_states)


#: Chains with at most this many states are solved densely (LAPACK); larger ones iteratively.
DENSE_MAX_STATES = 600
#: Beyond this many states the dense fallback (8 |S|^2 bytes) is refused.
_DENSE_FALLBACK_MAX = 8000


def _gmres_call(op, b, x0, rtol, restart, maxiter):
    from scipy.sparse.linalg import gmres

    try:
        return gmres(op, b, x0=x0, rtol=rtol, atol=0.0, restart=restart, maxiter=maxiter)
    except TypeError:  # pragma: no cover - scipy < 1.12 spells it tol
        return gmres(op, b, x0=x0, tol=rtol, atol=0.0, restart=restart, maxiter=maxiter)


class _single_thread:
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
    """

    def __init__(self, rows: np.ndarray, cs: ChainStructure, *, solver: str = "auto", rtol: float = 1e-12) -> None:
        if solver not in ("auto", "dense", "iterative"):
            raise ValueError(f"solver must be 'auto', 'dense' or 'iterative', got {solver!r}")
        self.cs = cs
        self.rows = rows
        self.rtol = rtol
        S = cs.n_states
        self.dense = solver == "dense" or (solver == "auto" and S <= DENSE_MAX_STATES) or cs.n_alg == 1
        self._A: np.ndarray | None = None
        self.fallbacks = 0
        if self.dense:
            return
        import scipy.linalg as sla
        from scipy import sparse

        data = rows * -cs.gamma
        data[:, -1] += 1.0
        indptr = np.arange(S + 1, dtype=np.int64) * cs.n_slots
        self._sp = sparse.csr_matrix((data.ravel(), cs.nbr.ravel(), indptr), shape=(S, S))
        self._spT: Any = None
        nA, nQ = cs.n_alg, cs.n_alg * cs.n_env
        q_slots = slice(nA - 1, cs.n_slots)  # q-deviations and self: all inside the block of i
        blocks = np.zeros((S, nQ))
        blocks[np.arange(S)[:, None], cs.nbr[:, q_slots] % nQ] = data[:, q_slots]
        self._blocks = blocks.reshape(nA, nQ, nQ)
        getrf, self._getrs = sla.get_lapack_funcs(("getrf", "getrs"), (self._blocks,))
        self._lu = []
        for i in range(nA):
            lu, piv, info = getrf(self._blocks[i])
            if info != 0:  # pragma: no cover - blocks are strictly diagonally dominant
                raise np.linalg.LinAlgError(f"singular preconditioner block {i}")
            self._lu.append((lu, piv))

    def _dense_matrix(self) -> np.ndarray:
        if self._A is None:
            cs = self.cs
            A = _dense_from_slots(self.rows * -cs.gamma, cs)
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

        getrs = self._getrs

        def prec(u: np.ndarray) -> np.ndarray:
            u = np.ravel(u).reshape(nA, nQ)
            return np.concatenate([getrs(lu, piv, u[i], trans=trans)[0] for i, (lu, piv) in enumerate(lus)])

        op = LinearOperator((S, S), matvec=lambda u: A @ prec(u), dtype=float)
        u0 = None
        if x0 is not None:
            blocks = np.swapaxes(self._blocks, 1, 2) if transpose else self._blocks
            u0 = np.matmul(blocks, np.asarray(x0, float).reshape(nA, nQ, 1)).reshape(S)
        norm_b = max(float(np.linalg.norm(b)), 1e-300)
        for restart, maxiter in ((min(S, 60), 10), (min(S, 200), 20)):
            u, _ = _gmres_call(op, b, u0, self.rtol, restart=restart, maxiter=maxiter)
            x = prec(u)
            if np.linalg.norm(b - A @ x) <= 100.0 * self.rtol * norm_b:
                return x
            u0 = u
        self.fallbacks += 1
        if S > _DENSE_FALLBACK_MAX:
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


@dataclass
class Equilibrium:
    """Solution of the game: stationary distribution and its marginals, and the aggregate ``y``."""

    pi: np.ndarray  # (nA, nE, nA) = pi over states (i, j, k)
    sigma_p: np.ndarray  # (nA,)
    sigma_q: np.ndarray  # (nE, nA)
    y: np.ndarray  # (nA,)

    @property
    def task_weights(self) -> np.ndarray:
        """``w_j = sum_k sigma_q(j, k)``."""
        return self.sigma_q.sum(axis=1)

    @property
    def normaliser_weights(self) -> np.ndarray:
        """``w_{k|j} = sigma_q(j, k) / w_j`` as an (nE, nA) array (rows sum to 1)."""
        return self.sigma_q / self.task_weights[:, None]


def equilibrium(mu: np.ndarray, *, m: float = POPULATION_M, solver: str = "auto") -> Equilibrium:
    """Stationary distribution, marginals and aggregate ``y_i = sum_{j,k} sigma_q(j,k) mu[i,j,k]``.

    The closed form ``pi^T = (1-gamma)/|S| 1^T (I - gamma C)^{-1}`` is one linear solve (see
    :class:`ChainSolver` for how large chains are solved); ``y_i = pi . r_i`` with ``r_i(s) = mu[i, j(s), k(s)]``
    is paper eq. 5, the same number as eq. 2.
    """
    mu = np.asarray(mu, dtype=float)
    n_alg, n_env, _ = mu.shape
    cs = chain_structure(n_alg, n_env)
    slots = _chain_slots(_point_codes(mu.ravel(), cs), cs, m)
    with _single_thread():
        pi = ChainSolver(slots, cs, solver=solver).solve(_restart(cs), transpose=True).reshape(n_alg, n_env, n_alg)
    sigma_q = pi.sum(axis=0)
    return Equilibrium(pi=pi, sigma_p=pi.sum(axis=(1, 2)), sigma_q=sigma_q, y=np.einsum("ijk,jk->i", mu, sigma_q))


# --------------------------------------------------------------------------- PBP payoff intervals
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


def _split_cells(delta: float, n_alg: int, n_env: int) -> float:
    return delta / (n_alg * n_env)


def pbp_payoff_bounds(
    samples: Samples, delta: float = DEFAULT_DELTA, support: np.ndarray | None = None, *, presorted: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """PBP payoff intervals ``[mu^-, mu^+]`` (spec section 4 steps 1-5), each ``(nA, nE, nA)``.

    ``support`` is the ``(nE, 2)`` array of score bounds (see :func:`resolve_support`).
    """
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    if support is None:
        support, _ = resolve_support(s, None)
    sizes = _sizes(s)
    eps = dkw_epsilon(sizes, _split_cells(delta, n_alg, n_env))
    lo = np.full((n_alg, n_env, n_alg), 0.5)
    hi = np.full((n_alg, n_env, n_alg), 0.5)
    for j in range(n_env):
        a, b = support[j]
        for k in range(n_alg):
            xs_k, e_k = s[k][j], eps[k, j]
            # Normaliser bands at a given set of points (exact outside the support).
            for i in range(n_alg):
                if i == k:
                    continue
                z = s[i][j]
                n = z.size
                e_i = eps[i, j]
                pts = np.concatenate([[a], z, [b]])
                f = np.searchsorted(xs_k, pts, side="right") / xs_k.size
                inside_lo = pts < a
                top = pts >= b
                g_lo = np.where(top, 1.0, np.where(inside_lo, 0.0, np.maximum(f - e_k, 0.0)))
                g_hi = np.where(top, 1.0, np.where(inside_lo, 0.0, np.minimum(f + e_k, 1.0)))
                t = np.arange(n + 1) / n
                # upper: g(b) - sum_{t=1..n} [g(z_{t+1}) - g(z_t)] max(t/n - eps, 0), z_{n+1} = b
                hi[i, j, k] = g_hi[-1] - np.dot(np.diff(g_hi[1:]), np.maximum(t[1:] - e_i, 0.0))
                # lower: g(z_n) - sum_{t=0..n-1} [g(z_{t+1}) - g(z_t)] min(t/n + eps, 1), z_0 = a
                lo[i, j, k] = g_lo[n] - np.dot(np.diff(g_lo[: n + 1]), np.minimum(t[:-1] + e_i, 1.0))
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


_T_SPLITS = ("cells", "pairs", "means")


def _t_delta(delta: float, n_alg: int, n_env: int, split: str) -> float:
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
    d = _t_delta(delta, n_alg, n_env, t_split)
    lo = np.full((n_alg, n_env, n_alg), 0.5)
    hi = np.full((n_alg, n_env, n_alg), 0.5)
    for j in range(n_env):
        for i in range(n_alg):
            n = s[i][j].size
            if n < 2:
                raise ValueError(f"PBP-t needs at least 2 runs per (algorithm, task); algorithm {i}, task {j} has {n}")
            tstar = _sps.t.ppf(1.0 - d / 2.0, n - 1)
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
    same = _approx(lo_n, lo_s) & _approx(hi_n, hi_s)
    if tie_rule == "strict":
        certain_zero &= ~_approx(lo_s, hi_n)
        same &= _approx(lo_s, hi_s) & _approx(lo_n, hi_n)
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


def _greedy_rows_knapsack(chain: IntervalChain, V: np.ndarray) -> np.ndarray:
    """Exact ``argmax_{x in P_s} x . V`` for every row at once: the fractional knapsack of spec section 4.7.

    Uncertain slots are filled in decreasing order of ``V`` (stable: slot order breaks ties) until the
    row's free mass ``1 - sum(lower)`` is spent. General caps; see :func:`_greedy_rows` for the fast path.
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


def _greedy_rows(chain: IntervalChain, V: np.ndarray) -> np.ndarray:
    """The same optimum as :func:`_greedy_rows_knapsack` without sorting.

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
class _OptResult:
    value: float
    iterations: int
    V: np.ndarray
    slack: float


def optimise_aggregate(
    chain: IntervalChain,
    reward: np.ndarray,
    *,
    maximise: bool = True,
    min_sign: str = "signed",
    max_iter: int = 400,
    V0: np.ndarray | None = None,
    solver: str = "auto",
) -> _OptResult:
    """``max`` (or ``min``) over the uncertainty set of ``(1-gamma)/|S| 1^T (I - gamma P)^{-1} r``.

    Policy iteration (spec section 4 step 7; Q6, Q10): the greedy step is the exact fractional knapsack
    of every row at once; the evaluation is one linear solve. A row only changes when that improves its
    greedy value by more than ``1e-11 * max(1, |V|)``; the loop ends when no row does (or after
    ``max_iter``). The returned value adds the certified slack ``max(0, max_s (T V - V)(s))`` (Bellman
    residual, ``(1-gamma) mean(V*) <= (1-gamma) mean(V) + max(TV - V)``), so an early stop or round-off
    can only widen the interval, never shrink it. The slack is about 1e-12 in practice.
    """
    if min_sign not in ("signed", "abs"):
        raise ValueError(f"min_sign must be 'signed' or 'abs', got {min_sign!r}")
    cs = chain.structure
    sign = 1.0 if maximise else -1.0
    R = np.asarray(reward, dtype=float).ravel() * sign
    V = np.zeros(cs.n_states) if V0 is None else np.asarray(V0, dtype=float).ravel() * sign
    rows = _greedy_rows(chain, V)
    V = ChainSolver(rows, cs, solver=solver).solve(R)
    it = 1
    while True:
        cand = _greedy_rows(chain, V)
        vals = V[cs.nbr]
        best = np.einsum("sm,sm->s", cand, vals)
        gain = best - np.einsum("sm,sm->s", rows, vals)
        improve = gain > 1e-11 * max(1.0, float(np.max(np.abs(V))))
        if not improve.any() or it >= max_iter:
            break
        rows[improve] = cand[improve]
        V = ChainSolver(rows, cs, solver=solver).solve(R, x0=V)
        it += 1
    slack = max(0.0, float(np.max(R + cs.gamma * best - V)))
    if min_sign == "abs":
        value = (1.0 - cs.gamma) * float(np.mean(np.abs(V))) + slack
    else:
        value = sign * ((1.0 - cs.gamma) * float(np.mean(V)) + slack)
    return _OptResult(value, it, V, slack)


def aggregate_bounds(
    mu_lo: np.ndarray,
    mu_hi: np.ndarray,
    *,
    tie_rule: str = "strict",
    min_sign: str = "signed",
    m: float = POPULATION_M,
    max_iter: int = 400,
    solver: str = "auto",
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``(y^-, y^+)`` for every algorithm from payoff intervals (spec section 4 steps 6-7).

    ``y^+_i`` maximises over the uncertainty set with reward ``r^+_i(s) = mu^+[i, j(s), k(s)]``; ``y^-_i``
    minimises with ``r^-_i``. ``2 nA`` policy iterations in all.
    """
    mu_lo = np.asarray(mu_lo, dtype=float)
    mu_hi = np.asarray(mu_hi, dtype=float)
    chain = interval_chain(mu_lo, mu_hi, tie_rule=tie_rule, m=m)
    cs = chain.structure
    n_alg, n_env = cs.n_alg, cs.n_env
    y_lo, y_hi = np.empty(n_alg), np.empty(n_alg)
    iters: list[int] = []
    slack = 0.0
    with _single_thread():
        for i in range(n_alg):
            r_lo = np.broadcast_to(mu_lo[i], (n_alg, n_env, n_alg)).ravel()
            r_hi = np.broadcast_to(mu_hi[i], (n_alg, n_env, n_alg)).ravel()
            up = optimise_aggregate(chain, r_hi, maximise=True, min_sign=min_sign, max_iter=max_iter, solver=solver)
            dn = optimise_aggregate(chain, r_lo, maximise=False, min_sign=min_sign, max_iter=max_iter, solver=solver)
            y_hi[i], y_lo[i] = up.value, dn.value
            iters += [up.iterations, dn.iterations]
            slack = max(slack, up.slack, dn.slack)
    info = {
        "n_uncertain": chain.n_uncertain,
        "iterations": iters,
        "max_slack": slack,
        "tie_rule": tie_rule,
        "min_sign": min_sign,
    }
    return y_lo, y_hi, info


# --------------------------------------------------------------------------- bootstrap
def _as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _draw_counts(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    """``b`` resamples of ``n`` runs with replacement, as counts per run (``b x n`` int64)."""
    idx = rng.integers(0, n, size=(b, n))
    idx += (np.arange(b, dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n)


def bootstrap_aggregate(
    samples: Samples,
    *,
    reps: int = 10_000,
    seed: int | np.random.Generator | None = None,
    m: float = POPULATION_M,
    progress: bool = False,
    presorted: bool = False,
    solver: str = "auto",
    max_chunk_bytes: int = 256 * 2**20,
) -> np.ndarray:
    """Replicates of the aggregate ``y`` (``reps x nA``) from the percentile bootstrap (spec section 5).

    Each replicate redraws every (algorithm, task) sample with replacement to its own size and recomputes
    the whole pipeline (payoffs, chain, stationary distribution, aggregate). Vectorised over a chunk of
    replicates: the payoffs from multinomial resampling weights against precomputed ECDF positions, the
    chains as a batch, a batched dense solve (or :class:`ChainSolver` per replicate for large chains, started
    from the full-data solution); chains identical to an earlier replicate's (same
    improvement/tie pattern) reuse its stationary distribution. The chunk size depends only on the problem
    size, so a given ``seed`` gives bit-identical replicates.
    """
    with _single_thread():
        return _bootstrap(samples, reps, seed, m, progress, presorted, solver, max_chunk_bytes)


def _bootstrap(samples, reps, seed, m, progress, presorted, solver, max_chunk_bytes) -> np.ndarray:
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    cs = chain_structure(n_alg, n_env)
    S = cs.n_states
    rng = _as_generator(seed)
    sizes = _sizes(s)
    pos = _positions(s)
    chunk = int(max(1, min(reps, 512, max_chunk_bytes // (8 * S * S + 1))))
    out = np.empty((reps, n_alg))
    cache: dict[bytes, np.ndarray] = {}
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=reps, desc="bootstrap (Jordan aggregate)", unit="rep")
        except ImportError:  # pragma: no cover - tqdm is optional
            bar = None
    restart = (1.0 - cs.gamma) / S
    dense = solver == "dense" or (solver == "auto" and S <= DENSE_MAX_STATES)
    eye = np.eye(S) if dense else None
    rhs1 = _restart(cs)
    pi0 = None
    if not dense:
        base = _chain_slots(_point_codes(payoff_matrix(s, presorted=True).ravel(), cs), cs, m)
        pi0 = ChainSolver(base, cs, solver="iterative").solve(rhs1, transpose=True)
        chunk = min(chunk, 64)
    done = 0
    while done < reps:
        b = min(chunk, reps - done)
        # Resampling weights (how often each run is drawn) per cell, drawn in a fixed order.
        W = [[_draw_counts(rng, int(sizes[i, j]), b) for j in range(n_env)] for i in range(n_alg)]
        cumW = [
            [np.concatenate([np.zeros((b, 1), np.int64), np.cumsum(W[i][j], axis=1)], axis=1) for j in range(n_env)]
            for i in range(n_alg)
        ]
        mu = np.empty((b, n_alg, n_env, n_alg))
        for j in range(n_env):
            for i in range(n_alg):
                for k in range(n_alg):
                    if i == k:
                        mu[:, i, j, k] = 0.5
                        continue
                    counts = np.einsum("bt,bt->b", W[i][j], cumW[k][j][:, pos[i][j][k]])
                    mu[:, i, j, k] = counts / float(sizes[i, j] * sizes[k, j])
        codes = _point_codes(mu.reshape(b, S), cs)
        pis = np.empty((b, S))
        todo = []
        keys = []
        for r in range(b):
            key = codes[r].tobytes()
            keys.append(key)
            if key in cache:
                pis[r] = cache[key]
            else:
                todo.append(r)
        # Deduplicate within the chunk.
        uniq: dict[bytes, int] = {}
        solve_rows = []
        for r in todo:
            if keys[r] not in uniq:
                uniq[keys[r]] = len(solve_rows)
                solve_rows.append(r)
        if solve_rows:
            slots = _chain_slots(codes[solve_rows], cs, m)
            if dense:
                A = _dense_from_slots(slots * -cs.gamma, cs)
                A += eye
                rhs = np.full((len(solve_rows), S, 1), restart)
                sol = np.linalg.solve(np.swapaxes(A, -1, -2), rhs)[..., 0]
                del A
            else:
                sol = np.stack(
                    [ChainSolver(sl, cs, solver="iterative").solve(rhs1, transpose=True, x0=pi0) for sl in slots]
                )
            if len(cache) < 4096:
                for t, r in enumerate(solve_rows):
                    cache[keys[r]] = sol[t]
            for r in todo:
                pis[r] = sol[uniq[keys[r]]]
        sigma_q = pis.reshape(b, n_alg, n_env, n_alg).sum(axis=1)
        out[done : done + b] = np.einsum("bijk,bjk->bi", mu, sigma_q)
        done += b
        if bar is not None:
            bar.update(b)
    if bar is not None:
        bar.close()
    return out


# --------------------------------------------------------------------------- reporting helpers
def ranks(
    point: np.ndarray, low: np.ndarray, high: np.ndarray, *, tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank, worst rank and best rank (spec section 6): rank 1 is best.

    ``rank_i = 1 + #{i': y_i' > y_i}``, ``worst_i = N - #{i' != i: lo_i > hi_i'}``,
    ``best_i = 1 + #{i' != i: hi_i <= lo_i'}``. Comparisons ignore differences up to ``tol`` (round-off:
    algorithms with equal aggregates share a rank).
    """
    y, lo, hi = (np.asarray(a, dtype=float) for a in (point, low, high))
    n = y.size
    not_self = ~np.eye(n, dtype=bool)
    rank = 1 + (y[None, :] > y[:, None] + tol).sum(axis=1)
    worst = n - ((lo[:, None] > hi[None, :] + tol) & not_self).sum(axis=1)
    best = 1 + ((hi[:, None] <= lo[None, :] + tol) & not_self).sum(axis=1)
    return rank, worst, best


def quantile_bands(
    samples: Samples, delta: float = DEFAULT_DELTA, *, max_points: int | None = 2000, presorted: bool = False
) -> list[list[dict[str, np.ndarray]]]:
    """Per cell: sorted distinct scores, their ECDF values and the DKW band at ``delta/(nA*nE)``.

    With more than ``max_points`` distinct scores, evenly spaced order statistics are kept (always the
    smallest and the largest).
    """
    s = samples if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    d = _split_cells(delta, n_alg, n_env)
    out = []
    for i in range(n_alg):
        row = []
        for j in range(n_env):
            x = s[i][j]
            z = np.unique(x)
            cdf = np.searchsorted(x, z, side="right") / x.size
            if max_points is not None and z.size > max_points:
                keep = np.unique(np.round(np.linspace(0, z.size - 1, max_points)).astype(int))
                z, cdf = z[keep], cdf[keep]
            eps = float(dkw_epsilon(x.size, d))
            row.append(
                {
                    "score": z,
                    "cdf": cdf,
                    "cdf_low": np.maximum(cdf - eps, 0.0),
                    "cdf_high": np.minimum(cdf + eps, 1.0),
                    "eps": eps,
                }
            )
        out.append(row)
    return out


# --------------------------------------------------------------------------- one call
@dataclass
class JordanResult:
    """Everything :func:`jordan_evaluate` computes. Arrays are indexed by algorithm (and task)."""

    y: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray
    rank_worst: np.ndarray
    rank_best: np.ndarray
    method: str
    delta: float
    mu: np.ndarray
    equilibrium: Equilibrium
    mu_low: np.ndarray | None = None
    mu_high: np.ndarray | None = None
    support: np.ndarray | None = None
    replicates: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


_METHODS = ("pbp", "pbp-t", "bootstrap", "none")


def _normalise_method(method: str) -> str:
    key = str(method).lower().replace("_", "-")
    aliases = {"pbpt": "pbp-t", "t": "pbp-t", "bs": "bootstrap", "boot": "bootstrap", "percentile": "bootstrap"}
    key = aliases.get(key, key)
    if key not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return key


def jordan_evaluate(
    samples: Samples,
    *,
    method: str = "pbp",
    delta: float = DEFAULT_DELTA,
    support: tuple[float, float] | Sequence[tuple[float, float]] | np.ndarray | None = None,
    tie_rule: str = "strict",
    min_sign: str = "signed",
    t_split: str = "cells",
    clip_t: bool = False,
    bootstrap_split: str = "cells",
    reps: int = 10_000,
    seed: int | np.random.Generator | None = None,
    m: float = POPULATION_M,
    progress: bool = False,
    max_iter: int = 400,
    solver: str = "auto",
) -> JordanResult:
    """Aggregate performance of every algorithm with a simultaneous ``1 - delta`` interval.

    Args:
        samples: ``samples[i][j]`` = scores of algorithm ``i`` on task ``j`` (any sizes >= 1; >= 2 for PBP-t).
        method: ``"pbp"`` (default), ``"pbp-t"``, ``"bootstrap"`` or ``"none"`` (point estimate only).
        delta: the intervals hold for all algorithms at once with probability >= 1 - delta (PBP).
        support: known score bounds (Q3); ``None`` = pooled observed range with a warning (PBP only).
        tie_rule, min_sign, t_split, clip_t, bootstrap_split: ambiguity resolutions, see the module doc.
        reps, seed, progress: bootstrap replicates, seed (int or Generator), tqdm bar.
        solver: ``"auto"`` (dense up to ``DENSE_MAX_STATES`` states, else preconditioned GMRES),
            ``"dense"`` or ``"iterative"``; see :class:`ChainSolver`.
    """
    method = _normalise_method(method)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if bootstrap_split not in ("cells", "algorithms"):
        raise ValueError(f"bootstrap_split must be 'cells' or 'algorithms', got {bootstrap_split!r}")
    s = as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    warnings: list[str] = []
    t0 = time.perf_counter()
    mu = payoff_matrix(s, presorted=True)
    eq = equilibrium(mu, m=m, solver=solver)
    info: dict[str, Any] = {"n_states": chain_structure(n_alg, n_env).n_states, "m": m}
    result = JordanResult(
        y=eq.y,
        low=eq.y.copy(),
        high=eq.y.copy(),
        rank=np.ones(n_alg, int),
        rank_worst=np.ones(n_alg, int),
        rank_best=np.ones(n_alg, int),
        method=method,
        delta=delta,
        mu=mu,
        equilibrium=eq,
        info=info,
        warnings=warnings,
    )
    if n_alg == 1:
        warnings.append(
            "a single algorithm: its Jordan aggregate is 1/2 by definition (it is only compared with itself)."
        )
        result.low = np.array([0.5])
        result.high = np.array([0.5])
        result.rank, result.rank_worst, result.rank_best = ranks(result.y, result.low, result.high)
        return result
    if method == "pbp":
        sup, w = resolve_support(s, support)
        warnings += w
        lo, hi = pbp_payoff_bounds(s, delta, sup, presorted=True)
        y_lo, y_hi, opt = aggregate_bounds(
            lo, hi, tie_rule=tie_rule, min_sign=min_sign, m=m, max_iter=max_iter, solver=solver
        )
        result.mu_low, result.mu_high, result.support = lo, hi, sup
        result.low, result.high = y_lo, y_hi
        info.update(opt, delta_cell=_split_cells(delta, n_alg, n_env))
    elif method == "pbp-t":
        lo, hi = pbpt_payoff_bounds(s, delta, t_split=t_split, clip=clip_t, presorted=True)
        y_lo, y_hi, opt = aggregate_bounds(
            lo, hi, tie_rule=tie_rule, min_sign=min_sign, m=m, max_iter=max_iter, solver=solver
        )
        result.mu_low, result.mu_high = lo, hi
        result.low, result.high = y_lo, y_hi
        info.update(opt, t_split=t_split, clip_t=clip_t, delta_mean=_t_delta(delta, n_alg, n_env, t_split))
        warnings.append(
            "PBP-t ignores the uncertainty of the normalising CDFs and relies on a t-approximation: it has no "
            "coverage guarantee (use PBP for a guaranteed interval)."
        )
    elif method == "bootstrap":
        reps_arr = bootstrap_aggregate(s, reps=reps, seed=seed, m=m, progress=progress, presorted=True, solver=solver)
        alpha = delta / (n_alg * n_env) if bootstrap_split == "cells" else delta / n_alg
        result.low = np.quantile(reps_arr, alpha / 2.0, axis=0)
        result.high = np.quantile(reps_arr, 1.0 - alpha / 2.0, axis=0)
        result.replicates = reps_arr
        info.update(reps=reps, bootstrap_split=bootstrap_split, alpha=alpha)
        if reps * alpha / 2.0 < 5:
            warnings.append(
                f"bootstrap: only {reps * alpha / 2:.1f} replicates lie beyond each end at level alpha = {alpha:.2g}; "
                "increase reps for stable interval ends."
            )
    result.rank, result.rank_worst, result.rank_best = ranks(result.y, result.low, result.high)
    info["seconds"] = time.perf_counter() - t0
    return result
