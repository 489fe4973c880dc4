"""Report: the result of :func:`rl_reliable_logger.evaluate`, as plain pandas tables.

Everything downstream (plots, HTML, LaTeX, tracker sinks) reads only these tables, so a
Report written to a folder and read back (:meth:`Report.load`) draws exactly the same.

Table schemas (column names are a contract other tools rely on):

``aggregates``   algorithm, metric, point, low, high
``per_task``     algorithm, task, n_runs, mean, low, high, median, min, max
``improvement``  algorithm_x, algorithm_y, point, low, high      (P(X > Y), ties count 1/2)
``differences``  algorithm_x, algorithm_y, metric, point, low, high   (metric(X) - metric(Y))
``profiles``     algorithm, kind, tau, fraction, low, high   (kind: ``runs`` or ``tasks``)
``ranks``        algorithm, task, rank, probability   (task ``__average__`` = mean over tasks)
``gap_curve``    algorithm, gamma, point, low, high   (optimality gap as a function of gamma)
``curves``       algorithm, metric, step, point, low, high   (empty unless curves were asked)
``scores``       algorithm, task, run_id, seed, score (+ step, provenance columns): the input used
``provenance``   dict: source, filters, runs used / dropped with reasons, reps, seed, method, ...
``warnings``     list of human-readable strings
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..data import csvcells

TABLES = (
    "aggregates",
    "per_task",
    "improvement",
    "differences",
    "profiles",
    "ranks",
    "gap_curve",
    "curves",
    "scores",
)

#: Extra tables other modules may attach (e.g. ``jordan``, ``tuning``); saved when present.
OPTIONAL_TABLES = ("jordan", "tuning", "jordan_quantiles")


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns})


@dataclass
class Report:
    """All results of one evaluation.

    Example:
        >>> report = evaluate(table, reps=2000, seed=0)      # doctest: +SKIP
        >>> report.aggregates.query("metric == 'iqm'")      # doctest: +SKIP
        >>> save_report(report, "results/")                  # doctest: +SKIP
    """

    aggregates: pd.DataFrame = field(default_factory=lambda: _empty(["algorithm", "metric", "point", "low", "high"]))
    per_task: pd.DataFrame = field(
        default_factory=lambda: _empty(["algorithm", "task", "n_runs", "mean", "low", "high", "median", "min", "max"])
    )
    improvement: pd.DataFrame = field(
        default_factory=lambda: _empty(["algorithm_x", "algorithm_y", "point", "low", "high"])
    )
    differences: pd.DataFrame = field(
        default_factory=lambda: _empty(["algorithm_x", "algorithm_y", "metric", "point", "low", "high"])
    )
    profiles: pd.DataFrame = field(
        default_factory=lambda: _empty(["algorithm", "kind", "tau", "fraction", "low", "high"])
    )
    ranks: pd.DataFrame = field(default_factory=lambda: _empty(["algorithm", "task", "rank", "probability"]))
    gap_curve: pd.DataFrame = field(default_factory=lambda: _empty(["algorithm", "gamma", "point", "low", "high"]))
    curves: pd.DataFrame = field(
        default_factory=lambda: _empty(["algorithm", "metric", "step", "point", "low", "high"])
    )
    scores: pd.DataFrame = field(default_factory=lambda: _empty(["algorithm", "task", "run_id", "seed", "score"]))
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def algorithms(self) -> list[str]:
        """Algorithms in report order (the order used for colours in every figure)."""
        if "algorithms" in self.provenance:
            return list(self.provenance["algorithms"])
        return list(pd.unique(self.aggregates["algorithm"]))

    def table(self, name: str) -> pd.DataFrame:
        """Return a table by name, including optional ones such as ``jordan``."""
        if name in TABLES:
            return getattr(self, name)
        return self.extra[name]

    def update_digest(self, digest: Any) -> None:
        """Feed every table (as CSV, in a fixed order) into a ``hashlib`` digest.

        The tracker sinks build their "same report?" hashes on this, each adding what else counts.
        """
        for name in TABLES:
            digest.update(name.encode() + b"\0" + getattr(self, name).to_csv(index=False).encode() + b"\0")
        for name in sorted(self.extra):
            digest.update(name.encode() + b"\0" + self.extra[name].to_csv(index=False).encode() + b"\0")

    def headline(self, metric: str = "iqm") -> pd.DataFrame:
        """The aggregate rows of one metric, one per algorithm."""
        return self.aggregates[self.aggregates["metric"] == metric].reset_index(drop=True)

    # ------------------------------------------------------------------ files
    def save_tables(self, out_dir: str | os.PathLike) -> Path:
        """Write every table as CSV plus ``provenance.json``; return the folder.

        Text cells a spreadsheet would execute get a leading ``'`` (:mod:`..data.csvcells`); :meth:`load` undoes it.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            frame = getattr(self, name)
            if name == "curves" and frame.empty:
                continue
            csvcells.write_csv(frame, out / f"{name}.csv")
        for name, frame in self.extra.items():
            csvcells.write_csv(frame, out / f"{name}.csv")
        payload = dict(self.provenance)
        payload["warnings"] = list(self.warnings)
        (out / "provenance.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
        return out

    @classmethod
    def load(cls, out_dir: str | os.PathLike) -> Report:
        """Read a results folder written by :meth:`save_tables` or ``save_report``."""
        src = Path(out_dir)
        if not (src / "aggregates.csv").exists():
            raise FileNotFoundError(
                f"{src} has no aggregates.csv; is it a folder written by `rl-reliable evaluate --out`?"
            )
        kwargs: dict[str, Any] = {}
        for name in TABLES:
            path = src / f"{name}.csv"
            if path.exists():
                kwargs[name] = csvcells.read_csv(path)
        extra = {}
        for name in OPTIONAL_TABLES:
            path = src / f"{name}.csv"
            if path.exists():
                extra[name] = csvcells.read_csv(path)
        prov = json.loads((src / "provenance.json").read_text()) if (src / "provenance.json").exists() else {}
        warnings = list(prov.pop("warnings", []))
        return cls(**kwargs, provenance=prov, warnings=warnings, extra=extra)
