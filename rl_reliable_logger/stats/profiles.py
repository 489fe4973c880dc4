"""Score distributions (performance profiles), optimality gap over γ, and rank distributions.

* Run-score profile: for each τ, the fraction of runs scoring above τ (each task weighted equally).
* Average-score profile: the fraction of tasks whose mean score is above τ.
* Gap curve: γ − E[min(score, γ)] for a grid of γ (the optimality gap as a function of the target).
* Ranks: probability that each algorithm takes rank k (1 = best) on each task, tied scores sharing the
  tied ranks equally. Two definitions (:data:`RANK_DEFINITIONS`):

  - ``"runs"`` (default; Agarwal et al. 2021, Fig. 6 and rliable's notebook): each replicate draws **one
    random run** per task of every algorithm and ranks those scores. It answers "if I train each algorithm
    once on this task, how likely is it to come k-th?" — run-to-run variability included.
  - ``"task-means"``: ranks the bootstrapped **task means** (:func:`single_runs` is not used). It answers
    "how likely is the algorithm's *mean* score on this task to be the k-th best?" — more concentrated,
    since averaging over runs removes most of the run-to-run noise.

All are batched over replicates: each function maps a :class:`~.bootstrap.Resample` to (R, ...).
"""

from __future__ import annotations

import numpy as np

from .bootstrap import Cells, Resample, multiply_shift, uniform32

#: Rank definitions accepted by ``evaluate(rank_by=...)``: the paper's single runs, or task means.
RANK_DEFINITIONS = ("runs", "task-means")


def default_taus(values: np.ndarray, n: int = 101) -> np.ndarray:
    """A τ grid from min(0, lowest score) to the 99th percentile of all scores.

    Stopping at the 99th percentile (not the maximum) keeps a few outlier runs from squashing the
    informative part of the profile into a corner; beyond it every profile is ≤ 1%.
    """
    values = np.asarray(values, float)
    lo = min(0.0, float(values.min()))
    hi = float(np.quantile(values, 0.99))
    if hi <= lo:
        hi = lo + 1.0
    return np.linspace(lo, hi, n)


def run_score_profile(resample: Resample, taus: np.ndarray) -> np.ndarray:
    """(R, T) fraction of runs (task-weighted) with score > τ."""
    values, weights = resample.sorted_weights()
    # survival = 1 - cumulative mass at or below τ
    cum = np.cumsum(weights, axis=1)
    pos = np.searchsorted(values, taus, side="right")  # runs with value <= τ are the first `pos`
    below = np.where(pos > 0, cum[:, np.maximum(pos - 1, 0)], 0.0)
    return np.clip(1.0 - below, 0.0, 1.0)


def average_score_profile(resample: Resample, taus: np.ndarray) -> np.ndarray:
    """(R, T) fraction of tasks whose mean score is > τ."""
    means = resample.task_means()
    out = np.empty((means.shape[0], taus.size))
    for i, tau in enumerate(taus):  # T is small (≈100); each step is a vectorised pass over (R, S)
        out[:, i] = (means > tau).mean(axis=1)
    return out


def gap_curve(resample: Resample, gammas: np.ndarray) -> np.ndarray:
    """(R, G) optimality gap γ − E[min(score, γ)] for each γ.

    E[min(score, γ)] = (weighted sum of the runs below γ) + γ·(mass at or above γ), from running sums along
    each replicate's sorted runs (not a matrix product, whose summation order would depend on how many
    replicates share a chunk).
    """
    values, weights = resample.sorted_weights()
    reps = weights.shape[0]
    mass = np.zeros((reps, values.size + 1))
    wsum = np.zeros((reps, values.size + 1))
    np.cumsum(weights, axis=1, out=mass[:, 1:])
    np.cumsum(weights * values, axis=1, out=wsum[:, 1:])
    below = np.searchsorted(values, gammas, side="left")  # runs below γ are the first `below`
    return gammas[None, :] - (wsum[:, below] + gammas[None, :] * (mass[:, -1:] - mass[:, below]))


