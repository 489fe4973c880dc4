"""The caveat per cell (issue 52): each rule fires on what the data and the design show, and the tables carry it."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import evaluate
from rl_reliable_logger.analysis import caveats as cv
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.stats import bootstrap as bs

FAST = {"reps": 300, "profile_reps": 100, "improvement_reps": 200, "seed": 0}


def _cells(per_task):
    return bs.Cells.from_list([np.asarray(r, float) for r in per_task])


def _frame(runs: dict[str, list[list[float]]]) -> pd.DataFrame:
    rows = [
        {"algorithm": alg, "task": f"t{m:02d}", "seed": k, "score": v}
        for alg, tasks in runs.items()
        for m, values in enumerate(tasks)
        for k, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_effective_tasks_counts_who_carries_a_variance():
    assert cv.effective_tasks(np.ones(8)) == 8.0
    assert cv.effective_tasks(np.array([5.0, 0.0, 0.0])) == 1.0
    assert cv.effective_tasks(np.zeros(3)) == float("inf")


def test_mean_caveat_fires_where_few_tasks_carry_its_variance_at_few_runs():
    rng = np.random.default_rng(0)
    even = [rng.normal(1.0, 0.1, 3) for _ in range(20)]
    heavy = [*even[:18], np.array([1.0, 2.0, 30.0]), np.array([0.5, 1.0, 9.0])]
    quiet = cv.algorithm_features(_cells(even))
    loud = cv.algorithm_features(_cells(heavy))
    assert cv.aggregate_caveat("mean", quiet) == ""
    assert cv.aggregate_caveat("mean", loud) == cv.REASONS["mean_tasks"]
    assert cv.aggregate_caveat("iqm", loud) == ""  # the IQM trims the tail: no caveat
    many = cv.algorithm_features(_cells([np.r_[r, rng.normal(1.0, 0.1, 30)] for r in heavy]))
    assert cv.aggregate_caveat("mean", many) == ""  # enough runs to show the tail
    assert cv.difference_caveat("mean", quiet, loud) == cv.aggregate_caveat("mean", loud)


def test_mean_caveat_names_a_task_that_makes_up_the_mean():
    rng = np.random.default_rng(6)
    suite = [rng.normal(1.0, 0.05, 5) for _ in range(9)] + [rng.normal(30.0, 1.0, 5)]
    assert cv.aggregate_caveat("mean", cv.algorithm_features(_cells(suite))) == cv.REASONS["top"]


def test_mean_caveat_fires_where_the_runs_lean_right_in_every_task():
    """Runs whose means lie well above their medians on every task (a heavy right tail that no task dominates and
    whose variance spreads over many tasks): the held-out simulation's lognormal case."""
    rng = np.random.default_rng(11)
    skewed = [rng.lognormal(0.0, 1.5, 3) for _ in range(26)]
    features = cv.algorithm_features(_cells(skewed))
    assert features["top_share"] < cv.TOP_SHARE and features["mean_tasks"] >= cv.TAIL_TASKS
    assert features["above_median"] >= cv.ABOVE_MEDIAN
    assert cv.aggregate_caveat("mean", features) == cv.REASONS["above_median"]
    symmetric = cv.algorithm_features(_cells([rng.normal(1.0, 0.3, 3) for _ in range(26)]))
    assert symmetric["above_median"] < cv.ABOVE_MEDIAN and cv.aggregate_caveat("mean", symmetric) == ""


def test_above_median_is_the_share_of_the_mean_above_the_runs_medians():
    # means 2 and 3, medians 2 and 1: (5 - 3) / 5
    assert cv.above_median([np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 7.0])]) == pytest.approx(0.4)
    assert cv.above_median([np.array([-1.0, 0.0, 1.0])]) == 0.0  # no mean to share


def test_mean_and_gap_caveats_fire_where_runs_tie_on_many_tasks_the_iqm_does_not():
    rng = np.random.default_rng(7)
    capped = [np.ones(3)] * 4 + [rng.uniform(0.2, 0.9, 3) for _ in range(6)]
    features = cv.algorithm_features(_cells(capped))
    assert features["tied_share"] == 0.4
    for kind in ("mean", "optimality_gap"):
        assert cv.aggregate_caveat(kind, features) == cv.REASONS["tied"]
    assert cv.aggregate_caveat("iqm", features) == ""
    few_tied = cv.algorithm_features(_cells([np.ones(3)] + [rng.uniform(0.2, 0.9, 3) for _ in range(9)]))
    assert cv.aggregate_caveat("mean", few_tied) == ""


