"""rliable 1.2's ``plot_utils`` figures, drawn with matplotlib's public API (no seaborn).

The functions take rliable's arguments and return what rliable's return (an ``Axes``, or ``(fig, axes)`` for
:func:`plot_interval_estimates`), so they draw from the drop-in's dicts of estimates, not from a Report. Unlike
the Report figures (:mod:`.figures`, pyplot-free), a new figure here is made with ``pyplot.subplots``, as
rliable's are: scripts written for rliable call ``plt.show()`` or ``plt.savefig`` on it. Colours: the
``colorblind`` palette (seaborn's ten colours, typed below) or any matplotlib colormap name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

#: seaborn's "colorblind" palette (its default in rliable), so figures keep rliable's colours.
COLORBLIND = (
    "#0173b2",
    "#de8f05",
    "#029e73",
    "#d55e00",
    "#cc78bc",
    "#ca9161",
    "#fbafe4",
    "#949494",
    "#ece133",
    "#56b4e9",
)


def palette_colors(name: str | Sequence[Any], n_colors: int) -> list[Any]:
    """``n_colors`` colours of a palette: ``colorblind``, a matplotlib colormap name or a list (cycled)."""
    if not isinstance(name, str):
        colors = list(name)
    elif name == "colorblind":
        colors = list(COLORBLIND)
    elif name in matplotlib.colormaps:
        cmap = matplotlib.colormaps[name]
        count = getattr(cmap, "N", 256)
        if count <= 20:  # a qualitative map: its own colours in order
            colors = [cmap(i) for i in range(count)]
        else:
            colors = [cmap(x) for x in np.linspace(0, 1, max(n_colors, 1))]
    else:
        raise ValueError(f"unknown color_palette {name!r}: use 'colorblind', a matplotlib colormap name or a list")
    return [colors[i % len(colors)] for i in range(n_colors)]


def _non_linear_scaling(
    performance_profiles: Mapping[str, np.ndarray],
    tau_list: Sequence[float] | np.ndarray,
    xticklabels: Sequence[float] | None = None,
    num_points: int = 5,
    log_base: float = 2,
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """x positions proportional to the share of runs below each τ (one minus the mean profile), the tick
    positions and their labels (``num_points`` log-spaced thresholds unless ``xticklabels`` are given)."""
    profiles = np.array([np.asarray(p, dtype=float) for p in performance_profiles.values()])
    positions = 1.0 - profiles.mean(axis=0)
    if xticklabels is None:
        picks = np.int32(np.logspace(0, np.log2(len(tau_list) - 1), num=num_points, base=log_base))
        xticklabels = [tau_list[i] for i in picks]
    else:
        taus = list(tau_list)
        picks = np.array([taus.index(x) for x in xticklabels])
    return positions, positions[picks], list(xticklabels)


def _decorate_axis(ax: Axes, wrect: float = 10, hrect: float = 10, ticklabelsize: Any = "large") -> Axes:
    """rliable's axis style: no top/right spines, thick left/bottom ones moved outward, tiny ticks."""
    ax.spines["right"].set_visible(False)
    ax.spines["top"].set_visible(False)
    ax.spines["left"].set_linewidth(2)
    ax.spines["bottom"].set_linewidth(2)
    ax.tick_params(length=0.1, width=0.1, labelsize=ticklabelsize)
    ax.spines["left"].set_position(("outward", hrect))
    ax.spines["bottom"].set_position(("outward", wrect))
    return ax


def _annotate_and_decorate_axis(
    ax: Axes,
    labelsize: Any = "x-large",
    ticklabelsize: Any = "x-large",
    xticks: Sequence[float] | None = None,
    xticklabels: Sequence[Any] | None = None,
    yticks: Sequence[float] | None = None,
    legend: bool = False,
    grid_alpha: float = 0.2,
    legendsize: Any = "x-large",
    xlabel: str = "",
    ylabel: str = "",
    wrect: float = 10,
    hrect: float = 10,
) -> Axes:
    """Labels, ticks, a light grid and (optionally) a legend, then :func:`_decorate_axis`."""
    ax.set_xlabel(xlabel, fontsize=labelsize)
    ax.set_ylabel(ylabel, fontsize=labelsize)
    if xticks is not None:
        ax.set_xticks(list(xticks))
        ax.set_xticklabels([str(t) for t in (xticklabels if xticklabels is not None else xticks)])
    if yticks is not None:
        ax.set_yticks(list(yticks))
    ax.grid(True, alpha=grid_alpha)
    _decorate_axis(ax, wrect=wrect, hrect=hrect, ticklabelsize=ticklabelsize)
    if legend:
        ax.legend(fontsize=legendsize)
    return ax


