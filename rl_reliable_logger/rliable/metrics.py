"""rliable 1.2's ``metrics`` module: aggregate metrics of a ``(runs, tasks)`` score matrix.

Same names, signatures and values as rliable's: on arrays each function computes rliable's definition with
numpy/scipy (the point estimates are rliable's to the last bit). Called on a :class:`.symbolic.Probe` (when
:func:`.library.get_interval_estimates` traces a ``func``), each returns a :class:`.symbolic.Term` naming the
engine's batched metric of the same definition (:mod:`..stats.registry`), so ``func`` runs vectorised.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.stats

from ..stats import metrics as mt
from ..stats import profiles, registry
from .symbolic import Probe, Term, resample_term


def _registered(scores: Probe, name: str, gamma: float = 1.0) -> Term:
    return resample_term(scores, registry.get_metric(name, gamma=gamma))


def aggregate_mean(scores: Any) -> Any:
    """Mean over tasks of the per-task mean scores."""
    if isinstance(scores, Probe):
        return _registered(scores, "mean")
    return np.mean(np.mean(scores, axis=0), axis=0)


def aggregate_median(scores: Any) -> Any:
    """Median over tasks of the per-task mean scores."""
    if isinstance(scores, Probe):
        return _registered(scores, "median")
    return np.median(np.mean(scores, axis=0), axis=0)


def aggregate_optimality_gap(scores: Any, gamma: float = 1) -> Any:
    """``gamma`` minus the mean over all runs and tasks of the scores clipped at ``gamma``."""
    if isinstance(scores, Probe):
        return _registered(scores, "optimality_gap", float(gamma))
    return gamma - np.mean(np.minimum(scores, gamma))


def aggregate_iqm(scores: Any) -> Any:
    """Interquartile mean: the 25% trimmed mean of all runs of all tasks (``scipy.stats.trim_mean``)."""
    if isinstance(scores, Probe):
        return _registered(scores, "iqm")
    return scipy.stats.trim_mean(scores, proportiontocut=0.25, axis=None)


def probability_of_improvement(scores_x: Any, scores_y: Any) -> Any:
    """P(X > Y) averaged over tasks: per task the Mann-Whitney U of X's runs against Y's over ``n_x·n_y``
    (ties count one half); ``scores_x`` is (runs_x, tasks), ``scores_y`` (runs_y, tasks)."""
    if isinstance(scores_x, Probe) and isinstance(scores_y, Probe):
        x, y = scores_x.matrix(), scores_y.matrix()

        def evaluate(batch: Any) -> np.ndarray:
            rx, ry = batch.resample(*x), batch.resample(*y)
            return mt.improvement_replicates(rx.cells, rx.counts(), ry.cells, ry.counts())

        return Term(evaluate)
    scores_x, scores_y = np.asarray(scores_x), np.asarray(scores_y)
    per_task = [mt.probability_of_improvement([scores_x[:, m]], [scores_y[:, m]]) for m in range(scores_x.shape[1])]
    return np.mean(per_task)


def score_above(scores: Probe, tau: float) -> Term:
    """Term: fraction of all runs scoring above ``tau`` (a point of the run-score profile)."""
    return resample_term(scores, mt.prob_above(float(tau)))


def task_means_above(scores: Probe, tau: float) -> Term:
    """Term: fraction of tasks whose mean score is above ``tau`` (a point of the average-score profile)."""
    taus = np.array([float(tau)])
    return resample_term(scores, lambda resample: profiles.average_score_profile(resample, taus)[:, 0])
