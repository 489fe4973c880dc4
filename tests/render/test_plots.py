"""Figure functions: run on 1, 2 and 15 algorithms, keep colours stable, draw what the tables say."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render import figures as plots
from tests.support.reports import make_report

_CACHE: dict[int, Report] = {}


def report_of(n: int) -> Report:
    if n not in _CACHE:
        _CACHE[n] = make_report(n, reps=30 if n > 5 else 80)
    return _CACHE[n]


ALL = [
    ("interval_estimates", plots.plot_interval_estimates, {}),
    ("profiles", plots.plot_performance_profiles, {}),
    ("profiles_nonlinear", plots.plot_performance_profiles, {"nonlinear": True}),
    ("profiles_tasks", plots.plot_performance_profiles, {"kind": "tasks"}),
    ("curves", plots.plot_sample_efficiency_curves, {}),
    ("gap", plots.plot_optimality_gap_curve, {}),
    ("ranks", plots.plot_rank_distributions, {}),
    ("task_scores", plots.plot_task_scores, {}),
    ("task_box", plots.plot_task_scores, {"kind": "box"}),
]
PAIRWISE = [
    ("improvement", plots.plot_probability_of_improvement, {}),
    ("differences", plots.plot_differences, {}),
]


@pytest.mark.parametrize("n", [1, 2, 15])
@pytest.mark.parametrize("name,fn,kw", ALL + PAIRWISE, ids=[a[0] for a in ALL + PAIRWISE])
def test_every_figure_draws_for_1_2_and_15_algorithms(n, name, fn, kw):
    report = report_of(n)
    if n == 1 and (name, fn, kw) in PAIRWISE:
        with pytest.raises(ValueError, match="empty"):  # one algorithm: no pairs to compare
            fn(report, **kw)
        return
    fig = fn(report, **kw)
    assert isinstance(fig, Figure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    # every algorithm name that is drawn as text must be visible somewhere (legend, ticks)
    fig.canvas.draw()
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    if name not in ("improvement", "differences"):
        for alg in report.algorithms:
            assert alg in texts, f"{alg} missing from {name}"


def test_colours_are_stable_across_figures_and_follow_report_order():
    report = report_of(5)
    colors = plots.algorithm_colors(report.algorithms)
    assert colors[report.algorithms[0]] == plots.OKABE_ITO[0]
    prof = plots.plot_performance_profiles(report).axes[0]
    line_colour = {
        ln.get_label(): to_hex(ln.get_color()) for ln in prof.get_lines() if not ln.get_label().startswith("_")
    }
    assert line_colour == {a: colors[a].lower() for a in report.algorithms}
    # interval plot: bars top to bottom follow report order, each in its algorithm's colour
    ax = plots.plot_interval_estimates(report, metrics=["iqm"]).axes[0]
    bars = sorted(ax.patches, key=lambda p: -p.get_y())
    assert [to_hex(b.get_facecolor()[:3]) for b in bars] == [colors[a].lower() for a in report.algorithms]


def test_fifteen_colours_are_distinct():
    cols = list(plots.algorithm_colors([f"a{i}" for i in range(15)]).values())
    assert len(set(cols)) == 15


def test_interval_bars_span_low_to_high():
    report = report_of(2)
    ax = plots.plot_interval_estimates(report, metrics=["median"]).axes[0]
    rows = report.aggregates[report.aggregates.metric == "median"].set_index("algorithm")
    bars = sorted(ax.patches, key=lambda p: -p.get_y())  # first algorithm is the top row
    for alg, bar in zip(report.algorithms, bars):
        assert bar.get_x() == pytest.approx(rows.loc[alg, "low"])
        assert bar.get_x() + bar.get_width() == pytest.approx(rows.loc[alg, "high"])


def test_interval_estimates_accepts_axes_and_a_bare_table():
    report = report_of(2)
    fig = Figure()
    axs = fig.subplots(1, 2)
    out = plots.plot_interval_estimates(report.aggregates, metrics=["iqm", "mean"], ax=list(axs))
    assert out is fig
    assert axs[0].get_title() == "IQM" and axs[1].get_title() == "Mean"
    with pytest.raises(ValueError, match="one Axes per metric"):
        plots.plot_interval_estimates(report, metrics=["iqm", "mean"], ax=axs[0])
    with pytest.raises(ValueError, match="'nope'"):
        plots.plot_interval_estimates(report, metrics=["nope"])


def test_nonlinear_tau_axis_is_one_minus_the_average_profile():
    # two algorithms on a hand-made grid: average profile 1, .75, .25, 0 -> x = 0, .25, .75, 1
    prof = pd.DataFrame(
        {
            "algorithm": ["A"] * 4 + ["B"] * 4,
            "kind": "runs",
            "tau": [0.0, 0.5, 1.0, 1.5] * 2,
            "fraction": [1.0, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0, 0.0],
            "low": 0.0,
            "high": 1.0,
        }
    )
    ax = plots.plot_performance_profiles(prof, nonlinear=True).axes[0]
    a_line = [ln for ln in ax.get_lines() if ln.get_label() == "A"][0]
    np.testing.assert_allclose(a_line.get_xdata(), [0.0, 0.25, 0.75, 1.0])
    # tick labels are tau values placed through the same warp, never overlapping
    ticks = ax.get_xticks()
    labels = [float(t.get_text()) for t in ax.get_xticklabels()]
    assert labels[0] == 0.0 and len(labels) >= 3
    np.testing.assert_allclose(ticks, np.interp(labels, [0.0, 0.5, 1.0, 1.5], [0.0, 0.25, 0.75, 1.0]))
    assert np.all(np.diff(ticks) >= 0.08)


def test_probability_of_improvement_rows_and_reverse_pairs():
    report = report_of(2)
    a, b = report.algorithms
    ax = plots.plot_probability_of_improvement(report, pairs=[(b, a)]).axes[0]
    row = report.improvement[(report.improvement.algorithm_x == a) & (report.improvement.algorithm_y == b)].iloc[0]
    bar = ax.patches[0]  # P(b > a) = 1 - P(a > b), interval mirrored
    assert bar.get_x() == pytest.approx(1 - row["high"])
    assert bar.get_x() + bar.get_width() == pytest.approx(1 - row["low"])
    with pytest.raises(ValueError, match="no probability of improvement"):
        plots.plot_probability_of_improvement(report, pairs=[(a, "ghost")])


def test_many_pairs_switch_to_a_matrix_with_bold_significant_cells():
    report = report_of(15)
    fig = plots.plot_probability_of_improvement(report)
    ax = fig.axes[0]
    assert len(ax.images) == 1
    imp = report.improvement
    sig = ((imp.low > 0.5) | (imp.high < 0.5)).sum()
    bold = sum(1 for t in ax.texts if t.get_fontweight() == "bold")
    assert bold == sig


def test_rank_grid_holds_the_probabilities():
    report = report_of(2)
    ax = plots.plot_rank_distributions(report).axes[0]
    grid = ax.images[0].get_array()
    expect = report.ranks.pivot_table(index="algorithm", columns="rank", values="probability").reindex(
        report.algorithms
    )
    np.testing.assert_allclose(np.asarray(grid), expect.to_numpy())
    with pytest.raises(ValueError, match="no rank distribution for task 'Zork'"):
        plots.plot_rank_distributions(report, task="Zork")


def test_task_scores_on_one_axis_and_one_dot_per_run():
    report = report_of(2)
    fig = Figure()
    ax = fig.add_subplot()
    plots.plot_task_scores(report, ax=ax)
    from matplotlib.lines import Line2D

    dots = sum(len(ln.get_xdata()) for ln in ax.get_lines() if isinstance(ln, Line2D) and ln.get_marker() == "o")
    assert dots == len(report.scores)


def test_score_label_says_the_normalisation():
    assert plots.score_label(normalization=None) == "raw score (not normalised)"
    assert "human" in plots.score_label(normalization="atari")
    r = Report(provenance={"normalize": "atari100k", "normalization": "human-normalised score (Atari 100k)"})
    assert plots.score_label(r) == "human-normalised score (Atari 100k)"
    r = Report(provenance={"normalize": None, "normalization": None})
    assert plots.score_label(r).startswith("raw")


def test_empty_or_wrong_tables_give_clear_errors():
    with pytest.raises(ValueError, match="'curves' table is empty"):
        plots.plot_sample_efficiency_curves(Report())
    with pytest.raises(ValueError, match="lacks column"):
        plots.plot_optimality_gap_curve(pd.DataFrame({"algorithm": ["A"], "point": [1.0]}))
    with pytest.raises(TypeError):
        plots.plot_differences([1, 2, 3])
