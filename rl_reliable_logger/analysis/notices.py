"""What the analysis says of a Report to its readers: the warnings as a reader meets them (grouped one line per
algorithm, tied to the cells they are about, emitted through Python's :mod:`warnings` as
:class:`~rl_reliable_logger.errors.ReliabilityWarning`), the caveats, and every other fact an output prints, asked
once (:func:`report_facts`: the one call the report's view makes into the analysis).

``report.warnings`` keeps every warning in full (``provenance.json``, ``methods.md``). What the console, a
notebook and the first screen of ``report.html`` show is shorter: a warning about a pair whose algorithm already
has its own warning only adds that pair to the algorithm's line. Which cells a warning is about is read from the
records that made it (``provenance[...]["warned"]``, results written before issue 52), never parsed out of its
sentence. The caveats of the tables (:mod:`.caveats`) are said once per reason, naming their cells
(:func:`caveat_notes`).

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

import pandas as pd

from ..data.counts import Counts, count_runs
from ..errors import ReliabilityWarning, caller_stacklevel
from ..stats import registry
from . import protocol
from .caveats import MEDIAN_RUNS
from .comparisons import format_letters, report_letters
from .hashing import report_hash
from .report import SPECS
from .summary import source_text
from .tables import differences, success

if TYPE_CHECKING:  # pragma: no cover
    from .report import Report

__all__ = [
    "FALLBACKS",
    "CaveatNote",
    "ReliabilityWarning",
    "ReportFacts",
    "Warned",
    "caveat_notes",
    "caveated",
    "cell_warnings",
    "emit",
    "fallback_line",
    "fallbacks",
    "grouped",
    "grouped_items",
    "pair_warnings",
    "report_facts",
    "warned",
]

#: The provenance records whose ``warned`` list ties warnings to cells: the skew diagnostic's, which results written
#: before issue 52 carry (the mean's caveat took its place), so their marks read back as written.
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


#: The tables with a ``caveat`` column, in the order their notes are said.
CAVEATED = ("aggregates", "differences", "improvement", "per_task")


def caveated(report: Report, tables: tuple[str, ...] = CAVEATED) -> list[Warned]:
    """Every cell of ``tables`` (among :data:`CAVEATED`) whose ``caveat`` is not empty (issue 52), each as a
    :class:`Warned` whose text is the reason (the same words on every cell it applies to): an algorithm's metric
    (``aggregates``), a difference (``differences``: ``other`` set), a pair's P(X > Y) (``improvement``: metric
    ``P(X>Y)``) or a task's mean (``per_task``: metric ``task <name>``). None for a results folder written before the
    column."""
    out: list[Warned] = []
    for table in tables:
        frame = getattr(report, table)
        if "caveat" not in frame.columns:
            continue
        for row in frame.to_dict("records"):
            reason = row.get("caveat")
            if isinstance(reason, str) and reason:
                out.append(_cell(table, row, reason))
    return out


def _cell(table: str, row: Mapping[str, Any], reason: str) -> Warned:
    if table == "aggregates":
        return Warned(reason, str(row["metric"]), str(row["algorithm"]))
    if table == "differences":
        return Warned(reason, str(row["metric"]), str(row["algorithm_x"]), str(row["algorithm_y"]))
    if table == "improvement":
        return Warned(reason, "P(X>Y)", str(row["algorithm_x"]), str(row["algorithm_y"]))
    return Warned(reason, f"task {row['task']}", str(row["algorithm"]))


@dataclass(frozen=True)
class CaveatNote:
    """One reason and the cells it applies to, said once: ``line`` is ``<cells>: <reason>`` (``the median of every
    algorithm: ...``), the words every renderer marks those cells with."""

    reason: str
    cells: tuple[Warned, ...]
    where: str

    @property
    def line(self) -> str:
        return f"{self.where}: {self.reason}"


def caveat_notes(report: Report, tables: tuple[str, ...] = CAVEATED) -> list[CaveatNote]:
    """The caveats of ``tables`` grouped by reason, in table order: one note per reason naming its cells compactly
    (``the mean of A and B; the optimality_gap of A``, ``of every algorithm``, ``of every pair``). The one place every
    renderer's caveat marks and lines come from (the console, table.md/tex, report.html, methods.md).

    Example:
        >>> import pandas as pd
        >>> from rl_reliable_logger.analysis.report import Report
        >>> agg = pd.DataFrame({"algorithm": ["A", "A", "B", "B"], "metric": ["mean", "median"] * 2,
        ...     "point": 0.0, "low": 0.0, "high": 0.0, "caveat": ["heavy", "middle", "", "middle"]})
        >>> [note.line for note in caveat_notes(Report(aggregates=agg))]
        ['the mean of A: heavy', 'the median of every algorithm: middle']
    """
    by_reason: dict[str, list[Warned]] = {}
    for cell in caveated(report, tables):
        by_reason.setdefault(cell.text, []).append(cell)
    return [CaveatNote(reason, tuple(cells), _where(report, cells)) for reason, cells in by_reason.items()]


def _where(report: Report, cells: list[Warned]) -> str:
    """The cells of one reason in words: per metric (or table), whom it applies to."""
    algorithms = [str(a) for a in dict.fromkeys(report.aggregates.get("algorithm", pd.Series(dtype=object)))]
    algorithms = algorithms or [str(a) for a in report.algorithms]
    n_pairs = len(algorithms) * (len(algorithms) - 1) // 2
    groups: dict[tuple[str, bool], list[str]] = {}
    for c in cells:
        if c.metric == "P(X>Y)":
            key, who = ("P(X>Y)", True), _pair(c.algorithm, c.other or "")
        elif c.other is not None:
            key, who = (f"the {c.metric} difference", True), f"{c.algorithm} - {c.other}"
        elif c.metric.startswith("task "):
            key, who = (f"the mean of {c.algorithm}", False), c.metric[len("task ") :]
        else:
            key, who = (f"the {c.metric}", False), c.algorithm
        said = groups.setdefault(key, [])
        if who not in said and (c.metric != "P(X>Y)" or _pair(c.other or "", c.algorithm) not in said):
            said.append(who)  # P(X>Y) and P(Y>X) share one interval: one pair
    parts = []
    for (what, paired), named in groups.items():
        if what.startswith("the mean of "):
            parts.append(f"{what} on task{'s' if len(named) > 1 else ''} {_join(named)}")
        elif paired:
            parts.append(f"{what} of every pair" if len(named) == n_pairs > 1 else f"{what} of {_join(named)}")
        else:
            every = len(named) == len(algorithms) > 1
            parts.append(f"{what} of every algorithm" if every else f"{what} of {_join(named)}")
    return "; ".join(parts)


def _pair(x: str, y: str) -> str:
    return f"{x} vs {y}"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def cell_warnings(report: Report) -> dict[tuple[str, str], list[str]]:
    """``{(algorithm, metric): [warning, ...]}``: the headline cells a warning or a caveat is about (an algorithm's
    own); a caveat as its note's line (:func:`caveat_notes` of the aggregates), so each reason is one footnote."""
    out: dict[tuple[str, str], list[str]] = {}
    for item in warned(report):
        if item.other is None:
            out.setdefault((item.algorithm, item.metric), []).append(item.text)
    for note in caveat_notes(report, ("aggregates",)):
        for cell in note.cells:
            out.setdefault((cell.algorithm, cell.metric), []).append(note.line)
    return out


