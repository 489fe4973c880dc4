"""evaluate(): ScoreTable + options → Report. The one place the statistics are assembled.

Defaults follow Agarwal et al. (2021): 50,000 bootstrap replicates for aggregate metrics, 2,000 for
performance profiles, probability of improvement and rank distributions; 95% percentile intervals;
stratified bootstrap over runs within each (algorithm, task) cell.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.normalize import get_normalizer
from ..data.scores import ScoreTable
from ..errors import ScoreTableError
from ..stats import bootstrap as bs
from ..stats import curves as cv
from ..stats import engine
from ..stats import metrics as mt
from ..stats import profiles as pf
from ..stats.aggregate import aggregate_intervals
from ..version import __version__
from .report import Report

DEFAULT_METRICS = ("mean", "median", "iqm", "optimality_gap")
_MAX_KEYS = ("max", "best", "peak", "top")


class _Progress:
    """A tqdm bar on stderr when asked for and available; silent otherwise."""

    def __init__(self, total: int, enabled: bool, desc: str = "bootstrap") -> None:
        self.bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="rep", unit_scale=True, file=sys.stderr, leave=False)
            except ImportError:  # pragma: no cover - tqdm is optional
                self.bar = None

    def __call__(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _versions() -> dict[str, str]:
    import scipy

    return {
        "rl_reliable_logger": __version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
        "python": platform.python_version(),
    }


def _cells_by_algorithm(table: ScoreTable, tasks: list[str]) -> dict[str, bs.Cells]:
    # runs sorted by score within each task: a canonical order (results depend on neither the input's
    # row order nor run ids), and probability of improvement needs no per-replicate sort
    cells = table.cells()
    return {alg: bs.Cells.from_list([np.sort(cells[(alg, t)]) for t in tasks]) for alg in table.algorithms}


def _ci(dist: np.ndarray, point: np.ndarray, ci: float, method: str, jack: np.ndarray | None = None):
    """Interval with the requested method; BCa needs a jackknife, without one it falls back to BC; the expanded
    and bootstrap-t intervals need the cells, without them they fall back to percentile."""
    if method == "bca" and jack is None:
        method = "bc"
    if method in ("expanded", "bootstrap-t"):
        method = "percentile"
    return bs.interval(dist, point, ci=ci, method=method, jackknife=jack)  # type: ignore[arg-type]


def evaluate(
    table: ScoreTable,
    *,
    normalize: str | Any | None = None,
    metrics: Sequence[str | Callable] = DEFAULT_METRICS,
    gamma: float = 1.0,
    reps: int = 50_000,
    profile_reps: int = 2_000,
    improvement_reps: int = 2_000,
    curve_reps: int = 2_000,
    ci: float = 0.95,
    method: str = "percentile",
    task_bootstrap: bool = False,
    seed: int | np.random.Generator | None = None,
    taus: Sequence[float] | np.ndarray | None = None,
    curves: bool = False,
    curve_points: int = 25,
    curve_metrics: Sequence[str] = ("iqm", "mean"),
    progress: bool = False,
    chunk_bytes: int = bs.DEFAULT_CHUNK_BYTES,
    source: dict[str, Any] | None = None,
    rank_by: str = "runs",
) -> Report:
    """Evaluate every algorithm of ``table`` with interval estimates; return a :class:`Report`.

    Args:
        table: validated per-run scores.
        normalize: a packaged normaliser name (``atari``, ``atari100k``, ``procgen``, ``dmc``, ...), a
            CSV path ``task,low,high``, ``"percentiles"`` (Jordan et al.), or None for raw scores.
        metrics: aggregate metrics by name (``mean, median, iqm, optimality_gap, dp25,
            trimmed_mean_<p>, p_above_<t>``) or as functions (see ``stats.metrics``).
        gamma: threshold of the optimality gap.
        reps: bootstrap replicates for aggregate metrics (and their differences).
        profile_reps / improvement_reps / curve_reps: replicates for profiles, ranks and per-task
            intervals / probability of improvement / sample-efficiency curves.
        ci: confidence level. method: ``percentile`` | ``basic`` | ``bc`` | ``bca`` | ``expanded`` (small
            samples) | ``bootstrap-t`` (small samples; studentized for the mean, expanded otherwise).
        task_bootstrap: also resample tasks (aggregates, profiles, differences and probability of improvement;
            every algorithm's replicate r resamples the same tasks, so differences and improvement are paired).
        seed: int or numpy Generator; the same inputs and seed give bit-identical results.
        taus: τ grid for performance profiles (default: 101 points over the score range).
        curves: also compute sample-efficiency curves (needs a table with a ``step`` column).
        progress: show a progress bar on stderr.
        chunk_bytes: memory budget of one chunk of replicates (bounds peak memory).
        source: where the scores came from (recorded in provenance).
        rank_by: rank distributions of ``"runs"`` (default, the paper's: one random run per task per
            replicate) or ``"task-means"`` (bootstrapped task means); see ``stats.profiles``.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 4 + ["B"] * 4, "task": ["x", "x", "y", "y"] * 2,
        ...                    "seed": [0, 1] * 4, "score": [1, 2, 3, 4, 2, 3, 4, 5]})
        >>> report = evaluate(ScoreTable(df), reps=500, profile_reps=200, improvement_reps=200, seed=0)
        >>> report.headline("iqm")[["algorithm", "point"]].values.tolist()
        [['A', 2.5], ['B', 3.5]]
    """
    if reps < 1 or profile_reps < 1 or improvement_reps < 1:
        raise ValueError("reps, profile_reps and improvement_reps must be positive")
    if method not in bs.METHODS:
        raise ValueError(f"method must be one of {', '.join(bs.METHODS)}, got {method!r}")
    if rank_by not in pf.RANK_DEFINITIONS:
        raise ValueError(f"rank_by must be one of {', '.join(pf.RANK_DEFINITIONS)}, got {rank_by!r}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1 (e.g. 0.95), got {ci}")
    if curves and not table.has_steps:  # checked before any resampling work
        raise ScoreTableError("curves need per-step scores: give the input a step column (--step-key).")
    started = _dt.datetime.now(_dt.timezone.utc)
    raw_table = table
    final = table.final()
    warnings = list(table.warnings)
    normalization = "raw score"
    if normalize is not None:
        normalizer = get_normalizer(normalize)
        if normalizer.per_step:
            table = normalizer.apply(table)  # every step, so curves are normalised too
            final = table.final()
        else:
            final = normalizer.apply(final)
        if normalizer.caveat:
            warnings.append(normalizer.caveat)
        normalization = final.source.get("normalization_description", str(normalize))
    warnings += _score_key_warnings(table)

    algorithms = final.algorithms
    # the engine sees tasks (and random streams are assigned to algorithms) in sorted name order,
    # so results do not depend on the order of the input rows
    tasks = sorted(final.tasks)
    cells = _cells_by_algorithm(final, tasks)
    metric_objs = [mt.get_metric(m, gamma=gamma) for m in metrics]
    names = [m.name for m in metric_objs]
    if len(set(names)) != len(names):
        raise ValueError(f"metric names must be unique, got {names}")

    root = bs.as_generator(seed)
    streams = root.spawn(5 * len(algorithms))  # fixed layout: results do not depend on what else is computed
    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    agg_rng = {a: streams[5 * slot[a]] for a in algorithms}
    prof_rng = {a: streams[5 * slot[a] + 1] for a in algorithms}
    task_rng = {a: streams[5 * slot[a] + 2] for a in algorithms}
    poi_rng = {a: streams[5 * slot[a] + 3] for a in algorithms}
    curve_rng = {a: streams[5 * slot[a] + 4] for a in algorithms}

    total = len(algorithms) * (reps + 2 * profile_reps + improvement_reps) + (
        len(algorithms) * curve_reps if curves else 0
    )
    bar = _Progress(total, progress)
    try:
        all_values = np.concatenate([c.values for c in cells.values()])
        tau_grid = np.asarray(taus, float) if taus is not None else pf.default_taus(all_values)
        gammas = np.linspace(min(0.0, float(all_values.min())), max(gamma, float(np.quantile(all_values, 0.95))), 51)

        # with task resampling, every algorithm's replicate r resamples the same tasks (paired differences)
        shared_tasks = root.spawn(1)[0].bit_generator.seed_seq if task_bootstrap else False
        aggregates, dists = _aggregates(cells, metric_objs, reps, agg_rng, shared_tasks, chunk_bytes, ci, method, bar)
        differences = _differences(algorithms, names, aggregates, dists, ci, method)
        profiles, gap = _profiles(
            cells, tau_grid, gammas, profile_reps, prof_rng, task_bootstrap, chunk_bytes, ci, method, bar
        )
        per_task, ranks = _per_task_and_ranks(
            cells, tasks, profile_reps, task_rng, chunk_bytes, ci, method, bar, rank_by
        )
        improvement = _improvement(cells, improvement_reps, poi_rng, chunk_bytes, ci, method, bar, shared_tasks)
        curve_table = pd.DataFrame(columns=["algorithm", "metric", "step", "point", "low", "high"])
        curve_info: dict[str, Any] = {}
        if curves:
            curve_table, curve_info = _curves(
                table, curve_metrics, gamma, curve_reps, curve_points, curve_rng, chunk_bytes, ci, method, bar
            )
            if curve_info.get("left_out"):
                warnings.append(
                    f"{len(curve_info['left_out'])} run(s) stop before the curves' last step and are left out of "
                    "the curves (not of the final scores): "
                    + ", ".join("/".join(k) for k in curve_info["left_out"][:8])
                    + (" ..." if len(curve_info["left_out"]) > 8 else "")
                )
    finally:
        bar.close()

    used = final.frame
    provenance: dict[str, Any] = {
        "created": started.isoformat(timespec="seconds"),
        "source": {**dict(raw_table.source), **dict(source or {})},
        "normalization": normalization,
        "normalize": None if normalize is None else str(normalize),
        "algorithms": algorithms,
        "tasks": tasks,
        "n_runs": {a: int((used["algorithm"] == a).sum()) for a in algorithms},
        "runs_per_task": {a: {t: int(n) for t, n in zip(tasks, cells[a].sizes)} for a in algorithms},
        "runs_used": used[["algorithm", "task", "run_id"]].astype(str).values.tolist(),
        "dropped": raw_table.dropped.astype(object).where(raw_table.dropped.notna(), None).to_dict("records"),
        "excluded": raw_table.source.get("excluded", []),
        "metrics": names,
        "gamma": gamma,
        "reps": reps,
        "profile_reps": profile_reps,
        "improvement_reps": improvement_reps,
        "curve_reps": curve_reps if curves else None,
        "ci": ci,
        "method": method,
        "method_note": (
            "aggregates use the requested method; differences, probability of improvement, profiles and per-task "
            "intervals use it too, except that bca falls back to bc for them (no jackknife) and expanded and "
            "bootstrap-t to percentile; bootstrap-t is studentized for the mean, expanded for other metrics."
        ),
        "task_bootstrap": task_bootstrap,
        "rank_by": rank_by,
        "seed": seed if isinstance(seed, (int, np.integer)) or seed is None else repr(seed),
        "chunk_bytes": chunk_bytes,
        "curves": curve_info,
        "versions": _versions(),
    }
    if seed is None:
        warnings.append(
            "no seed given: intervals will differ slightly from run to run; pass --seed for reproducible numbers."
        )
    scores_out = (table if table.has_steps and curves else final).frame
    return Report(
        aggregates=aggregates,
        per_task=per_task,
        improvement=improvement,
        differences=differences,
        profiles=profiles,
        ranks=ranks,
        gap_curve=gap,
        curves=curve_table,
        scores=scores_out.reset_index(drop=True),
        provenance=provenance,
        warnings=warnings,
    )


def _score_key_warnings(table: ScoreTable) -> list[str]:
    key = str(table.source.get("fields", {}).get("score", table.source.get("score_column", "")))
    lowered = key.lower()
    if any(word in lowered for word in _MAX_KEYS):
        return [
            f"the score comes from {key!r}, which looks like a maximum over training; max-over-evaluations scores "
            "are biased upwards (Agarwal et al. 2021, Fig. 5): report the final score instead."
        ]
    return []


# ----------------------------------------------------------------------------- pieces
def _aggregates(cells, metric_objs, reps, rngs, task_bootstrap, chunk_bytes, ci, method, bar):
    rows, dists = [], {}
    for alg, c in cells.items():
        point, low, high, dists[alg] = aggregate_intervals(
            c, metric_objs, reps, rngs[alg], ci=ci, method=method, task_bootstrap=task_bootstrap,
            chunk_bytes=chunk_bytes, progress=bar,
        )  # fmt: skip
        for j, m in enumerate(metric_objs):
            rows.append({"algorithm": alg, "metric": m.name, "point": point[j], "low": low[j], "high": high[j]})
    return pd.DataFrame(rows, columns=["algorithm", "metric", "point", "low", "high"]), dists


def _differences(algorithms, names, aggregates, dists, ci, method):
    rows = []
    points = aggregates.set_index(["algorithm", "metric"])["point"]
    for i, x in enumerate(algorithms):
        for y in algorithms[i + 1 :]:
            n = min(dists[x].shape[0], dists[y].shape[0])
            diff = dists[x][:n] - dists[y][:n]
            point = np.array([points[(x, m)] - points[(y, m)] for m in names])
            low, high = _ci(diff, point, ci, method)
            for j, m in enumerate(names):
                rows.append(
                    {"algorithm_x": x, "algorithm_y": y, "metric": m, "point": point[j], "low": low[j], "high": high[j]}
                )
    return pd.DataFrame(rows, columns=["algorithm_x", "algorithm_y", "metric", "point", "low", "high"])


def _profiles(cells, taus, gammas, reps, rngs, task_bootstrap, chunk_bytes, ci, method, bar):
    prof_rows, gap_rows = [], []

    def stat(r: bs.Resample) -> np.ndarray:
        return pf.profile_curves(r, taus, gammas)

    fast = engine.profile_curves(taus, gammas)

    n_t = taus.size
    for alg, c in cells.items():
        point = stat(bs.original(c))[0]
        dist = bs.replicates(
            c, fast, reps, rngs[alg], task_bootstrap=task_bootstrap, chunk_bytes=chunk_bytes, progress=bar
        )
        low, high = _ci(dist, point, ci, method)
        for k, kind in enumerate(("runs", "tasks")):
            sl = slice(k * n_t, (k + 1) * n_t)
            for tau, p, lo, hi in zip(taus, point[sl], np.clip(low[sl], 0, 1), np.clip(high[sl], 0, 1)):
                prof_rows.append({"algorithm": alg, "kind": kind, "tau": tau, "fraction": p, "low": lo, "high": hi})
        sl = slice(2 * n_t, None)
        for g, p, lo, hi in zip(gammas, point[sl], low[sl], high[sl]):
            gap_rows.append({"algorithm": alg, "gamma": g, "point": p, "low": lo, "high": hi})
    return (
        pd.DataFrame(prof_rows, columns=["algorithm", "kind", "tau", "fraction", "low", "high"]),
        pd.DataFrame(gap_rows, columns=["algorithm", "gamma", "point", "low", "high"]),
    )


def _per_task_and_ranks(cells, tasks, reps, rngs, chunk_bytes, ci, method, bar, rank_by="runs"):
    rows = []
    means_by_alg = []
    for alg, c in cells.items():
        point = bs.original(c).task_means()[0]
        means = engine.task_means()
        dist = bs.replicates(c, means, reps, rngs[alg], chunk_bytes=chunk_bytes, progress=bar)
        # after the per-task replicates on the same stream, so per-task intervals do not depend on rank_by
        means_by_alg.append(pf.single_runs(c, reps, rngs[alg]) if rank_by == "runs" else dist)
        low, high = _ci(dist, point, ci, method)
        for m, task in enumerate(tasks):
            run_scores = c.values[c.offsets[m] : c.offsets[m] + c.sizes[m]]
            rows.append(
                {
                    "algorithm": alg,
                    "task": task,
                    "n_runs": int(c.sizes[m]),
                    "mean": point[m],
                    "low": low[m],
                    "high": high[m],
                    "median": float(np.median(run_scores)),
                    "min": float(run_scores.min()),
                    "max": float(run_scores.max()),
                }
            )
    per_task = pd.DataFrame(
        rows, columns=["algorithm", "task", "n_runs", "mean", "low", "high", "median", "min", "max"]
    )
    probs = pf.rank_probabilities(np.stack(means_by_alg))  # (A, M, A)
    algorithms = list(cells)
    rank_rows = []
    for a, alg in enumerate(algorithms):
        for m, task in enumerate(list(tasks) + ["__average__"]):
            dist = probs[a, m] if m < len(tasks) else probs[a].mean(axis=0)
            for k in range(len(algorithms)):
                rank_rows.append({"algorithm": alg, "task": task, "rank": k + 1, "probability": float(dist[k])})
    return per_task, pd.DataFrame(rank_rows, columns=["algorithm", "task", "rank", "probability"])


def _improvement(cells, reps, rngs, chunk_bytes, ci, method, bar, shared_tasks=False):
    algorithms = list(cells)
    if len(algorithms) < 2:
        return pd.DataFrame(columns=["algorithm_x", "algorithm_y", "point", "low", "high"])
    # one set of independent replicates per algorithm, shared by all its pairs; only the draw
    # counts are kept, chunked identically for every algorithm
    sizes = list(bs.chunk_sizes(reps, max(cells.values(), key=lambda c: c.n_runs), chunk_bytes))
    counts: dict[str, list] = {}
    for alg, c in cells.items():
        counts[alg] = []
        task_rng = bs.task_stream(shared_tasks)  # the same task draws for every algorithm
        for n in sizes:
            batch = bs.draw(c, n, rngs[alg], task_bootstrap=bool(shared_tasks), task_rng=task_rng)
            counts[alg].append(batch if shared_tasks else engine.draw_counts(batch))
            bar(n)
    rows = []
    for i, x in enumerate(algorithms):
        for y in algorithms[i + 1 :]:
            cx, cy = cells[x], cells[y]
            point = mt.probability_of_improvement(
                [cx.values[cx.offsets[m] : cx.offsets[m] + cx.sizes[m]] for m in range(cx.n_tasks)],
                [cy.values[cy.offsets[m] : cy.offsets[m] + cy.sizes[m]] for m in range(cy.n_tasks)],
            )
            if shared_tasks:
                dist = np.concatenate([mt.improvement_task_slots(bx, by) for bx, by in zip(counts[x], counts[y])])
            else:
                dist = np.concatenate([engine.improvement(cx, kx, cy, ky) for kx, ky in zip(counts[x], counts[y])])
            low, high = _ci(dist[:, None], np.array([point]), ci, method)
            rows.append(
                {"algorithm_x": x, "algorithm_y": y, "point": point, "low": float(low[0]), "high": float(high[0])}
            )
            rows.append(
                {
                    "algorithm_x": y,
                    "algorithm_y": x,
                    "point": 1 - point,
                    "low": 1 - float(high[0]),
                    "high": 1 - float(low[0]),
                }
            )
    out = pd.DataFrame(rows, columns=["algorithm_x", "algorithm_y", "point", "low", "high"])
    order = {a: i for i, a in enumerate(algorithms)}
    return out.sort_values(["algorithm_x", "algorithm_y"], key=lambda s: s.map(order), kind="stable").reset_index(
        drop=True
    )


def _curves(table, curve_metrics, gamma, reps, n_points, rngs, chunk_bytes, ci, method, bar):
    frame = table.frame.sort_values("step", kind="stable")
    histories = [
        cv.RunHistory(key, g["step"].to_numpy(float), g["score"].to_numpy(float))
        for key, g in frame.groupby(["algorithm", "task", "run_id"], sort=False)
    ]
    grid, left_out = cv.common_grid(histories, n_points)
    left = set(left_out)
    by_cell: dict[tuple[str, str], list[np.ndarray]] = {}
    for h in histories:
        if h.key in left:
            continue
        by_cell.setdefault(h.key[:2], []).append(cv.align(h, grid))
    metric_objs = [mt.get_metric(m, gamma=gamma) for m in curve_metrics]
    rows = []
    for alg in table.algorithms:
        per_task = [np.stack(by_cell[(alg, t)]) for t in sorted(table.tasks)]  # each (N_m, G)
        cells = bs.Cells.from_list([p[:, 0] for p in per_task])
        values = np.concatenate(per_task, axis=0)  # (K, G), same run order as cells

        def stat(r: bs.Resample, values: np.ndarray = values) -> np.ndarray:
            # whole runs: the same draws evaluated at every step
            return np.stack(
                [np.stack([m(r.with_values(values[:, g])) for g in range(grid.size)], axis=1) for m in metric_objs],
                axis=1,
            )  # (R, n_metrics, G)

        point = stat(bs.original(cells))[0]
        dist = bs.replicates(cells, stat, reps, rngs[alg], chunk_bytes=chunk_bytes, progress=bar)
        low, high = _ci(dist, point, ci, method)
        for j, m in enumerate(metric_objs):
            for g, step in enumerate(grid):
                rows.append(
                    {
                        "algorithm": alg,
                        "metric": m.name,
                        "step": step,
                        "point": point[j, g],
                        "low": low[j, g],
                        "high": high[j, g],
                    }
                )
    info = {
        "grid": [float(s) for s in grid],
        "left_out": [list(k) for k in left_out],
        "rule": "last value at or before each grid step; no extrapolation",
    }
    return pd.DataFrame(rows, columns=["algorithm", "metric", "step", "point", "low", "high"]), info
