"""report.html, table.tex/md and figure files: contents, escaping, round trip, browser load."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render import figures as plots
from rl_reliable_logger.render import html as _html
from rl_reliable_logger.render import tables as _paper_tables
from rl_reliable_logger.render import writer as _render
from tests.support.reports import make_report

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> tuple[Report, Path, list[Path]]:
    report = make_report(2, names=["PPO & co_1", HOSTILE], reps=60)
    report.provenance["source"] = {"kind": "csv", "path": f"/data/{HOSTILE}.csv"}
    report.warnings.append(f"run {HOSTILE} has a weird name")
    out = tmp_path_factory.mktemp("hostile")
    written = _render.write_all(report, out, figure_formats=("png", "svg"))
    return report, out, written


def test_write_all_writes_figures_html_and_tables(hostile_dir):
    report, out, written = hostile_dir
    names = {p.relative_to(out).as_posix() for p in written}
    for stem in (
        "interval_estimates",
        "performance_profile",
        "performance_profile_nonlinear",
        "probability_of_improvement",
        "differences",
        "rank_distribution",
        "optimality_gap_curve",
        "task_scores",
        "sample_efficiency_iqm",
    ):
        assert f"figures/{stem}.png" in names and f"figures/{stem}.svg" in names, stem
    assert {"report.html", "table.tex", "table.md"} <= names
    for p in written:
        assert p.exists() and p.stat().st_size > 0
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if p.suffix == ".svg":
            assert ET.parse(p).getroot().tag.endswith("svg")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == sum(1 for p in written if p.suffix == ".png")


def test_empty_tables_are_skipped(tmp_path):
    report = make_report(2, reps=40, curves=False)
    report.differences = report.differences.iloc[0:0]
    written = _render.write_all(report, tmp_path)
    stems = {p.stem for p in written if p.parent.name == "figures"}
    assert "differences" not in stems and not any(s.startswith("sample_efficiency") for s in stems)
    assert "interval_estimates" in stems


def test_hostile_run_name_is_escaped_everywhere(hostile_dir):
    _, out, _ = hostile_dir
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "PPO &amp; co_1" in page
    # self-contained: no remote resources, and a CSP that forbids scripts and network loads
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page)
    assert "default-src 'none'" in page
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "<script>" not in md and r"\<script\>alert(1)\</script\>" in md
    tex = (out / "table.tex").read_text(encoding="utf-8")
    assert r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in tex
    assert r"PPO \& co\_1" in tex


def test_html_shows_headline_provenance_and_warnings(hostile_dir):
    report, out, _ = hostile_dir
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Only 4-5 runs per task" in page
    assert "non-finite score (nan)" in page  # dropped run with its reason
    iqm = report.headline("iqm").set_index("algorithm")
    cell = _paper_tables.headline_cells(report)[2][("PPO & co_1", "iqm")]
    assert (
        cell
        == f"{iqm.loc['PPO & co_1', 'point']:.2f} [{iqm.loc['PPO & co_1', 'low']:.2f}, {iqm.loc['PPO & co_1', 'high']:.2f}]"
    )
    assert _html.esc(cell) in page
    assert "human-normalised" in page


def _agg(rows):
    return Report(aggregates=pd.DataFrame(rows, columns=["algorithm", "metric", "point", "low", "high"]))


def test_bold_only_when_the_best_interval_overlaps_no_other():
    separated = _agg([("A", "iqm", 0.42, 0.38, 0.46), ("B", "iqm", 0.90, 0.80, 1.00), ("C", "iqm", 0.60, 0.50, 0.70)])
    tex = _paper_tables.to_latex(separated)
    assert r"\textbf{0.90 [0.80, 1.00]}" in tex
    assert tex.count(r"\textbf") == 1
    assert "**0.90 [0.80, 1.00]**" in _paper_tables.to_markdown(separated)
    overlapping = _agg([("A", "iqm", 0.42, 0.38, 0.46), ("B", "iqm", 0.90, 0.65, 1.00), ("C", "iqm", 0.60, 0.50, 0.70)])
    assert r"\textbf" not in _paper_tables.to_latex(overlapping)
    assert "**" not in _paper_tables.to_markdown(overlapping).split("\n\n")[0]
    # optimality gap: lower is better
    gap = _agg([("A", "optimality_gap", 0.20, 0.15, 0.25), ("B", "optimality_gap", 0.60, 0.50, 0.70)])
    assert r"\textbf{0.20 [0.15, 0.25]}" in _paper_tables.to_latex(gap)


def test_latex_table_is_booktabs_with_one_row_per_algorithm(hostile_dir):
    report, out, _ = hostile_dir
    tex = (out / "table.tex").read_text(encoding="utf-8")
    for cmd in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{lcccc}"):
        assert cmd in tex
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    assert len(body) == len(report.algorithms)
    assert _paper_tables.latex_escape("DrQ(ε)_2") == r"DrQ($\varepsilon$)\_2"


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("pdflatex") or shutil.which("lualatex")), reason="no TeX engine installed")
def test_latex_compiles(tmp_path):
    report = make_report(3, names=["DQN", "DrQ(ε)", "A_B & C%"], reps=30)
    doc = (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + _paper_tables.to_latex(report)
        + "\n\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    engine = shutil.which("pdflatex") or shutil.which("lualatex")
    proc = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_a_failing_figure_becomes_a_warning_not_a_lost_report(tmp_path, monkeypatch):
    report = make_report(2, reps=30, curves=False)

    def boom(r):
        raise ValueError("bad ranks")

    monkeypatch.setattr(plots, "plot_rank_distributions", boom)
    with pytest.warns(RuntimeWarning, match="rank_distribution"):
        written = _render.write_all(report, tmp_path)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "figure &#x27;rank_distribution&#x27; could not be drawn: ValueError: bad ranks" in page
    assert not (tmp_path / "figures" / "rank_distribution.png").exists()
    assert (tmp_path / "figures" / "interval_estimates.png") in written


def test_report_command_rebuilds_from_saved_tables(hostile_dir, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main
    from rl_reliable_logger.render.writer import save_report

    report, out, written = hostile_dir
    tables = tmp_path / "bundle"
    save_report(report, tables, figures=False)  # a bundle of tables only
    tables_before = {p.name: p.read_bytes() for p in tables.glob("*.csv")}
    assert not (tables / "report.html").exists()
    assert main(["report", str(tables), "--figure-formats", "png,svg"]) == 0  # SVG copies too (PNG by default)
    assert {p.name: p.read_bytes() for p in tables.glob("*.csv")} == tables_before  # tables kept byte for byte
    tmp_path = tables
    printed = capsys.readouterr().out
    assert "report.html" in printed and "interval_estimates.svg" in printed
    rebuilt = sorted(
        p.relative_to(tmp_path).as_posix()
        for p in tmp_path.rglob("*")
        if p.suffix in (".png", ".svg", ".html", ".tex", ".md")
    )
    # the figures, page and paper tables write_all drew, plus methods.md, which every bundle holds
    assert rebuilt == sorted([p.relative_to(out).as_posix() for p in written] + ["methods.md"])
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page  # escaping survives CSV round trip
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.slow
def test_real_evaluate_output_renders(tmp_path):
    from rl_reliable_logger.analysis.evaluation import evaluate
    from rl_reliable_logger.data.scores import ScoreTable
    from tests.support.reports import make_scores

    scores = make_scores(3, ragged=True)
    rows = []  # learning curves: each run climbs linearly to its final score over 5 steps
    for _, r in scores.iterrows():
        for s in range(1, 6):
            rows.append({**r.to_dict(), "step": s * 1000, "score": r["score"] * s / 5})
    table = ScoreTable(pd.DataFrame(rows), step="step")
    report = evaluate(table, reps=300, profile_reps=100, improvement_reps=100, seed=0, curves=True)
    written = _render.write_all(report, tmp_path)
    stems = {p.stem for p in written}
    assert {"interval_estimates", "probability_of_improvement", "rank_distribution", "task_scores"} <= stems
    assert any(s.startswith("sample_efficiency_") for s in stems)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "raw score (not normalised)" in page  # no normaliser given
    curves = report.curves
    last = curves[curves.step == curves.step.max()]
    assert np.isfinite(last["point"]).all()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom"]


def _load(browser: str, page: Path) -> tuple[str, str]:
    proc = subprocess.run(
        [browser, *CHROMIUM_FLAGS, page.resolve().as_uri()], capture_output=True, text=True, timeout=120
    )
    return proc.stdout, proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed")
def test_page_loads_in_headless_chromium_without_script_errors(hostile_dir, tmp_path):
    browser = _chromium()
    # positive control: the same check does see a script error on a broken page
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>undefinedFn();</script></body></html>")
    _, err = _load(browser, bad)
    assert "Uncaught" in err
    _, out, _ = hostile_dir
    dom, err = _load(browser, out / "report.html")
    console = [ln for ln in err.splitlines() if "CONSOLE" in ln]
    assert console == [], console
    assert "<script" not in dom.lower()  # the hostile name stayed text
    assert "Headline metrics" in dom and dom.count("<img") >= 8
