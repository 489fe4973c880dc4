"""Preparing a table for analysis: the one place a ScoreTable becomes what the statistics see.

:func:`prepare` applies the algorithm/task filters, checks the memory the options need and normalises;
:func:`cells_by_algorithm` lays each algorithm's runs out as bootstrap cells in a canonical order. Nothing random
happens here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..data.bundle_scores import UNCHANGED
from ..data.normalize import get_normalizer
from ..data.scores import ScoreTable
from ..stats import bootstrap as bs
from ..wording import kw, said
from .budgets import budget_warnings, histories
from .normalization import normalize_final
from .options import AnalysisOptions, OptionError

#: What provenance says of scores no normaliser changed.
RAW_SCORE = "raw score"


@dataclass
class Prepared:
    """A table ready for the statistics: ``table`` (every step, normalised), ``final`` (one row per run).

    ``selected`` is the table after the algorithm/task selection, before normalisation: what the
    protocol checks read (budgets from every step, score key and configs from the source).
    """

    table: ScoreTable
    final: ScoreTable
    raw_final: ScoreTable
    normalization: str
    warnings: list[str] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)
    selected: ScoreTable | None = None

    @property
    def normalized(self) -> bool:
        """Whether the scores are normalised: by ``normalize=`` here, or before (``data.normalize``)."""
        return self.normalization != RAW_SCORE


def select(table: ScoreTable, algorithms: Sequence[str] | None, tasks: Sequence[str] | None) -> ScoreTable:
    """The rows of ``algorithms`` and ``tasks`` only; a name the table does not have is an error naming the known."""
    if algorithms is None and tasks is None:
        return table
    mask = pd.Series(True, index=table.frame.index)
    for keyword, wanted, column, known in (
        ("only_algorithms", algorithms, "algorithm", table.algorithms),
        ("only_tasks", tasks, "task", table.tasks),
    ):
        if wanted is None:
            continue
        unknown = [w for w in wanted if w not in set(known)]
        if unknown:
            shown = ", ".join(repr(k) for k in sorted(known)[:50]) + (" ..." if len(known) > 50 else "")
            raise OptionError(
                keyword,
                said(
                    kw(f"{keyword}="),
                    f" names {', '.join(repr(u) for u in unknown)}, which the scores do not have; the {column}s "
                    f"are: {shown}",
                ),
            )
        mask &= table.frame[column].isin(list(wanted))

    def rebuild(frame: pd.DataFrame) -> ScoreTable:
        step = "step" if table.has_steps else None
        return ScoreTable(frame, run_id="run_id", seed="seed", step=step, source=table.source)

    out = rebuild(table.frame[mask])
    # the checks' warnings (small cells, unequal runs) are those of the selection; the source's own stay
    own = set(rebuild(table.frame).warnings)
    out.warnings = [w for w in table.warnings if w not in own] + out.warnings
    out.dropped = table.dropped.copy()
    return out


@dataclass(frozen=True)
class Preparation:
    """What preparing a table takes from the options (:meth:`of`): the algorithm/task selection, the step budget,
    whether curves are asked for, the normaliser, and the options' own memory check and replicate-resolution
    warnings."""

    only_algorithms: Sequence[str] | None
    only_tasks: Sequence[str] | None
    budget: float | None
    curves: bool
    normalize: Any
    check_memory: Callable[[int, int, int], None]
    resolution_warnings: Callable[[], list[str]]

    @classmethod
    def of(cls, options: AnalysisOptions) -> Preparation:
        return cls(
            options.only_algorithms,
            options.only_tasks,
            options.budget,
            options.curves,
            options.normalize,
            options.check_memory,
            options.resolution_warnings,
        )


def _check_not_normalized_twice(table: ScoreTable, normalize: Any) -> None:
    """Refuse to normalise a results bundle's ``score`` column again (it holds the normalised scores already)."""
    origin = table.source.get("bundle_normalized")
    if not origin or str(normalize) in UNCHANGED:
        return
    raise OptionError(
        "normalize",
        said(
            f"{origin['path']}: a results bundle's scores, whose `score` column the analysis that wrote it already "
            f"normalised ({origin['normalize']}); leave out ",
            kw("normalize="),
            " to analyse them as they are, or pass ",
            kw("score='raw_score'"),
            " to normalise the raw scores again",
        ),
    )


