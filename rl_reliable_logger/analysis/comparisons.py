"""All-pairs comparisons with family-wise error control: which algorithms can be told apart.

:func:`compare_all` bootstraps every algorithm once (stratified over runs within tasks, the
project's engine) and, for every pair (X, Y), reports beside the usual per-pair interval

* a *simultaneous* interval (max-T over the family of all pairs, see
  :func:`~rl_reliable_logger.stats.multiplicity.max_t_intervals`): all of them cover together
  with probability ≈ ``ci``. The bootstrap's plug-in variance is biased low by (n−1)/n with n
  runs per task, which matters at the extreme quantiles max-T uses; the standard errors are
  therefore scaled by √(n/(n−1)), n the smallest cell of the pair. The standard errors are also
  *estimated* from the runs, so the critical value is taken on the t scale with the pair's degrees of
  freedom, Σ_m (N_x,m − 1) + Σ_m (N_y,m − 1) (see ``max_t_intervals(df=)``); without it P(X > Y)
  covered 0.935–0.948 for 6 algorithms (checked by simulation: ``benchmarks/coverage/multiplicity_coverage.py``);
* the two-sided bootstrap p-value and its Holm-adjusted value;

for two families: the difference metric(X) − metric(Y) (null 0) and the probability of improvement
P(X > Y) (null 0.5). A pair is *distinguishable* when its simultaneous interval excludes the null; a pair with an
algorithm of one run per task has no interval and no p-value (NaN), and is not distinguishable (:func:`blind_pairs`);
:func:`letters` summarises that as a compact letter display.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..data.counts import fixed
from ..data.scores import ScoreTable
from ..errors import InputError
from ..stats import bootstrap as bs
from ..stats import intervals, pairwise, registry
from ..stats import multiplicity as mp
from ..wording import kw, said
from .normalization import normalize_final
from .report import SPECS

#: The columns of the comparisons table, as the Report registry declares them (one definition).
COLUMNS = list(SPECS["comparisons"].columns)


def _cells(final: ScoreTable) -> tuple[dict[str, bs.Cells], list[str]]:
    tasks = sorted(final.tasks)
    cells = final.cells()
    # runs sorted within tasks: a canonical order, so results do not depend on the input's row order
    return {a: bs.Cells.from_list([np.sort(cells[(a, t)]) for t in tasks]) for a in final.algorithms}, tasks


def blind_pairs(cells: dict[str, bs.Cells], pairs: list[tuple[str, str]]) -> np.ndarray:
    """For each pair, whether one of its algorithms has one run on every task: the bootstrap then shows none of
    that algorithm's run-to-run spread, and an interval or p-value would claim a precision no data gave."""
    alone = {a: bool((c.sizes <= 1).all()) for a, c in cells.items()}
    return np.array([alone[x] or alone[y] for x, y in pairs], dtype=bool)


