"""The ``per_task`` table (each task's mean with its interval, and the runs' median, min and max) and the
``ranks`` table (every algorithm's rank distribution per task), from one set of replicates per algorithm."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from ...stats import bootstrap as bs
from ...stats import checks as ck
from ...stats import intervals
from ...stats import profiles as pf
from ...stats.intervals import ResamplingRequest
from ...stats.intervals.bounds import task_levels
from .. import caveats
from ..report import SPECS
from .base import Part, TableInputs, record
from .profiles import stacked

#: The columns, as the Report declares them.
PER_TASK_COLUMNS = list(SPECS["per_task"].columns)
RANK_COLUMNS = ["algorithm", "task", "rank", "probability"]


def build(inputs: TableInputs, request: ResamplingRequest, rank_by: str) -> Part:
    """Per-task means with intervals, and the rank distributions (``rank_by``: ``tasks``, the task means'
    replicates, or ``runs``, single runs drawn on the same stream after them)."""
    cells, reps, rngs = inputs.cells, request.reps("per_task"), inputs.streams.of("per_task")
    means_by_alg, points, dists = [], [], []
    for alg, c in cells.items():
        points.append(bs.original(c).task_means()[0])
        dists.append(
            bs.replicates(
                c, bs.Resample.task_means, reps, rngs[alg], chunk_bytes=request.chunk_bytes, progress=inputs.progress
            )
        )
        # after the per-task replicates on the same stream, so per-task intervals do not depend on rank_by
        means_by_alg.append(pf.single_runs(c, reps, rngs[alg]) if rank_by == "runs" else dists[-1])
    samples = [intervals.Sample(level=partial(task_levels, c), runs=c) for c in cells.values()]
    results = stacked(request, "per_task", dists, points, samples)
    per_task = _per_task_table(cells, inputs.tasks, points, results)
    probs = pf.rank_probabilities(np.stack(means_by_alg), chunk_bytes=request.chunk_bytes)  # (A, M, A)
    ranks = _ranks_table(list(cells), inputs.tasks, probs)
    return Part({"per_task": per_task, "ranks": ranks}, record(request, inputs, "per_task"))


def _per_task_table(cells, tasks, points, results) -> pd.DataFrame:
    """One row per (algorithm, task): the mean with its interval, the runs' median, min and max, and the caveat. A
    task of one run gets no interval (NaN low and high, its caveat says why): Student-t has ``N - 1 = 0`` degrees of
    freedom there, and every bootstrap repeats the one run (the zero width would pass for certainty)."""
    columns: dict[str, list] = {k: [] for k in PER_TASK_COLUMNS}
    for alg, point, result in zip(list(cells), points, results):
        c = cells[alg]
        low, high = result.confidence_interval
        point = ck.clip_noise(point, low, high)
        features = caveats.task_features(c)
        for m, task in enumerate(tasks):
            run_scores = c.values[c.offsets[m] : c.offsets[m] + c.sizes[m]]
            columns["algorithm"].append(alg)
            columns["task"].append(task)
            columns["n_runs"].append(int(c.sizes[m]))
            columns["mean"].append(point[m])
            none = caveats.no_task_interval(features[m]["runs"])
            columns["low"].append(np.nan if none else low[m])
            columns["high"].append(np.nan if none else high[m])
            columns["median"].append(float(np.median(run_scores)))
            columns["min"].append(float(run_scores.min()))
            columns["max"].append(float(run_scores.max()))
            columns["caveat"].append(caveats.task_caveat(features[m]))
    return pd.DataFrame(columns, columns=list(columns))


def _ranks_table(algorithms: list[str], tasks: list[str], probs: np.ndarray) -> pd.DataFrame:
    """Every algorithm's rank distribution per task, then their average over tasks."""
    n_a, labels = len(algorithms), list(tasks) + ["__average__"]
    table = np.concatenate([probs, probs.mean(axis=1, keepdims=True)], axis=1)  # (A, M + 1, A)
    return pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(len(labels) * n_a)],
            "task": [t for _ in algorithms for t in labels for _ in range(n_a)],
            "rank": np.tile(np.arange(1, n_a + 1), n_a * len(labels)),
            "probability": table.reshape(-1),
        },
        columns=RANK_COLUMNS,
    )
