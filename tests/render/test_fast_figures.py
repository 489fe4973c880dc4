"""The fast figure path: the per-task grid without Axes, one layout per figure, parallel workers, figure formats."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from PIL import Image

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.render import export as _export
from rl_reliable_logger.render import figures as plots
from rl_reliable_logger.render import writer as _render
from rl_reliable_logger.render.bundle import read_bundle
from rl_reliable_logger.render.task_grid import Panel, Strip, grid_geometry, panel_scale, strip_grid
from tests.support.reports import make_report

COLORS = plots.OKABE_ITO


def _panels(seed: int = 0) -> list[Panel]:
    """Panels on very different scales: small, negative, huge (offset text), a constant cell, one run, a gap."""
    rng = np.random.default_rng(seed)
    cells = [
        [rng.normal(0.05, 0.02, 10), rng.normal(0.08, 0.02, 10)],
        [rng.normal(-3, 1, 10), rng.normal(2, 3, 10)],
        [rng.normal(1e6 + 50, 5, 10), rng.normal(1e6 + 60, 5, 10)],
        [np.full(10, 0.25), np.full(10, 0.25)],
        [np.array([7.0]), np.array([])],
        [rng.lognormal(0, 2, 40), rng.lognormal(1, 2, 40)],
        [np.array([]), np.array([0.0, 0.0])],
    ]
    panels = []
    for k, scores in enumerate(cells):
        panel = Panel(f"task {k}")
        for i, vals in enumerate(scores):
            if vals.size:
                panel.strips.append(
                    Strip(i - 0.5, rng.uniform(-0.3, 0.3, vals.size), vals, COLORS[i], 9 if vals.size < 30 else 4)
                )
        panels.append(panel)
    return panels


def _axes_reference(panels: list[Panel], ncols: int) -> Figure:
    """The same grid drawn the slow way: one real Axes per panel (what the fast grid must look like)."""
    size, boxes = grid_geometry(len(panels), 2, ncols)
    fig = Figure(figsize=size)
    for panel, box in zip(panels, boxes):
        ax = fig.add_axes(box)
        for s in panel.strips:
            ax.scatter(s.x + s.jitter, s.scores, s=s.size, color=s.color, alpha=0.75, linewidths=0)
            ax.hlines(s.scores.mean(), s.x - 0.4, s.x + 0.4, color="k", linewidth=1.5)
        ax.set_title(panel.title, fontsize="small")
        ax.set_xticks([])
        ax.tick_params(axis="y", labelsize="x-small")
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(True, axis="y", alpha=0.25, linewidth=0.8)
        ax.set_axisbelow(True)
    return fig


def test_panel_scales_are_what_an_axes_computes():
    panels = _panels()
    ref = _axes_reference(panels, ncols=4)
    ref.draw_without_rendering()  # updates every Axis' ticks and labels
    (_, height), boxes = grid_geometry(len(panels), 2, 4)
    for panel, ax, box in zip(panels, ref.axes, boxes):
        scale = panel_scale(panel, box[3] * height * 72)
        np.testing.assert_allclose(scale.xlim, ax.get_xlim(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(scale.ylim, ax.get_ylim(), rtol=1e-12, atol=1e-12)
        lo, hi = ax.get_ylim()
        shown = [(v, t.get_text()) for v, t in zip(ax.get_yticks(), ax.get_yticklabels()) if lo <= v <= hi]
        assert [s for _, s in shown] == scale.labels, panel.title
        np.testing.assert_allclose([v for v, _ in shown], scale.ticks)
        assert scale.offset == ax.yaxis.get_offset_text().get_text(), panel.title
    assert any(panel_scale(p, 100).offset for p in panels)  # the 1e6 panel exercises the offset text


def _pixels(fig: Figure, dpi: int = 60) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return np.asarray(Image.open(buf).convert("L"), dtype=float)


def test_fast_grid_looks_like_the_axes_grid():
    panels = _panels()
    fast, _ = strip_grid(panels, ncols=4, n_algorithms=2)
    slow = _axes_reference(panels, ncols=4)
    a, b = _pixels(fast), _pixels(slow)
    assert a.shape == b.shape
    differs = np.abs(a - b) > 64
    assert differs.mean() < 0.003, f"{differs.sum()} of {differs.size} pixels differ visibly"
    assert np.abs(a - b).mean() < 1.0
    dots = sum(len(c.get_offsets()) for c in fast.findobj(PathCollection))
    assert dots == sum(s.scores.size for p in panels for s in p.strips)


def test_task_scores_figure_keeps_names_dots_and_jitter():
    report = make_report(3, names=["DQN", "$x$ & y", "N" * 40], reps=20, curves=False)
    fig = plots.plot_task_scores(report)
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    for name in report.algorithms:
        assert plots.figure_label(name) in texts  # escaped and abbreviated as in every other figure
    assert {plots.figure_label(t) for t in report.scores["task"].unique()} <= texts
    dots = sum(len(c.get_offsets()) for c in fig.findobj(PathCollection))
    assert dots == int(np.isfinite(report.scores["score"]).sum())
    again = plots.plot_task_scores(report)  # fixed jitter: the same figure every time
    assert np.array_equal(_pixels(fig), _pixels(again))


def test_export_keeps_the_tight_crop_of_savefig():
    report = make_report(2, reps=20, curves=False)
    for draw in (plots.plot_interval_estimates, plots.plot_task_scores, plots.plot_rank_distributions):
        files = _export.export(draw(report), ("png", "svg"))
        buf = io.BytesIO()
        draw(report).savefig(buf, format="png", dpi=_export.PNG_DPI, bbox_inches="tight")
        ours, theirs = Image.open(io.BytesIO(files["png"])).size, Image.open(buf).size
        assert all(abs(x - y) <= 2 for x, y in zip(ours, theirs)), (draw.__name__, ours, theirs)
        root = ET.fromstring(files["svg"])
        assert root.tag.endswith("svg")
        width_pt = float(root.get("width").removesuffix("pt"))
        assert math.isclose(width_pt / 72 * _export.PNG_DPI, ours[0], abs_tol=4)  # both formats, one layout


def _savefig_png(fig: Figure, box) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_export.PNG_DPI, bbox_inches=box)
    return np.asarray(Image.open(buf).convert("L"), dtype=float)


@pytest.mark.parametrize("outside", [False, True])
def test_png_from_the_layout_canvas_looks_like_savefig(outside):
    """The PNG is cropped from the canvas the layout was measured on; the picture is savefig's up to a
    sub-pixel shift, and a drawing that reaches outside the figure (a legend beside it) is not cut."""
    report = make_report(2, reps=20, curves=False)
    fig = plots.plot_interval_estimates(report)
    if outside:
        fig.text(1.01, 0.5, "beside the figure")  # counted by the tight box, outside the canvas
    box = _export.freeze_layout(fig)
    ours = np.asarray(Image.open(io.BytesIO(_export.export(fig, ("png",))["png"])).convert("L"), dtype=float)
    theirs = _savefig_png(fig, box)
    assert ours.shape == theirs.shape
    if outside:
        assert box.x1 > fig.get_size_inches()[0] + 0.5
        assert np.array_equal(ours, theirs)  # drawn by savefig: nothing cut off
    else:
        assert np.abs(ours - theirs).mean() < 3.0  # the same picture, at most half a pixel apart
        shifted = [np.abs(ours[:, dx:] - theirs[:, : theirs.shape[1] - dx]).mean() for dx in (0, 1)]
        assert min(shifted) < 3.0
        assert (ours < 128).sum() == pytest.approx((theirs < 128).sum(), rel=0.05)  # same ink


def test_parallel_workers_write_the_same_bytes(tmp_path):
    report = make_report(2, reps=30, curves=False)
    one = _render.write_all(report, tmp_path / "one", workers=1)
    two = _render.write_all(report, tmp_path / "two", workers=2)
    assert [p.relative_to(tmp_path / "one") for p in one] == [p.relative_to(tmp_path / "two") for p in two]
    for a, b in zip(one, two):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_a_failing_figure_in_a_worker_is_a_warning(tmp_path, monkeypatch):
    report = make_report(2, reps=30, curves=False)

    def boom(r):
        raise ValueError("bad profile")

    monkeypatch.setattr(plots, "plot_optimality_gap_curve", boom)
    with pytest.warns(RuntimeWarning, match="optimality_gap_curve.*bad profile"):
        written = _render.write_all(report, tmp_path, workers=2)
    assert not (tmp_path / "figures" / "optimality_gap_curve.png").exists()
    assert (tmp_path / "figures" / "task_scores.png") in written


def test_figure_formats_pick_the_files_and_the_page_inlines_what_exists(tmp_path):
    report = make_report(2, reps=30, curves=False)
    written = _render.write_all(report, tmp_path / "svg", figure_formats=("svg",), workers=1)
    figures = [p for p in written if p.parent.name == "figures"]
    assert figures and all(p.suffix == ".svg" for p in figures)
    page = (tmp_path / "svg" / "report.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/svg+xml;base64,') == len(figures) and "image/png" not in page

    out = _render.save_report(report, tmp_path / "bundle", figure_formats="png", workers=1)
    names = {f.path for f in read_bundle(out).files}
    assert "figures/task_scores.png" in names and not any(n.endswith(".svg") for n in names)
    _, files = _render.rerender(out)  # a redraw keeps the bundle's formats
    assert not any(n.endswith(".svg") for n in files) and "figures/task_scores.png" in files


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
        "loaded = [m for m in ('matplotlib', 'PIL', 'multiprocessing.pool', 'rl_reliable_logger.render.figures',"
        " 'rl_reliable_logger.render.html') if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""
    assert (tmp_path / "out" / "aggregates.csv").exists()


def test_workers_fork_with_the_heap_frozen_and_leave_the_collector_as_it_was():
    """The workers fork while this process's objects are frozen (their collector does not walk, and so
    copy, the inherited heap); afterwards nothing stays frozen, and objects an application froze itself
    stay frozen."""
    import gc

    from rl_reliable_logger.render import pool

    assert gc.get_freeze_count() == 0
    seen = pool.run_jobs(_frozen_in_worker, [0, 1], workers=2)
    assert all(count > 0 for count in seen)  # forked with the heap frozen
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        pool.run_jobs(_frozen_in_worker, [0, 1], workers=2)
        assert gc.get_freeze_count() >= mine
    finally:
        gc.unfreeze()


def _frozen_in_worker(_: int) -> int:
    import gc

    return gc.get_freeze_count()


def _text_figure() -> Figure:
    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1, 2], [3, 1, 2], label="Rainbow–DQN (ε)")
    ax.set_title("Title with\ntwo lines", fontsize="medium")
    ax.set_xlabel("x label, rotated ticks")
    ax.set_ylabel(r"score $x^2$")  # mathtext takes matplotlib's own path
    ax.tick_params(axis="x", labelrotation=30)
    ax.text(1, 2, "weights ±0.5", fontsize=7, ha="right")
    ax.legend(fontsize="small")
    return fig


def _matplotlib_bytes(fig: Figure, box) -> dict[str, bytes]:
    """The same figure drawn by matplotlib's own Agg canvas and SVG backend (no caches)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    svg = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "x"}):
        fig.savefig(svg, format="svg", bbox_inches=box, metadata={"Date": None})
    return {"rgba": bytes(canvas.buffer_rgba()), "svg": svg.getvalue()}


