"""The ``jordan`` and ``jordan_quantiles`` tables (``jordan=True``): Jordan et al.'s equilibrium aggregate with
simultaneous intervals, and the per-task ECDFs with DKW bands, on raw scores (percentiles do not depend on the
scale). Their intervals are recorded as every table's: the method (PBP, PBP-t or the bootstrap; DKW for the
bands), the level ``1 - delta`` they hold at together, and the replicates where the method draws any."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...data.scores import ScoreTable
from ...stats.intervals import JORDAN_METHODS, ResamplingRequest
from ..jordan import jordan_tables
from .base import Part


@dataclass(frozen=True)
class JordanTableChoices:
    """What the Jordan tables are computed with: ``delta`` (the intervals hold together at ``1 - delta``), the
    ``method`` (``pbp``, ``pbp-t`` or ``bootstrap``), the known ``score_range`` and the progress bar."""

    delta: float
    method: str
    score_range: Any = None
    progress: bool = False


def build(table: ScoreTable, request: ResamplingRequest, choices: JordanTableChoices | None) -> Part:
    """Both tables of ``table`` (no tables without ``choices``), on ``request`` (its seed: the Jordan stream)."""
    if choices is None:
        return Part({})
    tables, warnings = jordan_tables(
        table,
        delta=choices.delta,
        method=choices.method,
        score_range=choices.score_range,
        reps=request.reps("jordan"),
        seed=request.seed,
        progress=choices.progress,
        executor=request.executor,
    )
    record = {"delta": choices.delta, "method": choices.method, "score_range": choices.score_range}
    level = 1.0 - choices.delta
    method = JORDAN_METHODS[choices.method]
    drawn = request.reps("jordan") if method.replicates else None
    recorded = {
        "jordan": {"method": method.name, "level": level, "replicates": drawn, "simultaneous": True},
        "jordan_quantiles": {"method": JORDAN_METHODS["dkw"].name, "level": level, "replicates": None},
    }
    return Part(tables, recorded, {"jordan": {**record, "reps": request.reps("jordan")}}, warnings)