def _colors_for(keys: Sequence[str], colors: Mapping[str, Any] | None, palette: Any) -> Mapping[str, Any]:
    return colors if colors is not None else dict(zip(keys, palette_colors(palette, len(keys))))


def plot_performance_profiles(
    performance_profiles: Mapping[str, np.ndarray],
    tau_list: Sequence[float] | np.ndarray,
    performance_profile_cis: Mapping[str, np.ndarray] | None = None,
    use_non_linear_scaling: bool = False,
    ax: Axes | None = None,
    colors: Mapping[str, Any] | None = None,
    color_palette: Any = "colorblind",
    alpha: float = 0.15,
    figsize: tuple[float, float] = (10, 5),
    xticks: Sequence[float] | None = None,
    yticks: Sequence[float] | None = None,
    xlabel: str = r"Normalized Score ($\tau$)",
    ylabel: str = r"Fraction of runs with score $> \tau$",
    linestyles: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> Axes:
    """Performance profiles (one line per key) with their confidence bands; returns the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    keys = list(performance_profiles)
    colors = _colors_for(keys, colors, color_palette)
    linestyles = linestyles or {key: "solid" for key in keys}
    x: Any = tau_list
    ticks: Any = xticks
    xticklabels: Any = xticks
    if use_non_linear_scaling:
        x, ticks, xticklabels = _non_linear_scaling(performance_profiles, tau_list, xticks)
    linewidth = kwargs.pop("linewidth", 2.0)
    for key, profile in performance_profiles.items():
        ax.plot(x, profile, color=colors[key], linestyle=linestyles[key], linewidth=linewidth, label=key)
        if performance_profile_cis is not None and key in performance_profile_cis:
            lower, upper = performance_profile_cis[key]
            ax.fill_between(x, lower, upper, color=colors[key], alpha=alpha)
    return _annotate_and_decorate_axis(
        ax,
        xticks=ticks,
        yticks=[0.0, 0.25, 0.5, 0.75, 1.0] if yticks is None else yticks,
        xticklabels=xticklabels,
        xlabel=xlabel,
        ylabel=ylabel,
        **kwargs,
    )


def plot_interval_estimates(
    point_estimates: Mapping[str, Sequence[float] | np.ndarray],
    interval_estimates: Mapping[str, np.ndarray],
    metric_names: Sequence[str],
    algorithms: Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    color_palette: Any = "colorblind",
    max_ticks: int = 4,
    subfigure_width: float = 3.4,
    row_height: float = 0.37,
    xlabel_y_coordinate: float = -0.1,
    xlabel: str = "Normalized Score",
    **kwargs: Any,
) -> tuple[Any, Any]:
    """One panel per metric, a bar per algorithm spanning its interval and a tick at its point estimate;
    returns ``(fig, axes)`` (a single Axes when there is one metric)."""
    algorithms = list(point_estimates) if algorithms is None else list(algorithms)
    num_metrics = len(point_estimates[algorithms[0]])
    fig, axes = plt.subplots(
        nrows=1, ncols=num_metrics, figsize=(subfigure_width * num_metrics, row_height * len(algorithms))
    )
    colors = _colors_for(algorithms, colors, color_palette)
    h = kwargs.pop("interval_height", 0.6)
    for idx, metric_name in enumerate(metric_names):
        ax = axes[idx] if num_metrics > 1 else axes
        for row, algorithm in enumerate(algorithms):
            lower, upper = np.asarray(interval_estimates[algorithm])[:, idx]
            ax.barh(
                y=row, width=upper - lower, height=h, left=lower, color=colors[algorithm], alpha=0.75, label=algorithm
            )
            ax.vlines(
                x=point_estimates[algorithm][idx],
                ymin=row - 7.5 * h / 16,
                ymax=row + 6 * h / 16,
                label=algorithm,
                color="k",
                alpha=0.5,
            )
        ax.set_yticks(list(range(len(algorithms))))
        ax.xaxis.set_major_locator(MaxNLocator(max_ticks))
        if idx != 0:
            ax.set_yticks([])
        else:
            ax.set_yticklabels(algorithms, fontsize="x-large")
        ax.set_title(metric_name, fontsize="xx-large")
        ax.tick_params(axis="both", which="major")
        _decorate_axis(ax, ticklabelsize="xx-large", wrect=5)
        ax.spines["left"].set_visible(False)
        ax.grid(True, axis="x", alpha=0.25)
    fig.text(0.4, xlabel_y_coordinate, xlabel, ha="center", fontsize="xx-large")
    fig.subplots_adjust(wspace=kwargs.pop("wspace", 0.11), left=0.0)
    return fig, axes


def plot_sample_efficiency_curve(
    frames: Sequence[float] | np.ndarray,
    point_estimates: Mapping[str, np.ndarray],
    interval_estimates: Mapping[str, np.ndarray],
    algorithms: Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    color_palette: Any = "colorblind",
    figsize: tuple[float, float] = (7, 5),
    xlabel: str = r"Number of Frames (in millions)",
    ylabel: str = "Aggregate Human Normalized Score",
    ax: Axes | None = None,
    labelsize: Any = "xx-large",
    ticklabelsize: Any = "xx-large",
    **kwargs: Any,
) -> Axes:
    """An aggregate metric against training frames, one line with a confidence band per algorithm."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    algorithms = list(point_estimates) if algorithms is None else list(algorithms)
    colors = _colors_for(algorithms, colors, color_palette)
    marker, linewidth = kwargs.pop("marker", "o"), kwargs.pop("linewidth", 2)
    for algorithm in algorithms:
        lower, upper = interval_estimates[algorithm]
        color = colors[algorithm]
        ax.plot(frames, point_estimates[algorithm], color=color, marker=marker, linewidth=linewidth, label=algorithm)
        ax.fill_between(frames, y1=lower, y2=upper, color=color, alpha=0.2)
    return _annotate_and_decorate_axis(
        ax, xlabel=xlabel, ylabel=ylabel, labelsize=labelsize, ticklabelsize=ticklabelsize, **kwargs
    )


def plot_probability_of_improvement(
    probability_estimates: Mapping[str, Any],
    probability_interval_estimates: Mapping[str, np.ndarray],
    pair_separator: str = ",",
    ax: Axes | None = None,
    figsize: tuple[float, float] = (4, 3),
    colors: Sequence[Any] | None = None,
    color_palette: Any = "colorblind",
    alpha: float = 0.75,
    xticks: Sequence[float] | None = None,
    xlabel: str = "P(X > Y)",
    left_ylabel: str = "Algorithm X",
    right_ylabel: str = "Algorithm Y",
    **kwargs: Any,
) -> Axes:
    """P(X > Y) with its interval for every pair ``"X<sep>Y"``: X named on the left axis, Y on the right."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    palette = list(colors) if colors else palette_colors(color_palette, len(probability_estimates))
    h = kwargs.pop("interval_height", 0.6)
    wrect = kwargs.pop("wrect", 5)
    ticklabelsize = kwargs.pop("ticklabelsize", "x-large")
    labelsize = kwargs.pop("labelsize", "x-large")
    ylabel_x = kwargs.pop("ylabel_x_coordinate", 0.2)
    twin = ax.twinx()
    left_names, right_names = [], []
    for idx, (pair, prob) in enumerate(probability_estimates.items()):
        lower, upper = probability_interval_estimates[pair]
        x_name, y_name = pair.split(pair_separator)
        left_names.append(x_name)
        right_names.append(y_name)
        ax.barh(y=idx, width=upper - lower, height=h, left=lower, color=palette[idx], alpha=alpha, label=x_name)
        twin.barh(y=idx, width=upper - lower, height=h, left=lower, color=palette[idx], alpha=0.0, label=y_name)
        ax.vlines(x=prob, ymin=idx - 7.5 * h / 16, ymax=idx + 6 * h / 16, color="k", alpha=min(alpha + 0.1, 1.0))
    yticks = range(len(probability_estimates))
    for axis, label, grid_alpha in ((ax, left_ylabel, 0.2), (twin, right_ylabel, 0.0)):
        _annotate_and_decorate_axis(
            axis,
            xticks=xticks,
            yticks=yticks,
            xticklabels=xticks,
            xlabel=xlabel,
            ylabel=label,
            wrect=wrect,
            ticklabelsize=ticklabelsize,
            labelsize=labelsize,
            grid_alpha=grid_alpha,
            **kwargs,
        )
    for axis, names, label in ((ax, left_names, left_ylabel), (twin, right_names, right_ylabel)):
        axis.set_yticklabels(names, fontsize=ticklabelsize)
        axis.set_ylabel(label, fontweight="bold", rotation="horizontal", va="bottom", fontsize=labelsize)
        axis.tick_params(axis="both", which="major")
        axis.spines["left"].set_visible(False)
    ax.yaxis.set_label_coords(-ylabel_x, 1.0)
    twin.yaxis.set_label_coords(1 + 0.7 * ylabel_x, 1.0)
    return ax
