"""Figures drawn from a Report's tables only.

Every function takes a Report or its view (:class:`~.view.ReportView`, which the report writer passes), or the one
table it needs as a DataFrame, an optional
matplotlib ``ax``, returns the :class:`matplotlib.figure.Figure` and writes no files.
Colours come from :func:`algorithm_colors`: a colour-blind-safe palette assigned by the
algorithm's position in ``report.algorithms``, so one algorithm keeps its colour in every figure.

Example:
    >>> from rl_reliable_logger.render import figures as plots
    >>> fig = plots.plot_interval_estimates(report)          # doctest: +SKIP
    >>> fig.savefig("intervals.png", bbox_inches="tight")    # doctest: +SKIP

Figures are created with :class:`matplotlib.figure.Figure` (not pyplot), so drawing never
touches global pyplot state and works with the Agg backend on headless machines.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ..data.names import AVERAGE_TASK
from ..data.normalize import describe
from .view import Tables, lower_is_better, metric_title

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "OKABE_ITO",
    "EXTENDED",
    "algorithm_colors",
    "metric_title",
    "score_label",
    "plot_interval_estimates",
    "plot_performance_profiles",
    "plot_probability_of_improvement",
    "plot_sample_efficiency_curves",
    "plot_rank_distributions",
    "plot_differences",
    "plot_task_scores",
    "plot_optimality_gap_curve",
    "figure_label",
    "short_name",
    "label_key",
]

#: Okabe & Ito (2008) colour-blind-safe qualitative palette, yellow moved last (weak on white).
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
#: Beyond 8 algorithms: Paul Tol's "muted" scheme (also colour-blind safe), then tab20-like tones.
EXTENDED = [
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
    "#8C564B",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#9467BD",
    "#C49C94",
    "#F7B6D2",
]
_LINESTYLES = ["-", "--", "-.", ":"]


# --------------------------------------------------------------------------- text
#: Names longer than this are abbreviated in figures (full names stay in the tables; report.html has a key).
MAX_LABEL = 32
_KEEP = MAX_LABEL - 8


def _t(text: str) -> str:
    """Figure text that matplotlib draws literally: ``$`` escaped (no mathtext), control characters shown as \\uXXXX."""
    out = "".join(
        f"\\u{ord(ch):04X}" if unicodedata.category(ch) in ("Cc", "Cs") and ch != "\n" else ch for ch in str(text)
    )
    return out.replace("$", r"\$")


def short_name(name: str) -> str:
    """A name as drawn in figures: unchanged up to :data:`MAX_LABEL` characters, else its first characters, ``…``
    and a 6-hex digest of the full name, so the same name is abbreviated the same way in every figure and two
    long names sharing a prefix stay apart.

    Example:
        >>> short_name("A" * 40) == short_name("A" * 40) != short_name("A" * 39 + "B")
        True
    """
    text = str(name)
    if len(text) <= MAX_LABEL:
        return text
    digest = hashlib.blake2s(text.encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()
    return f"{text[:_KEEP]}…{digest}"


def figure_label(name: Any) -> str:
    """A data name (algorithm, task) ready for matplotlib: abbreviated (:func:`short_name`) and escaped."""
    return _t(short_name(str(name)).replace("\n", " "))


def label_key(names: Sequence[Any]) -> dict[str, str]:
    """``{figure label: full name}`` for every name that figures abbreviate (the legend key of report.html)."""
    return {short_name(str(n)): str(n) for n in names if short_name(str(n)) != str(n)}


# --------------------------------------------------------------------------- helpers
def algorithm_colors(algorithms: Sequence[str]) -> dict[str, str]:
    """Stable colour per algorithm: the i-th algorithm always gets the i-th palette colour.

    Example:
        >>> algorithm_colors(["DQN", "C51"])["C51"]
        '#E69F00'
    """
    palette = OKABE_ITO + EXTENDED
    out: dict[str, str] = {}
    for i, name in enumerate(algorithms):
        out[str(name)] = palette[i % len(palette)]
    return out


def line_style(i: int, n: int) -> str:
    """Solid lines for up to 8 algorithms; beyond that cycle dashes so similar colours differ."""
    return "-" if n <= len(OKABE_ITO) else _LINESTYLES[(i // len(OKABE_ITO)) % len(_LINESTYLES)]


def score_label(report: Tables | None = None, normalization: str | None = None) -> str:
    """Axis label that says which normalisation the scores carry.

    Reads ``provenance["score_label"]`` if set, else the normaliser's description that
    ``evaluate`` stores in ``provenance["normalization"]``, else a label for the
    ``provenance["normalize"]`` name; no normaliser means raw scores.

    Example:
        >>> score_label(normalization="atari")
        'human-normalised score (random = 0, human = 1)'
    """
    if normalization is None and report is not None:
        prov = getattr(report, "provenance", {}) or {}
        if prov.get("score_label"):
            return str(prov["score_label"])
        normalization = prov.get("normalize", prov.get("normalization"))
        described = prov.get("normalization")  # evaluate() stores the normaliser's own description here
        if (
            normalization not in (None, "None")
            and isinstance(described, str)
            and described not in ("", str(normalization))
        ):
            return described
    if isinstance(normalization, dict):  # e.g. {"name": "atari", ...}
        normalization = normalization.get("name") or normalization.get("kind")
    if normalization is None or str(normalization).lower() in ("", "none", "raw", "nan"):
        return "raw score (not normalised)"
    return describe(str(normalization)) or f"{normalization}-normalised score"


def resolve_table(
    obj: Tables | pd.DataFrame, name: str, required: Sequence[str]
) -> tuple[pd.DataFrame, list[str], Any]:
    """Return (table, algorithm order, report-or-None) from a Report or a bare DataFrame."""
    if isinstance(obj, pd.DataFrame):
        frame, report = obj, None
    elif hasattr(obj, "table"):
        report = obj
        try:
            frame = obj.table(name)
        except KeyError:
            raise ValueError(
                f"this Report has no {name!r} table; it is only present when evaluate() computed it"
            ) from None
    else:
        raise TypeError(f"expected a Report or a pandas DataFrame, got {type(obj).__name__}")
    if frame.empty:
        raise ValueError(f"the {name!r} table is empty, so there is nothing to draw")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"the {name!r} table lacks column(s) {missing}; expected at least {list(required)}")
    algorithms: list[str] = []
    if report is not None:
        try:
            algorithms = [str(a) for a in report.algorithms]
        except Exception:  # a hand-built Report may have no aggregates
            algorithms = []
    present: list[str] = []
    for col in ("algorithm", "algorithm_x", "algorithm_y"):
        if col in frame.columns:
            present += [str(a) for a in pd.unique(frame[col])]
    for a in present:  # algorithms in the table but not in the report order go last
        if a not in algorithms:
            algorithms.append(a)
    return frame, algorithms, report


def new_figure(figsize: tuple[float, float]) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def root_figure(ax: Axes) -> Figure:
    """The figure that owns ``ax``, also when the axes sit in a subfigure (whose ``.figure`` is the root)."""
    from matplotlib.figure import Figure

    fig = ax.figure
    return fig if isinstance(fig, Figure) else fig.figure


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return root_figure(ax), ax
    fig = new_figure(figsize)
    return fig, fig.add_subplot()


def decorate_axes(ax: Axes, grid_axis: Literal["both", "x", "y"] = "both") -> None:
    """The paper's clean look: no top/right spines, light grid behind the data."""
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(True, axis=grid_axis, alpha=0.25, linewidth=0.8)
    ax.set_axisbelow(True)


