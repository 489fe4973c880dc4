"""The ``improvement`` table: the probability of improvement P(X > Y) of each compared pair of algorithms, in both
orders (the pairs ``pairs=`` chooses: every pair, or each algorithm against the leader)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from ...stats import bootstrap as bs
from ...stats import checks as ck
from ...stats import intervals, pairwise
from ...stats import metrics as mt
from ...stats.intervals import ResamplingRequest
from ...stats.intervals.bounds import ImprovementPair, improvement_level
from .. import caveats
from ..report import SPECS
from .base import ComparedPairs, Part, TableInputs, record
from .profiles import stacked

#: The columns, as the Report declares them.
COLUMNS = list(SPECS["improvement"].columns)


def replicates(request: ResamplingRequest) -> int:
    """The replicates this table draws per algorithm: none where its method is computed from the runs (under
    ``bootstrap-t``, ``mann-whitney``)."""
    return request.reps("improvement") if request.table_method("improvement").replicates else 0


def build(inputs: TableInputs, request: ResamplingRequest, chosen: ComparedPairs) -> Part:
    """P(X > Y) of each pair ``chosen`` (:func:`.base.compared_pairs`) in both orders: from the runs (the
    ``mann-whitney`` interval of ``bootstrap-t``) or from one set of independent replicates per algorithm shared by
    its pairs (drawn for every algorithm, so a pair's numbers do not depend on which other pairs are compared).
    P(X > Y) is a U-statistic: where the method widens the level, it is its own (Mann-Whitney's), recorded."""
    cells = inputs.cells
    own_level = {"expanded_level": "mann-whitney"} if request.widens_level("improvement") else {}
    records = record(request, inputs, "improvement", **own_level)
    algorithms = list(cells)
    if len(algorithms) < 2:
        return Part({"improvement": pd.DataFrame(columns=COLUMNS)}, records)
    by_pair = chosen.pairs
    # every pair's estimate in one array operation (issue 56): each pair's own, bit for bit
    estimates = pairwise.improvement_points([cells[a] for a in algorithms], _positions(algorithms, by_pair))
    points = [np.array([v]) for v in estimates]
    if replicates(request):
        samples = [
            intervals.Sample(level=partial(improvement_level, cells[x], cells[y]), hard_range=mt.IMPROVEMENT_RANGE)
            for x, y in by_pair
        ]
        results = stacked(request, "improvement", _replicates(inputs, request, by_pair), points, samples)
    else:
        tasks_resampled = bool(request.task_bootstrap)
        samples = [
            intervals.Sample(runs=ImprovementPair(cells[x], cells[y], tasks_resampled), hard_range=mt.IMPROVEMENT_RANGE)
            for x, y in by_pair
        ]
        results = [intervals.estimate(request, "improvement", np.empty((0, 1)), p, s) for p, s in zip(points, samples)]
    resampled = request.table_method("improvement").bootstrap
    rows, notes = [], []
    for (x, y), point_x, result in zip(by_pair, points, results):
        notes += [intervals.clip_note(f"P({x!r} > {y!r})", c.moved) for c in result.clipped]
        low, high = ck.clip_fraction(result.low), ck.clip_fraction(result.high)
        point = float(ck.clip_noise(point_x, low, high)[0])
        caveat = caveats.improvement_caveat(caveats.pair_features(cells[x], cells[y]), resampled)
        rows.append(
            {"algorithm_x": x, "algorithm_y": y, "point": point, "low": float(low[0]), "high": float(high[0]),
             "caveat": caveat}
        )  # fmt: skip
        rows.append(
            {
                "algorithm_x": y,
                "algorithm_y": x,
                "point": 1 - point,
                "low": 1 - float(high[0]),
                "high": 1 - float(low[0]),
                "caveat": caveat,
            }
        )
    out = pd.DataFrame(rows, columns=COLUMNS)
    order = {a: i for i, a in enumerate(algorithms)}
    out = out.sort_values(["algorithm_x", "algorithm_y"], key=lambda s: s.map(order), kind="stable")
    return Part({"improvement": out.reset_index(drop=True)}, records, warnings=notes)


def _replicates(inputs: TableInputs, request: ResamplingRequest, by_pair: list[tuple[str, str]]) -> list[np.ndarray]:
    """Each pair's replicates ``(B, 1)``, from one set of independent replicates per algorithm: without task
    resampling every pair of a chunk at once (:func:`.pairwise.improvement_pair_replicates`, each pair's own bit for
    bit); with it pair by pair, on the shared task draws."""
    cells, counts = inputs.cells, _counts(inputs, request)
    if request.task_bootstrap:
        return [
            np.concatenate([mt.improvement_task_slots(bx, by) for bx, by in zip(counts[x], counts[y])])[:, None]
            for x, y in by_pair
        ]
    names = list(cells)
    per_algorithm, idx = [cells[a] for a in names], _positions(names, by_pair)
    dist = np.concatenate(
        [
            pairwise.improvement_pair_replicates(per_algorithm, [counts[a][k] for a in names], idx)
            for k in range(len(counts[names[0]]))
        ]
    )
    return [dist[:, p : p + 1] for p in range(len(by_pair))]  # views: `stacked` copies each in turn


def _positions(names: list[str], by_pair: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """Each pair as the positions of its two algorithms in ``names``."""
    at = {a: i for i, a in enumerate(names)}
    return [(at[x], at[y]) for x, y in by_pair]


def _counts(inputs: TableInputs, request: ResamplingRequest) -> dict[str, list]:
    """One set of independent replicates per algorithm, shared by all its pairs; only the draw counts are
    kept, chunked identically for every algorithm (with task resampling: the draws, on the shared task stream)."""
    cells, rngs, shared_tasks = inputs.cells, inputs.streams.of("improvement"), request.task_bootstrap
    largest = max(cells.values(), key=lambda c: c.n_runs)
    sizes = list(bs.chunk_sizes(request.reps("improvement"), largest, request.chunk_bytes))
    counts: dict[str, list] = {}
    for alg, c in cells.items():
        counts[alg] = []
        task_rng = bs.task_stream(shared_tasks)  # the same task draws for every algorithm
        for n in sizes:
            if shared_tasks:
                counts[alg].append(bs.draw(c, n, rngs[alg], task_bootstrap=True, task_rng=task_rng))
            else:
                counts[alg].append(bs.draw(c, n, rngs[alg]).small_counts())
            inputs.progress(n)
    return counts
