"""The intervals of a Report in words: the one source of every sentence that describes an interval.

The report's view (:mod:`.view`) builds every such sentence here, once, for the console summary, report.html,
methods.md and the table captions, from what ``evaluate()`` recorded per table (``provenance["intervals"]``: method,
level, replicate count, and the method of each statistic where the rule gives them their own) and from the
interval-method registry (:mod:`..stats.intervals`: each method's phrase, whether it is a bootstrap interval,
whether it uses replicates). The trackers' pages read :func:`headline_intervals` of a provenance too.

Example:
    >>> prov = {"intervals": {"aggregates": {"method": "bootstrap-t", "level": 0.95, "replicates": 2000,
    ...     "statistics": {"mean": "bootstrap-t", "iqm": "expanded"}}}}
    >>> print(describe_table(prov, "aggregates"))
    95% studentized bootstrap (bootstrap-t) intervals for mean and expanded percentile intervals for iqm (2,000 bootstrap replicates)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..analysis.caveats import MEDIAN_RUNS, study_words
from ..analysis.options import DEFAULT_METHOD, PAPER_METHOD, ci_label
from ..stats import intervals
from ..stats.intervals.bounds import SEPARATED_PSEUDO, improvement_runs
from ..wording import kw, said

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


def method_phrase(name: str) -> str:
    """A method's phrase in the registry (``expanded percentile``); the name itself for one it does not hold."""
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
        parts = [f"{method_phrase(n)} intervals for {_join(groups[n])}" for n in names]
        using = sum(map(_uses_replicates, names))
        if count and using:
            parts[using - 1] += count
        text = _join(parts)
    else:
        name = next(iter(groups)) if groups else str(record.get("method"))
        # a count only for a method that used the replicates (the order-statistic median used none)
        text = f"{method_phrase(name)} intervals" + (count if _uses_replicates(name) else "")
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
    return said(
        f"({DEFAULT_METHOD} is the default; ",
        kw(f"method={PAPER_METHOD}"),
        " gives the paper's and rliable's intervals; each statistic's interval is said in report.html and methods.md)",
    ).text()


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


def console_notes(prov: Mapping[str, Any]) -> list[str]:
    """The console summary's notes under its first line, in keyword form (the command line puts them in flag
    words): the interval method's note (:func:`method_clause`) and one line per statistic whose interval an option
    chose, not the method (the order-statistic median).

    Example:
        >>> prov = {"method": "percentile", "intervals": {"aggregates": {"method": "percentile", "level": 0.95,
        ...     "replicates": 2000, "statistics": {"iqm": "percentile", "median": "order-statistic"}}}}
        >>> [note.split(":")[0] for note in console_notes(prov)]
        ['(`median_interval=order-statistic`']
        >>> console_notes({**prov, "method": "bootstrap-t"})[0][:45]
        '(bootstrap-t is the default; `method=percenti'
    """
    method = method_clause(prov)
    statistics = dict((table_intervals(prov).get("aggregates") or {}).get("statistics") or {})
    chosen = str(dict(prov.get("options") or {}).get("median_interval") or "")
    auto = chosen == "auto"  # the option's rule chose it: at few runs per task only
    return ([method] if method else []) + [
        (
            said(
                "(",
                kw(f"median_interval={(chosen if auto else name)}"),
                f": {method_phrase(name)} intervals for {stat}",
            )
            + (f" at {intervals.ORDER_STATISTIC_RUNS} runs per task or fewer)" if auto else ")")
        ).text()
        for stat, name in statistics.items()
        if name in intervals.MEDIAN_INTERVALS and name not in ("method", "auto")
    ]


def median_sentence(prov: Mapping[str, Any]) -> str:
    """What the median's interval is and what the coverage study measured of it (its recorded results, never a
    figure typed here: :func:`~..analysis.caveats.study_words`), for ``methods.md``.

    Example:
        >>> prov = {"options": {"median_interval": "auto"}, "intervals": {"aggregates": {"method": "percentile",
        ...     "statistics": {"median": "order-statistic"}}}}
        >>> median_sentence(prov)[:80]
        "The median's interval is the order-statistic one at 10 runs per task or fewer (`"
    """
    record = table_intervals(prov).get("aggregates") or {}
    chosen = str(dict(prov.get("options") or {}).get("median_interval") or "method")
    if dict(record.get("statistics") or {}).get("median") == "order-statistic":
        why = (
            f"at {intervals.ORDER_STATISTIC_RUNS} runs per task or fewer (`median_interval=auto`)"
            if chosen == "auto"
            else "(`median_interval=order-statistic`)"
        )
        return (
            f"The median's interval is the order-statistic one {why}: the median of the per-task Student-t lower "
            "bounds to the median of their upper bounds, its differences the MOVER over two of them (Newcombe's "
            "method 10). It covers whenever every task's interval covers its mean, so it is conservative and wide."
            + study_words("median: order-statistic")
        )
    caveat = (
        f" At {MEDIAN_RUNS} runs per task or fewer its cells carry a caveat." if _fewest(prov) <= MEDIAN_RUNS else ""
    )
    return (
        "The median's interval is approximate: its coverage depends on how close the task means around the middle "
        "are to one another relative to their standard errors (where they tie or almost tie, the median is not a smooth "
        f"function of them) and on the skew of few-run task means, and nothing in the runs tells where it holds.{caveat}"
        + study_words("median: bootstrap")
        + " The order-statistic interval (`median_interval=order-statistic`) is conservative."
    )


def _fewest(prov: Mapping[str, Any]) -> int:
    """The fewest runs of a task in ``provenance["runs_per_task"]`` (a large number where it is not recorded)."""
    counts = [n for per in dict(prov.get("runs_per_task") or {}).values() for n in dict(per).values()]
    return min((int(n) for n in counts), default=1 << 30)


def improvement_sentence(prov: Mapping[str, Any]) -> str:
    """What the P(X > Y) interval is, by its method, for ``methods.md``.

    Example:
        >>> [
        ...     "without resampling" in improvement_sentence({"intervals": {"improvement": {"method": name}}})
        ...     for name in ("mann-whitney", "percentile")
        ... ]
        [True, False]
    """
    record = table_intervals(prov).get("improvement", {})
    text = (
        "The probability of improvement P(X > Y) is the per-task Mann–Whitney statistic averaged over tasks "
        "(ties count one half)."
    )
    spec = intervals.REGISTRY.get(str(record.get("method")))
    if spec is not None and spec.from_runs is improvement_runs:
        return text + (
            " Its interval is P ± t·√V without resampling: V is the unbiased (Hoeffding) variance of the per-task "
            "proportions, never below the stratified bootstrap's exact variance, and a task whose runs separate "
            "(where every bootstrap replicate repeats its 0 or 1) adds the variance of a proportion at Newcombe's "
            f"effective count with {SEPARATED_PSEUDO:g} pseudo-trials on each side; t has Welch–Satterthwaite "
            "degrees of freedom over DeLong's variance components." + study_words("P(X>Y) near 1")
        )
    if record.get("expanded_level") == "mann-whitney" or prov.get("improvement_level") == "mann-whitney":
        # the second test: results written before the per-table record
        text += (
            " Its expanded percentile interval is widened by the square root of the ratio of the statistic's "
            "unbiased variance to its bootstrap variance (both exact for a two-sample U-statistic), with "
            "Welch–Satterthwaite degrees of freedom over DeLong's variance components."
        )
    return text
