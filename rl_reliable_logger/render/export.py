"""Save one figure in every requested format from a single layout pass.

``savefig(..., bbox_inches="tight")`` lays a figure out and draws it twice per call (a dry run to
measure, then the real draw), so PNG + SVG cost four layout-and-draw passes and two constrained
layouts. Here the layout engine runs once, the tight bounding box is measured once, the layout is
frozen, and each format is one plain draw cropped to that box: the files look as before (same
layout, same crop and padding) at about half the cost. The PNG is drawn on the very canvas the
layout was measured on (its text measurements are reused) and cropped to whole pixels; only a
figure whose drawing reaches outside its canvas goes through ``savefig``'s larger canvas.

Example:
    >>> files = export(fig, ("png", "svg"))   # doctest: +SKIP
    >>> files["png"][:4]                       # doctest: +SKIP
    b'\\x89PNG'
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

__all__ = ["FIGURE_FORMATS", "PNG_DPI", "check_formats", "encode_png", "export", "freeze_layout"]

PNG_DPI = 130
#: Formats the results writer can produce; report.html inlines the PNG when there is one, else the SVG.
FIGURE_FORMATS = ("png", "svg")
_PAD_INCHES = 0.1  # rcParams["savefig.pad_inches"], what bbox_inches="tight" adds around the drawing
_SVG_SALT = "rl_reliable_logger"  # fixed ids in SVG files: same figure, same bytes
# zlib level 3 instead of PIL's 6: the same pixels, encoded in about two thirds of the time, files ~10% larger.
_PNG_COMPRESS_LEVEL = 3


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
                f"`figure_formats=` has {str(item)!r}; the figures can be written as {', '.join(FIGURE_FORMATS)}"
            )
        if fmt not in out:
            out.append(fmt)
    if not out:
        raise InputError(
            "`figure_formats=` is empty; name at least one of png, svg (or pass `figures=False` for tables only)"
        )
    return tuple(out)


def freeze_layout(fig: Figure) -> Bbox:
    """Run the figure's layout engine once, measure the padded tight box (inches), then drop the engine.

    Later draws reuse the computed positions, so every format shows the same layout.
    """
    import matplotlib as mpl

    from .canvas import agg_canvas

    canvas = agg_canvas(fig)  # its renderer reuses text measurements (:mod:`.canvas`)
    fig.set_dpi(PNG_DPI)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    _freeze_ticks(fig)
    box = fig.get_tightbbox(canvas.get_renderer()).padded(_PAD_INCHES)
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # keep the positions just computed
    return box


def _freeze_ticks(fig: Figure) -> None:
    """Replace each axis's tick locator and formatter by the ticks and labels they give now.

    Every later measurement and draw (tight box, PNG, SVG) would ask the locator and formatter
    again for the same answer: the ticks depend on the axis length in points, not on the format.
    """
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_locator(), (NullLocator, FixedLocator)):
                continue
            locs: Any = axis.get_majorticklocs()  # an array, as Axis._update_ticks passes it
            formatter = axis.get_major_formatter()
            labels = formatter.format_ticks(locs)
            frozen = FixedFormatter(labels)
            frozen.set_offset_string(formatter.get_offset())
            axis.set_major_locator(FixedLocator(locs))
            axis.set_major_formatter(frozen)


def _png_from_layout_canvas(fig: Figure, box: Bbox) -> bytes | None:
    """The PNG drawn on the canvas the layout was measured on, cropped to ``box`` (whole pixels); ``None``
    when the box reaches outside the figure (then ``savefig`` draws a larger canvas).

    ``savefig(bbox_inches=box)`` would draw on a new renderer of the box's size, which measures every
    text again; the layout's renderer already holds those measurements. The crop is rounded to whole
    pixels, so the picture sits at most half a pixel from where ``savefig`` would put it. The pixels
    go to PIL straight from the canvas (no copies through numpy when the crop lies on the canvas).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba
    from PIL import Image

    canvas = fig.canvas
    if not isinstance(canvas, FigureCanvasAgg) or fig.dpi != PNG_DPI:  # pragma: no cover - freeze_layout sets both
        return None
    width, height = canvas.get_width_height(physical=True)
    box_w, box_h = int(box.width * PNG_DPI), int(box.height * PNG_DPI)  # the size savefig would give
    left = round(box.x0 * PNG_DPI)
    top = round(height - box.y0 * PNG_DPI - box_h)
    inside = box.padded(-_PAD_INCHES)  # the drawing itself must lie on the canvas
    if (
        box_w < 1
        or box_h < 1
        or inside.x0 < 0
        or inside.y0 < 0
        or inside.x1 > width / PNG_DPI
        or inside.y1 > height / PNG_DPI
    ):
        return None
    canvas.draw()
    drawn = np.asarray(canvas.buffer_rgba())
    r0, c0 = max(top, 0), max(left, 0)  # the part of the box that lies on the canvas
    r1, c1 = min(top + box_h, height), min(left + box_w, width)
    on_canvas = drawn[r0:r1, c0:c1]
    face = np.round(np.asarray(to_rgba(fig.get_facecolor())) * 255).astype(np.uint8)
    padded = (r0, c0, r1, c1) != (top, left, top + box_h, left + box_w)
    opaque = bool((on_canvas.view("<u4") >= 0xFF000000).all()) and (face[3] == 255 or not padded)
    channels = 3 if opaque else 4
    raw = np.empty((box_h, 1 + box_w * channels), np.uint8)
    raw[:, 0] = 0  # each row's PNG filter type: none
    pixels = raw[:, 1:].reshape(box_h, box_w, channels)
    # the padding past the canvas edge has the figure's colour, as savefig pads (only the margins are filled)
    for rows, cols in (
        (slice(0, r0 - top), slice(None)),
        (slice(r1 - top, None), slice(None)),
        (slice(r0 - top, r1 - top), slice(0, c0 - left)),
        (slice(r0 - top, r1 - top), slice(c1 - left, None)),
    ):
        pixels[rows, cols] = face[:channels]
    if r1 > r0 and c1 > c0:
        if opaque:  # drop the alpha channel in C: a strided numpy copy of 3 bytes in 4 costs as much as deflate
            rgb = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
            on_canvas = np.asarray(rgb.crop((c0, r0, c1, r1)).convert("RGB"))
        pixels[r0 - top : r1 - top, c0 - left : c1 - left] = on_canvas
    return _png_file(raw, box_w, box_h, channels, PNG_DPI)


