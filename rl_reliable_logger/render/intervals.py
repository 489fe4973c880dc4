"""The intervals of a Report in words: the one source of every sentence that describes an interval.

The console summary, report.html, methods.md and the table captions all build their words here, from what
``evaluate()`` recorded per table (``provenance["intervals"]``: method, level, replicate count, and the method
of each statistic where the rule gives them their own) and from the interval-method registry
(:mod:`..stats.intervals`: each method's phrase, whether it is a bootstrap interval, whether it uses replicates).

Example:
    >>> prov = {"intervals": {"aggregates": {"method": "bootstrap-t", "level": 0.95, "replicates": 2000,
    ...     "statistics": {"mean": "bootstrap-t", "iqm": "expanded"}}}}
    >>> print(describe_table(prov, "aggregates"))
    95% studentized bootstrap (bootstrap-t) intervals for mean and expanded percentile intervals for iqm (2,000 bootstrap replicates)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..analysis.options import DEFAULT_METHOD, PAPER_METHOD, ci_label
from ..stats import intervals

#: What each table holds, in words (declared with the tables, in the registry).
TABLE_WORDS = intervals.TABLE_WORDS


def table_intervals(prov: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per table, what was computed: ``{method, level, replicates[, statistics, expanded_level]}``.

    Read from ``provenance["intervals"]``; for results written before it was recorded, derived with the
    registry's rule from the requested method (or the older ``interval_methods``) and the replicate options.
    """
    recorded = prov.get("intervals")
    if isinstance(recorded, Mapping):
        return {str(k): dict(v) for k, v in recorded.items() if isinstance(v, Mapping)}
    older = prov.get("interval_methods")
    if isinstance(older, Mapping):
        rule = {str(k): str(v) for k, v in older.items()}
    else:
        try:
            rule = intervals.table_rule(str(prov.get("method") or "percentile"))
        except ValueError:
            return {}
        if not prov.get("curve_reps"):
            rule.pop("curves", None)
    out = {}
    for table, name in rule.items():
        spec = intervals.REGISTRY.get(name)
        reps = prov.get(intervals.REPLICATE_OPTIONS.get(table, ""))
        uses = spec is None or spec.replicates
        out[table] = {"method": name, "level": prov.get("ci", 0.95), "replicates": reps if uses else None}
    return out


def _phrase(name: str) -> str:
    spec = intervals.REGISTRY.get(name)
    return spec.phrase if spec is not None else name


def _uses_replicates(name: str) -> bool:
    spec = intervals.REGISTRY.get(name)
    return spec is None or spec.replicates


def _studentized(record: Mapping[str, Any]) -> bool:
    names = [record.get("method"), *dict(record.get("statistics") or {}).values()]
    return any(n in intervals.REGISTRY and intervals.REGISTRY[n].studentized for n in names)


def interval_phrase(record: Mapping[str, Any], *, fallbacks: bool = False) -> str:
    """A table's intervals in words, without the level: ``expanded percentile intervals (2,000 bootstrap
    replicates)``; where statistics got methods of their own, one phrase per method naming its statistics.
    ``fallbacks``: some studentized intervals fell back (said where the table has studentized ones)."""
    statistics = dict(record.get("statistics") or {})
    groups: dict[str, list[str]] = {}
    for stat, name in statistics.items():
        groups.setdefault(str(name), []).append(str(stat))
    reps = record.get("replicates")
    count = f" ({int(reps):,} bootstrap replicates)" if isinstance(reps, (int, float)) and reps else ""
    if len(groups) > 1:
        # where a statistic's interval uses no replicates (the order-statistic median), it comes last and the
        # count goes with the intervals before it
        names = sorted(groups, key=lambda n: not _uses_replicates(n))  # stable: the record's order otherwise
        parts = [f"{_phrase(n)} intervals for {_join(groups[n])}" for n in names]
        using = sum(map(_uses_replicates, names))
        if count and using:
            parts[using - 1] += count
        text = _join(parts)
    else:
        text = f"{_phrase(next(iter(groups)) if groups else str(record.get('method')))} intervals" + count
    if fallbacks and _studentized(record):
        text += " (expanded percentile where the warnings say the studentized replicates are degenerate)"
    return text


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe_table(prov: Mapping[str, Any], table: str) -> str:
    """``95% percentile intervals (50,000 bootstrap replicates)``: one table's intervals with their level;
    "" where the table has no record."""
    record = table_intervals(prov).get(table)
    if record is None:
        return ""
    level = record.get("level", prov.get("ci", 0.95))
    return f"{ci_label(level)} {interval_phrase(record, fallbacks=bool(prov.get('interval_fallbacks')))}"