def test_text_caching_canvases_draw_what_matplotlib_draws():
    """The canvases of :mod:`render.canvas` reuse text layouts across draws and figures; every pixel and every
    SVG byte is what matplotlib's own renderers produce, on a cold and on a warm cache."""
    from rl_reliable_logger.render import canvas as _canvas

    _canvas.clear_caches()
    for _ in range(2):  # cold, then every measurement and layout from the caches
        fig = _text_figure()
        box = _export.freeze_layout(fig)
        assert isinstance(fig.canvas.get_renderer(), _canvas.CachedRendererAgg)
        fig.canvas.draw()
        ours = {"rgba": bytes(fig.canvas.buffer_rgba())}
        layout_canvas = fig.canvas
        _canvas.svg_canvas(fig)
        svg = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": "x"}):
            fig.savefig(svg, format="svg", bbox_inches=box, metadata={"Date": None})
        fig.set_canvas(layout_canvas)
        ours["svg"] = svg.getvalue()
        assert ours == _matplotlib_bytes(fig, box)
    assert all(len(cache) > 0 for cache in _canvas._CACHES)


@pytest.mark.parametrize("facecolor", ["white", "none"])
def test_png_drops_the_alpha_channel_only_when_every_pixel_is_opaque(facecolor):
    report = make_report(2, reps=20, curves=False)
    fig = plots.plot_interval_estimates(report)
    fig.set_facecolor(facecolor)
    box = _export.freeze_layout(fig)
    image = Image.open(io.BytesIO(_export.export(fig, ("png",))["png"]))
    fig.canvas.draw()
    drawn = np.asarray(fig.canvas.buffer_rgba())
    assert image.mode == ("RGB" if facecolor == "white" else "RGBA")
    left = round(box.x0 * _export.PNG_DPI)
    top = round(drawn.shape[0] - box.y0 * _export.PNG_DPI - image.size[1])
    ours = np.asarray(image.convert("RGBA"))
    r0, c0 = max(top, 0), max(left, 0)  # the padding may reach past the canvas edge
    r1, c1 = min(top + ours.shape[0], drawn.shape[0]), min(left + ours.shape[1], drawn.shape[1])
    assert np.array_equal(ours[r0 - top : r1 - top, c0 - left : c1 - left], drawn[r0:r1, c0:c1])  # the canvas's pixels
    outside = np.ones(ours.shape[:2], bool)
    outside[r0 - top : r1 - top, c0 - left : c1 - left] = False
    face = np.round(np.asarray(matplotlib.colors.to_rgba(facecolor)) * 255)
    assert outside.any() and (ours[outside] == face).all()  # past the edge: the figure's colour, as savefig pads