#: Room between the outermost interval and a panel's edge, as a fraction of the span of the intervals.
INTERVAL_PAD = 0.06


def _interval_limits(ax: Axes, *values: Iterable[float]) -> None:
    """x limits that keep every interval bar (and ``values`` such as a reference line) inside the panel.

    ``barh`` pins the left end of each bar to the axis limit (its sticky edge), so without this the lowest
    interval touches the panel's edge and the highest ends where the axis does.
    """
    finite = [float(v) for group in values for v in group if np.isfinite(v)]
    if not finite:
        return
    lo, hi = min(finite), max(finite)
    pad = INTERVAL_PAD * (hi - lo) if hi > lo else max(0.05 * abs(lo), 0.05)
    ax.set_xlim(lo - pad, hi + pad)


def add_legend(ax: Axes, n: int, title: str | None = None) -> None:
    """Inside the axes for a few algorithms, outside on the right for many."""
    title = None if title is None else _t(title)
    if n <= 5:
        ax.legend(loc="best", frameon=False, fontsize="small", title=title)
    else:
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            frameon=False,
            fontsize="small",
            title=title,
            ncol=1 if n <= 20 else 2,
        )


def used_names(algorithms: list[str], frame: pd.DataFrame, col: str = "algorithm") -> list[str]:
    present = set(frame[col].astype(str))
    return [a for a in algorithms if a in present]


def _ordered(frame: pd.DataFrame, algorithms: list[str], col: str = "algorithm") -> pd.DataFrame:
    frame = frame.copy()
    frame[col] = frame[col].astype(str)
    rank = {a: i for i, a in enumerate(algorithms)}
    return frame.sort_values(col, key=lambda s: s.map(rank), kind="stable")


def _line_with_band(
    ax: Axes,
    frame: pd.DataFrame,
    x: str,
    algorithms: list[str],
    colors: dict[str, str],
    *,
    xfun=None,
    band_alpha: float = 0.18,
) -> None:
    n = len(algorithms)
    for i, alg in enumerate(algorithms):
        sub = frame[frame["algorithm"] == alg].sort_values(x)
        if sub.empty:
            continue
        xs = sub[x].to_numpy(float) if xfun is None else xfun(sub[x].to_numpy(float))
        ax.plot(
            xs,
            sub["point"].to_numpy(float) if "point" in sub else sub["fraction"].to_numpy(float),
            color=colors[alg],
            linestyle=line_style(i, n),
            linewidth=2,
            label=figure_label(alg),
        )
        if {"low", "high"} <= set(sub.columns) and sub[["low", "high"]].notna().all().all():
            ax.fill_between(
                xs,
                sub["low"].to_numpy(float),
                sub["high"].to_numpy(float),
                color=colors[alg],
                alpha=band_alpha,
                linewidth=0,
            )


