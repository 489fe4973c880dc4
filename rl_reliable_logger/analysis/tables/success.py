"""The success-rate tables (``successes=`` / ``episodes=``): each run's successful and total episodes, read from two
columns of the scores, give per-task, over-task and difference intervals that never collapse at 0% or 100%.

The statistics are :mod:`...stats.success` (the coverage study and its exceptions: ``docs/validation.md``); this
module turns the scores' columns into its arrays and its results into three optional tables, their
``provenance["intervals"]`` records (methods declared in :data:`...stats.intervals.SUCCESS_METHODS`), a
``provenance["success"]`` record and the warnings; :func:`sentence` words the methods paragraph's sentence.

``success_rates``        algorithm, task, n_seeds, successes, episodes, rate, low, high, effective_episodes, warned
``success_aggregates``   algorithm, n_tasks, successes, episodes, rate, low, high (the mean of the tasks' rates)
``success_differences``  algorithm_x, algorithm_y, task, difference, low, high (task ``__average__``: of the means)

The runs' scores are left as they are: with ``score`` a return and the counts from the same evaluations, the
score tables describe returns and these tables success rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...data.counts import plural
from ...errors import InputError
from ...stats import success as su
from ...stats.intervals import SUCCESS_METHODS, ResamplingRequest
from ...wording import kw, said
from ..report import SPECS
from .base import Part, TableInputs

#: The task label of the differences of the means over tasks (as the ranks table's average).
AVERAGE = "__average__"
#: The tables' columns, as the Report declares them (``analysis.report.REPORT_TABLES``).
RATE_COLUMNS, AGGREGATE_COLUMNS, DIFFERENCE_COLUMNS = (
    list(SPECS[name].columns) for name in ("success_rates", "success_aggregates", "success_differences")
)


@dataclass(frozen=True)
class SuccessChoices:
    """The columns of the scores holding each run's successful and total episodes."""

    successes: str
    episodes: str


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value a message shows (``1e+19``, not ``np.float64(1e+19)``)."""
    return value.item() if isinstance(value, np.generic) else value


#: The largest count read: every whole number up to it is exact as a float (2**53), and the binomial draws of the
#: bootstrap take it as a 64-bit integer (``1e19`` episodes overflowed into "n < 0").
MAX_COUNT = 2**53


def _counts(frame: pd.DataFrame, column: str, keyword: str) -> np.ndarray:
    if column not in frame.columns:
        others = ", ".join(map(str, frame.columns))
        raise InputError(said(kw(f"{keyword}={column!r}"), f" names no column of the scores (columns: {others})"))
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 0) | (values > MAX_COUNT)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = frame.iloc[i]
        raise InputError(
            said(
                kw(f"{keyword}={column!r}"),
                f": run {row['run_id']!s} ({row['algorithm']!s} / {row['task']!s}) has "
                f"{_plain(frame[column].iloc[i])!r}, not a whole number of episodes",
            )
            + (
                f" from 0 to {MAX_COUNT:,} (counted exactly)"
                if np.isfinite(values[i]) and values[i] > MAX_COUNT
                else ""
            )
            + (f" ({int(bad.sum())} runs in all)" if bad.sum() > 1 else "")
        )
    return values


def _arrays(
    frame: pd.DataFrame, algorithm: str, tasks: Sequence[str], k: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(successes, episodes) of one algorithm as (tasks, seeds) arrays, runs in run-id order, NaN-padded."""
    mine = frame["algorithm"].to_numpy() == algorithm
    task_of, run_ids = frame["task"].to_numpy(), frame["run_id"].astype(str).to_numpy()
    rows = []
    for task in tasks:
        idx = np.flatnonzero(mine & (task_of == task))
        rows.append(idx[np.argsort(run_ids[idx], kind="stable")])
    width = max(len(r) for r in rows)
    ks, ns = np.full((len(tasks), width), np.nan), np.full((len(tasks), width), np.nan)
    for t, idx in enumerate(rows):
        ks[t, : len(idx)], ns[t, : len(idx)] = k[idx], n[idx]
    return ks, ns


def _checked_counts(frame: pd.DataFrame, choices: SuccessChoices) -> tuple[np.ndarray, np.ndarray]:
    k = _counts(frame, choices.successes, "successes")
    n = _counts(frame, choices.episodes, "episodes")
    over = np.flatnonzero((k > n) | (n < 1))
    if over.size:
        i = int(over[0])
        row = frame.iloc[i]
        raise InputError(
            said(
                f"run {row['run_id']!s} ({row['algorithm']!s} / {row['task']!s}) has {k[i]:g} successes of "
                f"{n[i]:g} episodes (",
                kw(f"successes={choices.successes!r}"),
                ", ",
                kw(f"episodes={choices.episodes!r}"),
                "): successes must be between 0 and the episodes, and episodes at least 1",
            )
        )
    return k, n


