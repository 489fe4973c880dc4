"""Agg and SVG canvases whose renderers remember how text was laid out, across draws and figures.

Matplotlib shapes every string again for every measurement and every draw (FreeType and libraqm,
about 20 µs per character), and a figure is measured by its layout, drawn as PNG and drawn again as
SVG; tick labels such as ``0.2`` or an algorithm's name recur in most figures. These renderers keep
the results of the pure steps, keyed by everything they depend on (font files, size, dpi, string,
hinting, features, language):

- the font's ascent, descent and line gap, which ``Text`` otherwise reads from the font's tables
  for every measurement (the renderer hook ``_get_font_height_metrics``);
- a string's width, height and descent;
- the glyphs and positions of a drawn string (PNG) and its glyph outlines (SVG).

The glyphs are still rendered and written as before, so the files are byte-for-byte those of
matplotlib's own renderers (a test compares them). The caches live in this process (a figure worker
draws about half the figures of a report), are emptied when they grow past a bound, and start empty
in a forked child (its parent's font objects are not safe to use there).

Example:
    >>> canvas = agg_canvas(fig)   # doctest: +SKIP
    >>> canvas.draw()              # doctest: +SKIP
"""

from __future__ import annotations

import codecs
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from matplotlib import cbook
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG
from matplotlib.font_manager import fontManager, get_font
from matplotlib.ft2font import LoadFlags
from matplotlib.textpath import TextToPath

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

__all__ = ["CachedRendererAgg", "CachedRendererSVG", "agg_canvas", "clear_caches", "svg_canvas"]

_MAX_ENTRIES = 20_000  # per cache; a report's figures use a few hundred strings
_HEIGHTS: dict[tuple, tuple[float | None, float | None, float | None]] = {}
_AGG_METRICS: dict[tuple, tuple[float, float, float]] = {}
_AGG_LAYOUTS: dict[tuple, tuple[Any, list]] = {}
_PATH_METRICS: dict[tuple, tuple[float, float, float]] = {}
_PATH_GLYPHS: dict[tuple, tuple[Any, list[tuple[str, float, float]]]] = {}
_GLYPH_PATHS: dict[str, Any] = {}
_CACHES = (_HEIGHTS, _AGG_METRICS, _AGG_LAYOUTS, _PATH_METRICS, _PATH_GLYPHS, _GLYPH_PATHS)


def clear_caches() -> None:
    """Forget every cached measurement (tests; a changed font list)."""
    for cache in _CACHES:
        cache.clear()


# A forked child must not use its parent's FT2Font objects: they read the font files through file
# descriptors shared with the parent (matplotlib clears its own font cache in a child for this reason).
if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(after_in_child=clear_caches)


def _remember(cache: dict, key: Any, value: Any) -> Any:
    if len(cache) >= _MAX_ENTRIES:
        cache.clear()
    cache[key] = value
    return value


def _font_files(prop: FontProperties) -> tuple[str, ...]:
    """The font files matplotlib would use for ``prop`` (first choice, then fallbacks)."""
    return tuple(fontManager._find_fonts_by_props(prop))


