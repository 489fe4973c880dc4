"""A Report's view is built once and every renderer reads it: the cells' notes (warnings and the caveat column,
each caveat reason once naming its cells), the per-cell interval method, the page's extra warnings, the figures'
cut, and only the view (with the interval words it asks and the writer, which hashes and reads Reports) reads the
analysis."""

from __future__ import annotations

import ast
import math

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.render import view as view_module
from rl_reliable_logger.render import writer
from rl_reliable_logger.render.tables import MARK, to_markdown
from rl_reliable_logger.render.view import MAX_SHOWN, Note, as_view, report_view
from tests.support.paths import REPO
from tests.support.reports import make_report


def _with_caveats() -> Report:
    """Every table that carries a ``caveat`` column, with a caveat on one cell each, an empty one and a missing one;
    and a warning about one headline cell (recorded as ``evaluate()`` records it)."""
    aggregates = pd.DataFrame(
        {
            "algorithm": ["A", "A", "B", "B"],
            "metric": ["mean", "iqm", "mean", "iqm"],
            "point": [1.0, 0.9, 2.0, 1.9],
            "low": [0.8, 0.7, 1.8, 1.7],
            "high": [1.2, 1.1, 2.2, 2.1],
            "caveat": ["heavy tail", "", math.nan, "few runs"],
        }
    )
    per_task = pd.DataFrame(
        {"algorithm": ["A", "B"], "task": ["x", "x"], "n_runs": [3, 3], "mean": [1.0, 2.0], "low": [0.5, 1.5],
         "high": [1.5, 2.5], "median": [1.0, 2.0], "min": [0.4, 1.4], "max": [1.6, 2.6], "caveat": ["", "3 runs"]}
    )  # fmt: skip
    improvement = pd.DataFrame(
        {"algorithm_x": ["A"], "algorithm_y": ["B"], "point": [0.1], "low": [0.0], "high": [0.3], "caveat": ["ties"]}
    )
    differences = pd.DataFrame(
        {"algorithm_x": ["A"], "algorithm_y": ["B"], "metric": ["mean"], "point": [-1.0], "low": [-1.3],
         "high": [-0.7], "caveat": ["skewed pair"]}
    )  # fmt: skip
    warning = "A: the mean's interval may under-cover"
    provenance = {
        "algorithms": ["A", "B"],
        "mean_skewness": {"warned": [{"metric": "mean", "algorithm": "A", "warning": warning}]},
    }
    return Report(
        aggregates=aggregates,
        per_task=per_task,
        improvement=improvement,
        differences=differences,
        provenance=provenance,
        warnings=[warning],
    )


def test_each_cell_carries_its_warnings_then_its_caveat():
    view = report_view(_with_caveats())
    warning = "A: the mean's interval may under-cover"
    heavy, few = "the mean of A: heavy tail", "the iqm of B: few runs"  # each reason's line, naming its cells
    assert view.notes("aggregates", "A", "mean") == (Note("warning", warning), Note("caveat", heavy))
    assert view.notes("aggregates", "B", "iqm") == (Note("caveat", few),)
    assert view.notes("aggregates", "A", "iqm") == () and view.notes("aggregates", "B", "mean") == ()  # "" and NaN
    # a difference's caveat is in its table's own caveat column, not a mark
    assert view.notes("differences", "A", "B", "mean") == () == view.notes("differences", "B", "A", "mean")
    assert [(c.table, c.cell, c.text) for c in view.caveats] == [
        ("aggregates", ("A", "mean"), "heavy tail"),
        ("aggregates", ("B", "iqm"), "few runs"),
        ("differences", ("A", "B", "mean"), "skewed pair"),
        ("improvement", ("A", "B"), "ties"),
        ("per_task", ("B", "x"), "3 runs"),
    ]
    assert [note.line for note in view.headline_caveats] == [heavy, few]
    assert [note.line for note in view.caveat_lines] == [
        heavy,
        few,
        "the mean difference of A - B: skewed pair",
        "P(X>Y) of A vs B: ties",
        "the mean of B on task x: 3 runs",
    ]
    assert [c.cell for c in view.caveat_lines[3].cells] == [("A", "B")]
    # the renderers mark the headline cells (not the differences, per-task and improvement rows)
    assert view.notes("per_task", "B", "x") == () and view.notes("improvement", "A", "B") == ()
    markdown = to_markdown(view)
    assert markdown.count(MARK) == 2 + 3 + 1  # two marked cells, three footnotes (two of A mean), the caption
    assert markdown.count(heavy) == 1 and markdown.count(few) == 1


def test_each_cell_names_its_interval_method():
    report = Report(
        aggregates=pd.DataFrame({"algorithm": ["A"], "metric": ["median"], "point": [1.0], "low": [0.5], "high": [2.0]}),
        provenance={
            "intervals": {
                "aggregates": {"method": "bootstrap-t", "level": 0.95, "replicates": 100,
                               "statistics": {"mean": "bootstrap-t", "median": "order-statistic"}},
                "per_task": {"method": "student-t", "level": 0.95, "replicates": None},
            }
        },
    )  # fmt: skip
    view = report_view(report)
    assert view.method("aggregates", "median").startswith("order-statistic")
    assert view.method("aggregates", "mean") == "studentized bootstrap (bootstrap-t)"
    assert view.method("per_task").startswith("Student-t") and view.method("profiles") == ""