# --------------------------------------------------------------------------- interval estimates
def plot_interval_estimates(
    report: Tables | pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    colors: dict[str, str] | None = None,
    xlabel: str | None = None,
) -> Figure:
    """Point estimate and CI per algorithm, one panel per metric (the paper's Fig. 9 layout).

    Algorithms are rows (first algorithm on top); the bar spans the interval and the black tick
    marks the point estimate. ``ax`` may be one Axes (one metric) or one Axes per metric.

    Example:
        >>> fig = plot_interval_estimates(report, metrics=["median", "iqm", "mean", "optimality_gap"])  # doctest: +SKIP
    """
    from matplotlib.ticker import MaxNLocator

    frame, algorithms, rep = resolve_table(report, "aggregates", ["algorithm", "metric", "point", "low", "high"])
    frame = frame.copy()
    frame["metric"] = frame["metric"].astype(str)
    all_metrics = list(pd.unique(frame["metric"]))
    metrics = list(all_metrics if metrics is None else metrics)  # the analysis's order, as in every table
    unknown = [m for m in metrics if m not in all_metrics]
    if unknown:
        raise ValueError(f"metric(s) {unknown} are not in the aggregates table (it has {all_metrics})")
    algorithms = used_names(algorithms, frame)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    n = len(algorithms)
    if ax is None:
        fig = new_figure((max(2.6 * len(metrics), 4.0) + 1.2, 0.9 + 0.38 * n))
        axes = list(np.atleast_1d(fig.subplots(1, len(metrics), squeeze=False)[0]))
    else:
        axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) != len(metrics):
            raise ValueError(f"got {len(axes)} Axes for {len(metrics)} metrics {metrics}; pass one Axes per metric")
        fig = axes[0].figure
    label = _t(xlabel or score_label(rep))
    height = 0.6
    for j, (metric, a) in enumerate(zip(metrics, axes)):
        sub = frame[frame["metric"] == metric].set_index(frame.loc[frame["metric"] == metric, "algorithm"].astype(str))
        for i, alg in enumerate(algorithms):
            y = n - 1 - i
            if alg not in sub.index:
                continue
            row = sub.loc[alg]
            lo, hi, pt = float(row["low"]), float(row["high"]), float(row["point"])
            a.barh(y=y, width=hi - lo, left=lo, height=height, color=colors[alg], alpha=0.75)
            a.vlines(pt, y - height / 2, y + height / 2, color="k", linewidth=1.5, alpha=0.7)
        a.set_yticks(range(n))
        a.set_yticklabels([figure_label(x) for x in reversed(algorithms)] if (j == 0 or ax is not None) else [])
        if j > 0 and ax is None:
            a.tick_params(axis="y", length=0)
        a.set_ylim(-0.6, n - 0.4)
        shown = sub.loc[[x for x in algorithms if x in sub.index]]
        _interval_limits(a, shown["low"], shown["high"], shown["point"])
        title = metric_title(metric) + (" (lower is better)" if lower_is_better(metric) else "")
        a.set_title(_t(title), fontsize="medium")
        a.xaxis.set_major_locator(MaxNLocator(4))
        decorate_axes(a, "x")
        a.spines["left"].set_visible(False)
        if ax is not None:
            a.set_xlabel(label)
    if ax is None:
        fig.supxlabel(label, fontsize="medium")
    return fig


# --------------------------------------------------------------------------- performance profiles
def _nonlinear_tau(pivot: pd.DataFrame) -> np.ndarray:
    """rliable's non-linear tau axis: tau maps to 1 - (profile averaged over algorithms).

    Equal distances on this axis hold equal fractions of runs, which spreads out the region
    where most scores lie (the paper's appendix).
    """
    return 1.0 - pivot.mean(axis=1).to_numpy(float)


_NICE_MANTISSAS = np.array([1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0])


def _nice(value: float) -> float:
    """The nearest tick-friendly number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8 times a power of ten)."""
    if value == 0 or not np.isfinite(value):
        return 0.0
    scale = 10.0 ** np.floor(np.log10(abs(value)))
    mantissa = _NICE_MANTISSAS[np.argmin(np.abs(_NICE_MANTISSAS - abs(value) / scale))]
    return float(np.copysign(mantissa * scale, value))