def _warning(algorithm: str, names: Sequence[str]) -> str:
    shown = ", ".join(map(str, names[:5])) + (" ..." if len(names) > 5 else "")
    return (
        f"{algorithm}: success rates within {su.EDGE:g} of 0 or 1 on {plural(len(names), 'task')} ({shown}): where seeds "
        "differ (some seeds succeed, others rarely), 3-10 seeds often do not show it and the interval can "
        "under-cover (coverage down to 0.49 in the study, docs/validation.md); more seeds help, more episodes do not"
    )


def build(inputs: TableInputs, request: ResamplingRequest, choices: SuccessChoices | None) -> Part:
    """The three success tables of the final scores' counts (no tables without ``choices``), the mean over tasks
    on the success tables' own stream (``inputs.streams.success()``): asking for them changes no other number."""
    if choices is None:
        return Part({})
    frame = inputs.final.frame.reset_index(drop=True)
    k, n = _checked_counts(frame, choices)
    tasks, ci, reps = inputs.tasks, request.level, request.reps("aggregates")
    rng = inputs.streams.success()
    rates, aggregates, per_algorithm, warnings = [], [], {}, []
    for alg in inputs.algorithms:
        ks, ns = _arrays(frame, alg, tasks, k, n)
        res = su.task_intervals(ks, ns, ci)
        warned = su.coverage_warnings(ks, ns, ci)
        agg = su.aggregate_interval(ks, ns, reps=reps, ci=ci, seed=rng)
        per_algorithm[alg] = (ks, ns, agg)
        for t, task in enumerate(tasks):
            rates.append(
                (alg, task, int(res.seeds[t]), int(np.nansum(ks[t])), int(np.nansum(ns[t])), res.point[t],
                 res.low[t], res.high[t], float(res.n_eff[t]), bool(warned[t]))
            )  # fmt: skip
        aggregates.append((alg, len(tasks), int(np.nansum(ks)), int(np.nansum(ns)), agg.point, agg.low, agg.high))
        if warned.any():
            warnings.append(_warning(alg, [tasks[t] for t in np.flatnonzero(warned)]))
    differences: list[tuple[Any, ...]] = []
    for i, x in enumerate(inputs.algorithms):
        for y in inputs.algorithms[i + 1 :]:
            (kx, nx, ax), (ky, ny, ay) = per_algorithm[x], per_algorithm[y]
            d = su.difference_intervals(kx, nx, ky, ny, ci)
            differences += [(x, y, task, d.point[t], d.low[t], d.high[t]) for t, task in enumerate(tasks)]
            both = su.mover(ax.point, ax.low, ax.high, ay.point, ay.low, ay.high)
            differences.append((x, y, AVERAGE, *(float(v) for v in both)))
    tables = {
        "success_rates": pd.DataFrame(rates, columns=RATE_COLUMNS),
        "success_aggregates": pd.DataFrame(aggregates, columns=AGGREGATE_COLUMNS),
        "success_differences": pd.DataFrame(differences, columns=DIFFERENCE_COLUMNS),
    }
    recorded = {
        "success_rates": {"method": SUCCESS_METHODS["per_task"].name, "level": ci, "replicates": None},
        "success_aggregates": {"method": SUCCESS_METHODS["aggregate"].name, "level": ci, "replicates": reps},
        "success_differences": {"method": SUCCESS_METHODS["differences"].name, "level": ci, "replicates": None},
    }
    record = {
        "successes": choices.successes,
        "episodes": choices.episodes,
        "warned_tasks": int(sum(r[-1] for r in rates)),
    }
    return Part(tables, recorded, {"success": record}, warnings)


def sentence(record: dict[str, Any]) -> str:
    """The methods paragraph's sentence about the success tables (their intervals are named with every table's)."""
    return (
        f"Success rates are each run's `{record.get('successes')}` of its `{record.get('episodes')}` episodes, "
        "averaged over a task's seeds (each seed weighs the same) and over tasks; their intervals account for the "
        "episodes being nested in seeds, and none is [0, 0] when every episode failed (nor [1, 1] when every one "
        f"succeeded). Warned: {int(record.get('warned_tasks', 0))} of the per-task rates lie within "
        f"{su.EDGE:g} of 0 or 1, where those intervals can under-cover if seeds differ."
    )
