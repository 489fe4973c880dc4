"""Interval bars stay inside their panels: the lowest and highest interval of every panel keep a visible gap to
the panel's edges (``barh`` pins the left end of a bar to the axis limit otherwise) (issue 45)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.render.figures import plot_differences, plot_interval_estimates, plot_probability_of_improvement


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(3)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(rng.normal(shift, 0.3))}
        for a, shift in (("A", 0.0), ("B", 0.4), ("C", 1.5))
        for t in ("x", "y", "z")
        for s in range(5)
    ]
    return evaluate(ScoreTable(pd.DataFrame(rows)), reps=200, profile_reps=50, improvement_reps=50, seed=0)


def _bars_inside(fig) -> int:
    checked = 0
    for ax in fig.axes:
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        if not bars:
            continue
        left, right = ax.get_xlim()
        room = 0.02 * (right - left)
        for bar in bars:
            assert left + room <= bar.get_x() and bar.get_x() + bar.get_width() <= right - room, (
                ax.get_title(),
                (bar.get_x(), bar.get_x() + bar.get_width()),
                (left, right),
            )
            checked += 1
    return checked


def test_interval_bars_keep_a_gap_to_every_panel_edge(report):
    assert _bars_inside(plot_interval_estimates(report)) == len(report.aggregates)
    assert _bars_inside(plot_differences(report)) == 3  # one row per pair
    assert _bars_inside(plot_probability_of_improvement(report)) == 3