def _height_metrics(prop: FontProperties, dpi: float) -> tuple[float | None, float | None, float | None]:
    """What ``Text._get_layout`` computes from the font's tables: ascent, descent and line gap in pixels."""
    files = _font_files(prop)
    size = prop.get_size_in_points()
    key = (files, size, dpi, threading.get_ident())
    if (hit := _HEIGHTS.get(key)) is not None:
        return hit
    font: Any = get_font(list(files))
    out: tuple[float | None, float | None, float | None] = (None, None, None)
    for table_name, gap_key, ascent_key, descent_key in (
        ("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
        ("hhea", "lineGap", "ascent", "descent"),
    ):
        table = font.get_sfnt_table(table_name)
        if table is None:
            continue
        units_per_em = font.get_sfnt_table("head")["unitsPerEm"]
        scale = 1 / units_per_em * size * dpi / 72
        out = (table[ascent_key] * scale, -table[descent_key] * scale, table[gap_key] * scale)
        break
    return _remember(_HEIGHTS, key, out)


class CachedRendererAgg(RendererAgg):
    """:class:`RendererAgg` that reuses font metrics, string measurements and glyph layouts."""

    def _get_font_height_metrics(self, prop: FontProperties) -> tuple[float | None, float | None, float | None]:
        return _height_metrics(prop, self.dpi)

    def get_text_width_height_descent(self, s: str, prop: FontProperties, ismath: Any) -> tuple[float, float, float]:
        if ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (_font_files(prop), prop.get_size_in_points(), self.dpi, s, get_hinting_flag(), threading.get_ident())
        if (hit := _AGG_METRICS.get(key)) is not None:
            return hit
        return _remember(_AGG_METRICS, key, super().get_text_width_height_descent(s, prop, ismath))

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        size = prop.get_size_in_points()
        flags = get_hinting_flag()
        key = (_font_files(prop), size, self.dpi, s, flags, features, language, threading.get_ident())
        if (hit := _AGG_LAYOUTS.get(key)) is None:
            font = self._prepare_font(prop)
            items = list(font._layout(s, flags=flags, features=features, language=language))
            hit = _remember(_AGG_LAYOUTS, key, (font, items))  # the font is kept: its glyphs are in the items
        glyphs = ((item.ft_object, size, item.glyph_index, 0, 1, item.x, item.y) for item in hit[1])
        self._draw_text_glyphs_and_boxes(gc, x, y, angle, glyphs, [])


class _CachedTextToPath(TextToPath):
    """:class:`TextToPath` (the SVG renderer's text outlines) that reuses measurements and glyph outlines."""

    def get_text_width_height_descent(self, s: str, prop: FontProperties, ismath: Any) -> tuple[float, float, float]:
        if ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (_font_files(prop), s, threading.get_ident())
        if (unit := _PATH_METRICS.get(key)) is None:
            font = self._get_font(prop)  # type: ignore[attr-defined]  # measured at FONT_SCALE; scaled to the text's size below
            font.set_text(s, 0.0, flags=LoadFlags.NO_HINTING)
            w, h = font.get_width_height()
            unit = _remember(_PATH_METRICS, key, (w / 64.0, h / 64.0, font.get_descent() / 64.0))
        scale = prop.get_size_in_points() / self.FONT_SCALE
        return unit[0] * scale, unit[1] * scale, unit[2] * scale

    def get_glyphs_with_font(
        self, font, s, glyph_map=None, return_new_glyphs_only=False, *, features=None, language=None
    ):
        from matplotlib import _text_helpers

        if glyph_map is None:
            glyph_map = OrderedDict()
        glyph_map_new = OrderedDict() if return_new_glyphs_only else glyph_map
        key = (id(font), s, features, language, threading.get_ident())
        if (hit := _PATH_GLYPHS.get(key)) is None or hit[0] is not font:
            placed = []
            for item in _text_helpers.layout(s, font, features=features, language=language):
                glyph_repr = self._get_glyph_repr(item.ft_object, item.glyph_index)  # type: ignore[attr-defined]
                if glyph_repr not in _GLYPH_PATHS:
                    _remember(_GLYPH_PATHS, glyph_repr, item.ft_object.get_path())
                placed.append((glyph_repr, item.x, item.y))
            hit = _remember(_PATH_GLYPHS, key, (font, placed))  # the font is kept, so its id stays its own
        glyph_info = []
        for glyph_repr, x, y in hit[1]:
            if glyph_repr not in glyph_map:
                glyph_map_new[glyph_repr] = _GLYPH_PATHS.get(glyph_repr)
                if glyph_map_new[glyph_repr] is None:  # the outline cache was emptied meanwhile
                    return super().get_glyphs_with_font(
                        font,
                        s,
                        glyph_map=glyph_map,
                        return_new_glyphs_only=return_new_glyphs_only,
                        features=features,
                        language=language,
                    )
            glyph_info.append((glyph_repr, x, y, 1.0))
        return glyph_info, glyph_map_new, []


_TEXT_TO_PATH = _CachedTextToPath()


class CachedRendererSVG(RendererSVG):
    """:class:`RendererSVG` whose text outlines and measurements come from the shared caches."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._text2path = _TEXT_TO_PATH

    def _get_font_height_metrics(self, prop: FontProperties) -> tuple[float | None, float | None, float | None]:
        return _height_metrics(prop, 72.0)  # an SVG is drawn at 72 dpi (print_svg sets the figure's dpi)


class _AggCanvas(FigureCanvasAgg):
    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = CachedRendererAgg(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


class _SVGCanvas(FigureCanvasSVG):
    def print_svg(
        self, filename, *, bbox_inches_restore=None, metadata=None, **_ignored
    ):  # ``_ignored``: dpi, facecolor, ... that print_figure passes to every format (and already applied)
        """:meth:`FigureCanvasSVG.print_svg`, drawn by :class:`CachedRendererSVG`."""
        with cbook.open_file_cm(filename, "w", encoding="utf-8") as stream:
            fh: Any = stream if cbook.file_requires_unicode(stream) else codecs.getwriter("utf-8")(stream)
            dpi = self.figure.dpi
            self.figure.dpi = 72
            width, height = self.figure.get_size_inches()
            w, h = width * 72, height * 72
            renderer: Any = MixedModeRenderer(
                self.figure,
                width,
                height,
                dpi,
                CachedRendererSVG(w, h, fh, image_dpi=dpi, metadata=metadata),
                bbox_inches_restore=bbox_inches_restore,
            )
            self.figure.draw(renderer)
            renderer.finalize()


def agg_canvas(fig: Figure) -> FigureCanvasAgg:
    """``fig``'s canvas if it is already an Agg canvas, else a caching Agg canvas attached to ``fig``."""
    return fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else _AggCanvas(fig)


def svg_canvas(fig: Figure) -> FigureCanvasSVG:
    """A caching SVG canvas attached to ``fig`` (the caller restores the previous canvas)."""
    return _SVGCanvas(fig)
