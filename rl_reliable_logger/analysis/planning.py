"""plan(): how many runs per task before the intervals are narrow enough, or a pair separates.

From pilot runs, predict by simulation what an evaluation with N runs per task would show:

1. *Synthetic data*: in each (algorithm, task) cell, N scores are drawn with replacement from the
   observed runs of that cell. With few pilot runs the empirical spread understates the true one
   (its variance is biased by (n-1)/n), so by default the draws are *variance-corrected*: each draw
   is the cell mean plus its deviation scaled by √(n/(n-1)) (``correction="variance"``;
   ``"none"`` resamples the raw scores). A cell with one run cannot say anything about spread and
   contributes a constant (and a warning).
2. *Interval*: the synthetic data go through the project's own stratified bootstrap
   (:func:`~rl_reliable_logger.stats.bootstrap.draw` and the metric of
   :mod:`~rl_reliable_logger.stats.metrics`) with ``sim_reps`` replicates — fewer than the 50,000
   of a real evaluation: the *width* of a percentile interval is estimated well by a few hundred
   replicates, and averaging over ``trials`` synthetic data sets removes most of the remaining
   Monte-Carlo noise.
3. *Summaries*: the expected interval width per algorithm and N; for a pair (A, B) the fraction of
   synthetic experiments in which the interval of metric(A) − metric(B) excludes 0 and in which
   the interval of P(A > B) excludes 0.5 (``p_separate`` / ``p_separate_poi``).

The pilot's observed difference stands in for the true one, so a pair that looks separated in a
small pilot can be over-optimistic (a winner's curse); the calibration study
(``benchmarks/plan_calibration.py``) measures how far predictions are from realised values.

Random streams: one per (algorithm, N), keyed by the algorithm's position in sorted name order and
by N, so a number does not depend on the grid, the input's row order or what else is asked.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..data.counts import agree, plural
from ..data.scores import ScoreTable
from ..errors import InputError
from ..stats import bootstrap as bs
from ..stats import metrics as mt
from ..stats import registry
from .normalization import normalize_final
from .options import check_plan_memory, ci_label, confidence_level, replicates_needed
from .protocol import Finding, check_protocol

Correction = Literal["variance", "none"]

PLAN_COLUMNS = [
    "kind",
    "algorithm",
    "metric",
    "n_runs",
    "expected_width",
    "width_q10",
    "width_q90",
    "p_separate",
    "p_separate_poi",
]
LAUNCH_COLUMNS = ["algorithm", "task", "n_runs", "more_runs"]


@dataclass
class Plan:
    """The result of :func:`plan`.

    ``table`` (the contract of ``plan.csv``): one row per algorithm and N (``kind == "algorithm"``)
    with the expected interval width and its 10%/90% quantiles over synthetic experiments; with a
    pair, also rows ``kind == "pair"`` whose ``algorithm`` is ``"A - B"``, whose width is that of
    the difference interval, and whose ``p_separate`` / ``p_separate_poi`` are the probabilities
    that the difference interval excludes 0 / the P(A > B) interval excludes 0.5.
    ``launch``: how many more runs each (algorithm, task) cell needs to reach ``needed`` runs.
    ``needed``: the smallest N on the grid meeting the target, per algorithm (None: not reached).
    """

    table: pd.DataFrame
    launch: pd.DataFrame
    needed: dict[str, int | None]
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: protocol checks on the pilot (see :mod:`~rl_reliable_logger.analysis.protocol`), shown first
    findings: list[Finding] = field(default_factory=list)


# ----------------------------------------------------------------------------- simulation
def synthetic_cells(
    pilot: Sequence[np.ndarray], n_runs: int, rng: np.random.Generator, correction: Correction = "variance"
) -> bs.Cells:
    """One synthetic data set: ``n_runs`` draws from each pilot cell (see the module docstring)."""
    per_task = []
    for x in pilot:
        x = np.asarray(x, dtype=float)
        pick = x[rng.integers(0, x.size, size=n_runs)]
        if correction == "variance" and x.size > 1:
            centre = x.mean()
            pick = centre + (pick - centre) * math.sqrt(x.size / (x.size - 1))
        per_task.append(pick)
    return bs.Cells.from_list(per_task)


def _width(dist: np.ndarray, ci: float) -> float:
    low, high = bs.interval(dist[:, None], np.zeros(1), ci=ci, method="percentile")
    return float(high[0] - low[0])


def _excludes(dist: np.ndarray, value: float, ci: float) -> bool:
    low, high = bs.interval(dist[:, None], np.zeros(1), ci=ci, method="percentile")
    return bool(low[0] > value or high[0] < value)


def simulate_n(
    pilots: dict[str, list[np.ndarray]],
    n_runs: int,
    metric: mt.Metric,
    *,
    streams: dict[str, np.random.Generator],
    trials: int,
    sim_reps: int,
    ci: float,
    pair: tuple[str, str] | None = None,
    correction: Correction = "variance",
    progress: Any = None,
) -> dict[str, Any]:
    """Widths per algorithm (trials,) and, for ``pair``, the difference widths and separation flags."""
    widths: dict[str, np.ndarray] = {a: np.empty(trials) for a in pilots}
    diff_width = np.empty(trials)
    sep = np.zeros(trials, dtype=bool)
    sep_poi = np.zeros(trials, dtype=bool)
    for t in range(trials):
        dists, kept = {}, {}
        for alg, pilot in pilots.items():
            rng = streams[alg]
            cells = synthetic_cells(pilot, n_runs, rng, correction)
            draws = bs.draw(cells, sim_reps, rng)
            dist = metric(draws)
            widths[alg][t] = _width(dist, ci)
            if pair is not None and alg in pair:
                dists[alg] = dist
                kept[alg] = (cells, draws.counts())
        if pair is not None:
            a, b = pair
            diff = dists[a] - dists[b]
            diff_width[t] = _width(diff, ci)
            sep[t] = _excludes(diff, 0.0, ci)
            (ca, ka), (cb, kb) = kept[a], kept[b]
            poi = mt.improvement_replicates(ca, ka, cb, kb)
            sep_poi[t] = _excludes(poi, 0.5, ci)
        if progress is not None:
            progress(1)
    return {"widths": widths, "diff_width": diff_width, "sep": sep, "sep_poi": sep_poi}


# ----------------------------------------------------------------------------- public API
def default_grid(current: int, max_runs: int) -> list[int]:
    """N from ``current`` to ``max_runs``: every integer up to 12 values, else 12 spread evenly."""
    if max_runs < current:
        return [current]
    span = max_runs - current + 1
    if span <= 12:
        return list(range(current, max_runs + 1))
    return sorted({int(round(v)) for v in np.linspace(current, max_runs, 12)})


def plan(
    table: ScoreTable,
    *,
    metric: str = "iqm",
    normalize: str | Any | None = None,
    target_width: float | None = None,
    compare: Sequence[str] | None = None,
    power: float = 0.8,
    max_runs: int | None = None,
    runs: Sequence[int] | None = None,
    trials: int = 200,
    sim_reps: int = 500,
    ci: float = 0.95,
    gamma: float = 1.0,
    correction: Correction = "variance",
    seed: int = 0,
    progress: bool = False,
) -> Plan:
    """Predict interval widths (and a pair's separation) for N runs per task, from pilot runs.

    Args:
        table: the pilot's per-run scores (final scores are used).
        metric: the aggregate metric (``iqm``, ``mean``, ``median``, ``optimality_gap``, ...).
        normalize: as in :func:`~rl_reliable_logger.evaluate` (widths are in normalised units).
        target_width: the interval width wanted; ``needed`` and ``launch`` then say how many runs
            reach it for each algorithm.
        compare: two algorithm names (A, B): also predict the probability that the interval of
            metric(A) − metric(B) excludes 0; the target is ``power`` for that pair.
        power: the separation probability wanted for ``compare`` (default 0.8).
        max_runs: the largest N considered (default: max(20, 2 × the largest cell)).
        runs: the exact list of N to simulate (overrides the default grid).
        trials: synthetic experiments per N; sim_reps: bootstrap replicates inside each.
        ci: confidence level of the intervals being planned.
        correction: ``"variance"`` (default) or ``"none"``; see the module docstring.
        seed: the same inputs and seed give identical numbers.
        progress: show a progress bar on stderr.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 6, "task": ["x"] * 3 + ["y"] * 3,
        ...                    "seed": [0, 1, 2] * 2, "score": [0.1, 0.4, 0.3, 0.8, 0.5, 0.9]})
        >>> p = plan(ScoreTable(df), runs=[3, 10], trials=20, sim_reps=200, seed=0)
        >>> list(p.table["n_runs"])
        [3, 10]
    """
    if trials < 2 or sim_reps < 10:
        raise InputError(
            f"plan needs `trials=` of at least 2 and `sim_reps=` of at least 10, got {trials} and {sim_reps}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"`seed=` must be a non-negative integer (as for evaluate), got {seed!r}")
    ci = confidence_level(ci)  # the rule of evaluate(): 0.95 or 95, never 1.5 read as 1.5%
    if not 0 < power < 1:
        raise InputError(f"`power=` must be between 0 and 1 (e.g. 0.8), got {power}")
    if target_width is not None and not target_width > 0:
        raise InputError(f"`target_width=` must be positive, got {target_width}")
    if correction not in ("variance", "none"):
        raise InputError(f"`correction=` must be 'variance' or 'none', got {correction!r}")
    findings = check_protocol(table)
    final = table.final()
    if normalize is not None:
        final = normalize_final(final, normalize)
    algorithms = final.algorithms
    tasks = sorted(final.tasks)
    pair: tuple[str, str] | None = None
    if compare is not None:
        names = [str(c) for c in compare]
        if len(names) != 2 or names[0] == names[1]:
            raise InputError(f"`compare=` needs two different algorithm names, got {list(compare)!r}")
        unknown = [n for n in names if n not in algorithms]
        if unknown:
            raise InputError(
                f"`compare=` names unknown algorithm(s) {', '.join(map(repr, unknown))}; the table has "
                + ", ".join(map(repr, algorithms))
            )
        pair = (names[0], names[1])
    metric_obj = registry.get_metric(metric, gamma=gamma)
    cells = final.cells()
    # runs sorted within each cell: a canonical order, so the plan does not depend on the order the runs came
    # in (a file's rows, a tracker's listing)
    pilots = {a: [np.sort(cells[(a, t)]) for t in tasks] for a in algorithms}
    sizes = final.runs_per_cell()
    current = int(sizes.to_numpy().min())
    largest = int(sizes.to_numpy().max())
    if runs is not None:
        grid = sorted({int(n) for n in runs})
        if not grid or grid[0] < 1:
            raise InputError(f"`runs=` must be positive integers, got {list(runs)!r}")
    else:
        limit = max(20, 2 * largest) if max_runs is None else int(max_runs)
        if limit < 1:
            raise InputError(f"`max_runs=` must be positive, got {max_runs}")
        grid = default_grid(max(current, 2), limit)
    check_plan_memory(len(tasks), grid[-1], sim_reps, pair=pair is not None)

    warnings: list[str] = []
    if sim_reps < replicates_needed(ci):
        warnings.append(
            f"`sim_reps={sim_reps}` cannot resolve a {ci_label(ci)} interval: its ends need at least "
            f"{replicates_needed(ci):,} replicates (2 / (1 - level)); the predicted widths are too narrow"
        )
    singles = [f"{a} / {t}" for a in algorithms for t, x in zip(tasks, pilots[a]) if x.size < 2]
    if singles:
        warnings.append(
            f"{plural(len(singles), 'cell')} {agree(len(singles), 'have')} a single pilot run ({', '.join(singles[:6])}"
            + (", ..." if len(singles) > 6 else "")
            + "): they add no spread to the simulation, so predicted widths there are too narrow."
        )
    if current < 3:
        warnings.append(
            f"the smallest pilot cell has {plural(current, 'run')}: predictions from fewer than 3 runs per cell are rough."
        )

    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    pilot_diff = None
    if pair is not None:
        pilot_diff = _pilot_difference(pilots, pair, metric_obj, ci, seed)
        if pilot_diff["low"] <= 0 <= pilot_diff["high"]:
            warnings.append(
                f"the pilot itself cannot tell {pair[0]} and {pair[1]} apart (its {ci:.0%} interval of the difference "
                f"is [{pilot_diff['low']:.3g}, {pilot_diff['high']:.3g}]): p_separate assumes the pilot's difference "
                f"({pilot_diff['point']:.3g}) is the true one and overstates power when the true difference is "
                "smaller (see the calibration in the README)."
            )
    bar = _bar(len(grid) * trials, progress)
    rows: list[dict[str, Any]] = []
    try:
        for n in grid:
            streams = {
                a: np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(slot[a], int(n))))
                for a in algorithms
            }
            sim = simulate_n(
                pilots,
                n,
                metric_obj,
                streams=streams,
                trials=trials,
                sim_reps=sim_reps,
                ci=ci,
                pair=pair,
                correction=correction,
                progress=bar,
            )
            for a in algorithms:
                w = sim["widths"][a]
                rows.append(_row("algorithm", a, metric_obj.name, n, w, np.nan, np.nan))
            if pair is not None:
                rows.append(
                    _row(
                        "pair",
                        f"{pair[0]} - {pair[1]}",
                        metric_obj.name,
                        n,
                        sim["diff_width"],
                        float(sim["sep"].mean()),
                        float(sim["sep_poi"].mean()),
                    )
                )
    finally:
        if bar is not None:
            bar.close()
    frame = pd.DataFrame(rows, columns=PLAN_COLUMNS)
    needed = _needed(frame, algorithms, target_width, pair, power)
    launch = _launch(needed, sizes, tasks)
    unmet = [a for a, n in needed.items() if n is None]
    if unmet:
        warnings.append(
            f"the target is not reached within {grid[-1]} runs per task for {', '.join(unmet)}: "
            "raise `max_runs=` or relax the target."
        )
    provenance = {
        "metric": metric_obj.name,
        "normalize": None if normalize is None else str(normalize),
        "target_width": target_width,
        "compare": list(pair) if pair else None,
        "power": power if pair else None,
        "grid": grid,
        "trials": trials,
        "sim_reps": sim_reps,
        "ci": ci,
        "correction": correction,
        "seed": seed,
        "pilot_difference": pilot_diff,
        "pilot_runs_per_task": {a: {t: int(x.size) for t, x in zip(tasks, pilots[a])} for a in algorithms},
        "protocol": [f.to_dict() for f in findings],
        "method": "resample each cell's pilot runs to N (variance-corrected unless correction='none'), "
        "stratified bootstrap percentile interval on each synthetic data set",
    }
    return Plan(frame, launch, needed, provenance, warnings, findings)


def _pilot_difference(
    pilots: dict[str, list[np.ndarray]], pair: tuple[str, str], metric: mt.Metric, ci: float, seed: int
) -> dict[str, float]:
    """The pilot's own estimate and interval of metric(A) − metric(B) (2,000 replicates)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(2**31,)))
    cells = {a: bs.Cells.from_list(pilots[a]) for a in pair}
    dist = metric(bs.draw(cells[pair[0]], 2000, rng)) - metric(bs.draw(cells[pair[1]], 2000, rng))
    point = float(metric(bs.original(cells[pair[0]]))[0] - metric(bs.original(cells[pair[1]]))[0])
    low, high = bs.interval(dist[:, None], np.array([point]), ci=ci, method="percentile")
    return {"point": point, "low": float(low[0]), "high": float(high[0])}


