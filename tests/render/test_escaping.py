"""Every name reaches table.tex, table.md and figures as inert text: hostile names compile, render, never split."""

from __future__ import annotations

import shutil
import subprocess

import matplotlib
import pytest

matplotlib.use("Agg")

from rl_reliable_logger.data.names import escape_markdown
from rl_reliable_logger.render import figures as plots
from rl_reliable_logger.render import tables as _paper_tables
from tests.support.reports import make_report

HOSTILE = [
    "算法甲",
    "🤖 agent",
    "a\x00b",
    "line\nbreak",
    "{" * 300 + "x" + "}" * 300,
    "$\\alpha$ & \\relax #1 ~^_%",
    "naïve-é ßþ Ωμ",
    "\\end{tabular}",
]
ENGINES = [e for e in ("pdflatex", "lualatex", "xelatex") if shutil.which(e)]


@pytest.fixture(scope="module")
def hostile_report():
    return make_report(len(HOSTILE), names=HOSTILE, reps=30, curves=False)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES or [pytest.param("none", marks=pytest.mark.skip("no TeX engine"))])
def test_table_tex_with_hostile_names_compiles(hostile_report, engine, tmp_path):
    table = _paper_tables.to_latex(hostile_report)
    assert "\x00" not in table and "\\rlrchar{0000}{}" in table
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + table + "\n\\end{document}\n"
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    proc = subprocess.run(
        [shutil.which(engine), "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    body = table.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    assert len(body) == len(HOSTILE)  # no name added or split a row


def test_pdflatex_fallback_shows_code_points_and_ascii_stays_plain():
    assert _paper_tables.latex_escape("DQN") == "DQN"
    assert _paper_tables.latex_escape("é") == "é"  # composed by pdfLaTeX's utf8 input encoding
    assert _paper_tables.latex_escape("þ") == "\\rlrchar{00FE}{þ}"  # needs T1: fallback
    assert _paper_tables.latex_escape("\n") == "\\rlrchar{000A}{}"
    plain = make_report(2, names=["A", "B"], reps=20, curves=False)
    assert "rlrchar" not in _paper_tables.to_latex(plain)  # ASCII tables unchanged: no extra preamble


def test_markdown_rows_never_split_and_links_stay_text(hostile_report):
    evil = make_report(3, names=["[x](http://e)", "a|b", "![i](http://e/i.png)"], reps=20, curves=False)
    md = _paper_tables.to_markdown(evil)
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert len(rows) == 5
    assert all(line.replace("\\|", "").count("|") == rows[0].count("|") for line in rows)
    assert "\\[x\\](http://e)" in md and "!\\[i\\]" in md
    md = _paper_tables.to_markdown(hostile_report)
    assert "line\\u000Abreak" in md and "\x00" not in md and "\\$\\\\alpha\\$" in md
    assert escape_markdown("<b>&amp;</b>") == "\\<b\\>\\&amp;\\</b\\>"


def test_figure_text_never_goes_through_mathtext(hostile_report, tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for draw in (plots.plot_interval_estimates, plots.plot_probability_of_improvement, plots.plot_rank_distributions):
        fig = draw(hostile_report)
        FigureCanvasAgg(fig)
        fig.savefig(tmp_path / "f.png", dpi=40)  # mathtext would raise on "$\\alpha$ & \\relax" or recurse
    assert plots.figure_label("$x$") == "\\$x\\$"
    assert plots.figure_label("a\x00") == "a\\u0000"


def test_long_names_abbreviated_consistently_and_keyed():
    a, b = "N" * 5000, "N" * 4999 + "M"
    assert len(plots.short_name(a)) <= plots.MAX_LABEL
    assert plots.short_name(a) == plots.short_name("N" * 5000) != plots.short_name(b)
    assert plots.label_key([a, b, "short"]) == {plots.short_name(a): a, plots.short_name(b): b}
