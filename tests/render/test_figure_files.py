"""Figure files: saved through ``Figure.savefig`` from one layout, the same bytes every run, the formats asked for."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
from matplotlib.figure import Figure
from PIL import Image

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.render import export as _export
from rl_reliable_logger.render import figures as plots
from rl_reliable_logger.render import writer as _render
from rl_reliable_logger.store.bundle import read_bundle
from tests.support.reports import make_report


def _pixels(fig: Figure, dpi: int = 60) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return np.asarray(Image.open(buf).convert("L"), dtype=float)


def _dots(fig: Figure) -> int:
    """Runs drawn as dots: the points of every marker-only line of the panels (not of the legend)."""
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() == "o" and ln.get_linestyle() == "None"]
    return sum(len(ln.get_xdata()) for ln in lines)


def test_task_scores_grid_has_one_panel_per_task_and_one_dot_per_run():
    report = make_report(3, names=["DQN", "$x$ & y", "N" * 40], reps=20, curves=False)
    fig = plots.plot_task_scores(report)
    tasks = report.scores["task"].unique()
    assert len(fig.axes) == len(tasks)  # the unused cells of the last row are removed
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    for name in report.algorithms:
        assert plots.figure_label(name) in texts  # escaped and abbreviated as in every other figure
    assert {plots.figure_label(t) for t in tasks} <= texts
    assert _dots(fig) == int(np.isfinite(report.scores["score"]).sum())
    again = plots.plot_task_scores(report)  # fixed jitter: the same figure every time
    assert np.array_equal(_pixels(fig), _pixels(again))


def test_export_crops_like_savefig_tight_and_both_formats_share_one_layout():
    report = make_report(2, reps=20, curves=False)
    for draw in (plots.plot_interval_estimates, plots.plot_task_scores, plots.plot_rank_distributions):
        files = _export.export(draw(report), ("png", "svg"))
        buf = io.BytesIO()
        draw(report).savefig(buf, format="png", dpi=_export.PNG_DPI, bbox_inches="tight")
        ours, theirs = Image.open(io.BytesIO(files["png"])).size, Image.open(buf).size
        assert all(abs(x - y) <= 4 for x, y in zip(ours, theirs)), (draw.__name__, ours, theirs)  # px
        root = ET.fromstring(files["svg"])
        assert root.tag.endswith("svg")
        width_pt = float(root.get("width", "").removesuffix("pt"))
        assert math.isclose(width_pt / 72 * _export.PNG_DPI, ours[0], abs_tol=4)  # both formats, one layout


def test_a_long_axis_label_is_not_cut_off():
    """A label wider than its figure: matplotlib 3.10's tight box counts only the part under the axes."""
    label = "a label far wider than the figure it belongs to, " * 2
    fig = Figure(figsize=(2.5, 2), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel(label)
    png = Image.open(io.BytesIO(_export.export(fig, ("png",))["png"]))
    short = Figure(figsize=(2.5, 2), layout="constrained")
    short.add_subplot().set_xlabel(label[:10])
    label_px = short.axes[0].xaxis.label.get_window_extent().width / short.dpi * _export.PNG_DPI * len(label) / 10
    assert png.size[0] >= 0.9 * label_px  # the label's whole width (0.9: glyph widths vary)
    ink = np.asarray(png.convert("L")) < 128
    assert not ink[:, 0].any() and not ink[:, -1].any()  # nothing touches the edges: the padding is kept


def test_the_same_report_gives_the_same_bytes(tmp_path):
    report = make_report(2, reps=30, curves=False)
    one = _render.write_all(report, tmp_path / "one", figure_formats=("png", "svg"))
    two = _render.write_all(report, tmp_path / "two", figure_formats=("png", "svg"))
    assert [p.relative_to(tmp_path / "one") for p in one] == [p.relative_to(tmp_path / "two") for p in two]
    for a, b in zip(one, two):
        assert a.read_bytes() == b.read_bytes(), a.name
    svg = (tmp_path / "one" / "figures" / "task_scores.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in svg  # no date in the file
    png = Image.open(tmp_path / "one" / "figures" / "task_scores.png")
    assert "Software" not in png.info and [round(v) for v in png.info["dpi"]] == [_export.PNG_DPI] * 2


def test_a_figure_that_cannot_be_saved_is_a_warning_and_the_rest_is_written(tmp_path, monkeypatch):
    report = make_report(2, reps=30, curves=False)

    def unsaveable(r):
        fig = Figure()
        fig.text(0.5, 0.5, r"$\frac{$")  # drawn without error, fails when laid out and saved (bad mathtext)
        return fig

    monkeypatch.setattr(plots, "plot_optimality_gap_curve", unsaveable)
    with pytest.warns(RuntimeWarning, match="'optimality_gap_curve' could not be saved: ValueError"):
        written = _render.write_all(report, tmp_path)
    assert not (tmp_path / "figures" / "optimality_gap_curve.png").exists()
    assert (tmp_path / "figures" / "task_scores.png") in written
    assert "could not be saved" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_figure_formats_pick_the_files_and_the_page_inlines_what_exists(tmp_path):
    report = make_report(2, reps=30, curves=False)
    written = _render.write_all(report, tmp_path / "svg", figure_formats=("svg",))
    figures = [p for p in written if p.parent.name == "figures"]
    assert figures and all(p.suffix == ".svg" for p in figures)
    page = (tmp_path / "svg" / "report.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/svg+xml;base64,') == len(figures) and "image/png" not in page

    out = _render.save_report(report, tmp_path / "bundle")  # the default: PNG only (issue 56) ...
    names = {f.path for f in read_bundle(out).files}
    chart = f"figures/{_export.PAGE_CHART}"
    # ... but for the chart a tracker's page shows, also SVG (a PNG shows at its pixel width there)
    assert {n for n in names if n.endswith(".svg")} == {f"{chart}.svg"}
    assert "figures/task_scores.png" in names and f"{chart}.png" in names
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "image/svg+xml" not in page  # report.html still inlines the PNGs
    _, files = _render.rerender(out)  # a redraw keeps the bundle's formats
    assert {n for n in files if n.endswith(".svg")} == {f"{chart}.svg"} and "figures/task_scores.png" in files
    _, files = _render.rerender(out, ("png", "svg"))  # SVG copies drawn later, from the bundle
    assert "figures/task_scores.svg" in files and "figures/task_scores.png" in files
    _, files = _render.rerender(out)  # and kept by the next redraw
    assert "figures/task_scores.svg" in files


@pytest.mark.parametrize("bad", [("png", "gif"), (), "jpeg"])
def test_bad_figure_formats_are_refused_before_any_work(tmp_path, bad):
    report = make_report(2, reps=20, curves=False)
    with pytest.raises(InputError, match="`figure_formats=`"):
        _render.save_report(report, tmp_path / "out", figure_formats=bad)
    assert not (tmp_path / "out").exists()
    assert _export.check_formats(" SVG, png,svg") == ("svg", "png")


def test_a_tables_only_save_imports_no_figure_code(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from rl_reliable_logger.render.writer import save_report\n"
        "from tests.support.reports import make_report\n"
        f"save_report(make_report(2, reps=20, curves=False), {str(tmp_path / 'out')!r}, figures=False)\n"
        "loaded = [m for m in ('matplotlib', 'PIL', 'rl_reliable_logger.render.figures',"
        " 'rl_reliable_logger.render.html') if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""
    assert (tmp_path / "out" / "aggregates.csv").exists()
