"""Write a Report as a results bundle: tables, ``figures/*.png|svg``, ``report.html``, ``table.tex|md``.

:func:`save_report` writes every file into a fresh folder and swaps it in with a manifest (see
:mod:`rl_reliable_logger.store.bundle`); :func:`load_report` reads a bundle back only through its
manifest. File names never come from table contents (a metric name that is not a plain code gets a
numbered figure name). Figures whose table is empty are skipped (e.g. no ``curves``
unless curves were asked for). A figure that fails to draw does not lose the rest of the report:
the failure is added to the page's warnings and re-emitted as a Python warning.

Each figure is drawn once per format, all from one layout (:mod:`~rl_reliable_logger.render.export`: the PNG's
draw lays it out), with fixed metadata: the same report gives the same files.

Every file but the tables and ``provenance.json`` (the Report's own data) is rendered from the report's view
(:mod:`.view`), built once per bundle: the figures, their note, ``report.html``, ``table.tex|md`` and ``methods.md``.

Example:
    >>> paths = write_all(report, Path("results"))   # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analysis.hashing import hash_matches

# Only what a tables-only save needs is imported here; the figure and page modules load when
# figures are drawn, so ``save_report(..., figures=False)`` (``--no-figures``) starts fast.
from ..data.names import AVERAGE_TASK
from ..errors import InputError, caller_stacklevel
from ..store.bundle import check_output_folder, read_bundle, recover_swap, write_bundle
from ..store.encode import csv_bytes, encode
from ..store.files import write_file
from ..store.kinds import BundleError
from ..store.lock import folder_lock
from ..store.manifest import MANIFEST
from .export import DEFAULT_FIGURE_FORMATS, FIGURE_FORMATS, PAGE_CHART, check_formats, figure_formats
from .methods import methods_markdown
from .view import ReportView, Viewable, as_view, report_view, shown_algorithms

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure as MplFigure

    from ..analysis.report import Report
    from ..data.scores import ScoreTable

__all__ = [
    "DEFAULT_FIGURE_FORMATS",
    "FIGURE_FORMATS",
    "FigureSpec",
    "check_output_folder",
    "figure_note",
    "figure_specs",
    "load_report",
    "rerender",
    "render_figures",
    "render_files",
    "report_files",
    "save_report",
    "save_scores",
    "save_tables",
    "write_all",
    "write_methods",
]

_PLAIN_NAME = re.compile(r"^[a-z0-9_]{1,40}$")


@dataclass
class FigureSpec:
    """One figure of the report: output stem, heading, reading guide, source table, how to draw (a function of the
    report's view, :class:`~.view.ReportView`, which holds its tables as a Report does)."""

    name: str
    title: str
    caption: str
    table: str
    draw: Callable[[ReportView], MplFigure]
    when: Callable[[pd.DataFrame], bool] = lambda t: True


def _table(view: ReportView, name: str) -> pd.DataFrame | None:
    try:
        return view.table(name)
    except KeyError:
        return None


def _has_kind(kind: str) -> Callable[[pd.DataFrame], bool]:
    return lambda t: "kind" not in t.columns or bool((t["kind"].astype(str) == kind).any())


def figure_specs(report: Viewable) -> list[FigureSpec]:
    """The figures this report can show, in page order."""
    from . import figures as plots
    from .jordan_figures import plot_quantile_functions

    specs = [
        FigureSpec(
            PAGE_CHART,
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
            "Interval of metric(X) − metric(Y); an interval that excludes 0 is a difference the data supports for that "
            "pair taken alone: across several pairs some exclude 0 by chance. The all-pairs comparisons "
            "(comparisons=True; --compare-all) control the family-wise error over all pairs (max-T intervals, Holm "
            "p-values).",
            "differences",
            plots.plot_differences,
        ),
    ]
    view = as_view(report)
    curves = _table(view, "curves")
    if curves is not None and not curves.empty and "metric" in curves.columns:
        for i, m in enumerate(pd.unique(curves["metric"].astype(str))):
            stem = m if _PLAIN_NAME.match(m) else str(i)  # file names never come from table contents
            specs.append(
                FigureSpec(
                    f"sample_efficiency_{stem}",
                    f"Sample efficiency: {plots.metric_title(m)} over training",
                    "Aggregate score over training steps; shaded: pointwise CI (whole runs resampled).",
                    "curves",
                    functools.partial(plots.plot_sample_efficiency_curves, metric=m),
                )
            )
    specs += [
        FigureSpec(
            "rank_distribution",
            "Rank distribution",
            "Probability of each algorithm taking each rank, averaged over tasks (bootstrap).",
            "ranks",
            plots.plot_rank_distributions,
            lambda t: bool((t["task"].astype(str) == AVERAGE_TASK).any()),
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
    if "jordan_quantiles" in view.extra:
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


def _style() -> AbstractContextManager[None]:
    """The report's text sizes. Applied while figures are drawn and saved: tick labels are created during a draw."""
    import matplotlib

    return matplotlib.rc_context({"font.size": 10, "axes.titlesize": "medium"})


def render_figures(report: Viewable) -> tuple[list[tuple[FigureSpec, MplFigure]], list[str]]:
    """Draw every figure the report has data for; return (drawn, failure messages).

    Failures are also emitted as :class:`RuntimeWarning`. Past :data:`~.view.MAX_SHOWN` algorithms the
    figures show the best and the worst (:meth:`~.view.ReportView.for_figures`), and each figure says so.
    """
    view = as_view(report)
    shown, note = view.for_figures(), view.figure_note
    drawn, failures = [], []
    with _style():
        for spec in figure_specs(shown):
            table = _table(shown, spec.table)
            if table is None or table.empty or not spec.when(table):
                continue
            try:
                fig = spec.draw(shown)
                if note:
                    fig.text(0.005, 0.998, note, ha="left", va="top", fontsize=7, color="0.35")
                drawn.append((spec, fig))
            except NotImplementedError:
                continue
            except Exception as exc:  # keep the rest of the report; say what failed
                failures.append(f"figure {spec.name!r} could not be drawn: {type(exc).__name__}: {exc}")
                warnings.warn(failures[-1], RuntimeWarning, stacklevel=caller_stacklevel())
    return drawn, failures


def figure_note(report: Viewable) -> str | None:
    """The sentence saying which algorithms the figures leave out (None when they show all)."""
    return report.figure_note if isinstance(report, ReportView) else shown_algorithms(report)[1]


def render_files(
    report: Viewable, formats: Sequence[str] = DEFAULT_FIGURE_FORMATS
) -> tuple[list[tuple[FigureSpec, dict[str, bytes]]], list[str]]:
    """Draw every figure the report has data for and return ``([(spec, {format: bytes})], failures)``: each in
    ``formats``, the chart a tracker's page shows in SVG too (:func:`~.export.figure_formats`).

    Failures (a figure that cannot be drawn or saved) are also emitted as :class:`RuntimeWarning`.
    """
    from .export import export

    formats = check_formats(formats)
    files = []
    with _style():
        drawn, failures = render_figures(report)
        for spec, fig in drawn:
            try:
                files.append((spec, export(fig, figure_formats(spec.name, formats))))
            except Exception as exc:  # keep the rest of the report; say what failed
                failures.append(f"figure {spec.name!r} could not be saved: {type(exc).__name__}: {exc}")
                warnings.warn(failures[-1], RuntimeWarning, stacklevel=caller_stacklevel())
    return files, failures


def page_files(report: Viewable, figure_formats: Sequence[str] = DEFAULT_FIGURE_FORMATS) -> dict[str, str | bytes]:
    """The files drawn from the report's view, by their path in a bundle: ``figures/<name>.<format>`` for each
    figure the report has data for (the chart a tracker's page shows also as SVG, :data:`~.export.PAGE_CHART`), ``table.tex`` and ``table.md`` (when it has a headline table) and
    ``report.html``, which inlines each figure's PNG (its SVG when PNG is not among ``figure_formats``) and also
    says which algorithms the figures leave out and which figure could not be drawn."""
    from . import html as _html
    from . import tables as _paper_tables

    formats = check_formats(figure_formats)
    view = as_view(report)
    files: dict[str, str | bytes] = {}
    page_figs = []
    drawn, failures = render_files(view, formats)
    for spec, images in drawn:
        files.update({f"figures/{spec.name}.{fmt}": data for fmt, data in images.items()})
        inline = "png" if "png" in images else "svg"
        mime = "image/png" if inline == "png" else "image/svg+xml"
        page_figs.append(_html.Figure(spec.name, spec.title, images[inline], spec.caption, mime))
    if not view.aggregates.empty:
        files["table.tex"] = _paper_tables.to_latex(view)
        files["table.md"] = _paper_tables.to_markdown(view)
    page = view.with_warnings(([view.figure_note] if view.figure_note else []) + failures)
    files["report.html"] = _html.build_html(page, page_figs)
    return files


def write_all(
    report: Viewable,
    out_dir: Path,
    *,
    figure_formats: Sequence[str] = DEFAULT_FIGURE_FORMATS,
) -> list[Path]:
    """Write figures (each in ``figure_formats``), ``report.html``, ``table.tex`` and ``table.md``
    (:func:`page_files`) into ``out_dir``; return the paths.

    Example:
        >>> for p in write_all(report, Path("results"), figure_formats=("svg",)): print(p)   # doctest: +SKIP
    """
    return _put(Path(out_dir), page_files(report, figure_formats), folders=("figures",))


def save_report(
    report: Report,
    out_dir: str | os.PathLike,
    *,
    figures: bool = True,
    inputs: Sequence[str | os.PathLike] = (),
    force: bool = False,
    figure_formats: Sequence[str] = DEFAULT_FIGURE_FORMATS,
    view: ReportView | None = None,
) -> Path:
    """Write the report as a results bundle in ``out_dir``; return the folder.

    Every table (CSV), ``provenance.json``, ``methods.md`` and, with ``figures``, the figures, ``report.html``,
    ``table.tex`` and ``table.md`` are written into a fresh folder with ``manifest.json`` and swapped
    in: an earlier bundle there is replaced as a whole. A folder with files the tool did not write,
    or holding one of ``inputs``, is refused (:func:`check_output_folder`); ``force=True`` only
    allows replacing an earlier bundle whose files were changed. ``figure_formats`` picks the figure
    files (``("png",)`` by default; ``("png", "svg")`` adds SVG copies, or ``("svg",)``); the chart a tracker's page
    shows, ``figures/interval_estimates``, is written as SVG too whatever they are (:data:`~.export.PAGE_CHART`). ``view``: the report's
    view when the caller built it already (the command line prints its summary from it); built here otherwise.

    Example:
        >>> save_report(evaluate(table, seed=0), "results/")   # doctest: +SKIP
    """

    if figures:
        figure_formats = check_formats(figure_formats)  # refuse a bad keyword before any work
    shown = report_view(report) if view is None else view  # its digest: what the manifest records
    check_output_folder(out_dir, inputs=inputs, force=force)  # and a folder it may not write, before any drawing
    files = report_files(shown)
    files["methods.md"] = methods_markdown(shown)  # the methods paragraph belongs to every bundle, tables-only too
    if figures:
        files.update(page_files(shown, figure_formats))

    def fill(tmp: Path) -> None:  # a bundle drawn with figures has their folder, even when none could be drawn
        _put(tmp, files, folders=("figures",) if figures else ())

    return write_bundle(out_dir, fill, digest=shown.digest, inputs=inputs, force=force)


def report_files(report: Viewable) -> dict[str, Any]:
    """The tables of a report or its view (``<name>.csv``, escaped by the writer: :func:`~.bundle.csv_bytes`) and
    ``provenance.json`` (with the report's warnings)."""
    if isinstance(report, ReportView):
        tables = [(name, report.table(name)) for name in report.written]
    else:
        tables = report.tables(written=True)
    files: dict[str, Any] = {f"{name}.csv": frame for name, frame in tables}
    payload = dict(report.provenance)
    payload["warnings"] = list(report.warnings)
    files["provenance.json"] = json.dumps(payload, indent=2, default=str) + "\n"
    return files


def save_tables(report: Report, out_dir: str | os.PathLike) -> Path:
    """Write every table as CSV plus ``provenance.json`` into ``out_dir`` (no manifest: :func:`save_report` writes
    a verified bundle); return the folder. :meth:`Report.load` reads it back.

    Text cells a spreadsheet would execute get a leading ``'`` (:mod:`..data.csvcells`); ``Report.load`` undoes it.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _put(out, report_files(report))
    return out


def write_methods(report: Viewable, out_dir: str | os.PathLike) -> Path:
    """Write ``methods.md`` into ``out_dir``; return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return _put(out, {"methods.md": methods_markdown(report)})[0]


def save_scores(table: ScoreTable, path: str | os.PathLike, *, wait: float | None = None) -> Path:
    """Write a ScoreTable's long table as one file, replaced atomically: ``.csv`` (formula-like names escaped, which
    ``ScoreTable.from_csv`` undoes), ``.json`` (a list of records) or ``.parquet`` (needs pyarrow).

    Example:
        >>> save_scores(table, "scores.csv")   # doctest: +SKIP
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        data = str(table.frame.to_json(orient="records", indent=1)).encode()
    elif suffix == ".parquet":
        import io

        buffer = io.BytesIO()
        table.frame.to_parquet(buffer, index=False)
        data = buffer.getvalue()
    elif suffix == ".csv":
        data = csv_bytes(table.frame)
    else:
        raise InputError(f"{path}: scores are written as .csv, .json or .parquet, not {suffix or 'a file without one'}")
    return write_file(path, data, kind="scores", wait=wait)


def _put(folder: Path, files: Mapping[str, Any], *, folders: Sequence[str] = ()) -> list[Path]:
    """Write ``files`` (path -> content, encoded by the one writer: :func:`~..store.encode.encode`) into a folder
    being filled (a bundle's temporary folder, or a plain folder of :func:`save_tables` / :func:`write_all`), and
    make the ``folders`` (``figures``) even where no file goes into them."""
    for name in folders:
        (folder / name).mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files.items():
        path = folder.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(name, content))
        written.append(path)
    return written


def load_report(folder: str | os.PathLike) -> Report:
    """Read a results bundle written by :func:`save_report`, verified against its manifest.

    A missing manifest, or a missing, changed, extra or symlinked file is a
    :class:`~rl_reliable_logger.store.kinds.BundleError` naming the file.
    """
    from ..analysis.report import Report

    bundle = read_bundle(folder)
    if bundle.kind != "report":
        raise BundleError(f"{Path(folder) / MANIFEST}: this folder holds a {bundle.kind}, not an analysis report")
    with tempfile.TemporaryDirectory(prefix="rl-reliable-load-") as tmp:
        bundle.copy_to(tmp)  # parse exactly the verified bytes
        try:
            report = Report.load(tmp)
        except InputError as err:  # name the user's folder, not the private copy
            raise BundleError(str(err).replace(str(Path(tmp)), str(folder))) from None
    if not hash_matches(report, bundle.report_hash):
        raise BundleError(
            f"{Path(folder) / MANIFEST}: the tables do not give the report_hash the manifest records "
            f"(written by version {bundle.tool_version or 'unknown'}); a table was edited and the manifest rewritten "
            "to match. Run the analysis again"
        )
    return report


def rerender(folder: str | os.PathLike, figure_formats: Sequence[str] | None = None) -> tuple[Path, list[str]]:
    """Redraw the figures, ``report.html`` and paper tables of a bundle; keep its tables as they are. The figures are
    drawn in ``figure_formats`` (None: the formats the bundle has, e.g. ``("png", "svg")`` to add the SVG copies a
    bundle written with the default formats lacks).

    Returns the folder and the names of the files it now holds. The tables and provenance are the
    verified bytes of the old bundle, so the report's content hash does not change. A swap that a
    killed writer left half done is completed or undone first (:func:`recover_swap`). The folder is locked from
    reading it to writing it back, so a bundle another process writes meanwhile is never overwritten with this
    one's old tables.
    """
    asked = None if figure_formats is None else check_formats(figure_formats)  # a bad keyword before any work
    with folder_lock(folder):
        return _rerender(folder, asked)


def _rerender(folder: str | os.PathLike, asked: tuple[str, ...] | None) -> tuple[Path, list[str]]:
    recover_swap(folder)
    bundle = read_bundle(folder)
    view = report_view(load_report(folder))
    kept = {rel: data for rel, data in bundle.contents.items() if rel.endswith(".csv") or rel == "provenance.json"}
    # the formats of the figures asked for: the tracker page's chart is in SVG whatever they were
    chart = f"figures/{PAGE_CHART}."
    had = {
        rel.rsplit(".", 1)[-1] for rel in bundle.contents if rel.startswith("figures/") and not rel.startswith(chart)
    }
    # keep the bundle's figure formats unless others are asked for
    formats = asked or tuple(f for f in FIGURE_FORMATS if f in had) or DEFAULT_FIGURE_FORMATS
    files = {"methods.md": methods_markdown(view), **page_files(view, formats)}

    def fill(tmp: Path) -> None:
        for rel, data in kept.items():  # the verified bytes, as they are
            tmp.joinpath(*rel.split("/")).write_bytes(data)
        _put(tmp, files, folders=("figures",))

    out = write_bundle(folder, fill, digest=bundle.report_hash)
    return out, sorted(f.path for f in read_bundle(out).files) + [MANIFEST]