#: Memory budget (bytes) of one chunk of replicates in :func:`rank_probabilities`.
RANK_CHUNK_BYTES = 64 * 2**20
#: Bytes per (replicate, task, algorithm) element of one chunk of :func:`rank_probabilities`: the values and
#: their sorted copy (8 + 8), the sort order, tie and rank bounds and their temporaries (int64: 9 × 8) and the
#: accumulated shares (index, offsets and weight: 3 × 8), rounded up.
RANK_BYTES_PER_ELEMENT = 128


def rank_probabilities(task_means: np.ndarray, chunk_bytes: int = RANK_CHUNK_BYTES) -> np.ndarray:
    """Rank distribution from per-task means of every algorithm.

    Args:
        task_means: (A, R, M) mean score of algorithm a on task m in replicate r.
        chunk_bytes: memory budget of one chunk of replicates (:data:`RANK_BYTES_PER_ELEMENT` per element);
            the result does not depend on it.

    Returns:
        (A, M, A): probability that algorithm a takes rank k+1 (1 = highest mean) on task m. Tied
        algorithms share their ranks: a tie of t algorithms over ranks j..j+t-1 gives each 1/t of each.

    Each (replicate, task) sorts its A values once (A log A, not A² comparisons); a tie group's bounds give
    every member the number of algorithms above it and its tie size. The shares of each (algorithm, task,
    rank) are added replicate by replicate in order, as a mean over replicates adds them.
    """
    n_alg, reps, n_tasks = task_means.shape
    totals = np.zeros(n_alg * n_tasks * n_alg)
    step = max(1, int(chunk_bytes // (RANK_BYTES_PER_ELEMENT * n_alg * n_tasks)))
    pos = np.arange(n_alg)
    for lo in range(0, reps, step):
        x = np.ascontiguousarray(task_means[:, lo : lo + step, :].transpose(1, 2, 0))  # (r, M, A)
        order = np.argsort(x, axis=-1, kind="stable")
        ordered = np.take_along_axis(x, order, axis=-1)
        new = np.ones(ordered.shape, dtype=bool)
        new[..., 1:] = ordered[..., 1:] != ordered[..., :-1]  # a tie group starts here
        first = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
        end = np.ones(ordered.shape, dtype=bool)
        end[..., :-1] = new[..., 1:]
        last = np.minimum.accumulate(np.where(end, pos, n_alg - 1)[..., ::-1], axis=-1)[..., ::-1]
        above = np.empty_like(order)  # algorithms with a higher mean
        ties = np.empty_like(order)  # algorithms with the same mean (itself included)
        np.put_along_axis(above, order, n_alg - 1 - last, axis=-1)
        np.put_along_axis(ties, order, last - first + 1, axis=-1)
        # algorithm a in (r, m) holds ranks above+1 .. above+ties, 1/ties of each; flattened replicate-major
        cell = (pos[None, None, :] * n_tasks + np.arange(n_tasks)[None, :, None]) * n_alg + above
        counts = ties.ravel()
        index = np.repeat(cell.ravel(), counts)
        index += np.arange(index.size) - np.repeat(np.cumsum(counts) - counts, counts)
        np.add.at(totals, index, np.repeat(1.0 / counts, counts))
    return totals.reshape(n_alg, n_tasks, n_alg) / reps


def profile_curves(resample: Resample, taus: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """(R, 2T + G): run-score profile and average-score profile at ``taus``, gap curve at ``gammas``."""
    return np.concatenate(
        [run_score_profile(resample, taus), average_score_profile(resample, taus), gap_curve(resample, gammas)], axis=1
    )


def single_runs(cells: Cells, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(R, M) the score of one run drawn at random (uniformly) from every task, per replicate.

    The paper's rank distributions rank these single runs. Drawn as ⌊u·N_m / 2³²⌋ from raw 32-bit uniforms,
    one whole 64-bit word per two tasks, replicate by replicate (independent of any chunking).
    """
    local = multiply_shift(uniform32(rng, (reps, cells.n_tasks)), cells.sizes[None, :]).astype(np.int64)
    return cells.values[cells.offsets[None, :] + local]
