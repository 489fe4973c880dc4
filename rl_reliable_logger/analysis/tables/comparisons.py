"""The ``comparisons`` table (``comparisons=True``): every pair of algorithms, unadjusted and family-wise
(:func:`..comparisons.compare_all`), on its own stream; its intervals are percentile ones, recorded so."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...data.counts import plural
from ...stats.intervals import ResamplingRequest
from ...wording import kw, said
from ..comparisons import compare_all
from .base import Part, TableInputs

#: The method of the comparisons' unadjusted intervals (their simultaneous ones are max-T intervals).
COMPARISON_METHOD = "percentile"


@dataclass(frozen=True)
class ComparisonChoices:
    """The metric the all-pairs comparisons compare (with the optimality gap's ``gamma``)."""

    metric: str
    gamma: float = 1.0


def build(inputs: TableInputs, request: ResamplingRequest, choices: ComparisonChoices | None) -> Part:
    """The all-pairs comparisons of ``choices.metric`` (no table without ``choices``)."""
    if choices is None:
        return Part({})
    if len(inputs.algorithms) < 2:
        return Part(
            {},
            warnings=[
                said(
                    kw("comparisons=True"), " needs at least two algorithms; no all-pairs comparisons were made."
                ).text()
            ],
        )
    pairs = compare_all(
        inputs.final,
        metric=choices.metric,
        reps=request.reps("comparisons"),
        ci=request.level,
        gamma=choices.gamma,
        seed=inputs.streams.comparisons(),
    )
    own = request.replace(method=COMPARISON_METHOD).record("comparisons", simultaneous="max-T")
    provenance = {"comparisons": pairs.attrs["method"], "comparisons_metric": choices.metric}
    return Part({"comparisons": pairs}, {"comparisons": own}, provenance, warnings=_blind_warning(pairs))


def _blind_warning(pairs: pd.DataFrame) -> list[str]:
    """The pairs left without interval, p-value or claim (an algorithm of one run per task), named once."""
    blind = pairs[(pairs["statistic"] == "difference") & pairs["p_value"].isna()]
    if blind.empty:
        return []
    named = "; ".join(f"{x!r} vs {y!r}" for x, y in zip(blind["algorithm_x"], blind["algorithm_y"], strict=True))
    return [
        f"all-pairs comparisons: no interval, p-value or claim for {plural(len(blind), 'pair')} with an algorithm "
        f"of one run per task ({named}): one run shows no run-to-run spread; run 2 or more seeds per task"
    ]
