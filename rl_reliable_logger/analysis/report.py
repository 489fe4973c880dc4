"""Report: the result of :func:`rl_reliable_logger.evaluate`, as plain pandas tables.

Everything downstream (plots, HTML, LaTeX, tracker sinks) reads only these tables, so a
Report written to a folder and read back (:meth:`Report.load`) draws exactly the same.

Table schemas (column names are a contract other tools rely on):

``aggregates``   algorithm, metric, point, low, high, caveat
``per_task``     algorithm, task, n_runs, mean, low, high, median, min, max, caveat
``improvement``  algorithm_x, algorithm_y, point, low, high, caveat      (P(X > Y), ties count 1/2)
``differences``  algorithm_x, algorithm_y, metric, point, low, high, caveat   (metric(X) - metric(Y))
``profiles``     algorithm, kind, tau, fraction, low, high   (kind: ``runs`` or ``tasks``)
``ranks``        algorithm, task, rank, probability   (task ``__average__`` = mean over tasks)
``gap_curve``    algorithm, gamma, point, low, high   (optimality gap as a function of gamma)
``curves``       algorithm, metric, step, n_runs, point, low, high   (empty unless curves were asked)
``scores``       algorithm, task, run_id, seed, score (+ step, provenance columns): the input used
``comparisons``  statistic, algorithm_x, algorithm_y, metric, point, low, high, low_simultaneous,
                 high_simultaneous, p_value, p_holm, distinguishable   (only with ``comparisons=True``;
                 family-wise control over all pairs, see ``analysis.comparisons``)
``watch``        algorithm_x, algorithm_y, metric, decision, low, high, look   (a published watch look only)
``watch_launch`` algorithm, task, add_runs   (a published watch look only: the runs before the next look)
``race``, ``race_alive``, ``race_eliminated``, ``race_launch``   (a published race look only: the selection, the
                 configurations racing, the eliminated ones, the runs before the next look; ``config`` names each)
``gate``         candidate, name, verdict, outcome, seeds, mean, estimate, low, high, level, incumbent, look, reason
                 (a published gate look only: every candidate of the stream at its last look)
``provenance``   dict: source, filters, runs used / dropped with reasons, reps, seed, method, ...
``warnings``     list of human-readable strings

``caveat`` (issue 52): empty where the row's interval is expected to hold, else one short reason why it may not
(:mod:`.caveats`); a results folder written before it has none, and reads back as written, without it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..data import csvcells
from ..data.counts import Counts, count_runs
from .summary import report_summary


@dataclass(frozen=True)
class TableSpec:
    """One table of a Report: its name (also its file name ``<name>.csv``), columns and how it is kept.

    ``kind``: ``"core"`` (always computed; written even when empty), ``"nonempty"`` (always present,
    written only when it has rows: ``curves``) or ``"optional"`` (present only when the analysis was
    asked for it: Jordan, tuning). ``text_columns`` are names, read back as text (never as numbers).
    ``title`` is the heading of its table in ``report.html`` (None: shown as a figure, not a table).
    ``added`` are columns a results folder written before them lacks: such a folder reads back without them.
    """

    name: str
    columns: tuple[str, ...]
    text_columns: tuple[str, ...]
    kind: str = "core"
    title: str | None = None
    max_rows: int | None = None
    added: tuple[str, ...] = ()


#: Every table a Report can hold, in report order: the one list save, load, HTML and the sinks use.
REPORT_TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "aggregates",
        ("algorithm", "metric", "point", "low", "high", "caveat"),
        ("algorithm", "metric", "caveat"),
        added=("caveat",),
    ),
    TableSpec(
        "per_task",
        ("algorithm", "task", "n_runs", "mean", "low", "high", "median", "min", "max", "caveat"),
        ("algorithm", "task", "caveat"),
        added=("caveat",),
    ),
    TableSpec(
        "improvement",
        ("algorithm_x", "algorithm_y", "point", "low", "high", "caveat"),
        ("algorithm_x", "algorithm_y", "caveat"),
        added=("caveat",),
    ),
    TableSpec(
        "differences",
        ("algorithm_x", "algorithm_y", "metric", "point", "low", "high", "caveat"),
        ("algorithm_x", "algorithm_y", "metric", "caveat"),
        added=("caveat",),
    ),
    TableSpec("profiles", ("algorithm", "kind", "tau", "fraction", "low", "high"), ("algorithm", "kind")),
    TableSpec("ranks", ("algorithm", "task", "rank", "probability"), ("algorithm", "task")),
    TableSpec("gap_curve", ("algorithm", "gamma", "point", "low", "high"), ("algorithm",)),
    TableSpec(
        "curves", ("algorithm", "metric", "step", "n_runs", "point", "low", "high"), ("algorithm", "metric"), "nonempty"
    ),
    TableSpec("scores", ("algorithm", "task", "run_id", "seed", "score"), ("algorithm", "task", "run_id", "seed")),
    TableSpec(
        "comparisons",
        (
            "statistic",
            "algorithm_x",
            "algorithm_y",
            "metric",
            "point",
            "low",
            "high",
            "low_simultaneous",
            "high_simultaneous",
            "p_value",
            "p_holm",
            "distinguishable",
        ),
        ("statistic", "algorithm_x", "algorithm_y", "metric"),
        "optional",
        "All-pairs comparisons with family-wise error control",
        500,
    ),
    TableSpec(
        "jordan",
        ("algorithm", "aggregate", "low", "high", "rank", "method", "delta", "rank_worst", "rank_best"),
        ("algorithm", "method"),
        "optional",
        "Performance percentiles and PBP aggregate (Jordan et al.)",
    ),
    TableSpec(
        "tuning",
        (
            "algorithm",
            "view",
            "label",
            "config",
            "n_configs",
            "n_eligible",
            "n_runs",
            "selection_score",
            "metric",
            "point",
            "low",
            "high",
        ),
        ("algorithm", "view", "label", "config", "metric"),
        "optional",
        "Tuning",
        300,
    ),
    TableSpec(
        "watch",
        ("algorithm_x", "algorithm_y", "metric", "decision", "low", "high", "look"),
        ("algorithm_x", "algorithm_y", "metric", "decision"),
        "optional",
        "Sequential watch: each pair's decision and repeated confidence interval",
        500,
    ),
    TableSpec(
        "watch_launch",
        ("algorithm", "task", "add_runs"),
        ("algorithm", "task"),
        "optional",
        "Sequential watch: runs to launch before the next look",
        500,
    ),
    TableSpec(
        "race",
        (
            "algorithm",
            "config",
            "metric",
            "point",
            "low",
            "high",
            "regret",
            "margin_low",
            "margin_high",
            "reason",
            "look",
        ),
        ("algorithm", "config", "metric", "reason"),
        "optional",
        "Race: the selected configuration (interval valid after selection, regret bound, margin over the runner-up)",
        500,
    ),
    TableSpec(
        "race_alive",
        ("algorithm", "config", "point", "runs", "settled"),
        ("algorithm", "config"),
        "optional",
        "Race: configurations still racing",
        500,
    ),
    TableSpec(
        "race_eliminated",
        ("algorithm", "config", "look", "against", "low", "high", "reason"),
        ("algorithm", "config", "against", "reason"),
        "optional",
        "Race: eliminated configurations (interval of the difference to the one each was shown worse than)",
        500,
    ),
    TableSpec(
        "race_launch",
        ("algorithm", "config", "task", "add_runs"),
        ("algorithm", "config", "task"),
        "optional",
        "Race: runs to launch before the next look",
        500,
    ),
    TableSpec(
        "gate",
        (
            "candidate",
            "name",
            "verdict",
            "outcome",
            "seeds",
            "mean",
            "estimate",
            "low",
            "high",
            "level",
            "incumbent",
            "look",
            "reason",
        ),  # fmt: skip
        ("name", "verdict", "outcome", "incumbent", "reason"),
        "optional",
        "Gate: every candidate of the stream, its verdict and its interval at its last look",
        500,
    ),
    TableSpec(
        "success_rates",
        (
            "algorithm",
            "task",
            "n_seeds",
            "successes",
            "episodes",
            "rate",
            "low",
            "high",
            "effective_episodes",
            "warned",
        ),
        ("algorithm", "task"),
        "optional",
        "Success rates per task (intervals that see the seeds)",
        500,
    ),
    TableSpec(
        "success_aggregates",
        ("algorithm", "n_tasks", "successes", "episodes", "rate", "low", "high"),
        ("algorithm",),
        "optional",
        "Success rates over tasks (the mean of the tasks' rates)",
    ),
    TableSpec(
        "success_differences",
        ("algorithm_x", "algorithm_y", "task", "difference", "low", "high"),
        ("algorithm_x", "algorithm_y", "task"),
        "optional",
        "Differences of success rates (per task and of the means, __average__)",
        500,
    ),
    TableSpec(
        "jordan_quantiles",
        ("algorithm", "task", "score", "cdf", "cdf_low", "cdf_high"),
        ("algorithm", "task"),
        "optional",
    ),
)
SPECS: dict[str, TableSpec] = {spec.name: spec for spec in REPORT_TABLES}

#: Tables every Report has (attributes of the same name).
TABLES = tuple(spec.name for spec in REPORT_TABLES if spec.kind != "optional")
#: Tables only present when the analysis asked for them (kept in ``Report.extra``).
OPTIONAL_TABLES = tuple(spec.name for spec in REPORT_TABLES if spec.kind == "optional")
#: The optional tables a published sequential look adds (a watch's, a race's, a gate's); ``evaluate()`` never
#: computes them.
LOOK_TABLES = ("watch", "watch_launch", "race", "race_alive", "race_eliminated", "race_launch", "gate")


def _empty(columns: Any) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns})


def _default(name: str) -> Any:
    return field(default_factory=lambda: _empty(SPECS[name].columns))


@dataclass
class Report:
    """All results of one evaluation; its tables are declared in :data:`REPORT_TABLES`.

    Core tables are attributes; optional ones (``comparisons``, ``jordan``, ``jordan_quantiles``, ``tuning``) live in
    ``extra`` and exist only when the analysis computed them. :meth:`tables` lists what is present,
    in registry order: saving, loading, the HTML report and the tracker sinks all go through it.

    Example:
        >>> from rl_reliable_logger import evaluate, save_report
        >>> report = evaluate(table, reps=2000, profile_reps=200, improvement_reps=200, seed=0)
        >>> iqm = report.aggregates.query("metric == 'iqm'")
        >>> list(iqm["algorithm"]), bool((iqm["low"] <= iqm["point"]).all() and (iqm["point"] <= iqm["high"]).all())
        (['DQN', 'PPO'], True)
        >>> _ = save_report(report, "results/", figures=False)
    """

    aggregates: pd.DataFrame = _default("aggregates")
    per_task: pd.DataFrame = _default("per_task")
    improvement: pd.DataFrame = _default("improvement")
    differences: pd.DataFrame = _default("differences")
    profiles: pd.DataFrame = _default("profiles")
    ranks: pd.DataFrame = _default("ranks")
    gap_curve: pd.DataFrame = _default("gap_curve")
    curves: pd.DataFrame = _default("curves")
    scores: pd.DataFrame = _default("scores")
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.extra) - set(OPTIONAL_TABLES))
        if unknown:
            raise ValueError(
                f"extra holds undeclared table(s) {', '.join(unknown)}; a Report's optional tables are "
                f"{', '.join(OPTIONAL_TABLES)} (declare new ones in REPORT_TABLES)"
            )

    @property
    def algorithms(self) -> list[str]:
        """Algorithms in report order (the order used for colours in every figure)."""
        if "algorithms" in self.provenance:
            return list(self.provenance["algorithms"])
        return list(pd.unique(self.aggregates["algorithm"]))

    def counts(self) -> Counts:
        """Runs, algorithms, tasks, cells and seeds of the final scores used: the one count every output
        prints (``provenance["counts"]``, or counted from ``scores`` for results written without it)."""
        recorded = self.provenance.get("counts")
        if isinstance(recorded, dict):
            return Counts.from_dict(recorded)
        return count_runs(self.scores)

    def table(self, name: str) -> pd.DataFrame:
        """Return a table by name, including optional ones such as ``jordan`` (KeyError when absent)."""
        if name in TABLES:
            return getattr(self, name)
        if name not in SPECS:
            raise KeyError(f"no table {name!r}; a Report's tables are {', '.join(SPECS)}")
        return self.extra[name]

    def tables(self, *, written: bool = False) -> list[tuple[str, pd.DataFrame]]:
        """``(name, frame)`` of every table present, in registry order.

        ``written=True`` leaves out what is not written to a folder (an empty ``curves``).
        """
        out = []
        for spec in REPORT_TABLES:
            if spec.kind == "optional":
                if spec.name not in self.extra:
                    continue
                frame = self.extra[spec.name]
            else:
                frame = getattr(self, spec.name)
                if written and spec.kind == "nonempty" and frame.empty:
                    continue
            out.append((spec.name, frame))
        return out

    def update_digest(self, digest: Any) -> None:
        """Feed every table (as CSV, in a fixed order) into a ``hashlib`` digest.

        The tracker sinks build their "same report?" hashes on this, each adding what else counts.
        """
        present = self.tables()
        core = [(n, f) for n, f in present if n in TABLES]
        optional = sorted((n, f) for n, f in present if n not in TABLES)
        for name, frame in core + optional:
            digest.update(name.encode() + b"\0" + frame.to_csv(index=False).encode() + b"\0")

    def __repr__(self) -> str:
        """At most 20 lines: the runs, scores, source and intervals, and the headline table."""
        return report_summary(self).text()

    def _repr_html_(self) -> str:
        """The same as one compact HTML table (what a notebook shows), every name escaped."""
        return report_summary(self).html()

    def headline(self, metric: str = "iqm") -> pd.DataFrame:
        """The aggregate rows of one metric, one per algorithm."""
        return self.aggregates[self.aggregates["metric"] == metric].reset_index(drop=True)

    # ------------------------------------------------------------------ files
    @classmethod
    def load(cls, out_dir: str | os.PathLike) -> Report:
        """Read a results folder written by ``render.writer.save_report`` (or ``save_tables``).

        Every table of :data:`REPORT_TABLES` found is read back as written: names as text (``007``
        and ``NA`` stay names, formula-like cells un-neutralised, :mod:`..data.csvcells`), numbers as written.
        """
        src = Path(out_dir)
        if not (src / "aggregates.csv").exists():
            raise FileNotFoundError(
                f"{src} has no aggregates.csv; is it a folder written by `rl-reliable evaluate --out`?"
            )
        kwargs: dict[str, Any] = {}
        extra: dict[str, pd.DataFrame] = {}
        prov, warnings = _read_provenance(src / "provenance.json")
        # an evaluation that names its metrics wrote aggregate rows; a report of extra tables only (Jordan) has none
        expect_rows = bool(prov.get("metrics"))
        for spec in REPORT_TABLES:
            path = src / f"{spec.name}.csv"
            if path.exists():
                frame = csvcells.read_csv(path, text_columns=set(spec.text_columns) | csvcells.NAME_COLUMNS)
                _check_table(path, spec, frame, expect_rows=expect_rows)
                (extra if spec.kind == "optional" else kwargs)[spec.name] = frame
        return cls(**kwargs, provenance=prov, warnings=warnings, extra=extra)


#: Columns of the report tables that hold numbers (a text cell there means the file was edited).
NUMERIC_COLUMNS = frozenset(
    "point low high n_runs mean median min max tau fraction rank probability gamma step score cdf cdf_low "
    "cdf_high p_value p_holm low_simultaneous high_simultaneous rank_worst rank_best delta selection_score".split()
)
#: Provenance fields the report and its renderers read, and the types they must have.
PROVENANCE_TYPES: dict[str, tuple[type, ...]] = {
    "ci": (int, float),
    "reps": (int,),
    "profile_reps": (int,),
    "improvement_reps": (int,),
    "gamma": (int, float),
    "metrics": (list,),
    "method": (str,),
    "normalization": (str, type(None)),
    "warnings": (list,),
    "created": (str,),
    "source": (dict, str, type(None)),
    "options": (dict,),
    "curves": (dict, type(None)),
    "protocol": (list,),
    "versions": (dict,),
}


def _check_table(path: Path, spec: TableSpec, frame: pd.DataFrame, *, expect_rows: bool = True) -> None:
    """A table read back must have its columns, numbers where numbers belong, and (aggregates of an evaluation
    that names its metrics: ``expect_rows``) rows."""
    from ..errors import InputError

    # every table keeps its key columns; the headline table all of its columns (older writers and hand-made
    # reports may lack a count column elsewhere, which the renderers do without)
    required = spec.columns if spec.name == "aggregates" else spec.text_columns
    required = tuple(c for c in required if c not in spec.added)
    missing = [c for c in required if c not in frame.columns]
    if missing and not (frame.empty and spec.kind == "nonempty"):
        raise InputError(f"{path}: column(s) {', '.join(missing)} missing; the table was edited after it was written")
    if spec.name == "aggregates" and frame.empty and expect_rows:
        raise InputError(f"{path}: the table has no rows; the table was edited after it was written")
    for col in sorted(NUMERIC_COLUMNS & set(spec.columns) & set(frame.columns)):
        if not (pd.api.types.is_numeric_dtype(frame[col]) or frame[col].isna().all()):
            bad = next(v for v in frame[col] if not _is_number(v))
            raise InputError(
                f"{path}: column {col!r} holds text ({str(bad)[:40]!r}) where numbers belong; "
                "the table was edited after it was written"
            )


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _read_provenance(path: Path) -> tuple[dict[str, Any], list[str]]:
    """``provenance.json`` as (fields, warnings), every field the renderers read checked for its type."""
    from ..errors import InputError

    if not path.exists():
        return {}, []
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as err:
        raise InputError(f"{path}: unreadable JSON ({str(err)[:200] or 'nested too deeply'})") from None
    if not isinstance(prov, dict):
        raise InputError(f"{path}: not a JSON object; the file was edited after it was written")
    for key, types in PROVENANCE_TYPES.items():
        value = prov.get(key)
        if key in prov and (not isinstance(value, types) or isinstance(value, bool)):
            wanted = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise InputError(
                f"{path}: field {key!r} is {json.dumps(value)[:40]} ({type(value).__name__}), not {wanted}; "
                "the file was edited after it was written"
            )
    warnings = prov.pop("warnings", [])
    if not all(isinstance(w, str) for w in warnings):
        raise InputError(f"{path}: field 'warnings' must be a list of text; the file was edited after it was written")
    return prov, list(warnings)
