"""Payoffs ``mu[i, j, k] = E[F_kj(X_ij)]`` from the sorted samples, and from bootstrap draw counts."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine
from ..kernels import jit
from .ecdf import Samples, as_samples, cell_sizes

numba: Any = None  # set by kernels.jit when the kernel is compiled


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
    if engine.compiled():
        return _compiled_payoffs(samples, counts)
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


def _payoff_kernel(counts, cell_start, sizes, pos, pos_start, out):  # pragma: no cover - compiled by numba
    reps = counts.shape[0]
    n_alg, n_env = sizes.shape
    max_n = 0
    for i in range(n_alg):
        for j in range(n_env):
            max_n = max(max_n, sizes[i, j])
    for r in numba.prange(reps):
        cum = np.zeros(max_n + 1, dtype=np.int64)
        for j in range(n_env):
            for k in range(n_alg):
                nk = sizes[k, j]
                ok = cell_start[k, j]
                for t in range(nk):
                    cum[t + 1] = cum[t] + np.int64(counts[r, ok + t])
                for i in range(n_alg):
                    if i == k:
                        out[r, i, j, k] = 0.5
                        continue
                    ni = sizes[i, j]
                    oi = cell_start[i, j]
                    p0 = pos_start[i, j, k]
                    reached = np.int64(0)
                    for t in range(ni):
                        reached += np.int64(counts[r, oi + t]) * cum[pos[p0 + t]]
                    out[r, i, j, k] = reached / float(ni * nk)


def _compiled_payoffs(samples: list[list[np.ndarray]], counts: list[np.ndarray]) -> np.ndarray:
    """:func:`payoffs_from_counts` by the compiled kernel (the same integer counts, so the same floats)."""
    n_alg, n_env = len(samples), len(samples[0])
    sizes = cell_sizes(samples)
    flat = np.ascontiguousarray(np.concatenate(counts, axis=1))
    cell_start = np.cumsum(np.concatenate([[0], sizes.ravel()]))[:-1].reshape(n_alg, n_env)
    pos = positions(samples)
    pos_flat = np.concatenate([pos[i][j][k] for i in range(n_alg) for j in range(n_env) for k in range(n_alg)])
    pos_len = np.array([[[sizes[i, j]] * n_alg for j in range(n_env)] for i in range(n_alg)]).ravel()
    pos_start = np.cumsum(np.concatenate([[0], pos_len]))[:-1].reshape(n_alg, n_env, n_alg)
    out = np.empty((flat.shape[0], n_alg, n_env, n_alg))
    jit(_payoff_kernel)(flat, cell_start, sizes, pos_flat.astype(np.int64), pos_start, out)
    return out
