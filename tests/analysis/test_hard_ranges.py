"""An interval bound outside the values its estimand can take (an optimality gap below 0) is moved to that edge,
and the report says so; an estimand without such a range keeps its bounds."""

from __future__ import annotations

import warnings

import pandas as pd

from rl_reliable_logger import ScoreTable, evaluate

#: One task, five runs: the studentized interval of the gap reached -0.218 with seed 2 (the gap is never negative).
SCORES = [0.8, 0.2, -1.6, -1.2, 0.9]


def _report(metrics: list[str]):
    table = ScoreTable(pd.DataFrame({"algorithm": "A", "task": "t1", "seed": range(5), "score": SCORES}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(table, metrics=metrics, reps=1000, profile_reps=50, improvement_reps=50, seed=2)


def test_a_gap_bound_below_zero_is_moved_to_zero_and_said():
    report = _report(["optimality_gap", "mean"])
    rows = report.aggregates.set_index("metric")
    gap = rows.loc["optimality_gap"]
    assert gap["low"] == 0.0 and gap["high"] > gap["point"] > 0
    said = [w for w in report.warnings if "outside the values the statistic can take" in w]
    assert said == ["A: the optimality_gap's interval: 1 bound outside the values the statistic can take was moved "
                    "to the range's edge"], report.warnings  # fmt: skip
    mean = rows.loc["mean"]  # no hard range: its bounds are the interval method's own
    assert mean["low"] < mean["point"] < mean["high"]
