"""Normalising final scores, including the one normaliser that needs a statistic to be fitted.

Every normaliser is registered in :mod:`rl_reliable_logger.data.normalize`; Jordan et al.'s performance
percentiles weight the algorithms' ECDFs by the equilibrium of their two-player game, which is computed
here (from :mod:`rl_reliable_logger.stats.jordan`) and handed to the data layer, so data flows one way.
"""

from __future__ import annotations

import os

import numpy as np

from ..data.normalize import Normalizer, PercentileNormalizer, get_normalizer
from ..data.scores import ScoreTable
from ..stats import jordan as jd


def equilibrium_weights(final: ScoreTable) -> np.ndarray:
    """The (tasks, algorithms) mixture weights ``sigma_q(j, k)`` of the game's equilibrium on ``final``."""
    cells = final.cells()
    samples = jd.as_samples([[cells[(a, t)] for t in final.tasks] for a in final.algorithms])
    return np.asarray(jd.equilibrium(jd.payoff_matrix(samples, presorted=True)).normaliser_weights)


def normalize_final(final: ScoreTable, spec: str | os.PathLike | Normalizer | PercentileNormalizer) -> ScoreTable:
    """``final`` normalised by ``spec`` (a packaged name, a CSV path or a normaliser).

    Example:
        >>> normalised = normalize_final(table.final(), "percentiles")
        >>> bool(normalised.to_pandas()["score"].between(0, 1).all())
        True
    """
    normalizer = get_normalizer(spec)
    if isinstance(normalizer, PercentileNormalizer) and normalizer.weights == "equilibrium":
        final = final.final()
        return normalizer.apply(final, equilibrium_weights(final))
    return normalizer.apply(final)
