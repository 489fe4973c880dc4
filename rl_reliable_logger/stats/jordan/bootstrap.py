"""Percentile-bootstrap replicates of the Jordan aggregate, drawn by the shared engine (:mod:`..bootstrap`).

Each algorithm's runs form one :class:`~..bootstrap.Cells` (its tasks), resampled within each task by
:func:`~..bootstrap.draw` from the algorithm's own stream (spawned from ``seed`` in algorithm order,
the same generator handling as ``evaluate``), in chunks bounded by ``chunk_bytes``; a replicate's
payoffs come from the draw counts and its stationary distribution from :func:`.solver.stationary_batch`.
Every stream is consumed replicate by replicate, so results do not depend on ``chunk_bytes``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import bootstrap as bs
from .ecdf import POPULATION_M, Samples, as_samples
from .payoffs import payoff_matrix, payoffs_from_counts
from .point import equilibrium
from .solver import stationary_batch

Progress = bool | Callable[[int], None] | None


def _progress_callback(progress: Progress, total: int) -> tuple[Callable[[int], None] | None, Callable[[], None]]:
    """A callable taking the number of finished replicates, and a closer."""
    if callable(progress):
        return progress, lambda: None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="bootstrap (Jordan aggregate)", unit="rep")
        return bar.update, bar.close
    return None, lambda: None


def bootstrap_aggregate(
    samples: Samples,
    *,
    reps: int = 10_000,
    seed: int | np.random.Generator | np.random.SeedSequence | None = None,
    m: float = POPULATION_M,
    progress: Progress = False,
    presorted: bool = False,
    solver: str = "auto",
    chunk_bytes: int = bs.DEFAULT_CHUNK_BYTES,
) -> np.ndarray:
    """Replicates of the aggregate ``y`` (``reps x nA``) from the percentile bootstrap (spec section 5).

    Each replicate redraws every (algorithm, task) sample with replacement to its own size and recomputes
    the whole pipeline (payoffs, chain, stationary distribution, aggregate), vectorised over a chunk of
    replicates. ``solver="auto"`` uses the structured batched solver; ``"dense"``/``"iterative"`` solve each
    chain with :class:`.chain.ChainSolver` (slow; for checks). ``progress``: True for a tqdm bar, or a
    callable receiving the number of replicates finished. The same ``seed`` gives bit-identical
    replicates whatever ``chunk_bytes``.
    """
    if reps < 1:
        raise ValueError(f"reps must be positive, got {reps}")
    if solver not in ("auto", "dense", "iterative"):
        raise ValueError(f"solver must be 'auto', 'dense' or 'iterative', got {solver!r}")
    s = [list(row) for row in samples] if presorted else as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    streams = bs.as_generator(seed).spawn(n_alg)
    if n_alg == 1:
        return np.full((reps, 1), 0.5)
    cells = [bs.Cells.from_list(row) for row in s]
    point = equilibrium(payoff_matrix(s, presorted=True), m=m)
    n_states = n_alg * n_alg * n_env
    # per replicate: the payoffs, the solver's workspace (~ nA |S| for the p-moves plus ~20 |S|) and the draws
    per_rep = 8 * (n_states * (n_alg + 24)) + 8 * sum(c.n_runs for c in cells)
    report, close = _progress_callback(progress, reps)
    out = np.empty((reps, n_alg))
    done = 0
    try:
        for n in bs.chunks(reps, per_rep, chunk_bytes):
            counts = [bs.draw(c, n, rng).small_counts() for c, rng in zip(cells, streams)]
            mu = payoffs_from_counts(s, counts)
            pi = _stationary(mu, m, point.pi.ravel(), solver)
            sigma_q = pi.reshape(n, n_alg, n_env, n_alg).sum(axis=1)
            out[done : done + n] = np.einsum("bijk,bjk->bi", mu, sigma_q)
            done += n
            if report is not None:
                report(n)
    finally:
        close()
    return out


def _stationary(mu: np.ndarray, m: float, pi0: np.ndarray, solver: str) -> np.ndarray:
    if solver == "auto":
        return stationary_batch(mu, m=m, pi0=pi0)
    from .chain import ChainSolver, chain_slots, chain_structure, point_codes, restart_vector

    reps, n_alg, n_env, _ = mu.shape
    cs = chain_structure(n_alg, n_env)
    rhs = restart_vector(cs)
    return np.stack(
        [
            ChainSolver(chain_slots(point_codes(x.ravel(), cs), cs, m), cs, solver=solver).solve(rhs, transpose=True)
            for x in mu
        ]
    )