def _row(kind: str, name: str, metric: str, n: int, widths: np.ndarray, sep: float, sep_poi: float) -> dict:
    return {
        "kind": kind,
        "algorithm": name,
        "metric": metric,
        "n_runs": int(n),
        "expected_width": float(widths.mean()),
        "width_q10": float(np.quantile(widths, 0.1)),
        "width_q90": float(np.quantile(widths, 0.9)),
        "p_separate": sep,
        "p_separate_poi": sep_poi,
    }


def _needed(
    frame: pd.DataFrame,
    algorithms: list[str],
    target_width: float | None,
    pair: tuple[str, str] | None,
    power: float,
) -> dict[str, int | None]:
    """Smallest N on the grid meeting every target that concerns each algorithm."""
    needed: dict[str, int | None] = {}
    if target_width is not None:
        for a in algorithms:
            rows = frame[(frame["kind"] == "algorithm") & (frame["algorithm"] == a)]
            ok = rows[rows["expected_width"] <= target_width]["n_runs"]
            needed[a] = int(ok.min()) if len(ok) else None
    if pair is not None:
        rows = frame[frame["kind"] == "pair"]
        ok = rows[rows["p_separate"] >= power]["n_runs"]
        n_pair = int(ok.min()) if len(ok) else None
        for a in pair:
            if n_pair is None or (a in needed and needed[a] is None):
                needed[a] = None
            else:
                needed[a] = max(n_pair, needed.get(a) or 0)
    return needed


def _launch(needed: dict[str, int | None], sizes: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    rows = []
    for a, n in needed.items():
        if n is None:
            continue
        for t in tasks:
            have = int(sizes.at[a, t])  # type: ignore[arg-type]
            rows.append({"algorithm": a, "task": t, "n_runs": have, "more_runs": max(0, n - have)})
    return pd.DataFrame(rows, columns=LAUNCH_COLUMNS)


class _Bar:
    def __init__(self, total: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc="plan", unit="experiment", file=sys.stderr, leave=False)

    def __call__(self, n: int) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


def _bar(total: int, enabled: bool) -> _Bar | None:
    return _Bar(total) if enabled else None
