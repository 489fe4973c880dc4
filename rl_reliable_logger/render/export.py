"""Save a figure as PNG and/or SVG bytes through ``Figure.savefig``, the same bytes on every run.

The figure is laid out once (its layout engine runs, then is removed so the positions stay) and its
tight bounding box measured once; each format is then one ``savefig`` call cropped to that box, so
every format shows the same layout. Nothing that changes from run to run is written: PNGs carry no
software version, SVGs no date and fixed element ids (``svg.hashsalt``).

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

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

__all__ = ["FIGURE_FORMATS", "PNG_DPI", "check_formats", "export", "freeze_layout"]

PNG_DPI = 130
#: Formats the results writer can produce; report.html inlines the PNG when there is one, else the SVG.
FIGURE_FORMATS = ("png", "svg")
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
                f"`figure_formats=` has {str(item)!r}; the figures can be written as {', '.join(FIGURE_FORMATS)}"
            )
        if fmt not in out:
            out.append(fmt)
    if not out:
        raise InputError(
            "`figure_formats=` is empty; name at least one of png, svg (or pass `figures=False` for tables only)"
        )
    return tuple(out)


def export(fig: Figure, formats: Sequence[str]) -> dict[str, bytes]:
    """The figure's bytes in each of ``formats`` (``png`` at :data:`PNG_DPI`, ``svg``), all from one layout.

    The figure keeps the computed positions afterwards (its layout engine is removed).
    """
    import matplotlib as mpl

    formats = check_formats(formats)
    box = freeze_layout(fig, PNG_DPI if "png" in formats else 72)
    out: dict[str, bytes] = {}
    with mpl.rc_context({"svg.hashsalt": _SVG_SALT}):
        for fmt in formats:
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches=box, **_SAVE[fmt])
            out[fmt] = buf.getvalue()
    return out


def freeze_layout(fig: Figure, dpi: float) -> Bbox:
    """Lay ``fig`` out once at ``dpi`` and return what ``bbox_inches="tight"`` would crop to (inches).

    The layout engine is then removed (the positions it computed stay), so that ``savefig`` with this box
    draws each format once, without laying out and measuring the figure again.
    """
    import matplotlib as mpl
    from matplotlib.transforms import Bbox

    fig.set_dpi(dpi)
    fig.draw_without_rendering()  # runs the layout engine
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
