"""The ``aggregates`` table: every algorithm's aggregate metrics with their intervals (and the replicates the
differences reuse)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats import bootstrap as bs
from ...stats import metrics as mt
from ...stats.aggregate import AlgorithmAggregates, aggregate_intervals, statistic_kind
from ...stats.checks import clip_noise
from ...stats.intervals import ResamplingRequest, clip_note
from ...wording import kw, said
from .. import caveats
from ..declared import OptionError
from ..report import SPECS
from .base import Part, TableInputs, for_runs, record

#: The columns, as the Report declares them.
COLUMNS = list(SPECS["aggregates"].columns)


@dataclass(frozen=True)
class Aggregates:
    """The aggregates' part and each algorithm's results (estimates, intervals, replicates), for the
    differences."""

    part: Part
    by_algorithm: dict[str, AlgorithmAggregates]

    def points(self) -> dict[tuple[str, str], float]:
        """``{(algorithm, metric): point}`` as the table shows it."""
        table = self.part.tables["aggregates"]
        return dict(zip(zip(table["algorithm"], table["metric"]), table["point"]))


def build(inputs: TableInputs, request: ResamplingRequest) -> Aggregates:
    """The ``aggregates`` table, its record and its fallback notes."""
    request = for_runs(request, inputs.cells)
    table, results, notes = aggregate_table(
        inputs.cells, inputs.metrics, request, inputs.streams.of("aggregates"), inputs.progress
    )
    fallen = [
        fallen_back(f"{alg}: {text}", inputs.metrics[f.statistic].name, f.share, algorithm=alg)
        for alg, found in results.items()
        for text, f in zip(found.result.notes, found.result.fallbacks)
    ]
    prov = {"interval_fallbacks": notes, "fallen_back": fallen}
    part = Part({"aggregates": table}, record(request, inputs, "aggregates"), prov, notes)
    return Aggregates(part, results)


def fallen_back(
    warning: str, metric: str, share: float, *, algorithm: str | None = None, pair: tuple[str, str] | None = None
) -> dict[str, object]:
    """The record of a studentized interval that fell back (``provenance["fallen_back"]``): its ``warning``, the
    cell (an ``algorithm``'s ``metric``, or a ``pair``'s difference) and the ``share`` of its replicates whose
    standard error is near 0, from which :mod:`..notices` says every fallback in one line."""
    cell: dict[str, object] = {"algorithm": algorithm} if pair is None else {"pair": list(pair)}
    return {"warning": warning, "metric": metric, **cell, "share": share}


def check_method(request: ResamplingRequest, cells: dict[str, bs.Cells]) -> None:
    """Refuse a method that needs the jackknife (BCa) where no leave-one-run-out value exists (one run in every
    task of an algorithm)."""
    if not request.needs_repeated_runs():
        return
    for alg, c in cells.items():
        if (c.sizes < 2).all():
            raise OptionError(
                "method",
                said(
                    kw(f"method={request.method!r}"),
                    f" needs two or more runs in at least one task, but {alg!r} has one run per task (no jackknife "
                    "for the acceleration); use ",
                    kw("method='percentile'"),
                    " or add runs",
                ),
            )


def aggregate_table(
    cells: dict[str, bs.Cells],
    metric_objs: list[mt.Metric],
    request: ResamplingRequest,
    rngs: dict[str, np.random.Generator],
    progress: object = None,
) -> tuple[pd.DataFrame, dict[str, AlgorithmAggregates], list[str]]:
    """The ``aggregates`` table (each row's ``caveat`` from :mod:`..caveats`), every algorithm's results (for the
    differences) and one sentence per interval that fell back from its method or is NaN (naming the algorithm)."""
    check_method(request, cells)
    request = for_runs(request, cells)
    rows, results, notes = [], {}, []
    for alg, c in cells.items():
        found = results[alg] = aggregate_intervals(c, metric_objs, request, rngs[alg], progress=progress)  # type: ignore[arg-type]
        notes += [f"{alg}: {n}" for n in found.result.notes]
        notes += [f"{alg}: {clip_note(f'the {metric_objs[c.statistic].name}', c.moved)}" for c in found.result.clipped]
        point = clip_noise(found.point, found.low, found.high)  # a point outside its interval by rounding only
        notes += _nan_notes(alg, metric_objs, point, found.low, found.high)
        features = caveats.algorithm_features(c, caveats.gamma_of(metric_objs))
        for j, m in enumerate(metric_objs):
            kind = statistic_kind(m)
            caveat = caveats.aggregate_caveat(kind, features, request.statistic_method("aggregates", kind).bootstrap)
            rows.append(
                {"algorithm": alg, "metric": m.name, "point": point[j], "low": found.low[j], "high": found.high[j],
                 "caveat": caveat}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS), results, notes


def _nan_notes(alg: str, metric_objs: list[mt.Metric], *values: np.ndarray) -> list[str]:
    """One sentence per metric whose point or interval is NaN (a custom metric returned NaN): never a silent NaN."""
    bad = np.isnan(np.vstack([np.asarray(v, dtype=float) for v in values])).any(axis=0)
    return [
        f"{alg}: metric {m.name!r} is NaN (its function returned NaN on these scores, e.g. an empty slice or 0/0); "
        "its point and interval mean nothing: fix the metric or leave it out"
        for m, nan in zip(metric_objs, bad)
        if nan
    ]
