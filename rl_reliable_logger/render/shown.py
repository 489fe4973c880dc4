"""Which algorithms the figures show: all of them, or, past :data:`MAX_SHOWN`, the best and the worst by one
aggregate (the tables always hold every algorithm).

Why: every per-algorithm figure grows with the algorithms (a rank grid of n x n cells, P(X > Y) of
n (n - 1) pairs, a strip per algorithm on every task, a legend entry per curve); 300 algorithms made
figures that took minutes to draw and that nobody could read. The cap is chosen here, once, and every
figure draws from the same reduced report, which says what was left out (in each figure, in the
report page and on the console).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analysis.report import TABLES

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.report import Report

#: Most algorithms a figure shows; past it, the best half and the worst half of this many.
MAX_SHOWN = 30
#: Aggregates used to rank algorithms for the cap, in order of preference (higher is better for all).
_RANK_BY = ("iqm", "mean", "median")


def shown_algorithms(report: Report, limit: int = MAX_SHOWN) -> tuple[list[str], str | None]:
    """(algorithms the figures show, in report order; the sentence saying what was left out, or None)."""
    algorithms = [str(a) for a in report.algorithms]
    if len(algorithms) <= limit:
        return algorithms, None
    agg = report.aggregates
    metrics = [str(m) for m in pd.unique(agg["metric"].astype(str))] if not agg.empty else []
    metric = next((m for m in _RANK_BY if m in metrics), None)
    points: dict[str, float] = {}
    if metric is not None:
        rows = agg[agg["metric"].astype(str) == metric]
        points = {str(a): float(p) for a, p in zip(rows["algorithm"], rows["point"])}

    def key(alg: str) -> float:  # best first; an algorithm without a finite value last
        value = points.get(alg, math.nan)
        return -value if math.isfinite(value) else math.inf

    order = sorted(algorithms, key=key)  # stable: ties keep report order
    best = limit // 2
    keep = set(order[:best] + order[len(order) - (limit - best) :])
    chosen = [a for a in algorithms if a in keep]
    by = f"by {metric.upper() if metric == 'iqm' else metric}" if metric else "in report order"
    note = (
        f"Figures show the {best} best and {limit - best} worst of {len(algorithms)} algorithms {by} "
        f"({len(algorithms) - limit} left out); the tables hold all {len(algorithms)}."
    )
    return chosen, note


def shown_report(report: Report, limit: int = MAX_SHOWN) -> tuple[Report, str | None]:
    """``report`` with every table reduced to the algorithms of :func:`shown_algorithms` (pairs: both ends
    shown), and the note; the report itself when nothing is left out."""
    chosen, note = shown_algorithms(report, limit)
    if note is None:
        return report, None
    keep = set(chosen)

    def reduce(frame: pd.DataFrame) -> pd.DataFrame:
        mask = pd.Series(True, index=frame.index)
        for col in ("algorithm", "algorithm_x", "algorithm_y"):
            if col in frame.columns:
                mask &= frame[col].astype(str).isin(keep)
        return frame[mask]

    tables: dict[str, Any] = {name: reduce(frame) for name, frame in report.tables() if name in TABLES}
    extra = {name: reduce(frame) for name, frame in report.extra.items()}
    provenance = {**report.provenance, "algorithms": chosen}
    return dataclasses.replace(report, **tables, extra=extra, provenance=provenance), note
