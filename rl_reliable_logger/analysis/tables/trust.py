"""The skew diagnostic of the mean (no table of its own): recorded always, warned where the mean is reported."""

from __future__ import annotations

from ...stats import metrics as mt
from ..trust import mean_trust
from .base import Part, TableInputs


def build(inputs: TableInputs, pairs: list[tuple[str, str]]) -> Part:
    """The skew diagnostic of every algorithm's mean and of the mean difference of each compared pair."""
    trust_warnings, mean_skewness = mean_trust(inputs.cells, pairs=pairs)
    reported = any(m.fn is mt.mean for m in inputs.metrics)
    return Part({}, provenance={"mean_skewness": mean_skewness}, warnings=trust_warnings if reported else [])