def _warped_ticks(taus: np.ndarray, warped: np.ndarray, *, gap: float = 0.07) -> tuple[list[float], list[str]]:
    """Tick positions and τ labels for the non-linear axis, spread evenly over the *warped* axis.

    Round τ values (MaxNLocator's) bunch up where few runs lie and leave the crowded middle bare, so the
    labels are the τ at every tenth of the warped axis, rounded to a nice number (:func:`_nice`), plus the round
    values; a label closer than ``gap`` (a fraction of the axis) to one already placed is dropped.

    Example:
        >>> taus = np.array([0.0, 1.0, 2.0, 10.0]); warped = np.array([0.0, 0.5, 0.9, 1.0])
        >>> _warped_ticks(taus, warped)[1]
        ['0', '0.2', '0.4', '0.6', '0.8', '1', '1.2', '1.5', '2', '8']
    """
    from matplotlib.ticker import MaxNLocator

    lo, hi = float(taus.min()), float(taus.max())
    round_ticks = MaxNLocator(nbins=10, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    even = np.interp(np.linspace(warped.min(), warped.max(), 11), warped, taus)
    even = np.array([_nice(v) for v in even])
    cands = np.unique(np.concatenate([round_ticks, even]))
    cands = cands[(cands >= lo - 1e-12) & (cands <= hi + 1e-12)]
    placed: list[tuple[float, float]] = []  # (position, tau), round values first so they win a tie
    for tau_tick in sorted(cands, key=lambda v: (v not in round_ticks, v)):
        pos = float(np.interp(tau_tick, taus, warped))
        if all(abs(pos - p) >= gap for p, _ in placed):
            placed.append((pos, float(tau_tick)))
    placed.sort()
    return [p for p, _ in placed], [f"{v:.3g}" for _, v in placed]


def plot_performance_profiles(
    report: Tables | pd.DataFrame,
    *,
    kind: str = "runs",
    nonlinear: bool = False,
    ax: Axes | None = None,
    colors: dict[str, str] | None = None,
    xlabel: str | None = None,
    max_tau: float | None = None,
) -> Figure:
    """Score distributions: fraction of runs (or tasks) with score > tau, with pointwise CI bands.

    ``kind="runs"`` is the run-score distribution, ``"tasks"`` the average-score distribution.
    ``nonlinear=True`` warps the tau axis by the fraction of runs (rliable's
    ``use_non_linear_scaling``); tick labels still show tau. ``max_tau`` clips the drawn τ range
    (e.g. 8 for ALE 200M, where a few runs reach scores of 50 and flatten a linear axis).

    Example:
        >>> fig = plot_performance_profiles(report, nonlinear=True)   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(report, "profiles", ["algorithm", "tau", "fraction"])
    if "kind" in frame.columns:
        kinds = list(pd.unique(frame["kind"].astype(str)))
        if kind not in kinds:
            raise ValueError(f"no {kind!r} profiles in the table (it has {kinds})")
        frame = frame[frame["kind"].astype(str) == kind]
    frame = frame.copy()
    frame["algorithm"] = frame["algorithm"].astype(str)
    algorithms = used_names(algorithms, frame)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    n = len(algorithms)
    fig, a = _axes(ax, (6.4 + (1.8 if n > 5 else 0), 4.2))
    label = _t(xlabel or score_label(rep))
    frame = frame.rename(columns={"fraction": "point"})
    if max_tau is not None:
        frame = frame[frame["tau"] <= max_tau]
        if frame.empty:
            raise ValueError(f"no tau <= max_tau={max_tau} in the profiles table")
    if nonlinear:
        pivot = frame.pivot_table(index="tau", columns="algorithm", values="point").sort_index()
        if pivot.isna().any().any():
            raise ValueError("non-linear scaling needs every algorithm's profile on the same tau grid")
        taus = pivot.index.to_numpy(float)
        warped = _nonlinear_tau(pivot)

        def xfun(t: np.ndarray) -> np.ndarray:
            return np.interp(t, taus, warped)

        _line_with_band(a, frame, "tau", algorithms, colors, xfun=xfun)
        ticks, labels = _warped_ticks(taus, warped)
        a.set_xticks(ticks)
        a.set_xticklabels(labels)
        a.set_xlabel(f"τ: {label}")
        a.set_title("non-linear τ axis: equal widths hold equal fractions of runs", fontsize="small")
    else:
        _line_with_band(a, frame, "tau", algorithms, colors)
        a.set_xlabel(f"τ: {label}")
    what = "runs" if kind == "runs" else "tasks (mean over runs)"
    a.set_ylabel(f"Fraction of {what} with score > τ")
    a.set_ylim(-0.02, 1.02)
    decorate_axes(a)
    add_legend(a, n)
    return fig


# --------------------------------------------------------------------------- pairwise comparisons
def _pairs_one_direction(frame: pd.DataFrame, algorithms: list[str]) -> pd.DataFrame:
    """Keep one row per unordered pair, X earlier than Y in report order (P(Y>X) = 1 - P(X>Y))."""
    rank = {a: i for i, a in enumerate(algorithms)}
    rows = []
    seen = set()
    for _, r in frame.iterrows():
        x, y = str(r["algorithm_x"]), str(r["algorithm_y"])
        if x == y:
            continue
        key = frozenset((x, y))
        if key in seen:
            continue
        seen.add(key)
        rows.append(r)
    out = pd.DataFrame(rows)
    out["_order"] = [
        (min(rank[x], rank[y]), max(rank[x], rank[y])) for x, y in zip(out["algorithm_x"], out["algorithm_y"])
    ]
    return out.sort_values("_order", kind="stable").drop(columns="_order")


def _pair_rows(
    a: Axes, frame: pd.DataFrame, colors: dict[str, str], ref: float, xlabel: str, *, right_labels: bool
) -> None:
    """Horizontal CI rows for pairs: colour of X, labels of X on the left and Y on the right."""
    m = len(frame)
    h = 0.6
    for i, (_, r) in enumerate(frame.iterrows()):
        y = m - 1 - i
        lo, hi, pt = float(r["low"]), float(r["high"]), float(r["point"])
        a.barh(y=y, width=hi - lo, left=lo, height=h, color=colors[str(r["algorithm_x"])], alpha=0.75)
        a.vlines(pt, y - h / 2, y + h / 2, color="k", linewidth=1.5, alpha=0.7)
    a.axvline(ref, color="k", linestyle="--", linewidth=1, alpha=0.5)
    _interval_limits(a, frame["low"], frame["high"], frame["point"], [ref])
    a.set_yticks(range(m))
    a.set_ylim(-0.6, m - 0.4)
    if right_labels:
        a.set_yticklabels([figure_label(x) for x in reversed(frame["algorithm_x"].tolist())])
        twin = a.twinx()
        twin.set_ylim(a.get_ylim())
        twin.set_yticks(range(m))
        twin.set_yticklabels([figure_label(y) for y in reversed(frame["algorithm_y"].tolist())])
        twin.tick_params(length=0)
        for s in twin.spines.values():
            s.set_visible(False)
    else:
        a.set_yticklabels(
            [
                f"{figure_label(x)} − {figure_label(y)}"
                for x, y in zip(reversed(frame["algorithm_x"].tolist()), reversed(frame["algorithm_y"].tolist()))
            ]
        )
    a.tick_params(axis="y", length=0)
    a.set_xlabel(_t(xlabel))
    decorate_axes(a, "x")
    a.spines["left"].set_visible(False)


#: The diverging colour map of the pairwise matrices (P(X > Y) around 0.5, differences around 0).
PAIR_CMAP = "RdBu_r"


def _pair_matrix(
    a: Axes,
    frame: pd.DataFrame,
    algorithms: list[str],
    *,
    antisym,
    ref: float,
    vmin: float,
    vmax: float,
    cbar_label: str,
) -> None:
    """Matrix of X (rows) vs Y (columns) for many algorithms, coloured by :data:`PAIR_CMAP` from ``vmin`` to
    ``vmax``; bold = CI excludes ``ref``."""
    n = len(algorithms)
    idx = {a: i for i, a in enumerate(algorithms)}
    point = np.full((n, n), np.nan)
    low = np.full((n, n), np.nan)
    high = np.full((n, n), np.nan)
    for _, r in frame.iterrows():
        i, j = idx[str(r["algorithm_x"])], idx[str(r["algorithm_y"])]
        point[i, j], low[i, j], high[i, j] = r["point"], r["low"], r["high"]
        if np.isnan(point[j, i]):
            point[j, i], low[j, i], high[j, i] = antisym(r["point"]), antisym(r["high"]), antisym(r["low"])
    im = a.imshow(point, cmap=PAIR_CMAP, vmin=vmin, vmax=vmax, aspect="equal")
    fs = 8 if n <= 10 else 6.5
    for i in range(n):
        for j in range(n):
            if np.isnan(point[i, j]):
                continue
            sig = low[i, j] > ref or high[i, j] < ref
            val = point[i, j]
            shade = (val - vmin) / (vmax - vmin)
            a.text(
                j,
                i,
                f"{val:.2f}",
                ha="center",
                va="center",
                fontsize=fs,
                fontweight="bold" if sig else "normal",
                color="white" if abs(shade - 0.5) > 0.3 else "black",
            )
    a.set_xticks(range(n))
    a.set_yticks(range(n))
    a.set_xticklabels([figure_label(x) for x in algorithms], rotation=45, ha="right")
    a.set_yticklabels([figure_label(x) for x in algorithms])
    a.set_xlabel("algorithm Y")
    a.set_ylabel("algorithm X")
    cb = a.figure.colorbar(im, ax=a, shrink=0.8)
    cb.set_label(_t(cbar_label))


#: Above this many unordered pairs the pairwise figures switch from CI rows to a matrix.
MAX_PAIR_ROWS = 28


def plot_probability_of_improvement(
    report: Tables | pd.DataFrame,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    layout: str = "auto",
    ax: Axes | None = None,
    colors: dict[str, str] | None = None,
) -> Figure:
    """P(X > Y) with its CI for pairs of algorithms (ties count 1/2).

    ``layout="rows"`` draws the paper's figure (X on the left axis, Y on the right, dashed line
    at 0.5); ``"matrix"`` draws every pair as a grid (bold: the CI excludes 0.5), which stays
    readable with 15 algorithms. ``"auto"`` uses rows for up to 28 pairs.

    Example:
        >>> fig = plot_probability_of_improvement(report, pairs=[("SPR", "DER")])   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(
        report, "improvement", ["algorithm_x", "algorithm_y", "point", "low", "high"]
    )
    frame = frame.copy()
    frame["algorithm_x"] = frame["algorithm_x"].astype(str)
    frame["algorithm_y"] = frame["algorithm_y"].astype(str)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    if pairs is not None:
        rows = []
        for x, y in pairs:
            hit = frame[(frame["algorithm_x"] == x) & (frame["algorithm_y"] == y)]
            if hit.empty:
                rev = frame[(frame["algorithm_x"] == y) & (frame["algorithm_y"] == x)]
                if rev.empty:
                    raise ValueError(f"no probability of improvement for the pair ({x!r}, {y!r}) in the table")
                r = rev.iloc[0]
                hit = pd.DataFrame(
                    [
                        {
                            "algorithm_x": x,
                            "algorithm_y": y,
                            "point": 1 - r["point"],
                            "low": 1 - r["high"],
                            "high": 1 - r["low"],
                        }
                    ]
                )
            rows.append(hit.iloc[[0]])
        chosen = pd.concat(rows, ignore_index=True)
    else:
        chosen = _pairs_one_direction(frame, algorithms)
    if layout == "auto":
        layout = "rows" if (pairs is not None or len(chosen) <= MAX_PAIR_ROWS) else "matrix"
    if layout == "rows":
        longest = max(len(figure_label(s)) for s in list(chosen["algorithm_x"]) + list(chosen["algorithm_y"]))
        fig, a = _axes(ax, (4.5 + 0.14 * longest, 0.8 + 0.38 * len(chosen)))
        _pair_rows(a, chosen, colors, 0.5, "P(X > Y)   (X left, Y right)", right_labels=True)
        a.set_xlim(min(0.0, float(chosen["low"].min())) - 0.03, max(1.0, float(chosen["high"].max())) + 0.03)
        a.set_title("Probability of improvement", fontsize="medium")
    elif layout == "matrix":
        used = [a_ for a_ in algorithms if a_ in set(frame["algorithm_x"]) | set(frame["algorithm_y"])]
        n = len(used)
        fig, a = _axes(ax, (1.8 + 0.55 * n, 1.2 + 0.5 * n))
        _pair_matrix(
            a,
            frame,
            used,
            antisym=lambda v: 1 - v,
            ref=0.5,
            vmin=0.0,
            vmax=1.0,
            cbar_label="P(X > Y); bold: CI excludes 0.5",
        )
        a.set_title("Probability of improvement P(X > Y)", fontsize="medium")
    else:
        raise ValueError(f"layout must be 'auto', 'rows' or 'matrix', not {layout!r}")
    return fig


