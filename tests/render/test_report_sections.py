"""report.html draws the letter display of --compare-all (and only then), the protocol checks with the paper
section each comes from, and the methods paragraph; every name in them is escaped."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.comparisons import report_letters
from rl_reliable_logger.analysis.protocol import CHECKS
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.render.html import build_html

HOSTILE = "<img src=x onerror=alert(1)>"


def _frame(runs_c: int = 4) -> pd.DataFrame:
    """A and B clearly apart, B and C not: the letters must group {B, C} against {A}."""
    rng = np.random.default_rng(3)
    rows = [
        {"algorithm": alg, "task": f"game{t}", "seed": s, "score": float(rng.normal(mu, 0.3))}
        for alg, mu in ((HOSTILE, 0.0), ("B", 3.0), ("C", 3.05))
        for t in range(4)
        for s in range(runs_c if alg == "C" else 4)
    ]
    return pd.DataFrame(rows)


def _report(**options):
    fast = dict(reps=300, profile_reps=100, improvement_reps=100, seed=0)
    return evaluate(ScoreTable(_frame(options.pop("runs_c", 4))), **fast, **options)


def _section(page: str, anchor: str) -> str:
    start = page.index(f'id="{anchor}"')
    return page[start : page.index("</table>", start)]


def test_letter_display_is_drawn_as_an_escaped_table():
    report = _report(comparisons=True)
    page = build_html(report)
    letters = _section(page, "letters")
    display = report_letters(report)
    groups = dict(zip(display["algorithm"], display["group"]))
    assert groups["B"] == groups["C"] != groups[HOSTILE]  # what the comparisons say, drawn
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>.*?</tr>', letters)
    assert rows[-1] == "&lt;img src=x onerror=alert(1)&gt;"  # worst last, escaped
    assert set(rows[:2]) == {"B", "C"}
    for name, group in groups.items():  # each algorithm's row marks exactly its letters
        row = re.search(
            rf'<th scope="row">{re.escape(name.replace("<", "&lt;").replace(">", "&gt;"))}</th>(.*?)</tr>', letters
        )
        assert re.findall(r'<td class="grp in">(\w)</td>', row.group(1)) == sorted(group)
    assert "<img src=x" not in page


def test_no_letter_display_without_all_pairs_comparisons():
    page = build_html(_report())
    assert 'id="letters"' not in page and "told apart" not in page


@pytest.mark.parametrize("compare_all", [True, False])
def test_cli_report_has_the_letters_only_with_compare_all(tmp_path, compare_all):
    src = tmp_path / "scores.csv"
    _frame().to_csv(src, index=False)
    out = tmp_path / "results"
    argv = ["evaluate", str(src), "--reps", "300", "--profile-reps", "100", "--improvement-reps", "100"]
    argv += ["--figure-formats", "png", "--out", str(out), "--quiet"] + (["--compare-all"] if compare_all else [])
    assert main(argv) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert ('id="letters"' in page) is compare_all
    if compare_all:  # both B and C rows carry their group letters
        assert re.findall(r'<th scope="row">(B|C)</th><td class="num">[^<]*</td><td>(\w+)</td>', page)


def test_protocol_checks_table_cites_the_paper_sections():
    report = _report(runs_c=2)  # C: 2 runs per task -> runs.unequal and runs.few
    page = build_html(report)
    table = _section(page, "protocol")
    for check in ("runs.unequal", "runs.few"):
        assert f"<code>{check}</code>" in table
        assert CHECKS[check].cite.replace("&", "&amp;") in table and "§" in CHECKS[check].cite
    warnings = page[page.index('id="notices"') :] if 'id="notices"' in page else ""  # the grouped warnings
    assert "runs.unequal" not in warnings.split("</div>")[0]  # listed once, in the protocol table


def test_methods_section_holds_the_paragraph_and_references():
    page = build_html(_report(runs_c=2))
    methods = page[page.index('id="methods"') : page.index('id="provenance"')]
    assert "stratified bootstrap" in methods and "Reporting checklist" in methods
    assert "Statistical Precipice" in methods and "§4.1" in methods  # runs.few's section, in the paragraph


def test_methods_md_cites_each_fired_check_and_lists_the_papers():
    from rl_reliable_logger.render.methods import methods_markdown

    text = methods_markdown(_report(runs_c=2))
    assert "runs.few (" in text and "§4.1 (Fig. 6)" in text
    refs = text[text.index("## References") :]
    assert "Statistical Precipice" in refs and "Arcade Learning Environment" not in refs  # only papers cited
    assert "Evaluating the Performance of Reinforcement Learning Algorithms" not in refs  # no Jordan table here


def test_methods_md_lists_jordan_et_al_where_its_tables_are_reported():
    from rl_reliable_logger.render.methods import methods_markdown

    text = methods_markdown(_report(jordan=True))
    refs = text[text.index("## References") :]
    assert "Jordan, Y. Chandak" in refs and "Evaluating the Performance of Reinforcement Learning Algorithms" in refs
