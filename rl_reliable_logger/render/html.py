"""One self-contained ``report.html``: figures inlined as base64 PNG, no scripts, no network.

Every string that can come from a user's runs (algorithm, task, run names, provenance values,
warnings) goes through :func:`html.escape`; a Content-Security-Policy forbids scripts and any
remote load, so even a missed escape could not run code or phone home.

Example:
    >>> page = build_html(report, figures=[Figure("intervals", "Interval estimates", png_bytes)])  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..data.counts import fixed, plural
from ..data.names import escape_html
from . import tables as _paper_tables
from .methods import checklist, methods_details, methods_paragraph, references
from .view import ReportView, Viewable, as_view, decimals, number

__all__ = ["Figure", "build_html"]


@dataclass
class Figure:
    """A rendered figure for the page: file stem, heading, image bytes and a one-line reading guide.

    The image is inlined as a ``data:`` URI of type ``mime`` (a PNG unless the figures were written as SVG only).
    """

    name: str
    title: str
    image: bytes
    caption: str = ""
    mime: str = "image/png"


#: Escape anything for HTML text or attribute context (control characters shown as ``\\uXXXX``).
esc = escape_html


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
     color:#1f2328;background:#fff;margin:0;line-height:1.45}
main{max-width:1180px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:1.7rem;margin:0 0 4px} h2{font-size:1.25rem;margin:36px 0 10px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:1.05rem;margin:22px 0 6px}
.sub{color:#57606a;margin:0 0 18px}
nav{font-size:.92rem;margin:10px 0 18px} nav a{margin-right:14px;color:#0969da;text-decoration:none}
table{border-collapse:collapse;font-size:.9rem;margin:6px 0 12px}
th,td{border:1px solid #d0d7de;padding:4px 9px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600} tbody tr:nth-child(even) td{background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow:auto;max-height:560px;border:1px solid #d0d7de;display:inline-block;max-width:100%}
.scroll table{margin:0}
.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:10px 16px;margin:12px 0}
.warn h2{border:none;margin:0 0 4px;font-size:1.05rem} .warn ul{margin:4px 0 0;padding-left:20px}
figure{margin:18px 0 26px} figure img{max-width:100%;height:auto;border:1px solid #eaeef2}
figcaption{color:#57606a;font-size:.9rem;margin-top:4px}
details{margin:8px 0} summary{cursor:pointer;color:#0969da}
code{background:#f6f8fa;padding:1px 4px;border-radius:4px;font-size:.88em;word-break:break-all}
.note{color:#57606a;font-size:.88rem}
caption{caption-side:top;text-align:left;color:#57606a;font-size:.88rem;padding:2px 0 6px;max-width:60em}
table.letters td.grp,table.letters th.grp{text-align:center;min-width:1.6em}
table.letters td.in{background:#ddf4ff;font-weight:600}
a.mark{color:#9a6700;text-decoration:none;font-weight:600;margin-left:3px}
td.check code{white-space:nowrap;word-break:normal}
.warn li:target{background:#ffe58f}
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _num(v: Any, d: int = 3) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return esc(v)
    if math.isnan(f):
        return "–"
    if f.is_integer() and abs(f) < 1e15:
        return f"{int(f)}"
    return f"{f:.{d}g}" if abs(f) >= 1000 else fixed(f, d)


def frame_html(frame: pd.DataFrame, *, max_rows: int | None = None, numeric_digits: int = 3) -> str:
    """A DataFrame as an escaped HTML table (numbers right-aligned)."""
    cols = list(frame.columns)
    out = ["<table><thead><tr>", *(f"<th>{esc(c)}</th>" for c in cols), "</tr></thead><tbody>"]
    rows = frame if max_rows is None else frame.head(max_rows)
    columns = [rows.iloc[:, i].tolist() for i in range(len(cols))]  # by position: names may repeat
    for values in zip(*columns):
        out.append("<tr>")
        for v in values:
            if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)):
                out.append(f'<td class="num">{_num(v, numeric_digits)}</td>')
            else:
                out.append(f"<td>{esc(v)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    if max_rows is not None and len(frame) > max_rows:
        out.append(
            f'<p class="note">First {max_rows} of {len(frame)} rows; the full table is in the CSV next to this page.</p>'
        )
    return "".join(out)


def _marked(view: ReportView, table: str, *key: str) -> list[str]:
    """What the page marks a cell with: the warnings (each in full under Warnings) and caveats about it. The one
    place the page reads a cell's marks from the view."""
    return [note.text for note in view.notes(table, *key)]


