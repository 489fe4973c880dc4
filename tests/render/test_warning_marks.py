"""Warnings and caveats go wherever the numbers go: a flagged headline cell carries a mark and its reason is a
footnote in table.md and table.tex (each reason once, naming its cells), a linked mark in report.html, and every
caveat and warning is in methods.md; bold is judged on the intervals as printed (touching printed bounds are not
apart). A warning tied to a cell is what results written before issue 52 carry (the skew diagnostic's): they read
back marked as written."""

from __future__ import annotations

import html
import warnings

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ReliabilityWarning, ScoreTable, evaluate
from rl_reliable_logger.analysis import caveats as cv
from rl_reliable_logger.analysis.notices import caveat_notes
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.data.names import escape_markdown, escape_markdown_prose
from rl_reliable_logger.render.html import build_html
from rl_reliable_logger.render.methods import methods_markdown
from rl_reliable_logger.render.tables import MARK, headline_cells, latex_escape, to_latex, to_markdown

HEAVY = "Heavy_*1* & 50%"  # untrusted text: Markdown and LaTeX specials


def _heavy_report() -> Report:
    """One algorithm whose every task has one huge run of three (its mean's caveat fires: the runs' means lie far
    above their medians), one with normal runs (no caveat)."""
    rng = np.random.default_rng(0)
    rows = [
        (alg, f"task{t}", s, 400.0 if alg == HEAVY and s == 0 else float(rng.normal(1.0, 0.1)))
        for alg in (HEAVY, "Calm")
        for t in range(6)
        for s in range(3)
    ]
    frame = pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)
        metrics = ["mean", "iqm", "optimality_gap"]  # the median's bootstrap interval would carry its own caveat
        return evaluate(
            ScoreTable(frame),
            metrics=metrics,
            reps=300,
            profile_reps=50,
            improvement_reps=50,
            seed=0,
            method="percentile",
        )


@pytest.fixture(scope="module")
def heavy() -> Report:
    return _heavy_report()


def _older(report: Report) -> Report:
    """``report`` as a results folder written before issue 52 reads back: no caveat column, the skew diagnostic's
    warnings tied to the heavy algorithm's mean and its difference."""
    own = f"{HEAVY}: the mean's interval may under-cover at 3 runs per task"
    pair = f"{HEAVY} - Calm: the mean difference's interval may under-cover at these run counts"
    record = {"warned": [
        {"metric": "mean", "algorithm": HEAVY, "warning": own},
        {"metric": "mean", "pair": [HEAVY, "Calm"], "warning": pair},
    ]}  # fmt: skip
    tables = {name: getattr(report, name).drop(columns="caveat", errors="ignore") for name in
              ("aggregates", "differences", "improvement", "per_task")}  # fmt: skip
    prov = {**report.provenance, "mean_skewness": record}
    return Report(**tables, scores=report.scores, provenance=prov, warnings=[*report.warnings, own, pair])


def _note(report: Report) -> str:
    (line,) = [n.line for n in caveat_notes(report, ("aggregates",))]
    return line


def test_the_caveated_cell_has_its_mark_and_its_reason_once_below_the_markdown_table(heavy):
    assert (
        heavy.aggregates.set_index(["algorithm", "metric"]).loc[(HEAVY, "mean"), "caveat"] == cv.REASONS["above_median"]
    )
    md = to_markdown(heavy)
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| ")}
    heavy_row = rows[escape_markdown(HEAVY)]
    cells = heavy_row.strip("| ").split(" | ")
    mean_col = [c.strip() for c in md.splitlines()[0].strip("|").split("|")].index("Mean ↑")
    assert cells[mean_col].endswith(f" {MARK}") and heavy_row.count(MARK) == 1
    assert MARK not in rows["Calm"]
    notes = [line for line in md.splitlines() if line.startswith(f"{MARK} ")]
    assert len(notes) == 1 and escape_markdown(HEAVY) in notes[0] and "*1*" not in notes[0]
    assert notes[0].startswith(f"{MARK} the mean of {escape_markdown(HEAVY)}: heavy tails")
    assert f"{MARK}: a warning or a caveat about this interval" in md