def pair_warnings(report: Report) -> dict[tuple[str, str, str], list[str]]:
    """``{(x, y, metric): [warning, ...]}``: the differences a warning is about, in both orders (a caveat is in the
    table's own ``caveat`` column)."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for item in warned(report):
        if item.other is not None:
            out.setdefault((item.algorithm, item.other, item.metric), []).append(item.text)
            out.setdefault((item.other, item.algorithm, item.metric), []).append(item.text)
    return out


def grouped(report: Report) -> list[str]:
    """Every warning once, in the report's order, a pair's warning folded into the line of its algorithm when that
    algorithm has a warning of its own about the same metric (``also flagged: its mean differences with B, C``)."""
    return [line for _, line in grouped_items(report)]


#: The provenance record of the studentized intervals that fell back (:func:`..tables.aggregates.fallen_back`):
#: said in one line, naming their cells, where the report keeps one sentence per interval.
FALLBACKS = "fallen_back"


def fallbacks(report: Report) -> list[tuple[Warned, float]]:
    """The fallen-back intervals still among ``report.warnings``, each with the share of its replicates whose
    standard error is near 0 (malformed entries of a hand-edited ``provenance.json`` are skipped)."""
    entries = (report.provenance or {}).get(FALLBACKS)
    present = set(report.warnings)
    out = []
    for entry in entries if isinstance(entries, list) else []:
        item = _entry(entry)
        share = entry.get("share") if isinstance(entry, Mapping) else None
        if item is not None and item.text in present and isinstance(share, (int, float)):
            out.append((item, float(share)))
    return out


def fallback_line(report: Report, found: list[tuple[Warned, float]]) -> str:
    """Every fallback of ``found`` in one line: which cells, and why (the shares of their degenerate replicates).

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> report = Report(provenance={"algorithms": ["A", "B"]})
        >>> cells = [(Warned("", m, a), s) for a in "AB" for m, s in (("mean", 0.04), ("iqm", 0.33))]
        >>> fallback_line(report, cells + [(Warned("", "iqm", "A", "B"), 0.2)])
        'bootstrap-t fell back to the expanded percentile interval for the mean and iqm of every algorithm; the iqm difference of A - B: 4-33% of their resamples have a standard error near 0 (a resample has none where it repeats one score, or tied scores, in every task: few runs per task, or many ties), more than the 1% it may drop'
    """
    from ..stats.intervals.bounds import DEGENERATE_SHARE
    from ..stats.intervals.estimate import percent

    shares = sorted({share for _, share in found})
    many = [s for s in shares if DEGENERATE_SHARE < s < 1.0]
    why = []
    if many:
        lo, hi = percent(many[0]), percent(many[-1])
        span = lo if lo == hi else f"{lo.rstrip('%')}-{hi}"
        why.append(
            f"{span} of {'their' if len(found) > 1 else 'its'} resamples have a standard error near 0 (a resample "
            "has none where it repeats one score, or tied scores, in every task: few runs per task, or many ties), "
            f"more than the {percent(DEGENERATE_SHARE)} it may drop"
        )
    if shares and shares[-1] >= 1.0:
        why.append("the runs some use have no spread")
    if shares and shares[0] <= DEGENERATE_SHARE:
        why.append("the studentized replicates of some are all equal")
    cells = _named(report, [cell for cell, _ in found])
    return f"bootstrap-t fell back to the expanded percentile interval for {cells}: {'; '.join(why)}"


def _named(report: Report, cells: list[Warned]) -> str:
    """Cells in words, metrics that apply to the same algorithms (or pairs) said together: ``the mean and iqm of
    every algorithm; the iqm difference of A - B``."""
    algorithms = [str(a) for a in report.algorithms] or list(dict.fromkeys(c.algorithm for c in cells))
    n_pairs = len(algorithms) * (len(algorithms) - 1) // 2
    whom: dict[tuple[str, bool], list[str]] = {}
    for c in cells:
        who = c.algorithm if c.other is None else f"{c.algorithm} - {c.other}"
        said = whom.setdefault((c.metric, c.other is not None), [])
        if who not in said:
            said.append(who)
    together: dict[tuple[tuple[str, ...], bool], list[str]] = {}
    for (metric, paired), named in whom.items():
        together.setdefault((tuple(named), paired), []).append(metric)
    parts = []
    for (group, paired), metrics in together.items():
        every = len(group) == (n_pairs if paired else len(algorithms)) > 1
        of = ("every pair" if paired else "every algorithm") if every else _join(list(group))
        noun = f" difference{'s' if len(metrics) > 1 else ''}" if paired else ""
        parts.append(f"the {_join(metrics)}{noun} of {of}")
    return "; ".join(parts)


def grouped_items(report: Report) -> list[tuple[str, str]]:
    """:func:`grouped` as ``(warning, line)``: each line with the warning of ``report.warnings`` it starts from.
    Every studentized interval that fell back is said in one line (:func:`fallback_line`), where the first of them
    was."""
    found = fallbacks(report)
    fell = {item.text for item, _ in found}
    first = next((w for w in report.warnings if w in fell), None)
    return [
        (text, fallback_line(report, found) if text == first else line)
        for text, line in _folded(report)
        if text not in fell or text == first
    ]


def _folded(report: Report) -> list[tuple[str, str]]:
    """Each warning once, a pair's warning folded into its algorithm's line (:func:`grouped`)."""
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
    return [  # a line with nothing folded in is the warning itself (its message kept: wording.Said)
        (text, text + _also(partners[text]) if partners.get(text) else text)
        for text in dict.fromkeys(report.warnings)
        if text not in folded
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


# ---------------------------------------------------------------------------- every fact an output prints
@dataclass(frozen=True)
class ReportFacts:
    """What the analysis says of one Report that its outputs print, computed once by :func:`report_facts`: the one
    thing the report's view (:mod:`rl_reliable_logger.render.view`) asks of the analysis, so that no renderer, and
    no part of the view, goes back into it.

    ``tables`` (every table present, registry order) and ``written`` (the names of those a folder holds: not an
    empty ``curves``); ``digest`` (the content hash a bundle's manifest records,
    :func:`~.hashing.report_hash`); ``counts`` and ``runs`` (runs and tasks per algorithm); ``metrics`` (each metric
    a table names, and the letters' metric: display name and whether lower is better); ``letters`` (the compact
    letter display of ``comparisons=True``: frame, metric, its display name and console text; None without it);
    ``findings`` (the protocol findings, most severe first), ``finding_lines`` and ``references`` (the papers
    cited); ``titles`` (each optional table's heading and rows shown); ``source``, ``pairs`` and ``success`` (the
    sentences on where the scores came from, which pairs are compared, the success tables); ``caveated``,
    ``headline_caveats`` and ``caveat_notes`` (every caveated cell; the headline's and every table's caveats, each
    reason once); ``cell_warnings`` and ``pair_warnings`` (the warnings tied to cells); ``notices`` (each warning
    with the line it is shown as, :func:`grouped_items`); ``median_runs`` (:data:`~.caveats.MEDIAN_RUNS`).

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> agg = pd.DataFrame({"algorithm": ["A"], "metric": ["iqm"], "point": [0.4], "low": [0.3], "high": [0.5],
        ...                     "caveat": ["few runs"]})
        >>> facts = report_facts(Report(aggregates=agg))
        >>> facts.metrics, [note.line for note in facts.headline_caveats], len(facts.digest)
        ({'iqm': ('IQM', False)}, ['the iqm of A: few runs'], 64)
    """

    tables: Mapping[str, pd.DataFrame]
    written: tuple[str, ...]
    digest: str
    counts: Counts
    runs: Mapping[str, tuple[int, int]]
    metrics: Mapping[str, tuple[str, bool]]
    letters: tuple[pd.DataFrame, str | None, str, str] | None
    findings: tuple[protocol.Finding, ...]
    finding_lines: frozenset[str]
    references: tuple[str, ...]
    titles: Mapping[str, tuple[str, int | None]]
    source: str
    pairs: str | None
    success: str | None
    caveated: tuple[Warned, ...]
    headline_caveats: tuple[CaveatNote, ...]
    caveat_notes: tuple[CaveatNote, ...]
    cell_warnings: Mapping[tuple[str, str], list[str]]
    pair_warnings: Mapping[tuple[str, str, str], list[str]]
    notices: tuple[tuple[str, str], ...]
    median_runs: int = MEDIAN_RUNS


def report_facts(report: Report) -> ReportFacts:
    """Every fact of :class:`ReportFacts`, asked of the analysis once."""
    prov = report.provenance or {}
    tables = dict(report.tables())
    present = {name for name, frame in tables.items() if not frame.empty}
    letters = _letters(report)
    shown = [*_metric_names(tables), *([letters[1]] if letters and letters[1] else [])]
    fired = [dict(d) for d in prov.get("protocol") or [] if isinstance(d, Mapping)]
    findings = tuple(protocol.by_severity([protocol.Finding.from_dict(d) for d in fired if "check" in d]))
    cited = " ".join(str(f.get("cite") or "") for f in fired)
    pairs, rates = prov.get("pairs"), prov.get("success")
    return ReportFacts(
        tables=tables,
        written=tuple(name for name, _ in report.tables(written=True)),
        digest=report_hash(report),
        metrics={m: (registry.display_name(m), registry.lower_is_better(m)) for m in dict.fromkeys(shown)},
        letters=letters,
        findings=findings,
        finding_lines=frozenset(protocol.format_finding(f) for f in findings),
        references=tuple(
            full
            for short, full in protocol.REFERENCES.items()
            if short == protocol.AGARWAL or short in cited or (short == protocol.JORDAN and "jordan" in present)
        ),
        titles={
            name: (SPECS[name].title or name, SPECS[name].max_rows)
            for name in tables
            if SPECS[name].kind == "optional" and SPECS[name].title is not None
        },
        source=source_text(prov.get("source")),
        pairs=differences.sentence(pairs) if isinstance(pairs, dict) and "differences" in present else None,
        success=success.sentence(rates) if rates else None,
        caveated=tuple(caveated(report)),
        headline_caveats=tuple(caveat_notes(report, ("aggregates",))),
        caveat_notes=tuple(caveat_notes(report)),
        cell_warnings=cell_warnings(report),
        pair_warnings=pair_warnings(report),
        notices=tuple(grouped_items(report)),
        counts=report.counts(),  # from the scores (or the recorded counts): the one count every output prints
        runs=_runs(report.scores),
    )


def _letters(report: Report) -> tuple[pd.DataFrame, str | None, str, str] | None:
    """The letter display of ``comparisons=True`` as (frame, metric, its display name, console text)."""
    display = report_letters(report)
    if display is None or display.empty:
        return None
    metric = report.provenance.get("comparisons_metric") or None
    return display, metric, registry.display_name(str(metric or "metric")), format_letters(display, metric=metric)


def _metric_names(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Every metric a table names, in table order (the aggregates' first: the order the analysis asked for)."""
    names: list[str] = []
    for name in ("aggregates", "differences", "curves"):
        frame = tables.get(name)
        if frame is not None and "metric" in frame.columns:
            names += [str(m) for m in pd.unique(frame["metric"].astype(str))]
    return names


def _runs(scores: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Runs and tasks per algorithm of the final scores (the headline table's last column)."""
    if scores.empty or "algorithm" not in scores:
        return {}
    out = {}
    for alg, sub in scores.groupby(scores["algorithm"].astype(str)):
        counted = count_runs(sub)
        out[str(alg)] = (counted.runs, counted.tasks)
    return out
