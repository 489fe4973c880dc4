"""One call for the whole Jordan et al. evaluation (:func:`jordan_evaluate`), its result and the ranks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...executors import Executor
from ...memory import DEFAULT_CHUNK_BYTES
from .bootstrap import bootstrap_aggregate
from .bounds import aggregate_bounds, pbp_payoff_bounds, pbpt_payoff_bounds, t_delta
from .ecdf import DEFAULT_DELTA, POPULATION_M, Samples, as_samples, resolve_support, split_cells
from .payoffs import payoff_matrix
from .point import Equilibrium, equilibrium


def ranks(
    point: np.ndarray, low: np.ndarray, high: np.ndarray, *, tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank, worst rank and best rank (spec section 6): rank 1 is best.

    ``rank_i = 1 + #{i': y_i' > y_i}``, ``worst_i = N - #{i' != i: lo_i > hi_i'}``,
    ``best_i = 1 + #{i' != i: hi_i < lo_i'}``. Comparisons ignore differences up to ``tol`` (round-off:
    algorithms with equal aggregates share a rank). The spec writes ``hi_i <= lo_i'``; that counts an algorithm as
    surely beaten by one whose interval only touches its own (two equal zero-width intervals: every score equal),
    which put the best rank below the rank. Strict, as ``worst`` is, ``best <= rank <= worst`` holds whenever
    each interval holds its point; it is the same on the reference CSVs, where no two intervals touch.

    Example:
        >>> [r.tolist() for r in ranks(np.array([0.75, 0.75]), np.array([0.75, 0.75]), np.array([0.75, 0.75]))]
        [[1, 1], [2, 2], [1, 1]]
    """
    y, lo, hi = (np.asarray(a, dtype=float) for a in (point, low, high))
    n = y.size
    not_self = ~np.eye(n, dtype=bool)
    rank = 1 + (y[None, :] > y[:, None] + tol).sum(axis=1)
    worst = n - ((lo[:, None] > hi[None, :] + tol) & not_self).sum(axis=1)
    best = 1 + ((hi[:, None] < lo[None, :] - tol) & not_self).sum(axis=1)
    return rank, worst, best


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


@dataclass(frozen=True)
class JordanChoices:
    """How the Jordan aggregate is computed, besides the method: the ambiguity resolutions of the module doc
    (``tie_rule``, ``min_sign``, ``t_split``, ``clip_t``, ``bootstrap_split``), the population constant ``m``, the
    solver (``max_iter``, ``solver``), the memory of one chunk of bootstrap replicates and where the bound
    optimisations run (``executor``)."""

    tie_rule: str = "strict"
    min_sign: str = "signed"
    t_split: str = "cells"
    clip_t: bool = False
    bootstrap_split: str = "cells"
    m: float = POPULATION_M
    max_iter: int = 400
    solver: str = "auto"
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    executor: str | Executor | None = None


