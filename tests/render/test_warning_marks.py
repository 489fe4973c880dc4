"""Warnings go wherever the numbers go: a flagged headline cell carries a mark and its warning is a footnote in
table.md and table.tex, a linked mark in report.html, and every warning is in methods.md; bold is judged on the
intervals as printed (touching printed bounds are not apart)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ReliabilityWarning, ScoreTable, evaluate
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.data.names import escape_markdown, escape_markdown_prose
from rl_reliable_logger.render.html import build_html
from rl_reliable_logger.render.methods import methods_markdown
from rl_reliable_logger.render.tables import MARK, headline_cells, latex_escape, to_latex, to_markdown

HEAVY = "Heavy_*1* & 50%"  # untrusted text: Markdown and LaTeX specials


def _heavy_report() -> Report:
    """One algorithm with lognormal(2.5) runs (its mean is flagged), one with normal runs (not flagged); 40 runs
    per task, so the runs can show the skewness they have."""
    rng = np.random.default_rng(0)
    rows = [
        (alg, f"task{t}", s, float(rng.lognormal(0.0, 2.5)) if alg == HEAVY else float(rng.normal(1.0, 0.1)))
        for alg in (HEAVY, "Calm")
        for t in range(6)
        for s in range(40)
    ]
    frame = pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)
        return evaluate(ScoreTable(frame), reps=300, profile_reps=50, improvement_reps=50, seed=0, method="percentile")


@pytest.fixture(scope="module")
def heavy() -> Report:
    return _heavy_report()


def _own_warning(report: Report, alg: str) -> str:
    (text,) = [w for w in report.warnings if w.startswith(f"{alg}: the mean's interval")]
    return text


def test_flagged_cell_has_its_mark_and_footnote_in_markdown(heavy):
    md = to_markdown(heavy)
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| ")}
    heavy_row = rows[escape_markdown(HEAVY)]
    cells = heavy_row.strip("| ").split(" | ")
    mean_col = [c.strip() for c in md.splitlines()[0].strip("|").split("|")].index("Mean ↑")
    assert cells[mean_col].endswith(f" {MARK}")
    assert MARK not in rows["Calm"]
    notes = [line for line in md.splitlines() if line.startswith(f"{MARK} ")]
    assert len(notes) == 1 and escape_markdown(HEAVY) in notes[0] and "*1*" not in notes[0]
    assert f"{MARK}: a warning about this interval" in md


def test_flagged_cell_has_its_mark_and_footnote_in_latex(heavy):
    tex = to_latex(heavy)
    (row,) = [line for line in tex.splitlines() if line.startswith(latex_escape(HEAVY) + " & ")]
    assert row.count(r"\textsuperscript{\dag}") == 1
    assert r"\textsuperscript{\dag}" not in next(line for line in tex.splitlines() if line.startswith("Calm & "))
    foot = [line for line in tex.splitlines() if line.startswith(r"\textsuperscript{\dag}~")]
    assert len(foot) == 1 and latex_escape(HEAVY) in foot[0] and "& 50%" not in foot[0]
    assert tex.index(r"\end{tabular}") < tex.index(foot[0]) < tex.index(r"\end{table}")


def test_flagged_cell_is_marked_and_linked_in_report_html(heavy):
    page = build_html(heavy)
    head = page[page.index('id="headline"') : page.index("</table>", page.index('id="headline"'))]
    assert head.count('class="mark"') == 1
    assert 'href="#warning-' in head and "Heavy_*1* &amp; 50%" in head  # the warning as the mark's tooltip
    anchor = head.split('class="mark" href="#', 1)[1].split('"', 1)[0]
    item = page[page.index(f'id="{anchor}"') :].split("</li>", 1)[0]
    assert _own_warning(heavy, HEAVY).replace("&", "&amp;").replace("'", "&#x27;") in item
    assert page.index('id="headline"') < page.index('id="warnings"')  # results first


def test_methods_md_lists_every_warning(heavy):
    text = methods_markdown(heavy)
    section = text[text.index("## Warnings") : text.index("## References")]
    assert section.count("\n- ") == len(set(heavy.warnings))
    assert escape_markdown_prose(HEAVY) + ": the mean's interval" in section


def test_a_flagged_best_cell_is_never_bold_without_its_mark(heavy):
    _, _, cells, bold = headline_cells(heavy)
    md = to_markdown(heavy)
    for metric, alg in bold.items():
        if alg == HEAVY and metric == "mean":
            assert f"**{cells[(alg, metric)]}** {MARK}" in md


def _two(points: tuple[float, float], lows: tuple[float, float], highs: tuple[float, float]) -> Report:
    agg = pd.DataFrame(
        {"algorithm": ["SAC", "DQN"], "metric": ["iqm", "iqm"], "point": points, "low": lows, "high": highs}
    )
    return Report(aggregates=agg, provenance={"algorithms": ["SAC", "DQN"]})


def test_printed_intervals_that_touch_are_not_bold():
    # exact bounds 0.70821 and 0.70792 are apart, but both print as 0.71: the reader sees them touch
    report = _two((0.7312, 0.7003), (0.70821, 0.6811), (0.7512, 0.70792))
    assert headline_cells(report)[2][("SAC", "iqm")] == "0.73 [0.71, 0.75]"
    assert headline_cells(report)[3]["iqm"] is None
    assert "**" not in to_markdown(report) and r"\textbf" not in to_latex(report)
    assert "<b>" not in build_html(report).split('id="headline"', 1)[1]


def test_printed_intervals_apart_are_bold():
    report = _two((0.7312, 0.7003), (0.7221, 0.6811), (0.7512, 0.70792))
    assert headline_cells(report)[3]["iqm"] == "SAC"
    assert "**0.73 [0.72, 0.75]**" in to_markdown(report)


def test_a_flagged_difference_is_marked_in_report_html(heavy):
    from rl_reliable_logger.analysis.notices import pair_warnings

    marks = pair_warnings(heavy)
    diff = heavy.differences
    expected = sum(
        (str(x), str(y), str(m)) in marks for x, y, m in zip(diff["algorithm_x"], diff["algorithm_y"], diff["metric"])
    )
    assert expected == 1  # Heavy - Calm, mean
    page = build_html(heavy)
    section = page[page.index("Differences metric") : page.index("</table>", page.index("Differences metric"))]
    assert section.count(f"{MARK} see Warnings") == expected