def test_the_caveated_cell_has_its_mark_and_footnote_in_latex(heavy):
    tex = to_latex(heavy)
    (row,) = [line for line in tex.splitlines() if line.startswith(latex_escape(HEAVY) + " & ")]
    assert row.count(r"\textsuperscript{\dag}") == 1
    assert r"\textsuperscript{\dag}" not in next(line for line in tex.splitlines() if line.startswith("Calm & "))
    foot = [line for line in tex.splitlines() if line.startswith(r"\textsuperscript{\dag}~")]
    assert len(foot) == 1 and latex_escape(HEAVY) in foot[0] and "& 50%" not in foot[0]
    assert tex.index(r"\end{tabular}") < tex.index(foot[0]) < tex.index(r"\end{table}")


def test_the_caveated_cell_is_marked_and_linked_in_report_html(heavy):
    page = build_html(heavy)
    head = page[page.index('id="headline"') : page.index("</table>", page.index('id="headline"'))]
    assert head.count('class="mark"') == 1
    assert 'href="#caveat-1"' in head and "Heavy_*1* &amp; 50%" in head  # the caveat as the mark's tooltip
    item = page[page.index('id="caveat-1"') :].split("</li>", 1)[0]
    assert html.escape(_note(heavy)) in item
    assert page.index('id="headline"') < page.index('id="caveat-1"') < page.index('id="figures"')  # results first


def test_methods_md_lists_every_caveat_and_every_warning(heavy):
    text = methods_markdown(heavy)
    caveats = text[text.index("## Caveats") : text.index("## ", text.index("## Caveats") + 3)]
    assert caveats.count("\n- ") == 1  # the mean and its differences: one reason
    said = escape_markdown_prose(HEAVY)
    assert f"- the mean of {said}; the mean difference of Calm - {said}: heavy tails" in caveats
    older = _older(heavy)
    text = methods_markdown(older)
    section = text[text.index("## Warnings") : text.index("## References")]
    assert section.count("\n- ") == len(set(older.warnings))
    assert escape_markdown_prose(HEAVY) + ": the mean's interval" in section
    assert "## Caveats" not in text  # a folder written before the column


def test_a_flagged_best_cell_is_never_bold_without_its_mark(heavy):
    for report in (heavy, _older(heavy)):
        _, _, cells, bold = headline_cells(report)
        md = to_markdown(report)
        for metric, alg in bold.items():
            if alg == HEAVY and metric == "mean":
                assert f"**{cells[(alg, metric)]}** {MARK}" in md


def test_an_older_folders_warned_cell_is_marked_and_linked_to_its_warning(heavy):
    older = _older(heavy)
    assert "caveat" not in older.aggregates.columns
    page = build_html(older)
    head = page[page.index('id="headline"') : page.index("</table>", page.index('id="headline"'))]
    assert head.count('class="mark"') == 1 and 'href="#warning-' in head
    anchor = head.split('class="mark" href="#', 1)[1].split('"', 1)[0]
    item = page[page.index(f'id="{anchor}"') :].split("</li>", 1)[0]
    assert html.escape(f"{HEAVY}: the mean's interval") in item
    assert page.index('id="headline"') < page.index('id="warnings"')


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

    older = _older(heavy)
    marks = pair_warnings(older)
    diff = older.differences
    expected = sum(
        (str(x), str(y), str(m)) in marks for x, y, m in zip(diff["algorithm_x"], diff["algorithm_y"], diff["metric"])
    )
    assert expected == 1  # Heavy - Calm, mean
    page = build_html(older)
    section = page[page.index("Differences metric") : page.index("</table>", page.index("Differences metric"))]
    assert section.count(f"{MARK} see Warnings") == expected
    # a caveat is in the difference's own caveat column, not a pointer to the warnings
    page = build_html(heavy)
    section = page[page.index("Differences metric") : page.index("</table>", page.index("Differences metric"))]
    assert "see Warnings" not in section and section.count(html.escape(cv.REASONS["above_median"])) == 1
