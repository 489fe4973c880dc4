"""Warnings where the mean's interval cannot be trusted at this number of runs (the skew diagnostic).

One warning per algorithm whose mean (and per pair whose mean difference) rests on runs whose pooled skewness is above
:data:`..stats.diagnostics.SKEW_LIMIT`, with the advice to report the IQM or add runs; the estimates are
recorded in provenance (``mean_skewness``: :func:`..stats.diagnostics.tail_skewness`) whether or not they fire.

The record's ``warned`` list says which cells each warning is about (``{"metric": "mean", "algorithm": ...}`` or
``{"metric": "mean", "pair": [x, y]}``, with the warning's text): the renderers mark those cells from it and
group the warnings by algorithm (:mod:`.notices`) without reading the sentences.
"""

from __future__ import annotations

from typing import Any

from ..data.counts import span
from ..stats import bootstrap as bs
from ..stats import diagnostics as dg


def mean_trust(cells: dict[str, bs.Cells], *, differences: bool) -> tuple[list[str], dict[str, Any]]:
    """(warnings, provenance record) for the mean of every algorithm and, with ``differences``, every pair."""
    warnings: list[str] = []
    per_algorithm: dict[str, float] = {}
    per_pair: dict[str, float] = {}
    warned: list[dict[str, Any]] = []
    advice = "report the IQM (robust to the tail) or add runs"
    for alg, c in cells.items():
        skew = dg.tail_skewness([c])
        per_algorithm[alg] = skew
        if abs(skew) > dg.SKEW_LIMIT:
            warnings.append(
                f"{alg}: the mean's interval cannot be trusted at {_runs(c)} per task: the runs' skewness "
                f"({skew:.2f}, pooled over tasks) exceeds {dg.SKEW_LIMIT:g}: so few runs under-sample the tail that "
                f"carries the mean, and no interval reaches its level there; {advice}"
            )
            warned.append({"metric": "mean", "algorithm": alg, "warning": warnings[-1]})
    if differences:
        names = list(cells)
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                skew = dg.tail_skewness([cells[x], cells[y]])
                per_pair[f"{x} - {y}"] = skew
                if abs(skew) > dg.SKEW_LIMIT:
                    warnings.append(
                        f"{x} - {y}: the mean difference's interval cannot be trusted at these run counts: the "
                        f"runs' skewness ({skew:.2f}, pooled over tasks) exceeds {dg.SKEW_LIMIT:g}; {advice}"
                    )
                    warned.append({"metric": "mean", "pair": [x, y], "warning": warnings[-1]})
    return warnings, {"limit": dg.SKEW_LIMIT, "algorithms": per_algorithm, "pairs": per_pair, "warned": warned}


def _runs(cells: bs.Cells) -> str:
    low, high = int(cells.sizes.min()), int(cells.sizes.max())
    return f"{span(low, high)} {'run' if high == 1 else 'runs'}"
