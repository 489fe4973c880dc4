"""Headline tables for papers: LaTeX (booktabs) and Markdown, ``0.42 [0.38, 0.46]`` cells.

The best algorithm of a metric is set in bold only when its interval, as printed (rounded to the digits shown),
neither overlaps nor touches any other algorithm's printed interval, so bold always means "separated by the CIs"
to the reader, never "largest point". A cell a warning is about (the mean's interval of a heavy-tailed algorithm)
carries a mark (:data:`MARK`) and the warning is a footnote below the table. Every cell, bold and mark is read from
the report's view (:mod:`.view`), as the console and ``report.html`` read them.

Example:
    >>> tex = to_latex(report)        # doctest: +SKIP
    >>> md = to_markdown(report)      # doctest: +SKIP
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..data.counts import fixed
from ..data.names import escape_markdown
from .view import ReportView, Viewable, as_view

__all__ = ["MARK", "headline_cells", "headline_phrase", "headline_marks", "best_separated", "to_latex", "to_markdown"]

#: The mark on a headline cell a warning is about; the warning is the table's footnote.
MARK = "†"


#: What the caption says about the mark (the footnote below the table gives each warning).
_MARK_SAID = f"; {MARK}: a warning or a caveat about this interval, below the table"
_MARK_SAID_TEX = r"; \dag: a warning or a caveat about this interval, below the table"


def _metrics(view: ReportView, metrics: Sequence[str] | None) -> list[str]:
    available = list(view.headline.metrics)
    if metrics is None:  # the order the analysis asked for (``metrics=``), as on the console and in every figure
        return available
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise ValueError(f"metric(s) {unknown} are not in the aggregates table (it has {available})")
    return list(metrics)


def best_separated(rows: pd.DataFrame, lower_is_better: bool) -> str | None:
    """The best algorithm if its CI is disjoint from every other CI, else ``None``.

    ``rows`` has columns algorithm, point, low, high (one metric).

    Example:
        >>> rows = pd.DataFrame({"algorithm": ["A", "B"], "point": [0.4, 0.9], "low": [0.3, 0.8], "high": [0.5, 1.0]})
        >>> best_separated(rows, lower_is_better=False)
        'B'
    """
    rows = rows.dropna(subset=["point", "low", "high"])
    if len(rows) < 2:
        return None
    best_label: Any = rows["point"].idxmin() if lower_is_better else rows["point"].idxmax()
    best = rows.loc[best_label]
    others = rows.drop(index=best.name)
    if lower_is_better:
        separated = bool((best["high"] < others["low"]).all())
    else:
        separated = bool((best["low"] > others["high"]).all())
    return str(best["algorithm"]) if separated else None


def headline_cells(
    report: Viewable, metrics: Sequence[str] | None = None
) -> tuple[list[str], list[str], dict[tuple[str, str], str], dict[str, str | None]]:
    """(algorithms, metrics, {(alg, metric): "0.42 [0.38, 0.46]"}, {metric: bold algorithm or None}), as the
    report's view holds them (:attr:`.view.ReportView.headline`)."""
    view = as_view(report)
    metrics = _metrics(view, metrics)
    headline = view.headline
    cells = {key: text for key, text in headline.cells.items() if key[1] in metrics}
    return list(headline.algorithms), metrics, cells, {m: headline.bold.get(m) for m in metrics}


def headline_phrase(report: Viewable, *, limit: int = 4, width: int = 20) -> str:
    """The headline in a few words, for a runs list that shows only run names: the IQM (or the first metric)
    of each algorithm in report order, at most ``limit`` of them, names cut to ``width`` characters.

    Example:
        >>> headline_phrase(report)  # doctest: +SKIP
        'IQM ucb1 0.806, thompson 0.865, epsilon_greedy 0.546'
    """
    view = as_view(report)
    agg = view.aggregates
    if agg.empty:
        return ""
    metrics = _metrics(view, None)
    metric = "iqm" if "iqm" in metrics else metrics[0]
    rows = agg[agg["metric"].astype(str) == metric]
    points = {str(a): float(p) for a, p in zip(rows["algorithm"], rows["point"])}
    shown = [a for a in view.headline.algorithms if a in points]

    def name(alg: str) -> str:
        return alg if len(alg) <= width else alg[: width - 1] + "…"

    parts = [f"{name(a)} {fixed(points[a])}" for a in shown[:limit]]
    more = f", +{len(shown) - limit} more" if len(shown) > limit else ""
    return f"{view.title(metric)} " + ", ".join(parts) + more


