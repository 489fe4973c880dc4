"""Bridge between :class:`~rl_reliable_logger.scores.ScoreTable` and the Jordan et al. (2020) methods.

* :func:`jordan_tables` -- the equilibrium aggregate with simultaneous intervals (``jordan`` table) and
  the per-task ECDFs with DKW bands behind the quantile-function figure (``jordan_quantiles`` table).
* :func:`tuning_table` -- the tuning-aware view of a hyperparameter sweep (:mod:`.tables.tuning`, where it is
  built; importable here too).

The maths lives in :mod:`rl_reliable_logger.stats.jordan` and :mod:`rl_reliable_logger.stats.tuning`;
``docs/jordan.md`` explains the methods and every choice made where the paper is ambiguous.

Table schemas:

``jordan``            algorithm, aggregate, low, high, rank, method, delta, rank_worst, rank_best
``jordan_quantiles``  algorithm, task, score, cdf, cdf_low, cdf_high
``tuning``            algorithm, view, label, config, n_configs, n_eligible, n_runs, selection_score,
                      metric, point, low, high
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..data.counts import plural
from ..data.scores import ScoreTable
from ..stats import jordan as jd
from ..wording import kw, said
from .options import OptionError
from .report import SPECS
from .tables.tuning import TUNING_COLUMNS as TUNING_COLUMNS  # the tuning table is built there
from .tables.tuning import tuning_table as tuning_table

__all__ = ["JORDAN_COLUMNS", "QUANTILE_COLUMNS", "jordan_tables", "tuning_table"]

# the schemas are declared once, in the Report's table registry
JORDAN_COLUMNS = list(SPECS["jordan"].columns)
QUANTILE_COLUMNS = list(SPECS["jordan_quantiles"].columns)

ScoreRange = tuple[float, float] | Mapping[str, tuple[float, float]] | None


def _samples(table: ScoreTable) -> tuple[list[list[np.ndarray]], list[str], list[str]]:
    final = table.final()
    cells = final.cells()
    algorithms, tasks = final.algorithms, final.tasks
    return [[cells[(a, t)] for t in tasks] for a in algorithms], algorithms, tasks


def _support(score_range: ScoreRange, tasks: list[str]) -> Any:
    if score_range is None:
        return None
    if isinstance(score_range, Mapping):
        missing = [t for t in tasks if t not in score_range]
        if missing:
            raise ValueError(f"score_range has no (low, high) for task(s): {', '.join(map(str, missing))}")
        return np.array([[float(score_range[t][0]), float(score_range[t][1])] for t in tasks])
    pair = tuple(float(x) for x in score_range)
    if len(pair) != 2:
        raise ValueError(f"score_range must be (low, high), got {score_range!r}")
    return pair


def _check_support(support: Any, samples: list[list[np.ndarray]], tasks: list[str]) -> None:
    """Every task's scores must lie inside its known score range (else PBP's bound would be wrong)."""
    if support is None:
        return
    bounds = np.broadcast_to(np.asarray(support, dtype=float), (len(tasks), 2))
    outside = []
    for j, task in enumerate(tasks):
        values = np.concatenate([np.asarray(runs[j], dtype=float) for runs in samples])
        if values.size and (values.min() < bounds[j, 0] or values.max() > bounds[j, 1]):
            outside.append(
                f"{task!r} has scores in [{values.min():g}, {values.max():g}], range [{bounds[j, 0]:g}, {bounds[j, 1]:g}]"
            )
    if outside:
        raise OptionError(
            "score_range",
            said(
                kw("score_range="),
                f" is narrower than the data on {plural(len(outside), 'task')}: {'; '.join(outside[:6])}. Give the "
                "range every score can reach (or leave it out to use the observed range)",
            ),
        )


def jordan_tables(
    table: ScoreTable,
    *,
    delta: float = jd.DEFAULT_DELTA,
    method: str = "pbp",
    score_range: ScoreRange = None,
    reps: int = 10_000,
    seed: int | np.random.Generator | None = None,
    progress: bool = False,
    **choices: Any,
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Jordan et al. aggregate with ``1 - delta`` simultaneous intervals, and the DKW quantile table.

    Args:
        table: per-run scores (raw scores are fine: percentiles do not depend on the scale).
        delta: the intervals of all algorithms hold together with probability >= 1 - delta (PBP; PBP-t
            and the bootstrap only approximately).
        method: ``"pbp"`` (default), ``"pbp-t"`` or ``"bootstrap"``.
        score_range: known score bounds for PBP: ``(low, high)`` for every task or ``{task: (low, high)}``.
            Without it PBP uses the observed range and warns that its guarantee is then approximate.
        reps, seed, progress: bootstrap replicates (default 10,000 as in the paper), seed, progress bar.
        choices: ``max_points`` (at most this many points per (algorithm, task) in ``jordan_quantiles``, default
            2000), and the fields of :class:`~rl_reliable_logger.stats.jordan.api.JordanChoices`: ``tie_rule``,
            ``min_sign``, ``t_split``, ``clip_t``, ``bootstrap_split`` (see ``docs/jordan.md``; the defaults are
            the principled choices, ``"authors"``/``"abs"`` reproduce the authors' code), ``executor`` (where the
            bound optimisations run: ``"serial"``, ``"ray"``, an executor object), ...

    Returns:
        ``({"jordan": ..., "jordan_quantiles": ...}, warnings)``.

    Example:
        >>> tables, warnings = jordan_tables(table, delta=0.05, method="pbp-t", score_range=(0.0, 1.0), reps=200)
        >>> list(tables["jordan"][["algorithm", "aggregate", "low", "high", "rank"]].columns)
        ['algorithm', 'aggregate', 'low', 'high', 'rank']
    """
    samples, algorithms, tasks = _samples(table)
    support = _support(score_range, tasks)
    _check_support(support, samples, tasks)
    max_points = choices.pop("max_points", 2000)
    res = jd.jordan_evaluate(
        samples, method=method, delta=delta, support=support, reps=reps, seed=seed, progress=progress, **choices
    )
    warnings = ["Jordan aggregate: " + w for w in res.warnings]  # a line keeps its message
    if score_range is not None and res.method != "pbp":
        warnings.append(f"Jordan aggregate: score_range is only used by PBP; ignored for {res.method}.")
    agg = pd.DataFrame(
        {
            "algorithm": algorithms,
            "aggregate": res.y,
            "low": res.low,
            "high": res.high,
            "rank": res.rank.astype(int),
            "method": res.method,
            "delta": float(delta),
            "rank_worst": res.rank_worst.astype(int),
            "rank_best": res.rank_best.astype(int),
        },
        columns=JORDAN_COLUMNS,
    )
    bands = jd.quantile_bands(samples, delta, max_points=max_points)
    parts = []
    for i, alg in enumerate(algorithms):
        for j, task in enumerate(tasks):
            b = bands[i][j]
            parts.append(
                pd.DataFrame(
                    {
                        "algorithm": alg,
                        "task": task,
                        "score": b["score"],
                        "cdf": b["cdf"],
                        "cdf_low": b["cdf_low"],
                        "cdf_high": b["cdf_high"],
                    }
                )
            )
    quant = pd.concat(parts, ignore_index=True)[QUANTILE_COLUMNS]
    return {"jordan": agg, "jordan_quantiles": quant}, warnings
