"""A Report as every output shows it, built once: the module of ``render/`` that reads the analysis for them.

The console summary, ``report.html``, ``table.tex`` / ``table.md``, ``methods.md`` and the figures (and the note
saying which algorithms they leave out) all print the same facts about a Report: each metric's display name,
direction and decimals, the headline cells and which one is bold, the marks on a cell (a warning about it, or the
caveat its table's ``caveat`` column gives), the warnings grouped one line per algorithm, the counts, the letters
of ``--compare-all``, the protocol findings, the sentences that describe each table's intervals, and which
algorithms the figures show (all, or past :data:`MAX_SHOWN` the best and the worst) with the note saying so.
:func:`report_view` builds them once from the Report: it asks the analysis once
(:func:`~..analysis.notices.report_facts`: the notices and caveats, the letters, the protocol findings, the counts,
the metrics' names, the sentences, the content hash) and puts them into the words and cells the outputs print (with
:mod:`.intervals`, the interval registry's words). A renderer reads the :class:`ReportView`, never the analysis: so
two outputs cannot say two things, and a new output is a function of the view alone (the writer too: the tables it
writes and the hash its manifest records are the view's). The view holds the Report's tables as they are (the figures draw from
them), so it reads like a Report where a Report is read (:meth:`ReportView.table`, ``view.aggregates``, ...).

Example:
    >>> from rl_reliable_logger.analysis.report import Report
    >>> import pandas as pd
    >>> agg = pd.DataFrame({"algorithm": ["A", "B"], "metric": ["iqm", "iqm"], "point": [0.41, 0.93],
    ...                     "low": [0.38, 0.9], "high": [0.44, 0.96], "caveat": ["", "few runs"]})
    >>> view = report_view(Report(aggregates=agg, provenance={"algorithms": ["A", "B"]}))
    >>> view.headline.cells[("B", "iqm")], view.headline.bold["iqm"], view.title("iqm")
    ('0.93 [0.90, 0.96]', 'B', 'IQM')
    >>> view.notes("aggregates", "B", "iqm")
    (Note(kind='caveat', text='the iqm of B: few runs'),)
    >>> [note.line for note in view.headline_caveats]
    ['the iqm of B: few runs']
    >>> view.notes("aggregates", "A", "iqm")
    ()
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

import numpy as np
import pandas as pd

from ..analysis.notices import CaveatNote, ReportFacts, Warned, report_facts
from ..data.counts import Counts, fixed
from ..stats import registry
from . import intervals as words

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.protocol import Finding
    from ..analysis.report import Report

__all__ = [
    "MAX_SHOWN",
    "Caveat",
    "CaveatLine",
    "Headline",
    "IntervalWords",
    "Letters",
    "Note",
    "ReportView",
    "Tables",
    "Viewable",
    "as_view",
    "decimals",
    "lower_is_better",
    "metric_title",
    "report_view",
    "shown_algorithms",
    "shown_report",
]


class Tables(Protocol):
    """What a figure reads: a Report or a :class:`ReportView` (a table by name, the algorithms in report order,
    the provenance)."""

    @property
    def algorithms(self) -> Sequence[Any]: ...

    @property
    def provenance(self) -> Mapping[str, Any]: ...

    def table(self, name: str) -> pd.DataFrame: ...


def metric_title(metric: str) -> str:
    """A metric's display name (``iqm`` -> ``IQM``), from the one metric registry."""
    return registry.display_name(metric)


def lower_is_better(metric: str) -> bool:
    """Whether a smaller value of ``metric`` is better (the optimality gap), from the one metric registry."""
    return registry.lower_is_better(metric)


def decimals(values: Iterable[float]) -> int:
    """How many decimals a group of numbers is printed with: 2 for normalised-size numbers, fewer for large raw
    returns, 3 for tiny ones (every number of one metric, or of one table, gets the same).

    Example:
        >>> decimals([0.42, 0.5]), decimals([1234.5]), decimals([0.004])
        (2, 0, 3)
    """
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return 2
    mag = math.floor(math.log10(max(finite)))
    if mag >= 3:
        return 0
    if mag >= 1:
        return 1
    if mag >= -1:
        return 2
    return 3


