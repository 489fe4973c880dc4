"""Quantile-function figure of Jordan et al. (2020): each algorithm's score distribution per task.

Reads only the ``jordan_quantiles`` table (``algorithm, task, score, cdf, cdf_low, cdf_high``) of a
:class:`~rl_reliable_logger.report.Report`, or that table as a DataFrame; writes no files.
Drawn into the report by :mod:`.writer` when the report has Jordan tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import figures as plots

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

REQUIRED = ("algorithm", "task", "score", "cdf", "cdf_low", "cdf_high")


def plot_quantile_functions(
    table_or_report: Any,
    *,
    tasks: Sequence[str] | None = None,
    ax: Axes | None = None,
    algorithms: Sequence[str] | None = None,
    colors: dict[str, str] | None = None,
    band_alpha: float = 0.18,
    ncols: int | None = None,
) -> Figure:
    """Quantile function of every algorithm on every task, with its DKW confidence band.

    Cumulative probability on the x-axis, score on the y-axis (higher is better), one panel per task.
    The shaded band is horizontal: at each score level it spans the DKW band ``[F - eps, F + eps]`` of
    the CDF, at the level used for the table (``delta / (nA * nE)`` by default, so that all bands hold at
    once). Colours follow :func:`.figures.algorithm_colors` in report order.

    Args:
        table_or_report: a Report with a ``jordan_quantiles`` table, or that table.
        tasks: tasks to draw (default: all, in table order).
        ax: draw into this axes (only when exactly one task is drawn).
        algorithms: subset and order of algorithms (default: report order).
        colors: ``{algorithm: colour}`` overriding the default palette.
        ncols: panels per row (default: up to 4).
    """
    frame, order, _ = plots.resolve_table(table_or_report, "jordan_quantiles", REQUIRED)
    frame = frame.copy()
    frame["algorithm"] = frame["algorithm"].astype(str)
    frame["task"] = frame["task"].astype(str)
    all_tasks = [str(t) for t in pd.unique(frame["task"])]
    if tasks is None:
        chosen = all_tasks
    else:
        chosen = [str(t) for t in tasks]
        unknown = [t for t in chosen if t not in all_tasks]
        if unknown:
            raise ValueError(f"unknown task(s) {unknown}; the table has {all_tasks}")
    if algorithms is not None:
        names = [str(a) for a in algorithms]
        unknown = [a for a in names if a not in set(frame["algorithm"])]
        if unknown:
            raise ValueError(f"unknown algorithm(s) {unknown}")
    else:
        names = plots.used_names(order, frame)
    palette = plots.algorithm_colors(order)
    if colors:
        palette.update({str(k): v for k, v in colors.items()})

    if ax is not None:
        if len(chosen) != 1:
            raise ValueError(f"ax= draws a single task; pass tasks=[one of {chosen}] (got {len(chosen)} tasks)")
        fig, axes = plots.root_figure(ax), [ax]
    else:
        n = len(chosen)
        cols = ncols or min(4, n)
        rows = math.ceil(n / cols)
        fig = plots.new_figure((4.0 * cols + (1.6 if len(names) > 5 else 0.0), 3.2 * rows))
        grid = fig.subplots(rows, cols, squeeze=False)
        axes = list(grid.ravel())
        for extra in axes[n:]:
            extra.set_visible(False)
        axes = axes[:n]

    for a, task in zip(axes, chosen):
        sub_task = frame[frame["task"] == task]
        for i, alg in enumerate(names):
            sub = sub_task[sub_task["algorithm"] == alg].sort_values(["score", "cdf"])
            if sub.empty:
                continue
            z = sub["score"].to_numpy(float)
            p = sub["cdf"].to_numpy(float)
            colour = palette.get(alg, "0.3")
            # Quantile function: Q(u) = z_t for u in (p_{t-1}, p_t].
            a.step(
                np.concatenate([[0.0], p]),
                np.concatenate([[z[0]], z]),
                where="pre",
                color=colour,
                linewidth=1.8,
                linestyle=plots.line_style(i, len(names)),
                label=plots.figure_label(alg),
            )
            a.fill_betweenx(
                z,
                sub["cdf_low"].to_numpy(float),
                sub["cdf_high"].to_numpy(float),
                step="post",
                color=colour,
                alpha=band_alpha,
                linewidth=0,
            )
        a.set_title(plots.figure_label(task))
        a.set_xlim(0.0, 1.0)
        a.set_xlabel("cumulative probability")
        a.set_ylabel("score")
        plots.decorate_axes(a)
    if axes:
        plots.add_legend(axes[0], len(names))
    return fig
