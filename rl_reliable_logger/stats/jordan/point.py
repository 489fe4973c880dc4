"""The equilibrium of one game: stationary distribution, marginals and the aggregate ``y`` (spec section 2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .chain import (
    DENSE_MAX_STATES,
    ChainSolver,
    chain_slots,
    chain_structure,
    point_codes,
    restart_vector,
    single_thread,
)
from .ecdf import POPULATION_M
from .solver import stationary_batch


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
    :class:`.chain.ChainSolver`); ``y_i = pi . r_i`` with ``r_i(s) = mu[i, j(s), k(s)]`` is paper eq. 5, the same
    number as eq. 2. With ``solver="auto"``, chains above ``DENSE_MAX_STATES`` states use the structured solver
    of :mod:`.solver` (sorted-payoff recurrences, ``O(|S|)`` per sweep; it hands the chains it cannot take to
    :class:`.chain.ChainSolver`): the block factorisation of the general solver grows as ``(nA^2 nE)^3 / nA^2``
    and took most of a minute at 50 algorithms.
    """
    mu = np.asarray(mu, dtype=float)
    n_alg, n_env, _ = mu.shape
    if solver == "auto" and mu.size > DENSE_MAX_STATES and n_alg > 1:
        # (the neighbour arrays of chain_structure alone are 700 MB at 50 algorithms x 26 tasks: not built here)
        pi = stationary_batch(mu[None], m=m)[0].reshape(n_alg, n_env, n_alg)
    else:
        cs = chain_structure(n_alg, n_env)
        slots = chain_slots(point_codes(mu.ravel(), cs), cs, m)
        with single_thread():
            pi = ChainSolver(slots, cs, solver=solver).solve(restart_vector(cs), transpose=True)
        pi = pi.reshape(n_alg, n_env, n_alg)
    sigma_q = pi.sum(axis=0)
    return Equilibrium(pi=pi, sigma_p=pi.sum(axis=(1, 2)), sigma_q=sigma_q, y=np.einsum("ijk,jk->i", mu, sigma_q))
