"""Headline tables for papers: LaTeX (booktabs) and Markdown, ``0.42 [0.38, 0.46]`` cells.

The best algorithm of a metric is set in bold only when its interval, as printed (rounded to the digits shown),
neither overlaps nor touches any other algorithm's printed interval, so bold always means "separated by the CIs"
to the reader, never "largest point". A cell a warning is about (the mean's interval of a heavy-tailed algorithm,
:mod:`..analysis.notices`) carries a mark (:data:`MARK`) and the warning is a footnote below the table.

Example:
    >>> tex = to_latex(report)        # doctest: +SKIP
    >>> md = to_markdown(report)      # doctest: +SKIP
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analysis.notices import cell_warnings
from ..data.counts import fixed
from ..data.names import escape_markdown
from ..stats.registry import display_name, lower_is_better
from .intervals import headline_intervals

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.report import Report

__all__ = ["MARK", "headline_cells", "headline_phrase", "headline_marks", "best_separated", "to_latex", "to_markdown"]

#: The mark on a headline cell a warning is about; the warning is the table's footnote.
MARK = "†"


#: What the caption says about the mark (the footnote below the table gives each warning).
_MARK_SAID = f"; {MARK}: a warning or a caveat about this interval, below the table"
_MARK_SAID_TEX = r"; \dag: a warning or a caveat about this interval, below the table"


def _title(metric: str) -> str:
    return display_name(metric)


def _decimals(values: Sequence[float]) -> int:
    """2 decimals for normalised-size numbers, fewer for large raw returns, 3 for tiny ones."""
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


def _fmt(v: float, d: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return fixed(v, d)


def _metrics(report: Report, metrics: Sequence[str] | None) -> list[str]:
    available = [str(m) for m in pd.unique(report.aggregates["metric"])]
    if metrics is None:  # the order the analysis asked for (``metrics=``), as on the console and in every figure
        return available
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise ValueError(f"metric(s) {unknown} are not in the aggregates table (it has {available})")
    return list(metrics)


def _algorithms(report: Report) -> list[str]:
    present = [str(a) for a in pd.unique(report.aggregates["algorithm"])]
    order = [str(a) for a in report.algorithms if str(a) in present]
    return order + [a for a in present if a not in order]


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


def _best_separated(algorithms: np.ndarray, rows: np.ndarray, lower_is_better: bool) -> str | None:
    """:func:`best_separated` on arrays: ``rows`` holds point, low, high per algorithm, in table order."""
    rows_ok = ~np.isnan(rows).any(axis=1)
    algorithms, rows = algorithms[rows_ok], rows[rows_ok]
    if len(rows) < 2:
        return None
    best = int(np.argmin(rows[:, 0]) if lower_is_better else np.argmax(rows[:, 0]))
    others = np.delete(rows, best, axis=0)
    if lower_is_better:
        separated = bool((rows[best, 2] < others[:, 1]).all())
    else:
        separated = bool((rows[best, 1] > others[:, 2]).all())
    return str(algorithms[best]) if separated else None


def headline_cells(report: Report, metrics: Sequence[str] | None = None) -> tuple[list[str], list[str], dict, dict]:
    """(algorithms, metrics, {(alg, metric): "0.42 [0.38, 0.46]"}, {metric: bold algorithm or None})."""
    metrics = _metrics(report, metrics)
    algorithms = _algorithms(report)
    agg = report.aggregates
    names = agg["algorithm"].astype(str).to_numpy()
    metric_of = agg["metric"].astype(str).to_numpy()
    values = agg[["point", "low", "high"]].to_numpy(float)
    unique_rows = agg.index.is_unique  # best_separated drops the best row by label: the same as by position then
    cells: dict[tuple[str, str], str] = {}
    bold: dict[str, str | None] = {}
    for m in metrics:
        here = metric_of == m
        rows, algs = values[here], names[here]
        d = _decimals(rows.ravel().tolist())
        for alg, (point, low, high) in zip(algs, rows.tolist()):
            cells[(alg, m)] = f"{_fmt(point, d)} [{_fmt(low, d)}, {_fmt(high, d)}]"
        printed = _printed(rows, d)  # bold is judged on the bounds the reader sees: touching ones are not apart
        if unique_rows:
            bold[m] = _best_separated(algs, printed, lower_is_better(m))
        else:  # pragma: no cover - evaluate() writes a fresh index
            frame = agg[here].assign(algorithm=algs, point=printed[:, 0], low=printed[:, 1], high=printed[:, 2])
            bold[m] = best_separated(frame, lower_is_better(m))
    return algorithms, metrics, cells, bold


def headline_phrase(report: Report, *, limit: int = 4, width: int = 20) -> str:
    """The headline in a few words, for a runs list that shows only run names: the IQM (or the first metric)
    of each algorithm in report order, at most ``limit`` of them, names cut to ``width`` characters.

    Example:
        >>> headline_phrase(report)  # doctest: +SKIP
        'IQM ucb1 0.806, thompson 0.865, epsilon_greedy 0.546'
    """
    agg = report.aggregates
    if agg.empty:
        return ""
    metrics = _metrics(report, None)
    metric = "iqm" if "iqm" in metrics else metrics[0]
    rows = agg[agg["metric"].astype(str) == metric]
    points = {str(a): float(p) for a, p in zip(rows["algorithm"], rows["point"])}
    shown = [a for a in _algorithms(report) if a in points]

    def name(alg: str) -> str:
        return alg if len(alg) <= width else alg[: width - 1] + "…"

    parts = [f"{name(a)} {fixed(points[a])}" for a in shown[:limit]]
    more = f", +{len(shown) - limit} more" if len(shown) > limit else ""
    return f"{_title(metric)} " + ", ".join(parts) + more


def _printed(rows: np.ndarray, d: int) -> np.ndarray:
    """``rows`` rounded as :func:`_fmt` prints them (NaN stays NaN)."""
    return np.array([[float(fixed(v, d)) if math.isfinite(v) else math.nan for v in row] for row in rows.tolist()])


def headline_marks(report: Report, metrics: Sequence[str] | None = None) -> dict[tuple[str, str], list[str]]:
    """``{(algorithm, metric): [warning, ...]}`` for the headline cells a warning is about (they get :data:`MARK`)."""
    shown = set(_metrics(report, metrics))
    return {key: texts for key, texts in cell_warnings(report).items() if key[1] in shown}


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
    report: Report,
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
    algorithms, metrics, cells, bold = headline_cells(report, metrics)
    marks = headline_marks(report, metrics)
    prov = report.provenance or {}
    if caption is None:
        ci = prov.get("ci", 0.95)
        try:
            ci_txt = f"{float(ci) * 100:g}\\%"
        except (TypeError, ValueError):
            ci_txt = latex_escape(str(ci))
        headline = headline_intervals(prov)
        caption = f"Point estimate [{ci_txt} confidence interval]" + (f": {latex_escape(headline)}" if headline else "")
        caption += f". Bold: best, with a printed interval that neither overlaps nor touches any other{_MARK_SAID_TEX if marks else ''}."
    cols = "l" + "c" * len(metrics)
    head = " & ".join(
        ["Algorithm"]
        + [latex_escape(_title(m)) + (r" $\downarrow$" if lower_is_better(m) else r" $\uparrow$") for m in metrics]
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


def to_markdown(report: Report, metrics: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table of the same cells as :func:`to_latex`.

    Example:
        >>> print(to_markdown(report))   # doctest: +SKIP
    """
    algorithms, metrics, cells, bold = headline_cells(report, metrics)
    marks = headline_marks(report, metrics)
    head = ["Algorithm"] + [_title(m) + (" ↓" if lower_is_better(m) else " ↑") for m in metrics]
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
    prov = report.provenance or {}
    ci = prov.get("ci", 0.95)
    try:
        ci_txt = f"{float(ci) * 100:g}%"
    except (TypeError, ValueError):
        ci_txt = escape_markdown(ci)
    headline = headline_intervals(prov)
    said = f": {_md_escape(headline)}" if headline else ""
    lines += [
        "",
        f"Point estimate [{ci_txt} CI]{said}. Bold: best, with a printed interval that neither overlaps nor touches "
        f"any other{_MARK_SAID if marks else ''}.",
    ]
    return "\n".join(lines) + "\n"
