"""The warnings as a reader meets them: grouped one line per algorithm, tied to the cells they are about, and
emitted through Python's :mod:`warnings` as :class:`~rl_reliable_logger.errors.ReliabilityWarning`.

``report.warnings`` keeps every warning in full (``provenance.json``, ``methods.md``). What the console, a
notebook and the first screen of ``report.html`` show is shorter: a warning about a pair whose algorithm already
has its own warning only adds that pair to the algorithm's line. Which cells a warning is about is read from the
records that made it (``provenance[...]["warned"]``, see :mod:`.trust`), never parsed out of its sentence.

Example:
    >>> import warnings
    >>> from rl_reliable_logger.analysis.report import Report
    >>> report = Report(warnings=["A: untrusted", "A - B: untrusted too"], provenance={"mean_skewness": {"warned": [
    ...     {"metric": "mean", "algorithm": "A", "warning": "A: untrusted"},
    ...     {"metric": "mean", "pair": ["A", "B"], "warning": "A - B: untrusted too"}]}})
    >>> grouped(report)
    ['A: untrusted (also flagged: its mean difference with B)']
    >>> cell_warnings(report)
    {('A', 'mean'): ['A: untrusted']}
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ReliabilityWarning, caller_stacklevel

if TYPE_CHECKING:  # pragma: no cover
    from .report import Report

__all__ = [
    "ReliabilityWarning",
    "Warned",
    "caveated",
    "cell_warnings",
    "emit",
    "grouped",
    "grouped_items",
    "pair_warnings",
    "warned",
]

#: The provenance records whose ``warned`` list ties warnings to cells (the skew diagnostic's, :mod:`.trust`).
WARNED_RECORDS = ("mean_skewness",)


@dataclass(frozen=True)
class Warned:
    """One warning about one cell: an algorithm's ``metric``, or (``other`` set) the difference ``algorithm - other``."""

    text: str
    metric: str
    algorithm: str
    other: str | None = None


def warned(report: Report) -> list[Warned]:
    """The warnings of ``report`` that are about cells, from the records that made them (malformed entries of a
    hand-edited ``provenance.json`` and warnings no longer in ``report.warnings`` are skipped)."""
    prov = report.provenance or {}
    present = set(report.warnings)
    out: list[Warned] = []
    for key in WARNED_RECORDS:
        record = prov.get(key)
        entries = record.get("warned") if isinstance(record, Mapping) else None
        for entry in entries if isinstance(entries, list) else []:
            item = _entry(entry)
            if item is not None and item.text in present:
                out.append(item)
    return out


def _entry(entry: Any) -> Warned | None:
    if not isinstance(entry, Mapping):
        return None
    text, metric, alg, pair = entry.get("warning"), entry.get("metric"), entry.get("algorithm"), entry.get("pair")
    if not isinstance(text, str) or not isinstance(metric, str):
        return None
    if isinstance(alg, str):
        return Warned(text, metric, alg)
    if isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair):
        return Warned(text, metric, pair[0], pair[1])
    return None


def caveated(report: Report) -> list[Warned]:
    """The rows of the ``aggregates`` and ``differences`` tables whose ``caveat`` is not empty (issue 52), each as a
    :class:`Warned` whose text names its cell and gives the reason once (``A mean: heavy tails at 3 runs: ...``); none
    for a results folder written before the column. The one place every renderer's mark of a caveat comes from."""
    out: list[Warned] = []
    agg, diff = report.aggregates, report.differences
    if "caveat" in agg.columns:
        for alg, metric, reason in zip(agg["algorithm"], agg["metric"], agg["caveat"]):
            if isinstance(reason, str) and reason:
                out.append(Warned(f"{alg} {metric}: {reason}", str(metric), str(alg)))
    if "caveat" in diff.columns:
        for x, y, metric, reason in zip(diff["algorithm_x"], diff["algorithm_y"], diff["metric"], diff["caveat"]):
            if isinstance(reason, str) and reason:
                out.append(Warned(f"{x} - {y} {metric}: {reason}", str(metric), str(x), str(y)))
    return out


def cell_warnings(report: Report) -> dict[tuple[str, str], list[str]]:
    """``{(algorithm, metric): [warning, ...]}``: the headline cells a warning or a caveat is about (an algorithm's
    own)."""
    out: dict[tuple[str, str], list[str]] = {}
    for item in [*warned(report), *caveated(report)]:
        if item.other is None:
            out.setdefault((item.algorithm, item.metric), []).append(item.text)
    return out


def pair_warnings(report: Report) -> dict[tuple[str, str, str], list[str]]:
    """``{(x, y, metric): [warning, ...]}``: the differences a warning or a caveat is about, in both orders."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for item in [*warned(report), *caveated(report)]:
        if item.other is not None:
            out.setdefault((item.algorithm, item.other, item.metric), []).append(item.text)
            out.setdefault((item.other, item.algorithm, item.metric), []).append(item.text)
    return out


def grouped(report: Report) -> list[str]:
    """Every warning once, in the report's order, a pair's warning folded into the line of its algorithm when that
    algorithm has a warning of its own about the same metric (``also flagged: its mean differences with B, C``)."""
    return [line for _, line in grouped_items(report)]


def grouped_items(report: Report) -> list[tuple[str, str]]:
    """:func:`grouped` as ``(warning, line)``: each line with the warning of ``report.warnings`` it starts from."""
    items = warned(report)
    own = {(i.algorithm, i.metric): i.text for i in items if i.other is None}
    partners: dict[str, list[tuple[str, str]]] = {}  # own line -> [(metric, other algorithm)]
    folded: set[str] = set()
    for i in items:
        if i.other is None:
            continue
        for alg, other in ((i.algorithm, i.other), (i.other, i.algorithm)):
            line = own.get((alg, i.metric))
            if line is not None:
                partners.setdefault(line, []).append((i.metric, other))
                folded.add(i.text)
                break
    return [
        (text, text + _also(partners.get(text, []))) for text in dict.fromkeys(report.warnings) if text not in folded
    ]


def _also(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    by_metric: dict[str, list[str]] = {}
    for metric, other in pairs:
        by_metric.setdefault(metric, []).append(other)
    said = "; ".join(
        f"its {metric} difference{'s' if len(others) > 1 else ''} with {', '.join(others)}"
        for metric, others in by_metric.items()
    )
    return f" (also flagged: {said})"


def emit(report: Report) -> None:
    """Each grouped line as a :class:`ReliabilityWarning`, pointing at the user's line: the first one outside this
    package (:func:`~rl_reliable_logger.errors.caller_stacklevel`), whichever public entry called ``evaluate``."""
    for line in grouped(report):
        _warnings.warn(line, ReliabilityWarning, stacklevel=caller_stacklevel())