def test_the_bootstrap_medians_caveat_fires_at_few_runs_the_order_statistic_ones_never():
    rng = np.random.default_rng(1)
    few = cv.algorithm_features(_cells([rng.normal(m, 0.2, 5) for m in np.linspace(0, 2, 15)]))
    assert cv.aggregate_caveat("median", few, resampled=True) == cv.REASONS["median"]
    assert cv.aggregate_caveat("median", few, resampled=False) == ""  # the order-statistic interval
    many = cv.algorithm_features(_cells([rng.normal(m, 0.2, 40) for m in np.linspace(0, 2, 15)]))
    assert cv.aggregate_caveat("median", many, resampled=True) == ""


def test_improvement_caveat_fires_at_the_boundary_under_a_bootstrap_interval_only():
    rng = np.random.default_rng(2)
    x = _cells([rng.normal(5.0, 0.1, 3) for _ in range(10)])
    y = _cells([rng.normal(0.0, 0.1, 3) for _ in range(10)])
    close = _cells([rng.normal(0.1, 1.0, 3) for _ in range(10)])
    boundary = cv.pair_features(x, y)
    assert boundary["separated_share"] == 1.0 and boundary["point"] == 1.0
    assert cv.improvement_caveat(boundary, resampled=True) == cv.REASONS["boundary"]
    assert cv.improvement_caveat(boundary, resampled=False) == ""  # mann-whitney: no collapse there
    assert cv.improvement_caveat(cv.pair_features(close, y), resampled=True) == ""