def plot_differences(
    report: Tables | pd.DataFrame,
    *,
    metric: str | None = None,
    layout: str = "auto",
    ax: Axes | None = None,
    colors: dict[str, str] | None = None,
) -> Figure:
    """CI of metric(X) − metric(Y) for pairs of algorithms; the dashed line is "no difference".

    Defaults to IQM when present. With many pairs (``layout="auto"``) draws a matrix where bold
    cells have a CI that excludes 0.

    Example:
        >>> fig = plot_differences(report, metric="iqm")   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(
        report, "differences", ["algorithm_x", "algorithm_y", "metric", "point", "low", "high"]
    )
    frame = frame.copy()
    frame["metric"] = frame["metric"].astype(str)
    frame["algorithm_x"] = frame["algorithm_x"].astype(str)
    frame["algorithm_y"] = frame["algorithm_y"].astype(str)
    available = list(pd.unique(frame["metric"]))
    if metric is None:
        metric = "iqm" if "iqm" in available else available[0]
    if metric not in available:
        raise ValueError(f"no differences for metric {metric!r} (the table has {available})")
    frame = frame[frame["metric"] == metric]
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    chosen = _pairs_one_direction(frame, algorithms)
    label = _t(f"{metric_title(metric)} difference X − Y ({score_label(rep)})")
    if layout == "auto":
        layout = "rows" if len(chosen) <= MAX_PAIR_ROWS else "matrix"
    if layout == "rows":
        longest = max(
            len(figure_label(x)) + len(figure_label(y)) for x, y in zip(chosen["algorithm_x"], chosen["algorithm_y"])
        )
        fig, a = _axes(ax, (4.5 + 0.1 * longest, 0.9 + 0.38 * len(chosen)))
        _pair_rows(a, chosen, colors, 0.0, label, right_labels=False)
        a.set_title(_t(f"Differences in {metric_title(metric)}"), fontsize="medium")
    elif layout == "matrix":
        used = [a_ for a_ in algorithms if a_ in set(frame["algorithm_x"]) | set(frame["algorithm_y"])]
        n = len(used)
        bound = float(np.nanmax(np.abs(frame[["point"]].to_numpy(float)))) or 1.0
        fig, a = _axes(ax, (1.8 + 0.55 * n, 1.2 + 0.5 * n))
        _pair_matrix(
            a,
            frame,
            used,
            antisym=lambda v: -v,
            ref=0.0,
            vmin=-bound,
            vmax=bound,
            cbar_label=f"{metric_title(metric)}(X) − {metric_title(metric)}(Y); bold: CI excludes 0",
        )
        a.set_title(_t(f"Differences in {metric_title(metric)}"), fontsize="medium")
    else:
        raise ValueError(f"layout must be 'auto', 'rows' or 'matrix', not {layout!r}")
    return fig


# --------------------------------------------------------------------------- curves
def plot_sample_efficiency_curves(
    report: Tables | pd.DataFrame,
    *,
    metric: str | None = None,
    ax: Axes | None = None,
    colors: dict[str, str] | None = None,
    xlabel: str | None = None,
) -> Figure:
    """Aggregate metric over training steps with pointwise CI bands (defaults to IQM).

    Example:
        >>> fig = plot_sample_efficiency_curves(report, metric="iqm")   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(report, "curves", ["algorithm", "metric", "step", "point"])
    frame = frame.copy()
    frame["metric"] = frame["metric"].astype(str)
    frame["algorithm"] = frame["algorithm"].astype(str)
    available = list(pd.unique(frame["metric"]))
    if metric is None:
        metric = "iqm" if "iqm" in available else available[0]
    if metric not in available:
        raise ValueError(f"no curves for metric {metric!r} (the table has {available})")
    frame = frame[frame["metric"] == metric]
    algorithms = used_names(algorithms, frame)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    n = len(algorithms)
    fig, a = _axes(ax, (6.4 + (1.8 if n > 5 else 0), 4.2))
    steps = frame["step"].to_numpy(float)
    scale = _axis_scale(steps)
    _line_with_band(a, frame, "step", algorithms, colors, xfun=None if scale == 1.0 else (lambda x: x / scale))
    step_label = (rep.provenance.get("step_label") if rep is not None else None) or "training step"
    a.set_xlabel(_t(xlabel or str(step_label)) + ("" if scale == 1.0 else f" (× {scale:g})"))
    a.set_ylabel(_t(f"{metric_title(metric)} of {score_label(rep)}"))
    decorate_axes(a)
    add_legend(a, n)
    return fig


