"""The per-task strip grid drawn as plain figure artists instead of one matplotlib Axes per task.

With 26 or 57 tasks, a real Axes per panel costs seconds per saved format (every Axes carries its
own tick machinery, spines and layout passes). This module draws what those Axes would show
(same panel geometry, limits, ticks, tick labels, grid, spines and titles, computed with
matplotlib's own locator and formatter) with one collection per kind of mark and one text per
label, which draws about ten times faster and looks the same.

Example:
    >>> fig = strip_grid(panels, colors, ncols=6, ylabel="score", n_algorithms=2)   # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["Panel", "PanelScale", "Strip", "grid_geometry", "panel_scale", "strip_grid"]

_MARGIN = 0.05  # rcParams["axes.xmargin"/"axes.ymargin"]
_TICK_LEN = 3.5  # points, rcParams["ytick.major.size"]
_TICK_PAD = 3.5  # points, rcParams["ytick.major.pad"]
_TITLE_PAD = 6.0  # points, rcParams["axes.titlepad"]
_LINE = 0.8  # points, spines and tick marks


@dataclass
class Strip:
    """One algorithm's runs on one task: x position of the strip, jittered x of each dot, scores."""

    x: float
    jitter: np.ndarray
    scores: np.ndarray
    color: str
    size: float = 9.0  # marker area, points²


@dataclass
class Panel:
    """One task: its label (already escaped for matplotlib) and one strip per algorithm with data."""

    title: str
    strips: list[Strip] = field(default_factory=list)


def grid_geometry(n_panels: int, n_algorithms: int, ncols: int) -> tuple[tuple[float, float], list[tuple]]:
    """Figure size (inches) and each panel's (left, bottom, width, height) in figure fractions.

    The fixed margins the Axes version used with ``subplots_adjust``: room for the score label on
    the left, the title on top and the legend rows at the bottom.
    """
    nrows = math.ceil(n_panels / ncols)
    legend_rows = math.ceil(n_algorithms / min(n_algorithms, max(ncols, 4)))
    bottom_in = 0.35 + 0.22 * legend_rows
    width = 2.3 * ncols + 0.9
    height = 1.9 * nrows + 0.7 + bottom_in
    left, right, top, bottom = 0.75 / width, 0.98, 1 - 0.65 / height, bottom_in / height
    wspace = hspace = (0.35, 0.45)
    cell_w = (right - left) / (ncols + wspace[0] * (ncols - 1))
    cell_h = (top - bottom) / (nrows + hspace[1] * (nrows - 1))
    boxes = []
    for i in range(n_panels):
        r, c = divmod(i, ncols)
        x0 = left + c * cell_w * (1 + wspace[0])
        y1 = top - r * cell_h * (1 + hspace[1])
        boxes.append((x0, y1 - cell_h, cell_w, cell_h))
    return (width, height), boxes