def headline_intervals(prov: Mapping[str, Any]) -> str:
    """The headline table's (the aggregates') intervals: the console summary, report.html, the captions."""
    return describe_table(prov, "aggregates")


def table_clauses(prov: Mapping[str, Any], present: set[str] | None = None) -> list[str]:
    """``the per-task means: Student-t intervals``: one clause per table with intervals (among ``present``); a
    table whose level is not the analysis' (the Jordan tables': ``1 - delta``) says its own, and one whose
    intervals hold together over the algorithms says so."""
    fallbacks = bool(prov.get("interval_fallbacks"))
    ci = prov.get("ci", 0.95)
    clauses = []
    for table, record in table_intervals(prov).items():
        if present is not None and table not in present:
            continue
        level = record.get("level", ci)
        own = f"{ci_label(level)} " if level != ci else ""
        together = " (simultaneous)" if record.get("simultaneous") is True else ""
        clauses.append(
            f"{TABLE_WORDS.get(table, table)}: {own}{interval_phrase(record, fallbacks=fallbacks)}{together}"
        )
    return clauses


def non_bootstrap_tables(prov: Mapping[str, Any], present: set[str] | None = None) -> list[str]:
    """The tables (among ``present``) whose intervals are not bootstrap intervals."""
    return [
        table
        for table, record in table_intervals(prov).items()
        if (present is None or table in present)
        and str(record.get("method")) in intervals.REGISTRY
        and not intervals.REGISTRY[str(record.get("method"))].bootstrap
    ]


def method_clause(prov: Mapping[str, Any]) -> str:
    """The note under the console's first line when the method is the default (which is not the paper's); "" for
    another method (the first line names it) and for results that record none."""
    if prov.get("method") != DEFAULT_METHOD:
        return ""
    return (
        f"({DEFAULT_METHOD} is the default; `method={PAPER_METHOD}` gives the paper's and rliable's intervals; each "
        "statistic's interval is said in report.html and methods.md)"
    )


#: The console summary's first line is at most this long: one line a terminal shows whole; the intervals of each
#: statistic, the tables and the method's rule are in report.html and methods.md.
SUMMARY_WIDTH = 200


def short_intervals(prov: Mapping[str, Any]) -> str:
    """``95% intervals (method bootstrap-t), 50,000 replicates``: the headline table's level, requested method and replicate
    count, for the console's first line (:func:`headline_intervals` says each statistic's method in full)."""
    record = table_intervals(prov).get("aggregates") or {}
    level = ci_label(record.get("level", prov.get("ci", 0.95)))
    method = prov.get("method") or record.get("method") or "?"
    reps = record.get("replicates")
    return f"{level} intervals (method {method})" + (
        f", {int(reps):,} replicates" if isinstance(reps, (int, float)) and reps else ""
    )


def summary_header(report: Any, words: Callable[[str], str] = str) -> str:
    """The console summary's first line, at most :data:`SUMMARY_WIDTH` characters: the runs, the scores, the
    headline intervals in short (level, method, replicates) and the seed; then, on lines of their own, the interval
    method's note and the filters. ``words`` rewrites the method note (the command line: keywords as flags; never
    the names of the filters).

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> prov = {"method": "percentile", "ci": 0.95, "seed": 0, "normalization": "raw score",
        ...         "intervals": {"aggregates": {"method": "percentile", "level": 0.95, "replicates": 2000}}}
        >>> summary_header(Report(provenance=prov)).splitlines()[0].split("; ", 1)[1]
        'raw score; 95% intervals (method percentile), 2,000 replicates, seed 0'
    """
    prov = report.provenance
    filters = prov.get("filters") or {}
    first = (
        f"{report.counts().text()}; {prov.get('normalization', '')}; {short_intervals(prov)}, seed {prov.get('seed')}"
    )
    if len(first) > SUMMARY_WIDTH:
        first = first[: SUMMARY_WIDTH - 1] + "…"
    method = words(method_clause(prov))
    lines = [first] + ([method] if method else [])
    statistics = dict((table_intervals(prov).get("aggregates") or {}).get("statistics") or {})
    chosen = str(dict(prov.get("options") or {}).get("median_interval") or "")
    lines += [  # a statistic whose interval an option chose, not the method (the order-statistic median)
        words(f"(`median_interval={chosen if chosen == 'auto' else name}`: {_phrase(name)} intervals for {stat}"
              + (f" at {intervals.ORDER_STATISTIC_RUNS} runs per task or fewer)" if chosen == "auto" else ")"))
        for stat, name in statistics.items()
        if name in intervals.MEDIAN_INTERVALS and name not in ("method", "auto")
    ]  # fmt: skip
    lines += [f"{k.replace('_', ' ')}: {', '.join(v)}" for k, v in filters.items()]
    return "\n".join(lines)
