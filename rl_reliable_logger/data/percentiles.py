"""Jordan et al.'s (2020) performance percentiles as a normaliser (``normalize="percentiles"``).

Every score is mapped through the weighted mixture of the algorithms' empirical CDFs on its task,
so the result lies in [0, 1] and does not depend on the task's scale. The mixture weights come
from the equilibrium of Jordan et al.'s two-player game (computed in :mod:`..stats.jordan`).
"""

from __future__ import annotations

import numpy as np

from ..stats import jordan as jd
from .scores import ScoreTable


def percentile_normalize(table: ScoreTable, *, weights: str = "equilibrium") -> ScoreTable:
    """Scores mapped to performance percentiles: ``F_bar_j(x) = sum_k w_{k|j} F_kj(x)`` on task ``j``.

    ``weights="equilibrium"`` (default, the paper's) takes ``w_{k|j}`` from the game's equilibrium
    (``sigma_q(j, k) / sum_k sigma_q(j, k)``); ``"uniform"`` averages the algorithms' ECDFs equally.
    The CDFs are the empirical ones of the final scores in ``table`` (``F(x) = P(X <= x)``), so the result
    lies in ``[0, 1]``. The normaliser is fitted on the same data and treated as fixed afterwards: bootstrap
    intervals computed on the normalised scores do not include its uncertainty.
    """
    if weights not in ("equilibrium", "uniform"):
        raise ValueError(f"weights must be 'equilibrium' or 'uniform', got {weights!r}")
    final = table.final()
    cells = final.cells()
    algorithms, tasks = final.algorithms, final.tasks
    samples = [[cells[(a, t)] for t in tasks] for a in algorithms]
    s = jd.as_samples(samples)
    n_alg = len(algorithms)
    if weights == "equilibrium":
        w = jd.equilibrium(jd.payoff_matrix(s, presorted=True)).normaliser_weights  # (nE, nA)
    else:
        w = np.full((len(tasks), n_alg), 1.0 / n_alg)
    frame = table.frame
    scores = frame["score"].to_numpy(float)
    out = np.empty_like(scores)
    task_col = frame["task"].to_numpy()
    for j, task in enumerate(tasks):
        mask = task_col == task
        out[mask] = jd.percentile_scores(s, w[j] / w[j].sum(), scores[mask], j, presorted=True)
    new = table.with_scores(out)
    desc = "performance percentile (Jordan et al. 2020" + (
        ", equilibrium weights)" if weights == "equilibrium" else ", uniform weights)"
    )
    new.source = {
        **new.source,
        "normalization": "percentiles",
        "normalization_description": desc,
        "percentile_weights": {t: dict(zip(algorithms, map(float, w[j] / w[j].sum()))) for j, t in enumerate(tasks)},
    }
    return new