def _axis_scale(values: np.ndarray) -> float:
    """1, or the power of ten to divide an axis's values by when their span overflows a float (steps of
    -1.7e308 to 1.7e308): matplotlib cannot place ticks on an infinite span."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 1.0
    with np.errstate(over="ignore"):
        span = float(finite.max()) - float(finite.min())
    if np.isfinite(span) and abs(span) < 1e300:
        return 1.0
    return float(10.0 ** np.floor(np.log10(np.abs(finite).max())))


def plot_optimality_gap_curve(
    report: Tables | pd.DataFrame,
    *,
    ax: Axes | None = None,
    colors: dict[str, str] | None = None,
) -> Figure:
    """Optimality gap as a function of the threshold γ, with CI bands (lower is better).

    Example:
        >>> fig = plot_optimality_gap_curve(report)   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(report, "gap_curve", ["algorithm", "gamma", "point"])
    frame = frame.copy()
    frame["algorithm"] = frame["algorithm"].astype(str)
    algorithms = used_names(algorithms, frame)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    n = len(algorithms)
    fig, a = _axes(ax, (6.4 + (1.8 if n > 5 else 0), 4.2))
    _line_with_band(a, frame, "gamma", algorithms, colors)
    a.set_xlabel(_t(f"γ, the target ({score_label(rep)})"))
    a.set_ylabel("Optimality gap below γ (lower is better)")
    decorate_axes(a)
    add_legend(a, n)
    return fig


