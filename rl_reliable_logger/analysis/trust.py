"""Warnings where the mean's interval may under-cover at this number of runs (the skew diagnostic).

One warning per algorithm whose runs are skewed on at least :data:`..stats.diagnostics.SKEWED_SHARE` of its tasks
(and per compared pair where either algorithm's are, for the mean difference), saying what was measured: how many tasks'
runs are skewed, and that the interval may under-cover there, with the advice to report the IQM or add runs. The
shares are recorded in provenance (``mean_skewness``) whether or not they fire.

The record's ``warned`` list says which cells each warning is about (``{"metric": "mean", "algorithm": ...}`` or
``{"metric": "mean", "pair": [x, y]}``, with the warning's text): the renderers mark those cells from it and
group the warnings by algorithm without reading the sentences.
"""

from __future__ import annotations

from typing import Any

from ..data.counts import span
from ..stats import bootstrap as bs
from ..stats import diagnostics as dg

_ADVICE = "report the IQM (robust to the tail) or add runs"


def mean_trust(cells: dict[str, bs.Cells], *, pairs: list[tuple[str, str]]) -> tuple[list[str], dict[str, Any]]:
    """(warnings, provenance record) for the mean of every algorithm and of the difference of each of ``pairs`` (the
    pairs the differences table compares)."""
    warnings: list[str] = []
    warned: list[dict[str, Any]] = []
    counts = {alg: dg.skewed_tasks(c) for alg, c in cells.items()}
    for alg, count in counts.items():
        if dg.flagged(count):
            warnings.append(
                f"{alg}: the mean's interval may under-cover at {_runs(cells[alg])} per task: its runs are skewed "
                f"on {_of(count)}, and so few runs of skewed tasks tend to miss the tail that carries the mean; "
                f"{_ADVICE}"
            )
            warned.append({"metric": "mean", "algorithm": alg, "warning": warnings[-1]})
    per_pair: dict[str, float] = {}
    for x, y in pairs:
        per_pair[f"{x} - {y}"] = max(counts[x].share, counts[y].share)
        if dg.flagged(counts[x]) or dg.flagged(counts[y]):
            warnings.append(
                f"{x} - {y}: the mean difference's interval may under-cover at these run counts: {x}'s "
                f"runs are skewed on {_of(counts[x])}, {y}'s on {_of(counts[y])}; {_ADVICE}"
            )
            warned.append({"metric": "mean", "pair": [x, y], "warning": warnings[-1]})
    record = {
        "limit": dg.SKEWED_SHARE,
        "rule": (
            f"share of tasks whose runs' skewness exceeds {dg.SKEW_INTERCEPT:g} + {dg.SKEW_SLOPE:g} ln(runs), "
            f"flagged at {dg.SKEWED_SHARE:g} or more (at least 2 tasks)"
        ),
        "algorithms": {alg: count.share for alg, count in counts.items()},
        "pairs": per_pair,
        "warned": warned,
    }
    return warnings, record


def _of(count: dg.SkewCount) -> str:
    return f"{count.skewed} of {count.tasks} {'task' if count.tasks == 1 else 'tasks'}"


def _runs(cells: bs.Cells) -> str:
    low, high = int(cells.sizes.min()), int(cells.sizes.max())
    return f"{span(low, high)} {'run' if high == 1 else 'runs'}"
