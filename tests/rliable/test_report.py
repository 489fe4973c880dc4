"""``to_report``: the drop-in's scores as a Report whose aggregates match the drop-in's estimates."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.rliable import library as rly
from rl_reliable_logger.rliable import metrics, to_report

RNG = np.random.default_rng(3)
SCORES = {"A": RNG.gamma(2.0, 0.5, size=(8, 12)), "B": RNG.gamma(2.5, 0.5, size=(8, 12))}


def test_report_aggregates_match_the_drop_in() -> None:
    func = lambda x: np.array(
        [
            metrics.aggregate_median(x),
            metrics.aggregate_iqm(x),
            metrics.aggregate_mean(x),
            metrics.aggregate_optimality_gap(x),
        ]
    )
    points, cis = rly.get_interval_estimates(SCORES, func, reps=4000, random_state=0)
    report = to_report(SCORES, tasks=[f"t{i}" for i in range(12)], reps=4000, profile_reps=100, improvement_reps=100)
    table = report.aggregates.set_index(["algorithm", "metric"])
    for alg in SCORES:
        for i, name in enumerate(["median", "iqm", "mean", "optimality_gap"]):
            row = table.loc[(alg, name)]
            assert row["point"] == pytest.approx(points[alg][i], abs=1e-12)
            width = cis[alg][1, i] - cis[alg][0, i]
            assert abs(row["low"] - cis[alg][0, i]) < 0.15 * width + 1e-12
            assert abs(row["high"] - cis[alg][1, i]) < 0.15 * width + 1e-12
    assert set(report.algorithms) == {"A", "B"} and not report.improvement.empty


def test_report_passes_rliable_keywords_on() -> None:
    report = to_report(
        SCORES, reps=500, method="basic", confidence_interval_size=0.9, profile_reps=50, improvement_reps=50
    )
    assert report.provenance["options"]["method"] == "basic"
    assert report.provenance["options"]["ci"] == 0.9
