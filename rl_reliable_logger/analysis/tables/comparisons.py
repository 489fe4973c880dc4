"""The ``comparisons`` table (``comparisons=True``): every pair of algorithms, unadjusted and family-wise
(:func:`..comparisons.compare_all`), on its own stream; its intervals are percentile ones, recorded so."""

from __future__ import annotations

from ...stats.intervals import ResamplingRequest
from ..comparisons import compare_all
from ..options import AnalysisOptions
from .base import Part, TableInputs

#: The method of the comparisons' unadjusted intervals (their simultaneous ones are max-T intervals).
COMPARISON_METHOD = "percentile"


def build(inputs: TableInputs, request: ResamplingRequest, options: AnalysisOptions) -> Part:
    """The all-pairs comparisons of ``options.headline_metric`` (no table without ``options.comparisons``)."""
    if not options.comparisons:
        return Part({})
    if len(inputs.algorithms) < 2:
        return Part(
            {}, warnings=["`comparisons=True` needs at least two algorithms; no all-pairs comparisons were made."]
        )
    pairs = compare_all(
        inputs.final,
        metric=options.headline_metric,
        reps=request.reps("comparisons"),
        ci=request.level,
        gamma=options.gamma,
        seed=inputs.streams.comparisons(),
    )
    own = request.replace(method=COMPARISON_METHOD).record("comparisons", simultaneous="max-T")
    provenance = {"comparisons": pairs.attrs["method"], "comparisons_metric": options.headline_metric}
    return Part({"comparisons": pairs}, {"comparisons": own}, provenance)
