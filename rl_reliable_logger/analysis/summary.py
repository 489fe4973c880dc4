"""A result in a few lines: what ``repr()`` and a notebook show of a Report, a plan and a look at a sweep.

Each result of the library (:class:`~.report.Report`, :class:`~.planning.Plan`, a watch's
:class:`~.watch.WatchResult`, a race's :class:`~.race.RaceResult`) prints as one :class:`Summary`: a title, a few
facts (what it holds, where its scores came from) and a small table, as at most :data:`MAX_LINES` lines of text
(``repr``) or one compact HTML table (``_repr_html_``, what Jupyter shows). A new kind of result adds one function
here and two one-line methods. Names are untrusted: the HTML escapes every cell
(:func:`~..data.names.escape_html`), the text shows a control character as its code and cuts a long name.

Example:
    >>> print(Summary("Report: 2 runs", (("scores", "raw"),), ("algorithm", "IQM"), (("A", "0.5"), ("<b>", "1"))).text())
    Report: 2 runs
      scores: raw
      algorithm  IQM
      A          0.5
      <b>        1
    >>> Summary("Report", rows=(("<b>",),), columns=("algorithm",)).html().count("&lt;b&gt;")
    1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..data.counts import fixed, plural
from ..data.names import escape_html
from ..stats import registry
from .options import ci_label

__all__ = ["MAX_LINES", "Summary", "plan_summary", "race_summary", "report_summary", "source_text", "watch_summary"]

#: The most lines ``repr()`` of a result prints: the rows past it are counted, not shown.
MAX_LINES = 20
#: The longest name or cell ``repr()`` shows whole.
WIDTH = 40


@dataclass(frozen=True)
class Summary:
    """A result at a glance: ``title``, ``facts`` (label, text), a table (``columns``, ``rows``) and ``more``, the
    line after the rows saying where the rest is."""

    title: str
    facts: tuple[tuple[str, str], ...] = ()
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    more: str = ""

    def text(self) -> str:
        """At most :data:`MAX_LINES` lines: the title, the facts, the table (aligned) and what it leaves out."""
        lines = [_cut(self.title, 200)] + [f"  {label}: {_cut(text, 160)}" for label, text in self.facts]
        lines = lines[: MAX_LINES - 3]  # room for the table's header, a row and the last line
        head = 1 if self.columns else 0
        rows = list(self.rows)
        if len(lines) + head + len(rows) + (1 if self.more else 0) > MAX_LINES:
            keep = MAX_LINES - len(lines) - head - 1
            rows, left = rows[:keep], len(rows) - keep
        else:
            left = 0
        if self.columns:
            table = [tuple(_cut(c) for c in self.columns)] + [tuple(_cut(c) for c in row) for row in rows]
            widths = [max(len(row[i]) for row in table) for i in range(len(self.columns))]
            lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
        last = "; ".join(part for part in (f"… and {left} more" if left else "", self.more) if part)
        return "\n".join(lines + ([f"  {last}"] if last else []))

    def html(self) -> str:
        """One compact table, every text escaped: the title and facts as its caption."""
        caption = f"<b>{escape_html(self.title)}</b>" + "".join(
            f"<br>{escape_html(label)}: {escape_html(text)}" for label, text in self.facts
        )
        head = "".join(f"<th>{escape_html(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{escape_html(c)}</td>" for c in row) + "</tr>" for row in self.rows)
        foot = f'<tr><td colspan="{max(len(self.columns), 1)}">{escape_html(self.more)}</td></tr>' if self.more else ""
        return (
            f'<table style="text-align:left"><caption style="text-align:left">{caption}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}{foot}</tbody></table>"
        )


def _cut(text: Any, width: int = WIDTH) -> str:
    """``text`` on one line (a control character shown as its code), cut to ``width`` characters."""
    shown = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04X}" for ch in str(text))
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _interval(point: Any, low: Any, high: Any) -> str:
    return f"{fixed(float(point))} [{fixed(float(low))}, {fixed(float(high))}]"


def source_text(src: Any) -> str:
    """Where the scores came from, as a phrase: a tracker's location (with the runs found and skipped) or a file
    and its score column (every field is in the provenance).

    Example:
        >>> source_text({"kind": "file", "path": "runs.csv", "score_column": "return"})
        "runs.csv, score column 'return'"
    """
    if not isinstance(src, Mapping):
        return "" if src is None else str(src)
    where = src.get("location") or src.get("path")
    text = str(where) if where else str(src.get("tracker") or src.get("kind") or "")
    if src.get("kind") == "file" and src.get("score_column"):
        text += f", score column {str(src['score_column'])!r}"
    found, skipped = src.get("n_runs_found"), src.get("skipped")
    if isinstance(found, int) and not isinstance(found, bool):
        n_skipped = len(skipped) if isinstance(skipped, list) else 0
        text += f" ({plural(found, 'run')} found" + (f", {n_skipped:,} skipped" if n_skipped else "") + ")"
    return text


def report_summary(report: Any) -> Summary:
    """A :class:`~.report.Report` (``repr(report)``): its runs, scores, source and intervals, and the headline table
    (one row per algorithm, ``point [low, high]`` per metric).

    Example:
        >>> from rl_reliable_logger import evaluate
        >>> report = evaluate(table, metrics=["iqm", "mean"], reps=200, profile_reps=20, improvement_reps=20)
        >>> print(repr(report))
        Report: 24 runs (2 algorithms × 3 tasks, 4 runs per cell, 4 seeds)
          scores: raw score
          intervals: 95% (method bootstrap-t), seed 0
          warnings: 4 (report.warnings)
          algorithm  IQM                   Mean
          DQN        0.399 [0.366, 0.439]  0.402 [0.351, 0.440]
          PPO        0.575 [0.516, 0.662]  0.575 [0.514, 0.627]
          tables: report.tables()
    """
    prov = report.provenance or {}
    agg = report.aggregates
    metrics = [str(m) for m in dict.fromkeys(agg["metric"].astype(str))] if not agg.empty else []
    facts = [("scores", str(prov.get("normalization") or "raw score"))]
    where = source_text(prov.get("source"))
    if where:
        facts.append(("source", where))
    if metrics:
        level = ci_label(prov["ci"]) if isinstance(prov.get("ci"), (int, float)) else "95%"
        method = f" (method {prov['method']})" if prov.get("method") else ""
        seed = f", seed {prov['seed']}" if "seed" in prov else ""
        facts.append(("intervals", f"{level}{method}{seed}"))
    if report.extra:
        facts.append(("also", ", ".join(report.extra)))
    if report.warnings:
        facts.append(("warnings", f"{len(set(report.warnings))} (report.warnings)"))
    cells = {}
    for a, m, point, low, high in agg[["algorithm", "metric", "point", "low", "high"]].itertuples(index=False):
        cells[(str(a), str(m))] = _interval(point, low, high)
    shown = [a for a in map(str, report.algorithms) if any((a, m) in cells for m in metrics)]
    rows = tuple((a, *(cells.get((a, m), "–") for m in metrics)) for a in shown)
    counted = report.counts().text() if not report.scores.empty or "counts" in prov else "no scores"
    columns = ("algorithm", *(registry.display_name(m) for m in metrics)) if rows else ()
    return Summary(f"Report: {counted}", tuple(facts), columns, rows, "tables: report.tables()" if rows else "")


def plan_summary(plan: Any) -> Summary:
    """A :class:`~.planning.Plan` (``repr(plan(...))``): the target, and each algorithm's runs per task needed for it
    with the width expected there.

    Example:
        >>> from rl_reliable_logger import plan
        >>> print("\\n".join(repr(plan(table, target_width=0.2, sim_reps=100, trials=10)).splitlines()[:3]))
        Plan: runs per task for the target
          metric: IQM, 95% intervals
          target: intervals at most 0.2 wide
    """
    prov = plan.provenance or {}
    metric = registry.display_name(str(prov.get("metric", "iqm")))
    level = ci_label(prov["ci"]) if isinstance(prov.get("ci"), (int, float)) else ""
    facts = [("metric", f"{metric}, {level} intervals".strip(", "))]
    if prov.get("target_width") is not None:
        facts.append(("target", f"intervals at most {prov['target_width']:g} wide"))
    if prov.get("compare"):
        pair = " - ".join(map(str, prov["compare"]))
        facts.append(("compare", f"{pair}, power {prov.get('power', 0.8):g}"))
    grid = prov.get("grid") or []
    if grid:
        facts.append(("runs per task tried", f"{min(grid)}–{max(grid)}"))
    launch = plan.launch
    if not launch.empty and "more_runs" in launch.columns:
        more = int(launch["more_runs"].sum())
        facts.append(("launch", f"{plural(more, 'run', 'more')} (plan.launch)"))
    table = plan.table
    rows = []
    for name, needed in plan.needed.items():
        width = "–"
        if needed is not None:
            at = table[(table["algorithm"].astype(str) == str(name)) & (table["n_runs"] == needed)]
            width = fixed(float(at["expected_width"].iloc[0])) if not at.empty else "–"
        rows.append((str(name), "not reached" if needed is None else str(needed), width))
    return Summary(
        "Plan: runs per task for the target",
        tuple(facts),
        ("algorithm", "runs per task", "expected width"),
        tuple(rows),
        "every N: plan.table",
    )


def _look_title(kind: str, result: Any) -> str:
    state = "stop" if result.stop else "more runs needed"
    return f"{kind} look {result.look} of {result.design.looks}{' (replayed)' if result.replayed else ''}: {state}"


def _launch_fact(launch: Any) -> tuple[str, str]:
    runs = int(launch["add_runs"].sum()) if not launch.empty else 0
    return ("launch", f"{plural(runs, 'run')} before the next look (result.launch)" if runs else "nothing")


def watch_summary(result: Any) -> Summary:
    """A watch's :class:`~.watch.WatchResult` (``repr(watch(...))``): the look, its design and each pair's decision
    with its repeated interval.

    Example:
        >>> from rl_reliable_logger import watch
        >>> look = watch(table, state="watch-state", looks=3, max_runs=8, reps=200)
        >>> print(repr(look))
        Watch look 1 of 3: stop
          design: iqm, alpha 0.05 over all looks, at most 8 runs per cell
          launch: nothing
          pair       decision  repeated interval
          DQN - PPO  y>x       [-0.274, -0.077]
    """
    design = result.design
    facts = (
        ("design", f"{design.metric}, alpha {design.alpha:g} over all looks, at most {design.max_runs} runs per cell"),
        _launch_fact(result.launch),
    )
    rows = tuple(
        (f"{x} - {y}", str(decision), f"[{fixed(float(low))}, {fixed(float(high))}]")
        for x, y, decision, low, high in result.decisions[
            ["algorithm_x", "algorithm_y", "decision", "low", "high"]
        ].itertuples(index=False)
    )
    return Summary(_look_title("Watch", result), facts, ("pair", "decision", "repeated interval"), rows)


def _config(row: Any, keys: Sequence[str]) -> str:
    """A configuration as its hyperparameter values: ``lr=0.001, clip=0.2``."""
    return ", ".join(f"{key}={row[key]}" for key in keys)


def race_summary(result: Any) -> Summary:
    """A race's :class:`~.race.RaceResult` (``repr(race(...))``): the look, its design and each algorithm's selection
    (its interval valid after selection) or the configurations still racing.

    Example:
        >>> from rl_reliable_logger import race
        >>> sweep = table.frame.assign(lr=[0.1, 0.01] * 12)
        >>> look = race(sweep, state="race-state", looks=3, max_runs=8, hyperparameter_keys=["lr"], reps=200)
        >>> print("\\n".join(repr(look).splitlines()[:2]))
        Race look 1 of 3: more runs needed
          design: iqm, delta 0, alpha 0.05 over all looks
    """
    design = result.design
    facts = (
        ("design", f"{design.metric}, delta {design.delta:g}, alpha {design.alpha:g} over all looks"),
        ("configurations", f"{len(result.alive)} left, {len(result.eliminated)} eliminated"),
        _launch_fact(result.launch),
    )
    selected = result.selected
    rows = [
        (str(row["algorithm"]), _config(row, design.keys), _interval(row["point"], row["low"], row["high"]))
        for _, row in selected.iterrows()
    ]
    chosen = {row[0] for row in rows}
    for algorithm, alive in result.alive.groupby(result.alive["algorithm"].astype(str), sort=True):
        if algorithm not in chosen:
            rows.append((str(algorithm), f"racing: {plural(len(alive), 'configuration')}", ""))
    return Summary(
        _look_title("Race", result), facts, ("algorithm", "selected", "interval after selection"), tuple(rows)
    )