# --------------------------------------------------------------------------- ranks
#: Most rank columns a rank grid draws; more ranks (many algorithms) are summed in equal bins ("1–10", ...).
MAX_RANK_COLUMNS = 30


def _binned_ranks(grid: pd.DataFrame) -> pd.DataFrame:
    """``grid`` (algorithm x rank) with its rank columns summed into at most :data:`MAX_RANK_COLUMNS` bins."""
    ranks = list(grid.columns)
    if len(ranks) <= MAX_RANK_COLUMNS:
        return grid
    width = -(-len(ranks) // MAX_RANK_COLUMNS)
    bins = [ranks[i : i + width] for i in range(0, len(ranks), width)]
    return pd.DataFrame({f"{b[0]:g}–{b[-1]:g}": grid[b].sum(axis=1) for b in bins}, index=grid.index)


def plot_rank_distributions(
    report: Tables | pd.DataFrame,
    *,
    task: str = AVERAGE_TASK,
    ax: Axes | None = None,
) -> Figure:
    """Probability of each algorithm taking each rank (1 = best), as an annotated grid.

    ``task="__average__"`` shows the mean over tasks; pass a task name for one task. A grid
    reads the same with 2 or 15 algorithms, where stacked bars do not.

    Example:
        >>> fig = plot_rank_distributions(report)   # doctest: +SKIP
    """
    frame, algorithms, rep = resolve_table(report, "ranks", ["algorithm", "task", "rank", "probability"])
    frame = frame.copy()
    frame["task"] = frame["task"].astype(str)
    frame["algorithm"] = frame["algorithm"].astype(str)
    tasks = list(pd.unique(frame["task"]))
    if task not in tasks:
        shown = tasks[:10] + (["..."] if len(tasks) > 10 else [])
        raise ValueError(f"no rank distribution for task {task!r} (the table has {shown})")
    frame = frame[frame["task"] == task]
    algorithms = used_names(algorithms, frame)
    grid = frame.pivot_table(index="algorithm", columns="rank", values="probability", aggfunc="sum").reindex(algorithms)
    grid = _binned_ranks(grid.fillna(0.0))
    ranks = list(grid.columns)
    n, k = len(algorithms), len(ranks)
    longest = max(len(figure_label(a_)) for a_ in algorithms)
    fig, a = _axes(ax, (1.6 + 0.08 * longest + 0.55 * k, 1.0 + 0.42 * n))
    vmax = max(0.5, float(grid.to_numpy(float).max()))  # contrast without exaggerating small values
    im = a.imshow(grid.to_numpy(float), cmap="Blues", vmin=0.0, vmax=vmax, aspect="auto")
    fs = 8 if k <= 10 else 6.5
    values = grid.to_numpy(float)
    for i in range(n):
        for j in range(k):
            v = float(values[i, j])
            if v >= 0.005:
                a.text(
                    j,
                    i,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=fs,
                    color="white" if v > 0.6 * vmax else "black",
                )
    a.set_xticks(range(k))
    a.set_xticklabels([f"{r:g}" if isinstance(r, (int, float, np.number)) else _t(str(r)) for r in ranks])
    a.set_yticks(range(n))
    a.set_yticklabels([figure_label(x) for x in algorithms])
    a.set_xlabel("rank (1 = best)")
    where = "averaged over tasks" if task == AVERAGE_TASK else f"on {figure_label(task)}"
    a.set_title(f"Rank distribution, {where}", fontsize="medium")
    cb = fig.colorbar(im, ax=a, shrink=0.8)
    cb.set_label("probability (bootstrap)")
    return fig


# --------------------------------------------------------------------------- per-task scores
def plot_task_scores(
    report: Tables | pd.DataFrame,
    *,
    kind: str = "strip",
    tasks: Sequence[str] | None = None,
    ax: Axes | None = None,
    ncols: int | None = None,
    colors: dict[str, str] | None = None,
) -> Figure:
    """Per-task score of every run: a strip (jittered dots + mean tick) or a box per algorithm.

    Without ``ax``: one small panel per task, each on its own scale (raw scores differ by orders
    of magnitude between tasks). With ``ax``: all tasks on one shared axis (sensible for
    normalised scores), algorithms side by side within each task.

    Example:
        >>> fig = plot_task_scores(report, kind="box")   # doctest: +SKIP
    """
    if kind not in ("strip", "box"):
        raise ValueError(f"kind must be 'strip' or 'box', not {kind!r}")
    frame, algorithms, rep = resolve_table(report, "scores", ["algorithm", "task", "score"])
    frame = frame.copy()
    frame["algorithm"] = frame["algorithm"].astype(str)
    frame["task"] = frame["task"].astype(str)
    if "step" in frame.columns and frame["step"].notna().any():  # histories: keep each run's last step
        key = [c for c in ("algorithm", "task", "run_id") if c in frame.columns]
        frame = frame.sort_values("step").groupby(key, sort=False).tail(1)
    all_tasks = sorted(pd.unique(frame["task"]))
    tasks = list(tasks) if tasks is not None else all_tasks
    missing = [t for t in tasks if t not in all_tasks]
    if missing:
        raise ValueError(f"task(s) {missing} are not in the scores table")
    algorithms = used_names(algorithms, frame)
    colors = colors or algorithm_colors(algorithms if rep is None else rep.algorithms)
    n = len(algorithms)
    rng = np.random.default_rng(0)  # jitter only; fixed so figures are reproducible
    label = _t(score_label(rep))

    table_means = _task_means(rep) if kind == "strip" else {}

    def draw(a: Axes, sub: pd.DataFrame, offset: float, width: float) -> None:
        means: list[tuple[float, float, float]] = []  # y, x from, x to
        for i, alg in enumerate(algorithms):
            vals = sub.loc[sub["algorithm"] == alg, "score"].to_numpy(float)
            vals = vals[np.isfinite(vals)]
            if vals.size == 0:
                continue
            x = offset + (i - (n - 1) / 2) * width
            if kind == "box":
                bp = a.boxplot(
                    vals,
                    positions=[x],
                    widths=width * 0.8,
                    patch_artist=True,
                    showfliers=True,
                    manage_ticks=False,
                    flierprops={"markersize": 2},
                )
                for patch in bp["boxes"]:
                    patch.set_facecolor(colors[alg])
                    patch.set_alpha(0.7)
                for med in bp["medians"]:
                    med.set_color("k")
            else:
                jit = rng.uniform(-0.3, 0.3, vals.size) * width
                # dots as a line's markers: what scatter draws for one colour and size, at a fraction of the cost
                a.plot(x + jit, vals, "o", ms=3 if vals.size < 30 else 2, color=colors[alg], alpha=0.75, mew=0)
                task = str(sub["task"].iloc[0])
                mean = table_means.get((alg, task))  # the per-task table's mean: the figure computes no statistic
                means.append((vals.mean() if mean is None else mean, x - 0.4 * width, x + 0.4 * width))
        if means:  # every mean tick on top of the dots, as one collection
            y, lo, hi = (list(v) for v in zip(*means))
            a.hlines(y, lo, hi, color="k", linewidth=1.5)

    if ax is not None:
        a = ax
        fig = root_figure(a)
        width = 0.8 / max(n, 1)
        for t_i, t in enumerate(tasks):
            draw(a, frame[frame["task"] == t], float(t_i), width)
        a.set_xticks(range(len(tasks)))
        a.set_xticklabels(
            [figure_label(t) for t in tasks],
            rotation=60 if len(tasks) > 6 else 0,
            ha="right" if len(tasks) > 6 else "center",
        )
        a.set_ylabel(label)
        decorate_axes(a, "y")
        for alg in algorithms:
            a.scatter([], [], color=colors[alg], label=figure_label(alg))
        add_legend(a, n)
        return fig

    ncols = ncols or min(len(tasks), 6)
    fig, axs = _panel_grid(len(tasks), n, ncols)
    for a, task_name in zip(axs, tasks):
        draw(a, frame[frame["task"] == task_name], 0.0, 1.0)
        a.set_title(figure_label(task_name), fontsize="small", y=1.0)  # a fixed y is not re-measured at each draw
        a.set_xticks([])
        a.tick_params(axis="y", labelsize="x-small")
        decorate_axes(a, "y")
    fig.supylabel(label, fontsize="medium", x=0.01)
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], marker="o", linestyle="", color=colors[alg], label=figure_label(alg)) for alg in algorithms
    ]
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        frameon=False,
        fontsize="small",
        ncol=min(n, max(ncols, 4)),
    )
    what = "mean per algorithm" if kind == "strip" else "median, quartiles"
    height = fig.get_figheight()
    fig.suptitle(f"Score of every run per task (black: {what})", fontsize="medium", y=1 - 0.15 / height)
    return fig


