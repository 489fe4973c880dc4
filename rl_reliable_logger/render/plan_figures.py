"""The planning figure: predicted interval width (and a pair's separation probability) against N.

Reads only the ``plan.csv`` table (:attr:`~rl_reliable_logger.analysis.planning.Plan.table`), so
the figure can be redrawn from a saved file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from ..store.bundle import write_bundle
from ..store.encode import encode
from .figures import algorithm_colors, metric_title

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


class PlanTables(Protocol):
    """What a plan folder is written from: a :class:`~rl_reliable_logger.analysis.planning.Plan`'s tables and
    provenance (the writer reads nothing else of it)."""

    table: pd.DataFrame
    launch: pd.DataFrame
    provenance: dict[str, Any]


#: The files of a plan folder, in the order they are listed.
PLAN_FILES = ("plan.csv", "launch.csv", "plan.png")


def save_plan(
    result: PlanTables,
    out_dir: str | os.PathLike,
    *,
    figures: bool = True,
    inputs: Sequence[str | os.PathLike] = (),
    force: bool = False,
) -> list[Path]:
    """Write ``plan.csv``, ``launch.csv`` (with a target or a pair) and ``plan.png`` as a plan bundle; return the paths.

    The folder goes through the results-folder guard of :func:`~rl_reliable_logger.save_report`
    (:func:`~.bundle.check_output_folder`): a folder holding the user's files, an input, a symlink
    or an analysis bundle is refused; an earlier plan there is replaced as a whole.

    Example:
        >>> save_plan(plan(table, target_width=0.05), "plan/")   # doctest: +SKIP
    """
    prov = result.provenance
    files: dict[str, Any] = {"plan.csv": result.table}
    if prov.get("target_width") is not None or prov.get("compare") is not None:
        files["launch.csv"] = result.launch
    digest = hashlib.sha256(
        b"\0".join(name.encode() + b"\0" + encode(name, t) for name, t in files.items())
    ).hexdigest()
    if figures:
        from .export import export

        fig = plot_plan(
            result.table,
            target_width=prov.get("target_width"),
            power=prov.get("power"),
            ci=prov["ci"],
            compare=prov.get("compare"),
        )
        files["plan.png"] = export(fig, ("png",))["png"]
    out = write_bundle(out_dir, files, digest=digest, inputs=inputs, force=force, kind="plan")
    return [out / name for name in PLAN_FILES if (out / name).exists()]


def _text(name: object) -> str:
    """A name as literal matplotlib text: ``$`` would start mathtext."""
    return str(name).replace("$", r"\$")


def plot_plan(
    table: pd.DataFrame,
    *,
    target_width: float | None = None,
    power: float | None = None,
    ci: float = 0.95,
    compare: Sequence[str] | None = None,
) -> Figure:
    """Width of each algorithm's interval vs runs per task (band: 10%-90% over synthetic
    experiments); with pair rows, a second panel with the probability that the pair separates.

    ``compare`` (the pair ``(A, B)``, as ``plan(compare=...)`` records it) names the algorithms in the
    power panel's legend: ``P(SPR > DER) ≠ 0.5`` rather than a generic ``P(A > B)``."""
    from matplotlib.figure import Figure

    algs = table[table["kind"] == "algorithm"]
    pairs = table[table["kind"] == "pair"]
    panels = 2 if len(pairs) else 1
    fig = Figure(figsize=(5.2 * panels, 3.8), layout="constrained")
    axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    names = list(pd.unique(algs["algorithm"]))
    colors = algorithm_colors(names)
    metric = str(table["metric"].iloc[0]) if len(table) else ""
    ax = axes[0]
    for name in names:
        rows = algs[algs["algorithm"] == name].sort_values("n_runs")
        ax.plot(rows["n_runs"], rows["expected_width"], marker="o", ms=3, color=colors[name], label=_text(name))
        ax.fill_between(rows["n_runs"], rows["width_q10"], rows["width_q90"], color=colors[name], alpha=0.15, lw=0)
    if target_width is not None:
        ax.axhline(target_width, color="0.3", ls="--", lw=1, label="target width")
    ax.set_xlabel("runs per task (N)")
    ax.set_ylabel(f"expected width of the {ci:.0%} {metric_title(metric)} interval")
    ax.set_title("Predicted interval width", fontsize="medium")
    ax.legend(frameon=False, fontsize="small")
    ax.grid(True, alpha=0.25)
    if len(pairs):
        ax2 = axes[1]
        for name in pd.unique(pairs["algorithm"]):
            rows = pairs[pairs["algorithm"] == name].sort_values("n_runs")
            ax2.plot(rows["n_runs"], rows["p_separate"], marker="o", ms=3, label=f"{_text(name)}: difference ≠ 0")
            poi = f"P({_text(compare[0])} > {_text(compare[1])})" if compare and len(compare) == 2 else "P(X > Y)"
            ax2.plot(rows["n_runs"], rows["p_separate_poi"], marker="s", ms=3, ls=":", label=f"{poi} ≠ 0.5")
        if power is not None:
            ax2.axhline(power, color="0.3", ls="--", lw=1, label="target")
        ax2.set_ylim(-0.02, 1.02)
        ax2.set_xlabel("runs per task (N)")
        ax2.set_ylabel("probability the interval separates")
        ax2.set_title("Predicted power", fontsize="medium")
        ax2.legend(frameon=False, fontsize="small")
        ax2.grid(True, alpha=0.25)
    return fig