def number(value: float | None, digits: int) -> str:
    """A number of a table cell at ``digits`` decimals; ``–`` for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return fixed(value, digits)


@dataclass(frozen=True)
class Note:
    """What a renderer marks on a cell: a ``warning`` about it (listed in full with the warnings) or a ``caveat``
    (its table's ``caveat`` column: why the cell's interval may not hold)."""

    kind: Literal["warning", "caveat"]
    text: str


@dataclass(frozen=True)
class Caveat:
    """A cell whose interval may not hold, and why: ``table`` (``aggregates``, ``differences``, ``improvement`` or
    ``per_task``), its ``cell`` (``(algorithm, metric)``, ``(x, y, metric)``, ``(x, y)``, ``(algorithm, task)``) and
    the ``text``: its reason (the same words on every cell it applies to)."""

    table: str
    cell: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class CaveatLine:
    """One reason said once, naming the cells it applies to (:func:`~..analysis.notices.caveat_notes`): ``line``
    (``the median of every algorithm: ...``, the words every renderer marks those cells with) and its ``cells``."""

    line: str
    cells: tuple[Caveat, ...]


@dataclass(frozen=True)
class Headline:
    """The headline table as every format prints it: algorithms (report order), metrics (the order asked for),
    each cell ``0.42 [0.38, 0.46]`` at its metric's decimals, and the bold algorithm of each metric (the best, only
    when its printed interval neither overlaps nor touches any other: bold means "separated by the CIs")."""

    algorithms: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    cells: Mapping[tuple[str, str], str] = field(default_factory=dict)
    bold: Mapping[str, str | None] = field(default_factory=dict)
    decimals: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Letters:
    """The compact letter display of ``--compare-all``: ``frame`` (algorithm, point, group; best first), the
    metric it compares (``None`` when the results do not say), its display name, the decimals of its points and
    its console ``text`` (:func:`~..analysis.comparisons.format_letters`)."""

    frame: pd.DataFrame
    metric: str | None
    title: str
    decimals: int
    text: str = ""


@dataclass(frozen=True)
class IntervalWords:
    """The sentences that describe the intervals (:mod:`.intervals`, from each table's record and the registry).

    ``headline``: the aggregates' intervals with their level (every format's caption); ``short``: level, method
    and replicates for the console's first line; ``tables``: each recorded table's own sentence; ``clauses``: one
    clause per table present (methods.md); ``resampling_free``: the present tables whose intervals use no
    resampling, in words (``the per-task means``); ``records``: what each table recorded; ``statistics``: per table, the phrase of each statistic's
    method where the rule gives the statistics their own (the aggregates' and differences' cells of a metric,
    :meth:`ReportView.method`); ``notes``: the console's notes on the method and on a statistic an option gave its
    own interval, in keyword form (the command line puts them in flag words); ``median`` and ``improvement``: what
    the median's and P(X > Y)'s intervals are and what the coverage study measured of them (``methods.md``)."""

    headline: str = ""
    short: str = ""
    tables: Mapping[str, str] = field(default_factory=dict)
    clauses: tuple[str, ...] = ()
    resampling_free: tuple[str, ...] = ()
    records: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    statistics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    median: str = ""
    improvement: str = ""


@dataclass(frozen=True)
class ReportView:
    """Everything the outputs say about one Report, computed once by :func:`report_view`.

    ``frames`` (every table present, registry order, as computed: :meth:`table`, :meth:`tables`), ``provenance``,
    ``warnings`` (every warning in full, in the report's order) and ``algorithms`` are the Report's; the rest is
    what the renderers print:
    ``counts``; ``metrics`` (each metric shown: display name and direction, :meth:`title` / :meth:`lower`);
    ``headline``; ``cell_notes`` (per table, per cell key: its :class:`Note` s, :meth:`notes`); ``notices`` (each
    warning with the line it is shown as: a pair's warning folded into its algorithm's line,
    :func:`~..analysis.notices.grouped_items`); ``letters``; ``findings`` (the protocol findings, most severe first)
    and ``finding_lines`` (each as a warning line); ``intervals``; ``titles`` (each optional table's heading and
    rows shown in ``report.html``); ``references`` (the papers cited); ``success`` (the success tables' sentence);
    ``pairs`` (which pairs the differences and improvement tables compare, when not every pair:
    :func:`~..analysis.tables.differences.sentence`);
    ``runs`` (runs and tasks per algorithm); ``present`` (the tables with rows); ``optional`` (the optional tables, in
    the order the analysis added them); ``figure_algorithms`` and ``figure_note`` (which algorithms the figures
    show and the sentence saying which they leave out, None when they show all: :func:`shown_algorithms`);
    ``source`` (where the scores came from, as a phrase: :func:`~..analysis.summary.source_text`); ``caveats``
    (every caveated cell once, in table order: :func:`~..analysis.notices.caveated`); ``headline_caveats`` (the
    headline's caveats, each reason once naming its cells: what the console, the paper tables and ``report.html``
    say under the headline and mark its cells with) and ``caveat_lines`` (every table's, each reason once:
    ``methods.md``'s Caveats), both :class:`CaveatLine` s from :func:`~..analysis.notices.caveat_notes`;
    ``median_runs`` (the runs per task at or below which the median's cells carry a caveat,
    :data:`~..analysis.caveats.MEDIAN_RUNS`); ``digest`` (the Report's content hash, which a bundle's manifest
    records) and ``written`` (the tables a results folder holds: every table present but an empty ``curves``).
    """

    frames: Mapping[str, pd.DataFrame]
    provenance: Mapping[str, Any]
    warnings: tuple[str, ...]
    algorithms: tuple[Any, ...]
    counts: Counts
    metrics: Mapping[str, tuple[str, bool]]
    headline: Headline
    cell_notes: Mapping[str, Mapping[tuple[str, ...], tuple[Note, ...]]]
    notices: tuple[tuple[str, str], ...]
    letters: Letters | None
    findings: tuple[Finding, ...]
    finding_lines: frozenset[str]
    intervals: IntervalWords
    titles: Mapping[str, tuple[str, int | None]]
    references: tuple[str, ...]
    success: str | None
    runs: Mapping[str, tuple[int, int]]
    present: frozenset[str]
    median_runs: int
    digest: str
    written: tuple[str, ...]
    optional: tuple[str, ...] = ()
    figure_algorithms: tuple[str, ...] = ()
    figure_note: str | None = None
    source: str = ""
    caveats: tuple[Caveat, ...] = ()
    headline_caveats: tuple[CaveatLine, ...] = ()
    caveat_lines: tuple[CaveatLine, ...] = ()
    pairs: str | None = None

    # ---------------------------------------------------------------- the tables, read as a Report's
    def table(self, name: str) -> pd.DataFrame:
        """A table by name (KeyError when the report has none of that name)."""
        try:
            return self.frames[name]
        except KeyError:
            raise KeyError(f"no table {name!r} in this report; it has {', '.join(self.frames)}") from None

    def tables(self) -> list[tuple[str, pd.DataFrame]]:
        """``(name, frame)`` of every table present, in registry order."""
        return list(self.frames.items())

    @property
    def extra(self) -> dict[str, pd.DataFrame]:
        """The optional tables present (``comparisons``, ``jordan``, ``tuning``, ...), in the order the analysis
        added them."""
        return {name: self.frames[name] for name in self.optional}

    @property
    def aggregates(self) -> pd.DataFrame:
        """The headline table: one row per algorithm and metric."""
        return self.frames["aggregates"]

    @property
    def per_task(self) -> pd.DataFrame:
        """One row per algorithm and task."""
        return self.frames["per_task"]

    @property
    def improvement(self) -> pd.DataFrame:
        """P(X > Y) per ordered pair."""
        return self.frames["improvement"]

    @property
    def differences(self) -> pd.DataFrame:
        """metric(X) - metric(Y) per ordered pair and metric."""
        return self.frames["differences"]

    @property
    def profiles(self) -> pd.DataFrame:
        """The performance profiles."""
        return self.frames["profiles"]

    @property
    def scores(self) -> pd.DataFrame:
        """The final scores used."""
        return self.frames["scores"]

    # ---------------------------------------------------------------- the facts
    def title(self, metric: str) -> str:
        """The display name of ``metric``."""
        said = self.metrics.get(metric)
        return said[0] if said is not None else metric_title(metric)

    def lower(self, metric: str) -> bool:
        """Whether a smaller ``metric`` is better."""
        said = self.metrics.get(metric)
        return said[1] if said is not None else lower_is_better(metric)

    def method(self, table: str, metric: str | None = None) -> str:
        """The phrase of the interval method of ``table``'s cells (of ``metric``'s cells where the statistics get
        methods of their own: ``method("aggregates", "median")``); "" for a table without intervals."""
        own = self.intervals.statistics.get(table, {}).get(metric or "")
        if own is not None:
            return own
        record = self.intervals.records.get(table)
        return words.method_phrase(str(record.get("method"))) if record else ""

    def notes(self, table: str, *key: str) -> tuple[Note, ...]:
        """The notes on one cell of ``table``: ``notes("aggregates", algorithm, metric)``,
        ``notes("differences", x, y, metric)``, ``notes("improvement", x, y)``, ``notes("per_task", algorithm,
        task)``; empty for a cell nothing is said about."""
        return self.cell_notes.get(table, {}).get(tuple(key), ())

    def with_warnings(self, extra: Sequence[str]) -> ReportView:
        """This view with ``extra`` warnings after the report's (the page's: which algorithms the figures left
        out, a figure that could not be drawn), each its own line."""
        known = set(self.warnings)
        added = [w for w in dict.fromkeys(extra) if w not in known]
        if not added:
            return self
        return dataclasses.replace(
            self,
            warnings=self.warnings + tuple(extra),
            notices=self.notices + tuple((w, w) for w in added),
        )

    def for_figures(self) -> ReportView:
        """What the figures draw from: this view, or past :data:`MAX_SHOWN` algorithms this view with every table
        cut to :attr:`figure_algorithms` (:meth:`reduced`)."""
        return self if self.figure_note is None else self.reduced(self.figure_algorithms)

    def reduced(self, algorithms: Sequence[str]) -> ReportView:
        """This view with every table cut to ``algorithms`` (a pair: both of its algorithms), for the figures when
        they cannot show every algorithm; the headline, notes and sentences stay the whole report's."""
        keep = set(algorithms)

        def reduce(frame: pd.DataFrame) -> pd.DataFrame:
            mask = pd.Series(True, index=frame.index)
            for col in ("algorithm", "algorithm_x", "algorithm_y"):
                if col in frame.columns:
                    mask &= frame[col].astype(str).isin(keep)
            return frame[mask]

        return dataclasses.replace(
            self,
            frames={name: reduce(frame) for name, frame in self.frames.items()},
            algorithms=tuple(algorithms),
            provenance={**self.provenance, "algorithms": list(algorithms)},
        )


#: A Report or its view: what every public renderer takes (a Report's view is built on the way in).
Viewable = Union["Report", ReportView]


def as_view(source: Viewable) -> ReportView:
    """``source`` as a view: a view as it is, a Report's built (every public renderer takes either)."""
    return source if isinstance(source, ReportView) else report_view(source)


#: Most algorithms a figure shows; past it, the best half and the worst half of this many. Why: every per-algorithm
#: figure grows with the algorithms (a rank grid of n x n cells, P(X > Y) of n (n - 1) pairs, a strip per algorithm
#: on every task, a legend entry per curve); 300 algorithms made figures that took minutes to draw and that nobody
#: could read. The tables always hold every algorithm.
MAX_SHOWN = 30
#: Aggregates used to rank algorithms for the cap, in order of preference (higher is better for all).
_RANK_BY = ("iqm", "mean", "median")


def shown_algorithms(report: Viewable, limit: int = MAX_SHOWN) -> tuple[list[str], str | None]:
    """(algorithms the figures show, in report order; the sentence saying what was left out, or None): all of them,
    or past ``limit`` the best and the worst by the IQM (else the mean, the median, the report's order)."""
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


def shown_report(report: Viewable, limit: int = MAX_SHOWN) -> tuple[Viewable, str | None]:
    """``report`` as it is when the figures show every algorithm, else its view cut to the algorithms of
    :func:`shown_algorithms` (pairs: both ends shown); and the note."""
    chosen, note = shown_algorithms(report, limit)
    return (report, None) if note is None else (as_view(report).reduced(chosen), note)


def report_view(report: Report) -> ReportView:
    """The view of ``report``: every fact the outputs print, computed once (the analysis asked once:
    :func:`~..analysis.notices.report_facts`)."""
    facts = report_facts(report)
    prov = dict(report.provenance or {})
    present = frozenset(name for name, frame in facts.tables.items() if not frame.empty)
    figure_algorithms, figure_note = shown_algorithms(report)
    headline_caveats = _caveat_lines(facts.headline_caveats)
    return ReportView(
        frames=facts.tables,
        provenance=prov,
        warnings=tuple(report.warnings),
        algorithms=tuple(report.algorithms),
        counts=facts.counts,
        metrics=facts.metrics,
        headline=_headline(report.aggregates, report.algorithms, facts.metrics),
        cell_notes=_cell_notes(facts, {line.line for line in headline_caveats}),
        notices=facts.notices,
        letters=_letters(facts),
        findings=facts.findings,
        finding_lines=facts.finding_lines,
        intervals=_interval_words(prov, present),
        titles=facts.titles,
        references=facts.references,
        success=facts.success,
        runs=facts.runs,
        present=present,
        median_runs=facts.median_runs,
        digest=facts.digest,
        written=facts.written,
        optional=tuple(report.extra),
        figure_algorithms=tuple(figure_algorithms),
        figure_note=figure_note,
        source=facts.source,
        caveats=tuple(_caveat(c) for c in facts.caveated),
        headline_caveats=headline_caveats,
        caveat_lines=_caveat_lines(facts.caveat_notes),
        pairs=facts.pairs,
    )


def _caveat_lines(notes: Sequence[CaveatNote]) -> tuple[CaveatLine, ...]:
    """Caveats grouped by reason (:func:`~..analysis.notices.caveat_notes`), each naming its cells by table and key."""
    return tuple(CaveatLine(note.line, tuple(map(_caveat, note.cells))) for note in notes)


def _caveat(cell: Warned) -> Caveat:
    """A caveated cell of :func:`~..analysis.notices.caveated` by its table and key."""
    if cell.metric == "P(X>Y)":
        return Caveat("improvement", (cell.algorithm, cell.other or ""), cell.text)
    if cell.other is not None:
        return Caveat("differences", (cell.algorithm, cell.other, cell.metric), cell.text)
    if cell.metric.startswith("task "):
        return Caveat("per_task", (cell.algorithm, cell.metric[len("task ") :]), cell.text)
    return Caveat("aggregates", (cell.algorithm, cell.metric), cell.text)


def _headline(agg: pd.DataFrame, report_order: Sequence[Any], metric_words: Mapping[str, tuple[str, bool]]) -> Headline:
    """The headline cells (of the aggregates ``agg``, algorithms in ``report_order``) at each metric's decimals and
    each metric's bold algorithm, judged on the bounds as printed (touching printed intervals are not apart)."""
    if agg.empty:
        return Headline()
    present = [str(a) for a in pd.unique(agg["algorithm"])]
    order = [str(a) for a in report_order if str(a) in present]
    algorithms = order + [a for a in present if a not in order]
    metrics = [str(m) for m in pd.unique(agg["metric"])]  # the order the analysis asked for (``metrics=``)
    names = agg["algorithm"].astype(str).to_numpy()
    metric_of = agg["metric"].astype(str).to_numpy()
    values = agg[["point", "low", "high"]].to_numpy(float)
    cells: dict[tuple[str, str], str] = {}
    bold: dict[str, str | None] = {}
    places: dict[str, int] = {}
    for m in metrics:
        here = metric_of == m
        rows, algs = values[here], names[here]
        d = places[m] = decimals(rows.ravel().tolist())
        for alg, (point, low, high) in zip(algs, rows.tolist()):
            cells[(alg, m)] = f"{number(point, d)} [{number(low, d)}, {number(high, d)}]"
        bold[m] = _best_separated(algs, _printed(rows, d), metric_words[m][1])
    return Headline(tuple(algorithms), tuple(metrics), cells, bold, places)


def _printed(rows: np.ndarray, d: int) -> np.ndarray:
    """``rows`` rounded as :func:`number` prints them (NaN stays NaN)."""
    return np.array([[float(fixed(v, d)) if math.isfinite(v) else math.nan for v in row] for row in rows.tolist()])


def _best_separated(algorithms: np.ndarray, rows: np.ndarray, lower: bool) -> str | None:
    """The best algorithm if its interval is disjoint from every other one, else None (``rows``: point, low, high
    per algorithm)."""
    rows_ok = ~np.isnan(rows).any(axis=1) if len(rows) else np.zeros(0, dtype=bool)
    algorithms, rows = algorithms[rows_ok], rows[rows_ok]
    if len(rows) < 2:
        return None
    best = int(np.argmin(rows[:, 0]) if lower else np.argmax(rows[:, 0]))
    others = np.delete(rows, best, axis=0)
    if lower:
        separated = bool((rows[best, 2] < others[:, 1]).all())
    else:
        separated = bool((rows[best, 1] > others[:, 2]).all())
    return str(algorithms[best]) if separated else None


def _cell_notes(facts: ReportFacts, caveated: set[str]) -> dict[str, dict[tuple[str, ...], tuple[Note, ...]]]:
    """Per table and cell, its notes, as :mod:`..analysis.notices` ties them to cells (from the records that made the
    warnings, and a headline cell's caveat as the line that says its reason once): a headline cell's in their order,
    a difference's in both orders; each a caveat when its text is one of ``caveated``, else a warning."""

    def noted(texts: list[str]) -> tuple[Note, ...]:
        return tuple(Note("caveat" if t in caveated else "warning", t) for t in texts)

    out: dict[str, dict[tuple[str, ...], tuple[Note, ...]]] = {}
    if facts.cell_warnings:
        out["aggregates"] = {(alg, metric): noted(texts) for (alg, metric), texts in facts.cell_warnings.items()}
    if facts.pair_warnings:
        out["differences"] = {key: noted(texts) for key, texts in facts.pair_warnings.items()}
    return out


def _letters(facts: ReportFacts) -> Letters | None:
    if facts.letters is None:
        return None
    display, metric, title, text = facts.letters
    return Letters(display, metric, title, decimals(display["point"].astype(float).tolist()), text)


def _interval_words(prov: Mapping[str, Any], present: frozenset[str]) -> IntervalWords:
    records = words.table_intervals(prov)
    return IntervalWords(
        headline=words.headline_intervals(prov),
        short=words.short_intervals(prov),
        tables={name: words.describe_table(prov, name) for name in records},
        clauses=tuple(words.table_clauses(prov, set(present))),
        resampling_free=tuple(words.TABLE_WORDS.get(t, t) for t in words.non_bootstrap_tables(prov, set(present))),
        records=records,
        statistics={
            name: {str(stat): words.method_phrase(str(m)) for stat, m in dict(record.get("statistics") or {}).items()}
            for name, record in records.items()
        },
        notes=tuple(words.console_notes(prov)),
        median=words.median_sentence(prov),
        improvement=words.improvement_sentence(prov),
    )