def _task_means(report: Any) -> dict[tuple[str, str], float]:
    """(algorithm, task) -> the mean of the report's per-task table (empty without a report or that table)."""
    try:
        table = report.table("per_task") if report is not None else None
    except KeyError:
        return {}
    if table is None or table.empty or "mean" not in table.columns:
        return {}
    keys = zip(table["algorithm"].astype(str), table["task"].astype(str))
    return dict(zip(keys, table["mean"].to_numpy(float)))


def _panel_grid(n_panels: int, n_algorithms: int, ncols: int) -> tuple[Figure, list[Axes]]:
    """A figure with one small Axes per panel (task), ``ncols`` to a row, and room for the shared labels.

    Fixed margins (``subplots_adjust``) instead of a layout engine, whose cost grows with the number of
    panels: room for the score label on the left, the title on top and the legend rows at the bottom.
    """
    from matplotlib.figure import Figure as _Figure

    nrows = math.ceil(n_panels / ncols)
    legend_rows = math.ceil(n_algorithms / min(n_algorithms, max(ncols, 4)))
    bottom_in = 0.35 + 0.22 * legend_rows
    width, height = 2.3 * ncols + 0.9, 1.9 * nrows + 0.7 + bottom_in
    fig = _Figure(figsize=(width, height))
    fig.subplots_adjust(
        left=0.75 / width, right=0.98, top=1 - 0.65 / height, bottom=bottom_in / height, wspace=0.35, hspace=0.45
    )
    axs = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for a in axs:  # the panels have no axis labels: fixed label positions spare measuring every panel's ticks
        a.xaxis.set_label_coords(0.5, -0.1)
        a.yaxis.set_label_coords(-0.1, 0.5)
    for a in axs[n_panels:]:
        fig.delaxes(a)
    return fig, axs[:n_panels]
