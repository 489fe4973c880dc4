"""Payoffs ``mu[i, j, k] = E[F_kj(X_ij)]`` from the sorted samples, and from bootstrap draw counts."""

from __future__ import annotations

import numpy as np

from .ecdf import Samples, as_samples, cell_sizes


def positions(samples: list[list[np.ndarray]]) -> list[list[list[np.ndarray]]]:
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


def payoffs_from_counts(samples: list[list[np.ndarray]], counts: list[np.ndarray]) -> np.ndarray:
    """Payoffs ``(R, nA, nE, nA)`` of bootstrap replicates given as draw counts.

    ``samples`` are sorted (see :func:`.ecdf.as_samples`); ``counts[i]`` is ``(R, K_i)``: how often each run
    of algorithm ``i`` (its tasks concatenated, runs in sorted order) was drawn. A replicate's payoff is
    ``sum_t W_ij[t] * #{draws of k on j <= x_ij,t} / (n_ij n_kj)``, an integer count over the same
    denominator as :func:`payoff_matrix` (equal rationals give bitwise-equal floats), computed for all
    algorithms ``i`` at once per ``(j, k)``.
    """
    n_alg, n_env = len(samples), len(samples[0])
    reps = counts[0].shape[0]
    sizes = cell_sizes(samples)
    offsets = np.concatenate([np.zeros((n_alg, 1), np.int64), np.cumsum(sizes, axis=1)[:, :-1]], axis=1)
    pos = positions(samples)
    mu = np.empty((reps, n_alg, n_env, n_alg))
    for j in range(n_env):
        w_j = np.concatenate([counts[i][:, offsets[i, j] : offsets[i, j] + sizes[i, j]] for i in range(n_alg)], axis=1)
        w_j = w_j.astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes[:, j])[:-1]])
        for k in range(n_alg):
            cum = np.zeros((reps, sizes[k, j] + 1), np.int64)
            np.cumsum(counts[k][:, offsets[k, j] : offsets[k, j] + sizes[k, j]], axis=1, out=cum[:, 1:])
            at = np.concatenate([pos[i][j][k] for i in range(n_alg)])
            reached = np.add.reduceat(w_j * cum[:, at], starts, axis=1)  # (R, nA) integer counts
            mu[:, :, j, k] = reached / (sizes[:, j] * sizes[k, j]).astype(float)
        mu[:, np.arange(n_alg), j, np.arange(n_alg)] = 0.5
    return mu