def _limits(lo: float, hi: float) -> tuple[float, float]:
    """Autoscaled view limits as an Axes computes them: non-singular, then a 5% margin each side."""
    from matplotlib.ticker import Locator

    lo, hi = Locator().nonsingular(lo, hi)
    pad = (hi - lo) * _MARGIN
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, length_pt: float, label_pt: float) -> tuple[list[float], list[str], str]:
    """Major y ticks, their labels and the offset text, as an Axes' AutoLocator/ScalarFormatter give them."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    nbins = int(np.clip(math.floor(length_pt / (label_pt * 2)), 1, 9))  # YAxis.get_tick_space
    locator = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10])
    locs = locator.tick_values(lo, hi)
    fmt = ScalarFormatter()
    fmt.create_dummy_axis()
    assert fmt.axis is not None
    fmt.axis.set_view_interval(lo, hi)
    labels = fmt.format_ticks(list(locs))
    tol = 1e-10 * (hi - lo)
    keep = [(float(v), s) for v, s in zip(locs, labels) if lo - tol <= v <= hi + tol]
    return [v for v, _ in keep], [s for _, s in keep], fmt.get_offset()


@dataclass
class PanelScale:
    """What an Axes would show for a panel: x and y view limits, y ticks, their labels, the offset text."""

    xlim: tuple[float, float]
    ylim: tuple[float, float]
    ticks: list[float]
    labels: list[str]
    offset: str


def panel_scale(panel: Panel, height_pt: float, *, half_width: float = 0.4) -> PanelScale:
    """Autoscaled limits and y ticks of a panel ``height_pt`` points tall, as an Axes holding its
    dots and mean ticks would compute them (tick labels in ``x-small``)."""
    from matplotlib.font_manager import FontProperties

    xs = [s.x + j for s in panel.strips for j in s.jitter] + [
        s.x + d for s in panel.strips if s.scores.size for d in (-half_width, half_width)
    ]
    ys = [v for s in panel.strips for v in s.scores]
    xlim = _limits(min(xs), max(xs)) if xs else (0.0, 1.0)
    ylim = _limits(min(ys), max(ys)) if ys else (0.0, 1.0)
    label_pt = FontProperties(size="x-small").get_size_in_points()
    ticks, labels, offset = _ticks(*ylim, height_pt, label_pt)
    return PanelScale(xlim, ylim, ticks, labels, offset)


def _measured_lines_class() -> type:
    from matplotlib.collections import LineCollection
    from matplotlib.transforms import Bbox

    class MeasuredLines(LineCollection):
        """Lines whose extent counts for ``bbox_inches="tight"`` (a figure-level collection reports none)."""

        def get_window_extent(self, renderer=None):
            return Bbox.union([p.get_extents(self.get_transform()) for p in self.get_paths()])

    return MeasuredLines


def strip_grid(
    panels: Sequence[Panel],
    *,
    ncols: int,
    n_algorithms: int,
    half_width: float = 0.4,
) -> tuple[Figure, list[tuple]]:
    """Draw each panel's dots and mean ticks, axes lines, y grid, ticks and title; return (figure, boxes).

    The caller adds the figure-level legend, score label and title. ``half_width`` is half the
    length of a mean tick in data units.
    """
    import matplotlib as mpl
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.markers import TICKLEFT, MarkerStyle
    from matplotlib.transforms import IdentityTransform, ScaledTranslation

    _MeasuredLines = _measured_lines_class()
    size, boxes = grid_geometry(len(panels), n_algorithms, ncols)
    fig = Figure(figsize=size)
    fig_h_pt = size[1] * 72
    grid_color = mpl.rcParams["grid.color"]

    dots: dict[tuple[str, float], list[np.ndarray]] = {}  # one collection per colour and size, as scatter draws
    means, grids, spines, tick_x, tick_y = [], [], [], [], []
    pts_left = ScaledTranslation(-(_TICK_LEN + _TICK_PAD) / 72, 0, fig.dpi_scale_trans)
    pts_up = ScaledTranslation(0, _TITLE_PAD / 72, fig.dpi_scale_trans)
    for panel, (x0, y0, w, h) in zip(panels, boxes):
        scale = panel_scale(panel, h * fig_h_pt, half_width=half_width)
        (xlo, xhi), (ylo, yhi) = scale.xlim, scale.ylim

        def fx(x: np.ndarray | float, x0=x0, w=w, xlo=xlo, xhi=xhi) -> np.ndarray:
            return x0 + (np.asarray(x, float) - xlo) / (xhi - xlo) * w

        def fy(y: np.ndarray | float, y0=y0, h=h, ylo=ylo, yhi=yhi) -> np.ndarray:
            return y0 + (np.asarray(y, float) - ylo) / (yhi - ylo) * h

        for s in panel.strips:
            if not s.scores.size:
                continue
            dots.setdefault((s.color, s.size), []).append(np.column_stack([fx(s.x + s.jitter), fy(s.scores)]))
            m = float(fy(s.scores.mean()))
            means.append([(float(fx(s.x - half_width)), m), (float(fx(s.x + half_width)), m)])
        for v, text in zip(scale.ticks, scale.labels):
            yv = float(fy(v))
            grids.append([(x0, yv), (x0 + w, yv)])
            tick_x.append(x0)
            tick_y.append(yv)
            fig.text(
                x0, yv, text, transform=fig.transFigure + pts_left, ha="right", va="center_baseline", fontsize="x-small"
            )
        if scale.offset:
            fig.text(
                x0, y0 + h, scale.offset, transform=fig.transFigure + pts_up, ha="left", va="bottom", fontsize="x-small"
            )
        spines.append([(x0, y0 + h), (x0, y0), (x0 + w, y0)])
        fig.text(
            x0 + w / 2,
            y0 + h,
            panel.title,
            transform=fig.transFigure + pts_up,
            ha="center",
            va="baseline",
            fontsize="small",
        )

    # drawing order as in the Axes: grid below, dots, mean ticks, then the axis lines and tick marks
    fig.add_artist(LineCollection(grids, colors=grid_color, linewidths=0.8, alpha=0.25, zorder=0.5))
    marker = MarkerStyle("o")
    for (color, area), xy in dots.items():
        collection = PathCollection(
            (marker.get_path().transformed(marker.get_transform()),),
            sizes=[area],
            offsets=np.concatenate(xy),
            offset_transform=fig.transFigure,
            facecolors=[to_rgba(color, 0.75)],
            edgecolors="face",
            linewidths=0,
            zorder=1,
        )
        collection.set_transform(IdentityTransform())
        fig.add_artist(collection)
    fig.add_artist(LineCollection(means, colors="k", linewidths=1.5, zorder=2))
    fig.add_artist(
        _MeasuredLines(spines, colors="k", linewidths=_LINE, zorder=2.5, joinstyle="miter", capstyle="projecting")
    )
    fig.add_artist(
        Line2D(
            tick_x,
            tick_y,
            transform=fig.transFigure,
            linestyle="",
            marker=MarkerStyle(TICKLEFT),
            markersize=_TICK_LEN,
            markeredgewidth=_LINE,
            color="k",
            zorder=2.5,
        )
    )
    return fig, boxes