def prepare(table: ScoreTable, options: AnalysisOptions | Preparation) -> Prepared:
    """Filter, check the memory the options need, normalise; nothing random happens here."""
    if isinstance(options, AnalysisOptions):
        options = Preparation.of(options)
    if options.curves and not table.has_steps:  # checked before any resampling work
        raise OptionError(
            "curves",
            said(
                "sample-efficiency curves (", kw("curves=True"), ") need per-step scores: give the table a step column"
            ),
        )
    if options.budget is not None and not table.has_steps:
        raise OptionError(
            "budget",
            said(kw("budget="), " needs per-step scores: give the table a step column (final scores are taken there)"),
        )
    # the canonical row order (only_algorithms' order, else sorted names): every table, pair and figure follows it
    table = selected = select(table, options.only_algorithms, options.only_tasks).in_order(options.only_algorithms)
    runs = histories(table) if table.has_steps else []
    raw_final = final = table.final(options.budget)
    if final.frame.empty and options.budget is not None:
        first = float(table.frame["step"].min()) if "step" in table.frame.columns else float("nan")
        raise OptionError(
            "budget",
            said(kw(f"budget={options.budget:g}"), f" is before every run's first logged step ({first:g}): no scores"),
        )
    sizes = final.frame.groupby("algorithm", sort=False).size()
    options.check_memory(len(final.algorithms), len(final.tasks), int(sizes.max()))
    warnings = list(table.warnings) + budget_warnings(runs, options.budget) + options.resolution_warnings()
    normalization = RAW_SCORE
    if options.normalize is None and "normalization" in table.source:  # normalised before: never said to be raw
        normalization = str(table.source.get("normalization_description", table.source["normalization"]))
    if options.normalize is not None:
        _check_not_normalized_twice(table, options.normalize)
        normalizer = get_normalizer(options.normalize)
        if normalizer.per_step:
            table = normalizer.apply(table)  # every step, so curves are normalised too
            final = table.final(options.budget)
        else:
            final = normalize_final(final, normalizer)
        if normalizer.caveat:
            warnings.append(normalizer.caveat)
        normalization = final.source.get("normalization_description", str(options.normalize))
    filters = {
        k: list(v)
        for k, v in (("only_algorithms", options.only_algorithms), ("only_tasks", options.only_tasks))
        if v is not None
    }
    return Prepared(table, final, raw_final, normalization, warnings, filters, selected)


def cells_by_algorithm(table: ScoreTable, tasks: list[str]) -> dict[str, bs.Cells]:
    """Runs of every algorithm as bootstrap cells, tasks in ``tasks`` order, runs sorted within tasks."""
    # runs sorted by score within each task: a canonical order (results depend on neither the input's
    # row order nor run ids), and probability of improvement needs no per-replicate sort
    fast = _sorted_cells(table, tasks)
    if fast is not None:
        return fast
    cells = table.cells()
    return {alg: bs.Cells.from_list([np.sort(cells[(alg, t)]) for t in tasks]) for alg in table.algorithms}


def _sorted_cells(table: ScoreTable, tasks: list[str]) -> dict[str, bs.Cells] | None:
    """:func:`cells_by_algorithm` by one sort of the whole table (about 4x faster), or None where it could differ.

    Sorted scores are the same numbers whichever sort made them, except that a sort may put 0.0 and -0.0 in
    either order: scores holding a negative zero (and tables with an empty cell) are left to the cell-by-cell
    path.
    """
    frame = table.final().frame
    scores = frame["score"].to_numpy(dtype=float)
    if np.signbit(scores[scores == 0]).any():
        return None
    algorithms = table.algorithms
    alg_code = pd.Categorical(frame["algorithm"], categories=algorithms).codes.astype(np.int64)
    task_code = pd.Categorical(frame["task"], categories=tasks).codes.astype(np.int64)
    if (alg_code < 0).any() or (task_code < 0).any():
        return None
    counts = np.bincount(alg_code * len(tasks) + task_code, minlength=len(algorithms) * len(tasks))
    counts = counts.reshape(len(algorithms), len(tasks))
    if (counts == 0).any():
        return None
    ordered = scores[np.lexsort((scores, task_code, alg_code))]
    out, at = {}, 0
    for i, alg in enumerate(algorithms):
        total = int(counts[i].sum())
        out[alg] = bs.Cells.from_list(np.split(ordered[at : at + total], np.cumsum(counts[i])[:-1]))
        at += total
    return out