def encode_png(pixels: np.ndarray, dpi: float) -> bytes:
    """A PNG of ``pixels`` (rows × columns × RGBA, ``uint8``), as RGB when every pixel is opaque.

    Example:
        >>> encode_png(np.full((1, 1, 4), 255, np.uint8), 72)[1:4]
        b'PNG'
    """
    rows, cols = pixels.shape[:2]
    channels = 3 if bool((pixels[..., 3] == 255).all()) else 4
    raw = np.empty((rows, 1 + cols * channels), np.uint8)
    raw[:, 0] = 0
    raw[:, 1:].reshape(rows, cols, channels)[...] = pixels[..., :channels]
    return _png_file(raw, cols, rows, channels, dpi)


def _png_file(raw: np.ndarray, cols: int, rows: int, channels: int, dpi: float) -> bytes:
    """The PNG file of ``raw`` (each row: its filter type byte, 0, then RGB or RGBA samples).

    Every row is stored unfiltered (PNG filter type 0) and deflated at level 3. PIL tries the five
    PNG filters on every row to pick one, which costs about twice the compression itself; a figure's
    large flat areas compress as well or better without filtering (task grid of the main job:
    45 ms and 255 kB with PIL, 14 ms and 213 kB here). The pixels are the same either way.
    """
    per_metre = int(dpi / 0.0254 + 0.5)  # as PIL writes savefig's dpi

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    colour_type = 2 if channels == 3 else 6  # RGB or RGBA, 8 bits per sample
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8, colour_type, 0, 0, 0)),
            chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
            chunk(b"IDAT", zlib.compress(raw.data, _PNG_COMPRESS_LEVEL)),
            chunk(b"IEND", b""),
        )
    )


def _png_from_savefig(fig: Figure, box: Bbox) -> bytes:
    """The PNG of ``box`` drawn by ``savefig`` on a canvas of the box's size (raw RGBA, then :func:`encode_png`)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="rgba", dpi=PNG_DPI, bbox_inches=box)
    raw = buf.getvalue()
    box_w, box_h = int(box.width * PNG_DPI), int(box.height * PNG_DPI)
    if len(raw) != box_w * box_h * 4:  # pragma: no cover - a size savefig's PNG would not have: let PIL write it
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=PNG_DPI, bbox_inches=box, metadata={"Software": None})
        return buf.getvalue()
    return encode_png(np.frombuffer(raw, np.uint8).reshape(box_h, box_w, 4), PNG_DPI)


def export(fig: Figure, formats: Sequence[str]) -> dict[str, bytes]:
    """The figure's bytes in each of ``formats`` (``png`` at :data:`PNG_DPI`, ``svg``), from one layout.

    File metadata that would change from run to run (dates, software versions) is left out.
    """
    import matplotlib as mpl

    from .canvas import svg_canvas

    box = freeze_layout(fig)
    out: dict[str, bytes] = {}
    for fmt in formats:
        buf = io.BytesIO()
        if fmt == "svg":
            layout_canvas = fig.canvas
            svg_canvas(fig)  # draws with the text caches of :mod:`.canvas`; the same bytes as savefig's
            try:
                with mpl.rc_context({"svg.hashsalt": _SVG_SALT}):
                    fig.savefig(buf, format="svg", bbox_inches=box, metadata={"Date": None})
            finally:
                fig.set_canvas(layout_canvas)
        elif fmt == "png" and (png := _png_from_layout_canvas(fig, box)) is not None:
            buf.write(png)
        elif fmt == "png":  # the drawing reaches outside the canvas: savefig draws the box on a canvas of its own
            buf.write(_png_from_savefig(fig, box))
        else:
            raise InputError(f"`figure_formats` has {fmt!r}; the figures can be written as {', '.join(FIGURE_FORMATS)}")
        out[fmt] = buf.getvalue()
    return out