def jordan_evaluate(
    samples: Samples,
    *,
    method: str = "pbp",
    delta: float = DEFAULT_DELTA,
    support: tuple[float, float] | Sequence[tuple[float, float]] | np.ndarray | None = None,
    reps: int = 10_000,
    seed: int | np.random.Generator | None = None,
    progress: bool | Callable[[int], None] = False,
    **choices: Any,
) -> JordanResult:
    """Aggregate performance of every algorithm with a simultaneous ``1 - delta`` interval.

    Args:
        samples: ``samples[i][j]`` = scores of algorithm ``i`` on task ``j`` (any sizes >= 1; >= 2 for PBP-t).
        method: ``"pbp"`` (default), ``"pbp-t"``, ``"bootstrap"`` or ``"none"`` (point estimate only).
        delta: the intervals hold for all algorithms at once with probability >= 1 - delta (PBP).
        support: known score bounds (Q3); ``None`` = pooled observed range with a warning (PBP only).
        reps, seed, progress: bootstrap replicates, seed (int or Generator), progress (True for a tqdm bar, or a
            callable receiving finished replicates).
        choices: the fields of :class:`JordanChoices`: ``tie_rule``, ``min_sign``, ``t_split``, ``clip_t``,
            ``bootstrap_split`` (ambiguity resolutions, see the module doc), ``m``, ``max_iter``, ``chunk_bytes``
            (memory budget of one chunk of replicates), ``solver`` and ``executor``.
        solver: ``"auto"`` (dense up to ``DENSE_MAX_STATES`` states, else the structured solvers: the batched
            one of :mod:`.solver` for the point chain, sorted operators and GMRES for PBP's policy evaluations,
            :mod:`.policy`), ``"dense"`` or ``"iterative"`` (:class:`.chain.ChainSolver`'s GMRES for the point
            chain, the structured policy evaluation for PBP).
        executor: where PBP's and PBP-t's ``2 nA`` bound optimisations run (``"serial"``, ``"ray"`` or an
            executor object, see :mod:`rl_reliable_logger.executors`); the numbers do not depend on it.
    """
    method = _normalise_method(method)
    c = JordanChoices(**choices)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if c.bootstrap_split not in ("cells", "algorithms"):
        raise ValueError(f"bootstrap_split must be 'cells' or 'algorithms', got {c.bootstrap_split!r}")
    s = as_samples(samples)
    n_alg, n_env = len(s), len(s[0])
    warnings: list[str] = []
    t0 = time.perf_counter()
    mu = payoff_matrix(s, presorted=True)
    eq = equilibrium(mu, m=c.m, solver=c.solver)
    info: dict[str, Any] = {"n_states": mu.size, "m": c.m}
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
            lo, hi, tie_rule=c.tie_rule, min_sign=c.min_sign, m=c.m, max_iter=c.max_iter, solver=c.solver,
            executor=c.executor,
        )  # fmt: skip
        result.mu_low, result.mu_high, result.support = lo, hi, sup
        result.low, result.high = y_lo, y_hi
        info.update(opt, delta_cell=split_cells(delta, n_alg, n_env))
    elif method == "pbp-t":
        lo, hi = pbpt_payoff_bounds(s, delta, t_split=c.t_split, clip=c.clip_t, presorted=True)
        y_lo, y_hi, opt = aggregate_bounds(
            lo, hi, tie_rule=c.tie_rule, min_sign=c.min_sign, m=c.m, max_iter=c.max_iter, solver=c.solver,
            executor=c.executor,
        )  # fmt: skip
        result.mu_low, result.mu_high = lo, hi
        result.low, result.high = y_lo, y_hi
        info.update(opt, t_split=c.t_split, clip_t=c.clip_t, delta_mean=t_delta(delta, n_alg, n_env, c.t_split))
        warnings.append(
            "PBP-t ignores the uncertainty of the normalising CDFs and relies on a t-approximation: it has no "
            "coverage guarantee (use PBP for a guaranteed interval)."
        )
    elif method == "bootstrap":
        reps_arr = bootstrap_aggregate(
            s,
            reps=reps,
            seed=seed,
            m=c.m,
            progress=progress,
            presorted=True,
            solver=c.solver,
            chunk_bytes=c.chunk_bytes,
        )
        alpha = delta / (n_alg * n_env) if c.bootstrap_split == "cells" else delta / n_alg
        result.low = np.quantile(reps_arr, alpha / 2.0, axis=0)
        result.high = np.quantile(reps_arr, 1.0 - alpha / 2.0, axis=0)
        result.replicates = reps_arr
        info.update(reps=reps, bootstrap_split=c.bootstrap_split, alpha=alpha)
        if reps * alpha / 2.0 < 5:
            warnings.append(
                f"bootstrap: only {reps * alpha / 2:.1f} replicates lie beyond each end at level alpha = {alpha:.2g}; "
                "increase reps for stable interval ends."
            )
    result.rank, result.rank_worst, result.rank_best = ranks(result.y, result.low, result.high)
    info["seconds"] = time.perf_counter() - t0
    return result
