"""Save a figure as PNG and/or SVG bytes, the same bytes on every run, each format drawn once.

The figure is laid out once (its layout engine runs, then is removed so the positions stay) and its tight
bounding box measured once. With PNG, that layout is the PNG's own draw (Agg at :data:`PNG_DPI`), and the PNG is
its pixels cropped to the box; every other format is one ``savefig`` call cropped to the box, so every format
shows the same layout. Nothing that changes from run to run is written: PNGs carry no software version, SVGs no
date and fixed element ids (``svg.hashsalt``).

Example:
    >>> files = export(fig, ("png", "svg"))   # doctest: +SKIP
    >>> files["png"][:4]                       # doctest: +SKIP
    b'\\x89PNG'
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..wording import kw, said

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

__all__ = [
    "DEFAULT_FIGURE_FORMATS",
    "FIGURE_FORMATS",
    "PAGE_CHART",
    "PAGE_CHART_FORMATS",
    "PNG_DPI",
    "check_formats",
    "export",
    "figure_formats",
    "freeze_layout",
]

PNG_DPI = 130
#: Formats the results writer can produce; report.html inlines the PNG when there is one, else the SVG.
FIGURE_FORMATS = ("png", "svg")
#: The formats written when none are asked for: PNG only (report.html inlines it). SVG copies are on request
#: (``figure_formats=("png", "svg")``, ``--figure-formats png,svg``), now or later from the bundle
#: (``rl-reliable report DIR --figure-formats png,svg``): saving them took a sixth of the main job's CPU.
DEFAULT_FIGURE_FORMATS = ("png",)
#: The figure a tracker's page shows (the MLflow run's description: every algorithm's aggregate metrics with their
#: intervals) and the formats it is always written in, beside those asked for: an SVG keeps its size in points, while
#: a PNG shows at its pixel width, which MLflow's description cannot scale (its sanitiser drops ``width``,
#: ``srcset`` and the size syntax), so a PNG-only chart squeezed the run page. The sinks upload the bundle alone,
#: so the SVG is a file of the bundle.
PAGE_CHART = "interval_estimates"
PAGE_CHART_FORMATS = ("svg",)
_SVG_SALT = "rl_reliable_logger"  # fixed ids in SVG files: same figure, same bytes
#: ``savefig`` keywords per format: fixed metadata (no version, no date), so the files do not change between runs.
_SAVE: dict[str, dict[str, Any]] = {
    "png": {"dpi": PNG_DPI, "metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None}},
}


def check_formats(formats: Sequence[str] | str) -> tuple[str, ...]:
    """``formats`` as a tuple of known, distinct formats in the given order; an :class:`InputError` otherwise.

    Example:
        >>> check_formats("svg,png")
        ('svg', 'png')
    """
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    out: list[str] = []
    for item in items:
        fmt = str(item).strip().lower()
        if fmt not in FIGURE_FORMATS:
            raise InputError(
                said(
                    kw("figure_formats="),
                    f" has {str(item)!r}; the figures can be written as {', '.join(FIGURE_FORMATS)}",
                )
            )
        if fmt not in out:
            out.append(fmt)
    if not out:
        raise InputError(
            said(
                kw("figure_formats="),
                " is empty; name at least one of png, svg (or pass ",
                kw("figures=False"),
                " for tables only)",
            )
        )
    return tuple(out)


def figure_formats(figure: str, formats: Sequence[str]) -> tuple[str, ...]:
    """The formats ``figure`` is written in: ``formats``, and for :data:`PAGE_CHART` :data:`PAGE_CHART_FORMATS` too.

    Example:
        >>> figure_formats("interval_estimates", ("png",)), figure_formats("task_scores", ("png",))
        (('png', 'svg'), ('png',))
    """
    asked = check_formats(formats)
    always = PAGE_CHART_FORMATS if figure == PAGE_CHART else ()
    return asked + tuple(fmt for fmt in always if fmt not in asked)


def export(fig: Figure, formats: Sequence[str]) -> dict[str, bytes]:
    """The figure's bytes in each of ``formats`` (``png`` at :data:`PNG_DPI`, ``svg``), all from one layout.

    Each format is drawn once: the PNG's draw also lays the figure out (its pixels are then cropped to the tight
    box), and the SVG is drawn with the positions that layout computed. The figure keeps them afterwards (its
    layout engine is removed).
    """
    import matplotlib as mpl

    formats = check_formats(formats)
    out: dict[str, bytes] = {}
    if "png" in formats:
        box, png = _draw_png(fig)
        if png is not None:
            out["png"] = png
    else:
        box = freeze_layout(fig, 72)
    with mpl.rc_context({"svg.hashsalt": _SVG_SALT}):
        for fmt in formats:
            if fmt not in out:
                buf = io.BytesIO()
                fig.savefig(buf, format=fmt, bbox_inches=box, **_SAVE[fmt])
                out[fmt] = buf.getvalue()
    return {fmt: out[fmt] for fmt in formats}


def freeze_layout(fig: Figure, dpi: float) -> Bbox:
    """Lay ``fig`` out once at ``dpi`` and return what ``bbox_inches="tight"`` would crop to (inches).

    The layout engine is then removed (the positions it computed stay), so that ``savefig`` with this box
    draws each format once, without laying out and measuring the figure again.
    """
    fig.set_dpi(dpi)
    fig.draw_without_rendering()  # runs the layout engine
    return _tight_box(fig)


def _tight_box(fig: Figure) -> Bbox:
    """What ``bbox_inches="tight"`` crops a laid-out figure to (inches); the layout engine is removed after."""
    import matplotlib as mpl
    from matplotlib.transforms import Bbox

    # Axis labels count whole: matplotlib < 3.11 counts only the part of a label that lies under its axes.
    labels = [
        axis.label.get_window_extent().transformed(fig.dpi_scale_trans.inverted())
        for ax in fig.axes
        if ax.get_visible() and ax.axison
        for axis in (ax.xaxis, ax.yaxis)
        if axis.get_visible() and axis.label.get_visible() and axis.label.get_text()
    ]
    box = Bbox.union([fig.get_tightbbox(), *labels]).padded(mpl.rcParams["savefig.pad_inches"])
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # None, not "none": a placeholder engine would make savefig measure again
    return box


def _draw_png(fig: Figure) -> tuple[Bbox, bytes | None]:
    """(tight box, PNG bytes): one Agg draw at :data:`PNG_DPI` lays the figure out and renders it; the PNG is its
    pixels inside the tight box, the padding beyond the figure's edge in the figure's face colour (what ``savefig``
    draws there), placed to the nearest pixel. None for the bytes when an artist reaches beyond the figure (its
    pixels were not drawn): then ``savefig`` draws the PNG with the box, as for the other formats."""
    import matplotlib as mpl
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba_array

    fig.set_dpi(PNG_DPI)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # runs the layout engine and renders the pixels
    box = _tight_box(fig)
    pad = mpl.rcParams["savefig.pad_inches"]
    inside = box.padded(-pad)
    fig_w, fig_h = fig.get_size_inches()
    if inside.x0 < 0 or inside.y0 < 0 or inside.x1 > fig_w or inside.y1 > fig_h:
        return box, None
    pixels = np.asarray(canvas.buffer_rgba())
    rows, cols = pixels.shape[:2]
    width, height = int(box.width * PNG_DPI), int(box.height * PNG_DPI)  # savefig's size: the box's, truncated
    left, top = int(round(box.x0 * PNG_DPI)), int(round((fig_h - box.y1) * PNG_DPI))
    face = (to_rgba_array(fig.get_facecolor())[0] * 255).round().astype(np.uint8)
    image = np.empty((height, width, 4), dtype=np.uint8)
    image[...] = face
    src_y, src_x = slice(max(top, 0), min(top + height, rows)), slice(max(left, 0), min(left + width, cols))
    dst_y = slice(src_y.start - top, src_y.stop - top)
    dst_x = slice(src_x.start - left, src_x.stop - left)
    image[dst_y, dst_x] = pixels[src_y, src_x]
    buf = io.BytesIO()
    mpl.image.imsave(buf, image, format="png", dpi=PNG_DPI, metadata=_SAVE["png"]["metadata"])
    return box, buf.getvalue()