def test_task_caveat_marks_runs_without_spread():
    features = cv.task_features(_cells([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))
    assert cv.task_caveat(features[0]) == cv.REASONS["no_spread"]
    assert cv.task_caveat(features[1]) == ""


def test_the_per_task_floor_covers_a_task_whose_failure_few_runs_miss():
    """A task at 1 ± 0.001 with one failed run in ten: most draws of 3 runs miss the failure, and the plain Student-t
    interval misses its mean more often than not; floored at the median spread of the algorithm's other tasks (the
    per-task table's ``student-t``), it covers; only draws of one run three times say "runs all equal"."""
    from rl_reliable_logger.stats.intervals.bounds import student_t_runs, student_t_task_intervals

    rng = np.random.default_rng(52)
    capped = np.r_[1.0 + rng.uniform(-0.001, 0.001, 9), 0.0]
    others = [rng.normal(m, 0.2, 100) for m in (0.3, 0.5, 0.7, 0.9)]
    plain = floored = agree = 0
    for _ in range(200):
        cells = _cells([rng.choice(p, 3) for p in [*others, capped]])
        low, high = student_t_task_intervals(cells, 0.95)
        plain += not low[-1] <= capped.mean() <= high[-1]
        low, high = student_t_runs(cells, 0.95)
        floored += not low[-1] <= capped.mean() <= high[-1]
        agree += (cv.task_caveat(cv.task_features(cells)[-1]) != "") != (np.ptp(cells.values[-3:]) > 0)
    assert plain > 100 and floored <= 10  # 0.95 or more covered, where the task's own spread covered under half
    assert agree == 200  # the caveat exactly where the three runs drawn are one


def test_every_table_carries_the_caveats_its_rules_give():
    rng = np.random.default_rng(3)
    runs = {
        "A": [list(rng.normal(1.0, 0.1, 3)) for _ in range(8)] + [[1.0, 2.0, 40.0], [1.0, 1.0, 1.0]],
        "B": [list(rng.normal(0.0, 0.1, 3)) for _ in range(10)],
    }
    for option in ("auto", "method"):
        report = evaluate(_frame(runs), metrics=["mean", "median", "iqm"], median_interval=option, **FAST)
        resampled = option == "method"  # auto at 3 runs: the order-statistic median, not a bootstrap interval
        cells = {a: _cells(r) for a, r in runs.items()}
        features = {a: cv.algorithm_features(c) for a, c in cells.items()}
        for row in report.aggregates.itertuples():
            own = resampled or row.metric != "median"
            assert row.caveat == cv.aggregate_caveat(row.metric, features[row.algorithm], own)
        for row in report.differences.itertuples():
            own = resampled or row.metric != "median"
            assert row.caveat == cv.difference_caveat(
                row.metric, features[row.algorithm_x], features[row.algorithm_y], own
            )
        median = report.aggregates.set_index("metric").loc["median", "caveat"].tolist()
        assert median == ([cv.REASONS["median"]] * 2 if resampled else ["", ""])
    assert report.aggregates.set_index("metric").loc["mean", "caveat"].tolist()[0].startswith("heavy tails")
    # the default P(X > Y) interval (mann-whitney) does not collapse at the boundary: no caveat there
    assert cv.pair_features(cells["A"], cells["B"])["point"] > 0.8 and report.improvement["caveat"].tolist() == ["", ""]
    boot = evaluate(_frame(runs), metrics=["mean"], method="percentile", **FAST)
    assert boot.improvement["caveat"].tolist() == [cv.REASONS["boundary"]] * 2
    per_task = report.per_task.set_index(["algorithm", "task"])["caveat"]
    assert per_task.loc[("A", "t09")] == cv.REASONS["no_spread"] and per_task.loc[("A", "t00")] == ""
    for alg, c in cells.items():  # every per-task row carries its own rule's caveat
        expected = [cv.task_caveat(f) for f in cv.task_features(c)]
        assert per_task.loc[alg].tolist() == expected


def test_caveats_survive_a_results_folder_and_older_folders_read_without_them(tmp_path):
    from rl_reliable_logger import save_report

    rng = np.random.default_rng(4)
    runs = {
        "A": [list(rng.normal(1.0, 0.1, 3)) for _ in range(6)],
        "B": [list(rng.normal(0.5, 0.1, 3)) for _ in range(6)],
    }
    report = evaluate(_frame(runs), metrics=["median", "iqm"], **FAST)
    save_report(report, tmp_path / "new", figures=False)
    again = Report.load(tmp_path / "new")
    pd.testing.assert_frame_equal(again.aggregates, report.aggregates, check_dtype=False)
    assert again.aggregates["caveat"].tolist() == report.aggregates["caveat"].tolist()
    old = tmp_path / "old"
    save_report(report, old, figures=False)
    frame = pd.read_csv(old / "aggregates.csv").drop(columns="caveat")
    frame.to_csv(old / "aggregates.csv", index=False)
    assert "caveat" not in Report.load(old).aggregates.columns


@pytest.mark.parametrize("kind", ["iqm", "*"])
def test_statistics_without_a_rule_carry_no_caveat(kind):
    rng = np.random.default_rng(5)
    heavy = cv.algorithm_features(_cells([rng.lognormal(0, 2.0, 3) for _ in range(10)]))
    assert cv.aggregate_caveat(kind, heavy) == ""


def test_each_reason_is_said_once_naming_its_cells_in_every_format():
    from rl_reliable_logger.analysis.notices import caveat_notes
    from rl_reliable_logger.cli.common import format_summary
    from rl_reliable_logger.render.html import build_html
    from rl_reliable_logger.render.methods import methods_markdown
    from rl_reliable_logger.render.tables import to_latex, to_markdown

    rng = np.random.default_rng(8)
    runs = {
        alg: [list(rng.normal(shift, 0.1, 3)) for _ in range(8)] + [[1.0, 2.0, 40.0], [1.0, 1.5, 2.0]]
        for alg, shift in (("A", 1.0), ("B", 0.5), ("C", 0.7))
    }
    report = evaluate(_frame(runs), metrics=["mean", "median", "iqm"], median_interval="method", **FAST)
    # the median's bootstrap interval at 3 runs: one reason for every algorithm's median, said once
    (median,) = [n for n in caveat_notes(report, ("aggregates",)) if n.reason == cv.REASONS["median"]]
    assert median.line == f"the median of every algorithm: {cv.REASONS['median']}"
    (mean,) = [n for n in caveat_notes(report, ("aggregates",)) if n.reason.startswith("heavy tails")]
    assert mean.where == "the mean of every algorithm"
    summary = format_summary(report)
    assert summary.count(cv.REASONS["median"]) == 1 and summary.count(f"† {median.line}") == 1
    assert summary.split("\n† ")[0].count("†") == 6  # three means and three medians marked, each reason once below
    assert not any(n.reason and "iqm" in n.where for n in caveat_notes(report))  # the IQM is not marked
    markdown = to_markdown(report)
    assert markdown.count("the median of every algorithm") == 1 and markdown.count("near the middle") == 1
    assert to_latex(report).count("the median of every algorithm") == 1
    page = build_html(report)
    assert page.count(median.line) == 4  # once in the list under the headline, and as the three marks' tooltip
    assert page.count('href="#caveat-') == 6
    methods = methods_markdown(report)
    section = methods.split("## Caveats", 1)[1].split("##", 1)[0]
    assert section.count(cv.REASONS["median"]) == 1
    assert "the median of every algorithm; the median difference of every pair" in section
    assert "the mean difference of every pair" in section


def test_the_methods_median_sentence_quotes_the_studys_recorded_figures_only():
    from rl_reliable_logger.render.methods import methods_details, methods_paragraph

    def methods_text(report) -> str:  # the median's sentence is a detail, never in the paragraph a paper takes
        assert "coverage study" not in methods_paragraph(report)
        return " ".join(text for _, text in methods_details(report))

    rng = np.random.default_rng(9)
    runs = {a: [list(rng.normal(s, 0.3, 3)) for _ in range(10)] for a, s in (("A", 1.0), ("B", 0.5))}
    default = methods_text(evaluate(_frame(runs), metrics=["median"], **FAST))
    found = cv.measured("median: order-statistic")
    assert found is not None and "caveat_study.py" in default
    low, high = found["coverage"]
    assert f"{low:.0%}-{high:.0%}" in default or f"{low:.0%} of the data sets" in default
    assert "not a property of this interval" in default and "79-96%" not in default
    near = cv.measured("P(X>Y) near 1")  # measured on the pairs near 1 alone, and the sentence says so
    assert near is not None and near["rows"] in cv.study_words("P(X>Y) near 1")
    boot = methods_text(evaluate(_frame(runs), metrics=["median"], median_interval="method", **FAST))
    assert cv.study_words("median: bootstrap") in boot and "its cells carry a caveat" in boot


# ----------------------------------------------------------------------------- pair features at once, scale-free counts
def _pair_features_task_by_task(x: bs.Cells, y: bs.Cells) -> dict[str, float]:
    """The definition, task by task in plain Python: a task separates when every run of one algorithm lies above every
    run of the other; the estimate averages each task's share of pairs won (ties count 1/2)."""
    separated, shares = [], []
    for m in range(x.n_tasks):
        a = [float(v) for v in x.values[x.offsets[m] : x.offsets[m] + x.sizes[m]]]
        b = [float(v) for v in y.values[y.offsets[m] : y.offsets[m] + y.sizes[m]]]
        separated.append(1.0 if min(a) > max(b) or max(a) < min(b) else 0.0)
        wins = sum(1.0 if u > v else 0.5 if u == v else 0.0 for u in a for v in b)
        shares.append(wins / (len(a) * len(b)))
    return {
        "separated_share": float(np.mean(separated)),
        "point": float(np.mean(shares)),
        "one_run": float(bool((x.sizes <= 1).all() or (y.sizes <= 1).all())),
    }


@pytest.mark.parametrize("seed", range(12))
def test_pair_features_are_the_task_by_task_definition_exactly(seed):
    rng = np.random.default_rng(seed)
    tasks = int(rng.integers(1, 30))
    grid = seed % 2 == 0  # scores on a grid of four values: ties within and across the two algorithms

    def cells() -> bs.Cells:
        sizes = rng.integers(1, 9, tasks)
        return _cells([rng.integers(0, 4, k) / 4 if grid else rng.normal(0.0, 1.0, k) + rng.normal() for k in sizes])

    x, y = cells(), cells()
    assert cv.pair_features(x, y) == _pair_features_task_by_task(x, y)
    assert cv.pair_features(y, x) == _pair_features_task_by_task(y, x)


def test_pair_features_refuse_algorithms_over_different_tasks():
    with pytest.raises(ValueError, match="same tasks"):
        cv.pair_features(_cells([[1.0, 2.0], [3.0]]), _cells([[1.0, 2.0]]))


def test_effective_tasks_is_the_same_at_any_scale():
    rng = np.random.default_rng(4)
    for _ in range(50):
        v = rng.lognormal(0.0, 2.0, int(rng.integers(1, 40))) * (rng.random(1) < 0.8)
        base = cv.effective_tasks(v)
        for power in (-1000, -600, -100, 100, 600, 1000):  # exact scalings, tiny to huge (every value stays normal)
            assert cv.effective_tasks(v * 2.0**power) == base
        if v.max() > 0:  # as (Σ v)² / Σ v² where that does not overflow
            assert base == round(float(v.sum()) ** 2 / float((v**2).sum()), 2)


def test_effective_tasks_holds_for_variances_beyond_where_their_squares_overflow():
    # squares overflow above 1.3e154 and vanish below 1e-162: the count is still the count
    assert cv.effective_tasks(np.array([1e200, 1e200, 0.0])) == 2.0
    assert cv.effective_tasks(np.array([1e-170, 1e-170])) == 2.0
    assert cv.effective_tasks(np.array([1.7e308, 1.7e308, 1.7e308, 1.7e308])) == 4.0
    assert cv.effective_tasks(np.array([9e300, 0.0, 0.0, 1e300])) == 1.22
    assert cv.effective_tasks(np.array([5e-324, 0.0])) == 1.0
    assert cv.effective_tasks(np.array([np.inf, 3.0, 3.0])) == 2.0  # a variance that is not finite is left out


def test_caveat_features_of_huge_scores_are_those_of_the_same_scores_rescaled():
    rng = np.random.default_rng(6)
    runs = [rng.lognormal(0.0, 1.0, 5) for _ in range(6)]
    small = cv.algorithm_features(_cells(runs))
    huge = cv.algorithm_features(_cells([r * 2.0**400 for r in runs]))  # about 2.6e120: variances near 1e241
    del small["gap_tasks"], huge["gap_tasks"]  # runs clipped at γ = 1: not a feature of the scale-free kind
    assert huge == small
