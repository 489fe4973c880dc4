"""What the table modules share: their inputs (read-only), the random streams, and what each returns (a Part)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...data.scores import ScoreTable
from ...stats import bootstrap as bs
from ...stats import intervals
from ...stats import metrics as mt

#: Random streams per algorithm, in this order; the layout does not depend on what is computed.
STREAMS = ("aggregates", "profiles", "per_task", "improvement", "curves")


@dataclass(frozen=True)
class Streams:
    """Every random stream of one analysis, spawned once from the request's seed in a fixed layout: one generator
    per (purpose, algorithm) in sorted name order (input order does not matter), the task SeedSequence the
    algorithms share with task resampling (``False`` without), then the seeds of the Jordan and tuning tables."""

    per_purpose: dict[str, dict[str, np.random.Generator]]
    shared_tasks: Any
    jordan: Any
    tuning: Any
    root: Any

    def of(self, purpose: str) -> dict[str, np.random.Generator]:
        """Each algorithm's generator for ``purpose`` (one of :data:`STREAMS`)."""
        return self.per_purpose[purpose]

    def comparisons(self) -> Any:
        """The all-pairs comparisons' own stream: never one of the other tables' streams, so asking for them
        changes no other number (spawned when asked, after every other stream)."""
        if isinstance(self.root, np.random.Generator):
            return self.root.spawn(1)[0]
        if self.root is None:
            return None
        return np.random.default_rng(np.random.SeedSequence([int(self.root), 0xC0FFEE]))

    def success(self) -> Any:
        """The success tables' own stream (their bootstrap over seeds), like :meth:`comparisons`: never another
        table's stream, so asking for them changes no other number."""
        if isinstance(self.root, np.random.Generator):
            return self.root.spawn(1)[0]
        if self.root is None:
            return None
        return np.random.default_rng(np.random.SeedSequence([int(self.root), 46]))


def spawn_streams(request: intervals.ResamplingRequest, algorithms: Sequence[str]) -> Streams:
    """The :class:`Streams` of ``request.seed`` (an integer, a Generator, or None: fresh entropy) for ``algorithms``,
    with the shared task stream where ``request.task_bootstrap`` asks for task resampling."""
    seed, task_bootstrap = request.seed, request.task_bootstrap
    root = bs.as_generator(seed)
    spawned = root.spawn(len(STREAMS) * len(algorithms))
    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    per_purpose = {
        purpose: {a: spawned[len(STREAMS) * slot[a] + k] for a in algorithms} for k, purpose in enumerate(STREAMS)
    }
    # with task resampling every algorithm's replicate r resamples the same tasks (paired differences)
    shared_tasks = root.spawn(1)[0].bit_generator.seed_seq if task_bootstrap else False
    # after the streams: a Generator seed spawns the Jordan and tuning seeds in this order; an integer is used as is
    jordan, tuning = seed.spawn(2) if isinstance(seed, np.random.Generator) else (seed, seed)
    return Streams(per_purpose, shared_tasks, jordan, tuning, seed)


@dataclass(frozen=True)
class TableInputs:
    """What every table reads (never writes): the final scores as cells per algorithm (tasks in ``tasks`` order,
    runs sorted), the metrics, the random streams and the progress bar."""

    final: ScoreTable
    cells: dict[str, bs.Cells]
    tasks: list[str]
    metrics: list[mt.Metric]
    streams: Streams
    progress: Callable[[int], None]

    @property
    def algorithms(self) -> list[str]:
        return list(self.cells)

    def kinds(self) -> dict[str, str]:
        """Each metric's name and the kind of statistic an interval rule names (mean, median or ``*``)."""
        from ...stats.aggregate import statistic_kind

        return {m.name: statistic_kind(m) for m in self.metrics}


@dataclass
class Part:
    """What one table module returns: its tables, its ``provenance["intervals"]`` records, other provenance keys
    and warnings."""

    tables: dict[str, pd.DataFrame]
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def record(request: intervals.ResamplingRequest, inputs: TableInputs, *tables: str, **extra: Any) -> dict[str, Any]:
    """``{table: request.record(table, ...)}`` for each of ``tables``, with the metrics' kinds."""
    return {table: request.record(table, inputs.kinds(), **extra) for table in tables}


def for_runs(request: intervals.ResamplingRequest, cells: dict[str, bs.Cells]) -> intervals.ResamplingRequest:
    """``request`` with ``median_interval=auto`` resolved by the fewest runs of any task of any algorithm
    (:meth:`..stats.intervals.ResamplingRequest.for_runs`): one rule for every table of one analysis."""
    return request.for_runs(min((int(c.sizes.min()) for c in cells.values() if c.n_tasks), default=0))


def pairs(algorithms: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of algorithms once, in table order."""
    return [(x, y) for i, x in enumerate(algorithms) for y in algorithms[i + 1 :]]


@dataclass(frozen=True)
class ComparedPairs:
    """The pairs the pairwise tables compare (``pairs=``, :data:`..options.PAIR_RULES`) and their provenance record
    (``provenance["pairs"]``: the rule asked and the one used, the leader and the metric that chose it, how many
    pairs out of all, and the tables that follow it)."""

    pairs: list[tuple[str, str]]
    record: dict[str, Any]


def compared_pairs(
    algorithms: Sequence[str], rule: str, points: dict[tuple[str, str], float], metric: str, tables: Sequence[str]
) -> ComparedPairs:
    """Every pair in table order (``all``), or the leader against each other algorithm, ``(leader, other)`` in table
    order (``leader``; ``auto``: all up to :data:`..options.ALL_PAIRS_UP_TO` algorithms). The leader has the best
    estimate of ``metric`` among ``points`` (``{(algorithm, metric): point}``; the lowest for a metric where lower is
    better; the first in table order on a tie; NaN never leads)."""
    from ...stats import registry
    from ..options import pair_rule

    used = pair_rule(rule, len(algorithms))
    every = pairs(algorithms)
    record: dict[str, Any] = {"rule": rule, "used": used, "tables": list(tables), "all": len(every)}
    if used == "all" or len(algorithms) < 2:
        return ComparedPairs(every, {**record, "compared": len(every)})
    sign = -1.0 if registry.lower_is_better(metric) else 1.0
    scores = [sign * points.get((a, metric), np.nan) for a in algorithms]
    leader = algorithms[int(np.nanargmax(scores))] if not np.isnan(scores).all() else algorithms[0]
    chosen = [(leader, a) for a in algorithms if a != leader]
    return ComparedPairs(chosen, {**record, "compared": len(chosen), "leader": leader, "metric": metric})