def _headline(view: ReportView, anchors: Mapping[str, str]) -> str:
    """The headline table; a cell a warning is about gets its mark, linked to the warning (``anchors``: warning
    text -> id of its line on the page) and carrying it as a tooltip."""
    if view.aggregates.empty:
        return "<p>No aggregate metrics were computed.</p>"
    algorithms, metrics, cells, bold = _paper_tables.headline_cells(view)
    runs = view.runs
    head = "".join(f"<th>{esc(view.title(m))}{' ↓' if view.lower(m) else ' ↑'}</th>" for m in metrics)
    out = ["<table><thead><tr><th>Algorithm</th>", head]
    if runs:
        out.append("<th>runs / tasks</th>")
    out.append("</tr></thead><tbody>")
    for alg in algorithms:
        out.append(f"<tr><td>{esc(alg)}</td>")
        for m in metrics:
            cell = esc(cells.get((alg, m), "–"))
            cell = "<b>" + cell + "</b>" if bold.get(m) == alg else cell
            texts = _marked(view, "aggregates", alg, m)
            if texts:
                target = anchors.get(texts[0], "warnings")
                cell += f'<a class="mark" href="#{target}" title="{esc(" ".join(texts))}">{_paper_tables.MARK}</a>'
            out.append(f'<td class="num">{cell}</td>')
        if runs:
            r = runs.get(alg)
            out.append(f'<td class="num">{r[0]} / {r[1]}</td>' if r else "<td></td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _per_task(view: ReportView) -> str:
    pt = view.per_task
    if pt.empty:
        return ""
    pt = pt.copy()
    pt["algorithm"] = pt["algorithm"].astype(str)
    pt["task"] = pt["task"].astype(str)
    d = decimals(pt[["mean", "low", "high"]].to_numpy(float).ravel().tolist())

    def cell(r: pd.Series) -> str:
        n = "" if pd.isna(r.get("n_runs")) else f" ({int(r['n_runs'])})"
        return f"{number(float(r['mean']), d)} [{number(float(r['low']), d)}, {number(float(r['high']), d)}]{n}"

    pt["cell"] = pt.apply(cell, axis=1)
    order = [a for a in view.algorithms if a in set(pt["algorithm"])]
    order += [a for a in pd.unique(pt["algorithm"]) if a not in order]
    wide = pt.pivot_table(index="task", columns="algorithm", values="cell", aggfunc="first").reindex(columns=order)
    wide = wide.fillna("–")
    wide.insert(0, "task", wide.index, allow_duplicates=True)  # by position: an algorithm may be named "task"
    return (
        '<p class="note">Mean score per task [CI] (runs). Task-level intervals are wide with few runs; '
        "read them as a guide, not a ranking.</p>"
        f'<div class="scroll">{frame_html(wide)}</div>'
    )


def _value_html(value: Any, depth: int = 0) -> str:
    """Render a provenance value: scalars inline, dicts as nested tables, lists of dicts as tables."""
    if value is None:
        return '<span class="note">none</span>'
    if isinstance(value, Mapping):
        if not value:
            return '<span class="note">(none)</span>'
        inner = list(value.values())
        if len(inner) > 1 and all(
            isinstance(v, Mapping) and v and all(not isinstance(x, (Mapping, list, tuple)) for x in v.values())
            for v in inner
        ):
            # e.g. runs_per_task {algorithm: {task: n}}: one compact matrix instead of nested tables
            grid = pd.DataFrame({k: dict(v) for k, v in value.items()}).T
            grid.insert(0, "", [str(k) for k in grid.index])
            table = frame_html(grid.reset_index(drop=True))
            return f'<details><summary>{len(grid)} × {grid.shape[1] - 1} table</summary><div class="scroll">{table}</div></details>'
        rows = "".join(f"<tr><th>{esc(k)}</th><td>{_value_html(v, depth + 1)}</td></tr>" for k, v in value.items())
        return f"<table>{rows}</table>"
    if isinstance(value, (list, tuple)):
        if not value:
            return '<span class="note">(none)</span>'
        if all(isinstance(v, (list, tuple)) for v in value):  # e.g. runs_used: [algorithm, task, run_id]
            width = max(len(v) for v in value)
            names = ["algorithm", "task", "run_id"] if width == 3 else [f"field {i + 1}" for i in range(width)]
            value = [dict(zip(names, v)) for v in value]
        if all(isinstance(v, Mapping) for v in value):
            frame = pd.DataFrame(list(value))
            table = frame_html(frame, max_rows=500)
            return table if len(frame) <= 10 else f"<details><summary>{len(frame)} rows</summary>{table}</details>"
        text = ", ".join(esc(v) for v in value)
        if len(value) > 12:
            return f"<details><summary>{len(value)} items</summary><code>{text}</code></details>"
        return f"<code>{text}</code>" if depth else text
    return esc(value)


_PROV_ORDER = (
    "source",
    "filters",
    "normalize",
    "metrics",
    "method",
    "intervals",
    "ci",
    "reps",
    "profile_reps",
    "improvement_reps",
    "task_bootstrap",
    "seed",
    "algorithms",
    "tasks",
    "runs_used",
    "runs_dropped",
    "dropped",
    "excluded",
    "versions",
    "created",
)


def _provenance(view: ReportView) -> str:
    prov = dict(view.provenance)
    shown = {k: v for k, v in prov.items() if k != "counts"}  # the counts are the "scores used" row
    keys = [k for k in _PROV_ORDER if k in shown] + sorted(k for k in shown if k not in _PROV_ORDER)
    rows = []
    if not view.scores.empty or "counts" in prov:
        rows.append(f"<tr><th>scores used</th><td>{esc(view.counts.text())}</td></tr>")
    for k in keys:
        rows.append(f"<tr><th>{esc(k)}</th><td>{_value_html(prov[k])}</td></tr>")
    if not rows:
        return "<p>No provenance was recorded.</p>"
    return f"<table>{''.join(rows)}</table>"


def _optional_tables(view: ReportView) -> str:
    """The optional tables the analysis computed, with the heading and rows shown the Report's registry declares."""
    out = []
    for name, (title, max_rows) in view.titles.items():
        frame = view.table(name)
        if frame.empty:
            continue
        out.append(f"<h3>{html.escape(title)}</h3>")
        body = frame_html(frame, max_rows=max_rows)
        out.append(f'<div class="scroll">{body}</div>' if max_rows else body)
    return "".join(out)


def _pairwise(view: ReportView) -> str:
    out = []
    if not view.improvement.empty:
        out.append("<h3>Probability of improvement P(X &gt; Y)</h3>")
        out.append(f'<div class="scroll">{frame_html(view.improvement, max_rows=500)}</div>')
    if not view.differences.empty:
        out.append("<h3>Differences metric(X) − metric(Y)</h3>")
        out.append(f'<div class="scroll">{frame_html(_marked_differences(view), max_rows=500)}</div>')
    return "".join(out)


def _marked_differences(view: ReportView) -> pd.DataFrame:
    """The differences table, with a ``warning`` column marking the rows a warning is about (the warnings are
    listed in full under Warnings); as it is when none is."""
    frame = view.differences
    if "warning" in frame.columns or not {"algorithm_x", "algorithm_y", "metric"} <= set(frame.columns):
        return frame
    keys = zip(frame["algorithm_x"].astype(str), frame["algorithm_y"].astype(str), frame["metric"].astype(str))
    flagged = [f"{_paper_tables.MARK} see Warnings" if _marked(view, "differences", *key) else "" for key in keys]
    return frame.assign(warning=flagged) if any(flagged) else frame


def _letters(view: ReportView) -> str:
    """The compact letter display of ``--compare-all`` as a table: one column per letter, so the groups read
    as bars (algorithms sharing a letter are not told apart family-wise); "" without all-pairs comparisons."""
    letters = view.letters
    if letters is None:
        return ""
    display, title = letters.frame, esc(letters.title)
    groups = sorted({ch for g in display["group"] for ch in str(g)})
    head = (
        f'<tr><th scope="col">Algorithm</th><th scope="col">{title}</th>'
        '<th scope="col">Groups</th>' + "".join(f'<th scope="col" class="grp">{esc(g)}</th>' for g in groups) + "</tr>"
    )
    rows = []
    for name, point, group in zip(display["algorithm"], display["point"].astype(float), display["group"].astype(str)):
        cells = "".join(f'<td class="grp in">{esc(g)}</td>' if g in group else '<td class="grp"></td>' for g in groups)
        rows.append(
            f'<tr><th scope="row">{esc(name)}</th><td class="num">{number(point, letters.decimals)}</td>'
            f"<td>{esc(group)}</td>{cells}</tr>"
        )
    return (
        '<h3 id="letters">Which algorithms can be told apart</h3>'
        '<table class="letters"><caption>Compact letter display of the all-pairs comparisons of '
        f"{title}, best first: algorithms that share a letter are not told apart "
        "(family-wise: max-T simultaneous intervals of the differences; every pair is in the comparisons table).</caption>"
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _protocol(view: ReportView) -> tuple[str, frozenset[str]]:
    """The protocol checks that fired, as a table (check, severity, finding, why, source), and the warning
    lines they appear as (listed once, here, instead of again among the warnings)."""
    if not view.findings:
        return "", frozenset()
    rows = "".join(
        f'<tr><td class="check"><code>{esc(f.check)}</code></td><td>{esc(f.severity)}</td><td>{esc(f.message)}</td>'
        f"<td>{esc(f.why)}</td><td>{esc(f.cite)}</td></tr>"
        for f in view.findings
    )
    table = (
        '<div class="warn" id="protocol"><h2>Protocol checks</h2>'
        '<p class="note">Checked before any statistics; each check cites the paper section its advice comes from.</p>'
        '<table><thead><tr><th scope="col">check</th><th scope="col">severity</th><th scope="col">found</th>'
        '<th scope="col">why it matters</th><th scope="col">source</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )
    return table, view.finding_lines


def _warnings(view: ReportView, shown: frozenset[str]) -> tuple[str, dict[str, str]]:
    """The warnings after the results, grouped one line per algorithm (the view's ``notices``; the protocol
    findings, ``shown`` in their own table, left out), each line with an id the headline marks link to
    (``{warning: id}``), and every warning in full a click away when grouping folded some."""
    items = [(text, line) for text, line in view.notices if text not in shown]
    if not items:
        return "", {}
    anchors = {text: f"warning-{i + 1}" for i, (text, _) in enumerate(items)}
    lines = "".join(f'<li id="{anchors[text]}">{esc(line)}</li>' for text, line in items)
    full = [w for w in dict.fromkeys(view.warnings) if w not in shown]
    details = ""
    if len(full) > len(items):
        every = "".join(f"<li>{esc(w)}</li>" for w in full)
        details = f"<details><summary>Every warning in full ({len(full)})</summary><ul>{every}</ul></details>"
    return f'<div class="warn" id="notices"><ul>{lines}</ul>{details}</div>', anchors


def _caveats(view: ReportView) -> tuple[str, dict[str, str]]:
    """The headline's caveats under it, one line per reason naming its cells (the view's
    :attr:`~.view.ReportView.headline_caveats`), each with an id its marks link to (``{line: id}``); the other
    tables' caveats are in their ``caveat`` column."""
    notes = view.headline_caveats
    if not notes:
        return "", {}
    anchors = {note.line: f"caveat-{i + 1}" for i, note in enumerate(notes)}
    items = "".join(f'<li id="{anchors[n.line]}">{_paper_tables.MARK} {esc(n.line)}</li>' for n in notes)
    return f'<ul class="note" id="caveats">{items}</ul>', anchors


def _methods(view: ReportView) -> str:
    """The methods paragraph, its details, the reporting checklist and the references (the content of
    ``methods.md``)."""
    marks = {True: "yes", False: "no", None: "unknown"}
    items = "".join(
        f"<tr><td>{esc(item)}</td><td>{marks[met]}</td><td>{esc(reason)}</td></tr>"
        for item, met, reason in checklist(view)
    )
    refs = "".join(f"<li>{esc(r)}</li>" for r in references(view))
    details = "".join(f"<li><strong>{esc(topic)}.</strong> {esc(text)}</li>" for topic, text in methods_details(view))
    return (
        f"<p>{esc(methods_paragraph(view))}</p>"
        f"<h3>Details</h3><ul>{details}</ul>"
        "<h3>Reporting checklist (after Agarwal et al., 2021)</h3>"
        '<table><thead><tr><th scope="col">item</th><th scope="col">met</th><th scope="col">why</th></tr></thead>'
        f"<tbody>{items}</tbody></table>"
        f"<h3>References</h3><ul>{refs}</ul>"
    )


def _label_key(view: ReportView, label_key: Any) -> str:
    """The key of abbreviated names: figures show short labels, this table (and every other table) the full ones."""
    names = [str(a) for a in view.algorithms]
    if not view.scores.empty and "task" in view.scores:
        names += [str(t) for t in pd.unique(view.scores["task"].astype(str))]
    key = label_key(names)
    if not key:
        return ""
    rows = "".join(f"<tr><td>{esc(short)}</td><td><code>{esc(full)}</code></td></tr>" for short, full in key.items())
    return (
        '<h3 id="label-key">Names abbreviated in the figures</h3>'
        "<table><thead><tr><th>label in figures</th><th>full name</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def build_html(report: Viewable, figures: Sequence[Figure] = (), *, title: str | None = None) -> str:
    """The whole page as a string (write it with ``encoding="utf-8"``).

    Example:
        >>> Path("report.html").write_text(build_html(report, figs), encoding="utf-8")   # doctest: +SKIP
    """
    from .figures import label_key, score_label

    view = as_view(report)
    prov = view.provenance
    title = title or "RL evaluation report"
    ci = prov.get("ci", 0.95)
    try:
        ci_txt = f"{float(ci) * 100:g}%"
    except (TypeError, ValueError):
        ci_txt = str(ci)
    sub_bits = [f"Scores: {score_label(view)}"]
    headline = view.intervals.headline
    if headline:
        sub_bits.append(f"Headline metrics: {headline}; every table's intervals: see Methods")
    src_txt = view.source
    if src_txt:
        sub_bits.append(f"Source: {src_txt}")
    generated = _created(prov)

    sections = [
        ("headline", "Headline metrics"),
        ("warnings", "Warnings"),
        ("figures", "Figures"),
        ("per-task", "Per task"),
        ("pairwise", "Pairwise comparisons"),
        ("methods", "Methods"),
        ("provenance", "Provenance"),
    ]
    protocol, shown = _protocol(view)
    warned, anchors = _warnings(view, shown)
    caveats, caveat_anchors = _caveats(view)
    anchors = {**anchors, **caveat_anchors}
    if not (protocol or warned):
        sections.remove(("warnings", "Warnings"))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{" · ".join(esc(b) for b in sub_bits)}<br>Generated {esc(generated)}by rl_reliable_logger</p>',
        "<nav>" + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in sections) + "</nav>",
    ]
    # results first: the headline table, its marks linking to the warnings that follow it
    parts.append('<h2 id="headline">Headline metrics</h2>')
    marked = (
        f" {_paper_tables.MARK}: a warning or a caveat about that interval (hover, or follow the link)."
        if anchors
        else ""
    )
    n_warned = len(view.notices)
    below = f' <a href="#warnings">{esc(plural(n_warned, "warning"))} below</a>.' if protocol or warned else ""
    parts.append(
        f'<p class="note">Point estimate [{esc(ci_txt)} CI]. Bold: the best algorithm of a metric, '
        "shown only when its printed interval neither overlaps nor touches any other algorithm's."
        f"{marked}{below}</p>"
    )
    parts.append(_headline(view, anchors))
    parts.append(caveats)
    parts.append(_letters(view))
    if protocol or warned:
        parts.append('<h2 id="warnings">Warnings</h2>')
        parts.append(protocol)
        parts.append(warned)
    parts.append(_optional_tables(view))
    parts.append('<h2 id="figures">Figures</h2>')
    if not figures:
        parts.append("<p>No figures were drawn.</p>")
    for fig in figures:
        data = base64.b64encode(fig.image).decode("ascii")
        mime = "image/svg+xml" if fig.mime == "image/svg+xml" else "image/png"
        parts.append(
            f'<figure id="fig-{esc(fig.name)}"><h3>{esc(fig.title)}</h3>'
            f'<img alt="{esc(fig.title)}" src="data:{mime};base64,{data}">'
            + (f"<figcaption>{esc(fig.caption)}</figcaption>" if fig.caption else "")
            + "</figure>"
        )
    parts.append(_label_key(view, label_key))
    parts.append('<h2 id="per-task">Per task</h2>')
    parts.append(_per_task(view) or "<p>No per-task table.</p>")
    parts.append('<h2 id="pairwise">Pairwise comparisons</h2>')
    parts.append(_pairwise(view) or "<p>No pairwise comparisons were computed.</p>")
    parts.append('<h2 id="methods">Methods</h2>')
    parts.append(_methods(view))
    parts.append('<h2 id="provenance">Provenance</h2>')
    parts.append(_provenance(view))
    parts.append("</main></body></html>")
    return "\n".join(p for p in parts if p)


def _created(prov: Mapping[str, Any]) -> str:
    """When the analysis ran (provenance ``created``, so one report renders the same bytes every time), with a
    trailing space; empty when the provenance does not say."""
    try:
        when = _dt.datetime.fromisoformat(str(prov["created"]))
    except (KeyError, TypeError, ValueError):
        return ""
    if when.tzinfo is not None:
        when = when.astimezone(_dt.timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M UTC ")