def headline_marks(report: Viewable, metrics: Sequence[str] | None = None) -> dict[tuple[str, str], list[str]]:
    """``{(algorithm, metric): [note, ...]}`` for the headline cells a warning or a caveat is about (they get
    :data:`MARK`, the notes are the footnotes): the one place the paper tables read a cell's marks from the view."""
    view = as_view(report)
    shown = set(_metrics(view, metrics))
    return {
        (key[0], key[1]): [note.text for note in found]
        for key, found in view.cell_notes.get("aggregates", {}).items()
        if found and key[1] in shown
    }


def _footnotes(marks: dict[tuple[str, str], list[str]]) -> list[str]:
    """The warnings of the marked cells, each once, in table order."""
    return list(dict.fromkeys(text for texts in marks.values() for text in texts))


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_UNICODE = {
    "ε": r"$\varepsilon$",
    "ϵ": r"$\epsilon$",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "γ": r"$\gamma$",
    "λ": r"$\lambda$",
    "μ": r"$\mu$",
    "π": r"$\pi$",
    "σ": r"$\sigma$",
    "τ": r"$\tau$",
    "θ": r"$\theta$",
    "–": "--",
    "—": "---",
    "−": "-",
}


#: Accents that pdfLaTeX's utf8 input encoding composes in any font encoding (grave, acute, circumflex, tilde,
#: diaeresis, ring, cedilla): a Latin-1 letter made of an ASCII letter and one of these is written as is.
_SAFE_ACCENTS = frozenset("\u0300\u0301\u0302\u0303\u0308\u030a\u0327")

#: Defined in table.tex only when a name needs it. XeLaTeX/LuaLaTeX print the character itself (given a font
#: that has it); pdfLaTeX, which cannot, prints its code point [U+XXXX] instead of failing.
RLRCHAR = (
    "% \\rlrchar{code}{character}: the character under XeLaTeX/LuaLaTeX, [U+code] under pdfLaTeX\n"
    "\\providecommand{\\rlrchar}[2]{\\ifdefined\\Umathcode#2\\else{\\ttfamily[U+#1]}\\fi}"
)


def _latex_char(ch: str) -> str:
    if ch in _LATEX_SPECIAL:
        return _LATEX_SPECIAL[ch]
    if ch in _LATEX_UNICODE:
        return _LATEX_UNICODE[ch]
    code = ord(ch)
    if 32 <= code < 127:
        return ch
    category = unicodedata.category(ch)
    if category in ("Cc", "Cs", "Cf", "Zl", "Zp", "Co", "Cn"):
        return f"\\rlrchar{{{code:04X}}}{{}}"  # never written raw: no output shows it
    if code <= 0xFF:
        parts = unicodedata.normalize("NFD", ch)
        if len(parts) == 2 and parts[0].isascii() and parts[0].isalpha() and parts[1] in _SAFE_ACCENTS:
            return ch
    return f"\\rlrchar{{{code:04X}}}{{{ch}}}"


def latex_escape(text: str) -> str:
    """Any text as LaTeX that compiles under pdfLaTeX, XeLaTeX and LuaLaTeX.

    Specials are escaped, common Greek letters become math, accented Latin-1 letters stay, and any other
    non-ASCII character becomes ``\\rlrchar{code}{character}`` (see :data:`RLRCHAR`): the character itself under
    XeLaTeX/LuaLaTeX, its code point under pdfLaTeX. Control and invisible characters are only ever shown as
    their code point.

    Example:
        >>> latex_escape("DrQ(ε)_v2 & 50%")
        'DrQ($\\\\varepsilon$)\\\\_v2 \\\\& 50\\\\%'
        >>> latex_escape("算")
        '\\\\rlrchar{7B97}{算}'
    """
    return "".join(_latex_char(ch) for ch in unicodedata.normalize("NFC", str(text)))


