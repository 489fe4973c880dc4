"""One metric order everywhere: the order of the analysis's ``metrics`` (the aggregates table), in the console
table, table.md, table.tex, report.html, the interval figure and the MLflow description (issue 45)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.render.figures import plot_interval_estimates
from rl_reliable_logger.render.html import build_html
from rl_reliable_logger.render.tables import headline_cells, to_latex, to_markdown
from rl_reliable_logger.stats.registry import display_name


def _report(metrics: list[str] | None):
    rng = np.random.default_rng(0)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(rng.uniform(0, 1) + (a == "B"))}
        for a in "AB"
        for t in ("x", "y", "z")
        for s in range(4)
    ]
    extra = {"metrics": metrics} if metrics else {}
    return evaluate(ScoreTable(pd.DataFrame(rows)), reps=100, profile_reps=20, improvement_reps=20, seed=0, **extra)


@pytest.mark.parametrize("metrics", [None, ["iqm", "mean", "median"], ["optimality_gap", "iqm"]])
def test_every_view_orders_the_metrics_as_the_analysis_asked(metrics):
    report = _report(metrics)
    order = list(dict.fromkeys(report.aggregates["metric"].astype(str)))
    if metrics:
        assert order == metrics
    titles = [display_name(m) for m in order]

    assert headline_cells(report)[1] == order
    head = to_markdown(report).splitlines()[0]
    assert [cell.rsplit(" ", 1)[0] for cell in head.strip("| ").split(" | ")[1:]] == titles, head
    tex = to_latex(report)
    assert sorted(tex.index(t) for t in titles) == [tex.index(t) for t in titles]
    html = build_html(report)
    table = html[html.index("<table") : html.index("</table>")]
    shown = [re.sub(r"<[^>]+>", "", h).rsplit(" ", 1)[0] for h in re.findall(r"<th[^>]*>(.*?)</th>", table)][1:]
    assert shown[: len(titles)] == titles, shown
    fig = plot_interval_estimates(report)
    assert [ax.get_title().split(" (")[0] for ax in fig.axes] == titles  # "(lower is better)" may follow
