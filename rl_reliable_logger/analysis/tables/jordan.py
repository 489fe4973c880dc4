"""The ``jordan`` and ``jordan_quantiles`` tables (``jordan=True``): Jordan et al.'s equilibrium aggregate with
simultaneous intervals, and the per-task ECDFs with DKW bands, on raw scores (percentiles do not depend on the
scale). Their intervals are recorded as every table's: the method (PBP, PBP-t or the bootstrap; DKW for the
bands), the level ``1 - delta`` they hold at together, and the replicates where the method draws any."""

from __future__ import annotations

from typing import Any

from ...data.scores import ScoreTable
from ...stats.intervals import JORDAN_METHODS, ResamplingRequest
from ..jordan import jordan_tables
from ..options import AnalysisOptions
from .base import Part


def build(table: ScoreTable, request: ResamplingRequest, options: AnalysisOptions, seed: Any) -> Part:
    """Both tables of ``table`` (no tables without ``options.jordan``), on the stream ``seed``."""
    if not options.jordan:
        return Part({})
    tables, warnings = jordan_tables(
        table,
        delta=options.jordan_delta,
        method=options.jordan_method,
        score_range=options.score_range,
        reps=request.reps("jordan"),
        seed=seed,
        progress=options.progress,
        executor=request.executor,
    )
    record = {"delta": options.jordan_delta, "method": options.jordan_method, "score_range": options.score_range}
    level = 1.0 - options.jordan_delta
    method = JORDAN_METHODS[options.jordan_method]
    drawn = request.reps("jordan") if method.replicates else None
    recorded = {
        "jordan": {"method": method.name, "level": level, "replicates": drawn, "simultaneous": True},
        "jordan_quantiles": {"method": JORDAN_METHODS["dkw"].name, "level": level, "replicates": None},
    }
    return Part(tables, recorded, {"jordan": {**record, "reps": request.reps("jordan")}}, warnings)
