"""Write a Report's human-facing files: ``figures/*.png|svg``, ``report.html``, ``table.tex|md``.

Called by :func:`save_report`. Figures whose table is empty are skipped (e.g. no ``curves``
unless curves were asked for). A figure that fails to draw does not lose the rest of the report:
the failure is added to the page's warnings and re-emitted as a Python warning.

Example:
    >>> paths = write_all(report, Path("results"))   # doctest: +SKIP
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import figures as plots
from . import html as _html
from . import tables as _paper_tables
from .jordan_figures import plot_quantile_functions

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure as MplFigure

    from ..analysis.report import Report

__all__ = ["FigureSpec", "figure_specs", "render_figures", "save_report", "write_all"]

PNG_DPI = 130


@dataclass
class FigureSpec:
    """One figure of the report: output stem, heading, reading guide, source table, how to draw."""

    name: str
    title: str
    caption: str
    table: str
    draw: Callable[[Report], MplFigure]
    when: Callable[[pd.DataFrame], bool] = lambda t: True


def _table(report: Report, name: str) -> pd.DataFrame | None:
    try:
        return report.table(name)
    except KeyError:
        return None


def _has_kind(kind: str) -> Callable[[pd.DataFrame], bool]:
    return lambda t: "kind" not in t.columns or (t["kind"].astype(str) == kind).any()


def figure_specs(report: Report) -> list[FigureSpec]:
    """The figures this report can show, in page order."""
    specs = [
        FigureSpec(
            "interval_estimates",
            "Aggregate metrics with confidence intervals",
            "Bars span the confidence interval; the black tick is the point estimate.",
            "aggregates",
            plots.plot_interval_estimates,
        ),
        FigureSpec(
            "performance_profile",
            "Performance profile (run-score distribution)",
            "Fraction of runs scoring above each threshold τ; shaded: pointwise CI. A curve that "
            "lies above another everywhere dominates it (stochastic dominance).",
            "profiles",
            lambda r: plots.plot_performance_profiles(r, kind="runs"),
            _has_kind("runs"),
        ),
        FigureSpec(
            "performance_profile_nonlinear",
            "Performance profile, non-linear τ axis",
            "The τ axis is stretched where most runs lie (equal distances hold equal fractions "
            "of runs), which separates curves that crowd together on a linear axis.",
            "profiles",
            lambda r: plots.plot_performance_profiles(r, kind="runs", nonlinear=True),
            _has_kind("runs"),
        ),
        FigureSpec(
            "performance_profile_tasks",
            "Performance profile (average-score distribution)",
            "Fraction of tasks whose mean score over runs is above τ.",
            "profiles",
            lambda r: plots.plot_performance_profiles(r, kind="tasks"),
            _has_kind("tasks"),
        ),
        FigureSpec(
            "probability_of_improvement",
            "Probability of improvement",
            "P(X > Y): how likely a run of X beats a run of Y on a random task (ties count 1/2). "
            "0.5 means no difference.",
            "improvement",
            plots.plot_probability_of_improvement,
        ),
        FigureSpec(
            "differences",
            "Differences between algorithms",
            "Interval of metric(X) − metric(Y); an interval that excludes 0 is a difference the data supports.",
            "differences",
            plots.plot_differences,
        ),
    ]
    curves = _table(report, "curves")
    if curves is not None and not curves.empty and "metric" in curves.columns:
        for m in pd.unique(curves["metric"].astype(str)):
            specs.append(
                FigureSpec(
                    f"sample_efficiency_{m}",
                    f"Sample efficiency: {plots.metric_title(m)} over training",
                    "Aggregate score over training steps; shaded: pointwise CI (whole runs resampled).",
                    "curves",
                    lambda r, m=m: plots.plot_sample_efficiency_curves(r, metric=m),
                )
            )
    specs += [
        FigureSpec(
            "rank_distribution",
            "Rank distribution",
            "Probability of each algorithm taking each rank, averaged over tasks (bootstrap).",
            "ranks",
            plots.plot_rank_distributions,
            lambda t: (t["task"].astype(str) == "__average__").any(),
        ),
        FigureSpec(
            "optimality_gap_curve",
            "Optimality gap as a function of γ",
            "How far runs fall short of the target γ on average (lower is better).",
            "gap_curve",
            plots.plot_optimality_gap_curve,
        ),
        FigureSpec(
            "task_scores",
            "Score of every run, per task",
            "Each dot is one run; the black tick is the mean over runs.",
            "scores",
            plots.plot_task_scores,
        ),
    ]
    if "jordan_quantiles" in (getattr(report, "extra", {}) or {}):
        specs.append(
            FigureSpec(
                "quantile_functions",
                "Performance percentiles (Jordan et al.)",
                "Per-task score CDFs with confidence bands, used to compute performance percentiles.",
                "jordan_quantiles",
                plot_quantile_functions,
            )
        )
    return specs


def render_figures(report: Report) -> tuple[list[tuple[FigureSpec, MplFigure]], list[str]]:
    """Draw every figure the report has data for; return (drawn, failure messages)."""
    drawn, failures = [], []
    for spec in figure_specs(report):
        table = _table(report, spec.table)
        if table is None or table.empty or not spec.when(table):
            continue
        try:
            drawn.append((spec, spec.draw(report)))
        except NotImplementedError:
            continue
        except Exception as exc:  # keep the rest of the report; say what failed
            msg = f"figure {spec.name!r} could not be drawn: {type(exc).__name__}: {exc}"
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            failures.append(msg)
    return drawn, failures


def _save(fig: MplFigure, path: Path, fmt: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    if fmt == "svg":
        import matplotlib

        with matplotlib.rc_context({"svg.hashsalt": "rl_reliable_logger"}):
            fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    else:
        fig.savefig(buf, format="png", dpi=PNG_DPI, bbox_inches="tight", metadata={"Software": None})
    data = buf.getvalue()
    path.write_bytes(data)
    return data


def write_all(report: Report, out_dir: Path) -> list[Path]:
    """Write figures (PNG and SVG), ``report.html``, ``table.tex`` and ``table.md``; return the paths.

    Example:
        >>> for p in write_all(report, Path("results")): print(p)   # doctest: +SKIP
    """
    import matplotlib

    out_dir = Path(out_dir)
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    page_figs: list[_html.Figure] = []
    with matplotlib.rc_context({"font.size": 10, "axes.titlesize": "medium"}):
        drawn, failures = render_figures(report)
        for spec, fig in drawn:
            png = _save(fig, fig_dir / f"{spec.name}.png", "png")
            _save(fig, fig_dir / f"{spec.name}.svg", "svg")
            written += [fig_dir / f"{spec.name}.png", fig_dir / f"{spec.name}.svg"]
            page_figs.append(_html.Figure(spec.name, spec.title, png, spec.caption))
    if not report.aggregates.empty:
        (out_dir / "table.tex").write_text(_paper_tables.to_latex(report), encoding="utf-8")
        (out_dir / "table.md").write_text(_paper_tables.to_markdown(report), encoding="utf-8")
        written += [out_dir / "table.tex", out_dir / "table.md"]
    page_report: Any = report
    if failures:
        import copy

        page_report = copy.copy(report)
        page_report.warnings = list(report.warnings) + failures
    (out_dir / "report.html").write_text(_html.build_html(page_report, page_figs), encoding="utf-8")
    written.append(out_dir / "report.html")
    return written


def save_report(report: Report, out_dir: str | os.PathLike, *, figures: bool = True) -> Path:
    """Write every table (CSV), ``provenance.json`` and, with ``figures``, the figures, ``report.html``,
    ``table.tex`` and ``table.md`` into ``out_dir``; return the folder.

    Example:
        >>> save_report(evaluate(table, seed=0), "results/")   # doctest: +SKIP
    """
    out = report.save_tables(out_dir)
    if figures:
        write_all(report, out)
    return out


def load_report(folder: str | os.PathLike) -> Report:
    """Read a results folder written by :func:`save_report` back into a Report."""
    from ..analysis.report import Report

    return Report.load(folder)