@pytest.mark.parametrize("opaque", [True, False])
def test_encode_png_round_trips_the_pixels_and_the_dpi(opaque):
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (37, 53, 4), dtype=np.uint8)
    if opaque:
        pixels[..., 3] = 255
    strided = np.zeros((40, 60, 4), np.uint8)
    strided[2:39, 4:57] = pixels
    view = strided[2:39, 4:57]  # a crop of a larger canvas, as export passes it
    image = Image.open(io.BytesIO(_export.encode_png(view, _export.PNG_DPI)))
    assert image.mode == ("RGB" if opaque else "RGBA")
    assert np.array_equal(np.asarray(image.convert("RGBA")), pixels)
    assert [round(v) for v in image.info["dpi"]] == [_export.PNG_DPI] * 2


def _ticky_figure() -> Figure:
    """Axes whose ticks need an offset text, a log scale and a colorbar."""
    fig = Figure(figsize=(6, 3), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot([1e6 + 1, 1e6 + 5], [0.001, 0.004])
    right.set_yscale("log")
    image = right.imshow([[1, 20], [300, 4000]], extent=(0, 1, 1, 1000), aspect="auto")
    fig.colorbar(image, ax=right)
    return fig


def test_freezing_the_ticks_after_the_layout_changes_no_byte(monkeypatch):
    report = make_report(3, reps=20, curves=False)
    draws = [
        _ticky_figure,
        lambda: plots.plot_rank_distributions(report),
        lambda: plots.plot_interval_estimates(report),
    ]
    frozen = [_export.export(draw(), ("png", "svg")) for draw in draws]
    calls = []
    monkeypatch.setattr(_export, "_freeze_ticks", lambda fig: calls.append(fig))
    assert [_export.export(draw(), ("png", "svg")) for draw in draws] == frozen
    assert len(calls) == len(draws)
