"""The ``profiles`` table (run-score and average-score performance profiles) and the ``gap_curve`` table (the
optimality gap as a function of its threshold), from one set of replicates per algorithm."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import pandas as pd

from ...stats import bootstrap as bs
from ...stats import checks as ck
from ...stats import intervals
from ...stats import profiles as pf
from ...stats.intervals import ResamplingRequest
from ...stats.intervals.bounds import expanded_level
from .base import Part, TableInputs, record

PROFILE_COLUMNS = ["algorithm", "kind", "tau", "fraction", "low", "high"]
GAP_COLUMNS = ["algorithm", "gamma", "point", "low", "high"]


def build(inputs: TableInputs, request: ResamplingRequest, taus: Sequence[float] | None, gamma: float) -> Part:
    """Both tables at the thresholds ``taus`` (default: :func:`..stats.profiles.default_taus` of the scores) and
    gap thresholds from the lowest score (or 0) to ``max(gamma, 95th percentile)``."""
    cells = inputs.cells
    records = record(request, inputs, "profiles", "gap_curve")
    if not cells:
        empty = {
            "profiles": pd.DataFrame([], columns=PROFILE_COLUMNS),
            "gap_curve": pd.DataFrame([], columns=GAP_COLUMNS),
        }
        return Part(empty, records)
    all_values = np.concatenate([c.values for c in cells.values()])
    grid = np.asarray(taus, float) if taus is not None else pf.default_taus(all_values)
    top = max(gamma, float(np.quantile(all_values, 0.95)))
    gammas = np.linspace(min(0.0, float(all_values.min())), top, 51)
    points, dists = [], []
    for alg, c in cells.items():
        points.append(pf.profile_curves(bs.original(c), grid, gammas)[0])
        dists.append(
            bs.replicates(
                c,
                lambda r: pf.profile_curves(r, grid, gammas),
                request.reps("profiles"),
                inputs.streams.of("profiles")[alg],
                # each algorithm its own task draws (the profiles are not paired)
                task_bootstrap=bool(request.task_bootstrap),
                chunk_bytes=request.chunk_bytes,
                progress=inputs.progress,
            )
        )
    samples = [intervals.Sample(level=partial(expanded_level, c)) for c in cells.values()]
    results = stacked(request, "profiles", dists, points, samples)
    profiles, gap = _tables(list(cells), grid, gammas, points, results)
    return Part({"profiles": profiles, "gap_curve": gap}, records)


def stacked(
    request: ResamplingRequest, table: str, dists: list[np.ndarray], points: list[np.ndarray], samples: list
) -> list[intervals.IntervalResult]:
    """:func:`..stats.intervals.estimate_stacked` of distributions at hand, ``(B, n)`` each (the same B and n)."""

    def fill(i: int, out: np.ndarray) -> None:
        out[...] = dists[i]

    rows, width = dists[0].shape
    return intervals.estimate_stacked(request, table, (len(dists), rows, width), fill, points, samples)


def _tables(algorithms, taus, gammas, points, results) -> tuple[pd.DataFrame, pd.DataFrame]:
    n_t, n_a = taus.size, len(algorithms)
    fractions, lows, highs, gap_point, gap_low, gap_high = [], [], [], [], [], []
    for point, result in zip(points, results):
        low, high = result.confidence_interval
        sl = slice(0, 2 * n_t)  # run-score then average-score profile
        # fractions: into [0, 1] and points into their intervals only where the excess is rounding noise
        lo_f, hi_f = ck.clip_fraction(low[sl]), ck.clip_fraction(high[sl])
        fractions.append(ck.clip_noise(ck.clip_fraction(point[sl]), lo_f, hi_f))
        lows.append(lo_f)
        highs.append(hi_f)
        sl = slice(2 * n_t, None)
        gap_point.append(ck.clip_noise(point[sl], low[sl], high[sl]))
        gap_low.append(low[sl])
        gap_high.append(high[sl])
    profiles = pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(2 * n_t)],
            "kind": (["runs"] * n_t + ["tasks"] * n_t) * n_a,
            "tau": np.tile(taus, 2 * n_a),
            "fraction": np.concatenate(fractions),
            "low": np.concatenate(lows),
            "high": np.concatenate(highs),
        },
        columns=PROFILE_COLUMNS,
    )
    gap = pd.DataFrame(
        {
            "algorithm": [a for a in algorithms for _ in range(gammas.size)],
            "gamma": np.tile(gammas, n_a),
            "point": np.concatenate(gap_point),
            "low": np.concatenate(gap_low),
            "high": np.concatenate(gap_high),
        },
        columns=GAP_COLUMNS,
    )
    return profiles, gap