def to_latex(
    report: Viewable,
    metrics: Sequence[str] | None = None,
    *,
    caption: str | None = None,
    label: str = "tab:rl-reliable",
) -> str:
    """A booktabs ``table`` with one row per algorithm and one column per metric.

    Needs ``\\usepackage{booktabs}`` in the preamble.

    Example:
        >>> print(to_latex(report))   # doctest: +SKIP
    """
    view = as_view(report)
    algorithms, metrics, cells, bold = headline_cells(view, metrics)
    marks = headline_marks(view, metrics)
    prov = view.provenance
    if caption is None:
        ci = prov.get("ci", 0.95)
        try:
            ci_txt = f"{float(ci) * 100:g}\\%"
        except (TypeError, ValueError):
            ci_txt = latex_escape(str(ci))
        headline = view.intervals.headline
        caption = f"Point estimate [{ci_txt} confidence interval]" + (f": {latex_escape(headline)}" if headline else "")
        caption += f". Bold: best, with a printed interval that neither overlaps nor touches any other{_MARK_SAID_TEX if marks else ''}."
    cols = "l" + "c" * len(metrics)
    head = " & ".join(
        ["Algorithm"]
        + [latex_escape(view.title(m)) + (r" $\downarrow$" if view.lower(m) else r" $\uparrow$") for m in metrics]
    )
    lines = [
        "% Generated by rl_reliable_logger; needs \\usepackage{booktabs}",
        *(
            [RLRCHAR]
            if "\\rlrchar" in caption + "".join(latex_escape(a) for a in [*algorithms, *_footnotes(marks)])
            else []
        ),
        r"\begin{table}[t]",
        r"\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{cols}}}",
        r"\toprule",
        head + r" \\",
        r"\midrule",
    ]
    for alg in algorithms:
        row = [latex_escape(alg)]
        for m in metrics:
            cell = cells.get((alg, m), "--")
            cell = cell.replace("–", "--")
            cell = f"\\textbf{{{cell}}}" if bold.get(m) == alg else cell
            row.append(cell + (r"\textsuperscript{\dag}" if (alg, m) in marks else ""))
        lines.append(" & ".join(row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = _footnotes(marks)
    if notes:
        lines.append(r"\par\smallskip{\footnotesize")
        lines += [r"\textsuperscript{\dag}~" + latex_escape(text) + r"\par" for text in notes]
        lines.append("}")
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return escape_markdown(text)


def to_markdown(report: Viewable, metrics: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table of the same cells as :func:`to_latex`.

    Example:
        >>> print(to_markdown(report))   # doctest: +SKIP
    """
    view = as_view(report)
    algorithms, metrics, cells, bold = headline_cells(view, metrics)
    marks = headline_marks(view, metrics)
    head = ["Algorithm"] + [view.title(m) + (" ↓" if view.lower(m) else " ↑") for m in metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([":---"] + [":---:"] * len(metrics)) + "|"]
    for alg in algorithms:
        row = [_md_escape(alg)]
        for m in metrics:
            cell = cells.get((alg, m), "–")
            cell = f"**{cell}**" if bold.get(m) == alg else cell
            row.append(cell + (f" {MARK}" if (alg, m) in marks else ""))
        lines.append("| " + " | ".join(row) + " |")
    notes = _footnotes(marks)
    if notes:
        lines += ["", *(f"{MARK} {_md_escape(text)}  " for text in notes)]
    ci = view.provenance.get("ci", 0.95)
    try:
        ci_txt = f"{float(ci) * 100:g}%"
    except (TypeError, ValueError):
        ci_txt = escape_markdown(ci)
    headline = view.intervals.headline
    said = f": {_md_escape(headline)}" if headline else ""
    lines += [
        "",
        f"Point estimate [{ci_txt} CI]{said}. Bold: best, with a printed interval that neither overlaps nor touches "
        f"any other{_MARK_SAID if marks else ''}.",
    ]
    return "\n".join(lines) + "\n"
