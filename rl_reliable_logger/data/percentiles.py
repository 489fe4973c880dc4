"""Jordan et al.'s (2020) performance percentiles as a normaliser (``normalize="percentiles"``).

Every score is mapped through the weighted mixture of the algorithms' empirical CDFs on its task,
so the result lies in [0, 1] and does not depend on the task's scale. The paper's mixture weights come
from the equilibrium of its two-player game, a statistic: the analysis layer computes them
(``rl_reliable_logger.analysis.normalization``) and hands them in here, so ``data/`` needs no statistics.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..wording import kw, said
from .scores import ScoreTable


def percentile_normalize(table: ScoreTable, *, weights: str | np.ndarray = "uniform") -> ScoreTable:
    """Scores mapped to performance percentiles: ``F_bar_j(x) = sum_k w_{k|j} F_kj(x)`` on task ``j``.

    ``weights`` is ``"uniform"`` (the algorithms' ECDFs averaged equally) or an array of shape
    (tasks, algorithms) in the table's task and algorithm order, e.g. the game's equilibrium weights
    (``sigma_q(j, k)``), which :func:`rl_reliable_logger.analysis.normalization.normalize_final` computes.
    The CDFs are the empirical ones of the final scores in ``table`` (``F(x) = P(X <= x)``), so the result
    lies in ``[0, 1]``. The normaliser is fitted on the same data and treated as fixed afterwards: bootstrap
    intervals computed on the normalised scores do not include its uncertainty.

    Example:
        >>> normalised = percentile_normalize(table)
        >>> bool(normalised.to_pandas()["score"].between(0, 1).all())
        True
    """
    final = table.final()
    cells = final.cells()
    algorithms, tasks = final.algorithms, final.tasks
    n_alg = len(algorithms)
    if isinstance(weights, str):
        if weights != "uniform":
            raise InputError(
                said(
                    kw("weights="),
                    f" must be 'uniform' or a (tasks, algorithms) array, got {weights!r} (the paper's equilibrium "
                    "weights come from `rl_reliable_logger.analysis.normalization.normalize_final`)",
                )
            )
        w = np.full((len(tasks), n_alg), 1.0 / n_alg)
        label = "uniform weights"
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(tasks), n_alg) or not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w.sum(1) <= 0):
            raise InputError(
                said(
                    kw("weights="),
                    f" must be a non-negative (tasks, algorithms) = ({len(tasks)}, {n_alg}) array with a positive "
                    f"sum on every task, got shape {w.shape}",
                )
            )
        label = "equilibrium weights"
    sorted_cells = [[np.sort(np.asarray(cells[(a, t)], dtype=float)) for t in tasks] for a in algorithms]
    frame = table.frame
    scores = frame["score"].to_numpy(float)
    out = np.empty_like(scores)
    task_col = frame["task"].to_numpy()
    for j, task in enumerate(tasks):
        mask = task_col == task
        wj = w[j] / w[j].sum()
        x = scores[mask]
        out[mask] = sum(
            wj[k] * (np.searchsorted(sorted_cells[k][j], x, side="right") / sorted_cells[k][j].size)
            for k in range(n_alg)
        )
    new = table.with_scores(out)
    new.source = {
        **new.source,
        "normalization": "percentiles",
        "normalization_description": f"performance percentile (Jordan et al. 2020, {label})",
        "percentile_weights": {t: dict(zip(algorithms, map(float, w[j] / w[j].sum()))) for j, t in enumerate(tasks)},
    }
    return new