def test_the_page_adds_its_own_warnings_each_once_as_its_own_line():
    view = report_view(_with_caveats())
    page = view.with_warnings(["figure 'x' could not be drawn", "figure 'x' could not be drawn", view.warnings[0]])
    assert [line for _, line in page.notices] == [view.warnings[0], "figure 'x' could not be drawn"]
    assert view.with_warnings([]) is view and view.notices == ((view.warnings[0], view.warnings[0]),)


def test_past_the_cap_the_figures_draw_from_a_view_cut_to_the_shown_algorithms():
    report = make_report(MAX_SHOWN + 2, curves=False, reps=10)
    view = report_view(report)
    shown = view.for_figures()
    assert view.figure_note and len(view.figure_algorithms) == MAX_SHOWN
    assert set(shown.aggregates["algorithm"]) == set(view.figure_algorithms) == set(shown.algorithms)
    assert len(view.aggregates) == len(report.aggregates)  # the view itself keeps every algorithm
    assert shown.headline == view.headline  # the tables are cut, not what the headline says
    small = report_view(make_report(3, curves=False, reps=10))
    assert small.figure_note is None and small.for_figures() is small and as_view(small) is small


def _counted(monkeypatch, name: str, *modules) -> list:
    """Replace ``name`` of ``modules`` (a function of the view module) by one that lists each call's argument."""
    calls: list = []
    real = getattr(view_module, name)

    def counted(report):
        calls.append(report)
        return real(report)

    for module in modules:
        monkeypatch.setattr(module, name, counted)
    return calls


def test_the_command_line_builds_the_view_once(tmp_path, monkeypatch):
    built = _counted(monkeypatch, "report_view", view_module, writer)
    rng = np.random.default_rng(0)
    rows = [(a, t, s, float(rng.normal(i, 1))) for i, a in enumerate("AB") for t in "xy" for s in range(3)]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]).to_csv(path, index=False)
    argv = ["evaluate", str(path), "--reps", "100", "--profile-reps", "20", "--improvement-reps", "20"]
    assert main([*argv, "--figure-formats", "svg", "--out", str(tmp_path / "out")]) == 0
    assert len(built) == 1  # the summary, the figures, their note, report.html, the tables and methods.md
    assert (tmp_path / "out" / "report.html").exists()


#: The modules of render/ that read analysis/ or stats/: the view (every fact the outputs print), the interval
#: sentences it asks (the registry's words) and the writer (a Report's hash; reading a bundle back into a Report).
READERS = {"view.py", "intervals.py", "writer.py"}


def _imports(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module] if module else [a.name for a in node.names]
            found |= {n.split(".")[0] for n in names if node.level == 2}
            if node.level == 0 and module.startswith("rl_reliable_logger."):
                found.add(module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("rl_reliable_logger.")}
    return found


@pytest.mark.parametrize("path", sorted((REPO / "rl_reliable_logger" / "render").glob("*.py")), ids=lambda p: p.name)
def test_a_renderer_reads_the_view_never_the_analysis(path):
    """Every import counts: module level, in a function, for type checking only."""
    reads = _imports(path) & {"analysis", "stats"}
    assert not reads or path.name in READERS, f"render/{path.name} imports {sorted(reads)}: read the view instead"


def test_the_view_asks_the_analysis_once_and_the_writer_records_its_digest(tmp_path, monkeypatch):
    """Issue 51: every fact of the view comes from one call into the analysis, and the bundle's manifest records the
    view's digest (the writer does not hash the Report again): the report's hash, which reading it back verifies."""
    from rl_reliable_logger.analysis import hashing
    from rl_reliable_logger.store.bundle import read_bundle

    asked = _counted(monkeypatch, "report_facts", view_module)
    report = make_report(3, curves=False, reps=10)
    view = report_view(report)
    assert len(asked) == 1 and view.digest == hashing.report_hash(report)
    assert view.written == tuple(name for name, _ in report.tables(written=True))
    out = writer.save_report(report, tmp_path / "out", figures=False, view=view)
    assert len(asked) == 1  # the view handed to the writer is the one built
    assert read_bundle(out).report_hash == view.digest
    assert hashing.hash_matches(writer.load_report(out), view.digest)
    # at run time view.py imports of analysis/ only the module of that one call
    tree = ast.parse((REPO / "rl_reliable_logger" / "render" / "view.py").read_text(encoding="utf-8"))
    checking = [n for n in ast.walk(tree) if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"]
    typed = {id(m) for block in checking for m in ast.walk(block)}
    runtime = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and id(node) not in typed and (node.module or "").startswith("analysis")
    }
    assert runtime == {"analysis.notices"}, runtime