def compare_all(
    table: ScoreTable,
    *,
    metric: str | Callable = "iqm",
    normalize: str | Any | None = None,
    reps: int = 2_000,
    ci: float = 0.95,
    gamma: float = 1.0,
    seed: int | np.random.Generator | None = 0,
) -> pd.DataFrame:
    """Every pair of algorithms, unadjusted and family-wise (max-T simultaneous, Holm) results.

    Returns one row per ordered pair X < Y (table order) and statistic (``difference`` of ``metric``,
    ``improvement`` = P(X > Y)), columns :data:`COLUMNS`. ``low/high`` are the usual percentile
    intervals at level ``ci``; ``*_simultaneous`` hold jointly over the pairs of each statistic.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 6 + ["B"] * 6, "task": ["x", "y"] * 6,
        ...                    "seed": [0, 0, 1, 1, 2, 2] * 2, "score": [1, 2, 1, 2, 1, 2] + [5, 6, 5, 6, 5, 6]})
        >>> out = compare_all(ScoreTable(df), metric="mean", reps=200, seed=0)
        >>> out[["statistic", "point", "distinguishable"]].values.tolist()
        [['difference', -4.0, True], ['improvement', 0.0, True]]
    """
    if reps < 10:
        raise InputError(said(kw("reps="), f" must be at least 10, got {reps}"))
    if not 0 < ci < 1:
        raise InputError(said(kw("ci="), f" must be between 0 and 1 (e.g. 0.95), got {ci}"))
    final = table.final()
    if normalize is not None:
        final = normalize_final(final, normalize)
    algorithms = final.algorithms
    if len(algorithms) < 2:
        raise InputError("compare_all needs at least two algorithms")
    metric_obj = registry.get_metric(metric, gamma=gamma)
    cells, _ = _cells(final)
    root = bs.as_generator(seed)
    streams = root.spawn(len(algorithms))
    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    dists, counts, points = {}, {}, {}
    for a in algorithms:
        draws = bs.draw(cells[a], reps, streams[slot[a]])
        dists[a] = metric_obj(draws)
        counts[a] = draws.small_counts()
        points[a] = float(metric_obj(bs.original(cells[a]))[0])
    pairs = [(x, y) for i, x in enumerate(algorithms) for y in algorithms[i + 1 :]]
    diff = np.stack([dists[x] - dists[y] for x, y in pairs], axis=1)
    diff_point = np.array([points[x] - points[y] for x, y in pairs])
    # P(X > Y) of every pair in one array operation (issue 56): each pair's own, bit for bit
    per_algorithm, at = [cells[a] for a in algorithms], {a: i for i, a in enumerate(algorithms)}
    positions = [(at[x], at[y]) for x, y in pairs]
    poi = pairwise.improvement_pair_replicates(per_algorithm, [counts[a] for a in algorithms], positions)
    poi_point = pairwise.improvement_points(per_algorithm, positions)
    smallest = {a: int(cells[a].sizes.min()) for a in algorithms}
    n_pair = np.array([min(smallest[x], smallest[y]) for x, y in pairs], dtype=float)
    scale = np.where(n_pair > 1, np.sqrt(n_pair / np.maximum(n_pair - 1, 1)), 1.0)
    dof = {a: float((cells[a].sizes - 1).sum()) for a in algorithms}
    df_pair = np.array([max(dof[x] + dof[y], 1.0) for x, y in pairs])
    # a pair with an algorithm of one run per task: no run-to-run spread to compare with, so no interval, p-value or
    # claim (the family and Holm's step-down are the other pairs); its point stays (blind_pairs names them)
    live = ~blind_pairs(cells, pairs)
    rows = []
    for statistic, dist, point, null in (("difference", diff, diff_point, 0.0), ("improvement", poi, poi_point, 0.5)):
        low, high, s_low, s_high, p, p_holm = (np.full(len(pairs), np.nan) for _ in range(6))
        if live.any():
            low[live], high[live] = intervals.interval(dist[:, live], point[live], ci=ci, method="percentile")
            s_low[live], s_high[live], _ = mp.max_t_intervals(
                dist[:, live], point[live], ci, scale=scale[live], df=df_pair[live]
            )
            p[live] = mp.bootstrap_pvalues(dist[:, live], null)
            p_holm[live] = mp.holm(p[live])
        if statistic == "improvement":
            s_low, s_high = np.clip(s_low, 0, 1), np.clip(s_high, 0, 1)
        for k, (x, y) in enumerate(pairs):
            rows.append(
                {
                    "statistic": statistic,
                    "algorithm_x": x,
                    "algorithm_y": y,
                    "metric": metric_obj.name if statistic == "difference" else "probability_of_improvement",
                    "point": float(point[k]),
                    "low": float(low[k]),
                    "high": float(high[k]),
                    "low_simultaneous": float(s_low[k]),
                    "high_simultaneous": float(s_high[k]),
                    "p_value": float(p[k]),
                    "p_holm": float(p_holm[k]),
                    "distinguishable": bool(s_low[k] > null or s_high[k] < null),
                }
            )
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs["points"] = points
    out.attrs["method"] = (
        f"max-T simultaneous {ci:.0%} intervals over the {len(pairs)} pairs of each statistic, standard errors "
        "scaled by sqrt(n/(n-1)) and the critical value on the t scale with the pair's degrees of freedom "
        f"({reps} stratified-bootstrap replicates per algorithm); Holm-adjusted bootstrap p-values"
    )
    return out


def letters(
    comparisons: pd.DataFrame, statistic: str = "difference", points: dict[str, float] | None = None
) -> pd.DataFrame:
    """Compact letter display from :func:`compare_all`: ``algorithm, point, group`` (best first);
    algorithms sharing a letter are not distinguishable at the family-wise level.

    ``points``: each algorithm's metric value (default: what :func:`compare_all` kept in ``attrs``;
    a table read back from a file has none, pass the aggregates' points of the same metric).
    """
    rows = comparisons[comparisons["statistic"] == statistic]
    if points is None:
        points = comparisons.attrs.get("points", {})
    names = list(dict.fromkeys(list(rows["algorithm_x"]) + list(rows["algorithm_y"])))
    if not points:
        points = {n: 0.0 for n in names}
    index = {n: i for i, n in enumerate(names)}
    different = np.zeros((len(names), len(names)), dtype=bool)
    for r in rows.itertuples():
        different[index[r.algorithm_x], index[r.algorithm_y]] = bool(r.distinguishable)
    display = mp.letter_display(names, [points[n] for n in names], different)
    frame = pd.DataFrame(
        {"algorithm": names, "point": [points[n] for n in names], "group": [display[n] for n in names]}
    )
    return frame.sort_values("point", ascending=False, kind="stable").reset_index(drop=True)


def report_letters(report: Any) -> pd.DataFrame | None:
    """The letter display of a Report's all-pairs comparisons (``comparisons=True``), or None without them.

    A report read back from a results folder has no ``attrs``: the metric's points then come from its
    aggregates (the comparisons are made on ``provenance["comparisons_metric"]``, the headline metric).
    """
    pairs = report.extra.get("comparisons")
    if pairs is None or pairs.empty:
        return None
    points = pairs.attrs.get("points")
    if not points:
        metric = report.provenance.get("comparisons_metric")
        agg = report.aggregates[report.aggregates["metric"] == metric]
        points = dict(zip(agg["algorithm"].astype(str), agg["point"].astype(float)))
    return letters(pairs, points=points or None)


def format_letters(frame: pd.DataFrame, metric: str | None = None) -> str:
    """Console text: one line per algorithm with its ``metric`` point and its group letters."""
    width = max(len(str(a)) for a in frame["algorithm"])
    on = f" by {registry.display_name(metric)}" if metric else ""
    lines = [f"which algorithms are distinguishable{on} (same letter: not told apart, family-wise):"]
    rows = zip(frame["algorithm"], frame["point"].to_numpy(float), frame["group"])
    lines += [f"  {str(alg):<{width}}  {fixed(point):>8}  {group}" for alg, point, group in rows]
    return "\n".join(lines)
