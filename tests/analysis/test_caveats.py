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
    assert cv.aggregate_caveat("mean", loud).startswith("heavy tails at 3 runs")
    assert cv.aggregate_caveat("iqm", loud) == ""  # the IQM trims the tail: no caveat
    many = cv.algorithm_features(_cells([np.r_[r, rng.normal(1.0, 0.1, 30)] for r in heavy]))
    assert cv.aggregate_caveat("mean", many) == ""  # enough runs to show the tail
    assert cv.difference_caveat("mean", quiet, loud) == cv.aggregate_caveat("mean", loud)


def test_mean_caveat_names_a_task_that_makes_up_the_mean():
    rng = np.random.default_rng(6)
    suite = [rng.normal(1.0, 0.05, 5) for _ in range(9)] + [rng.normal(30.0, 1.0, 5)]
    reason = cv.aggregate_caveat("mean", cv.algorithm_features(_cells(suite)))
    assert reason.startswith("heavy tails at 5 runs: one task makes up 7") and reason.endswith(
        "% of the mean; may under-cover"
    )


def test_mean_and_gap_caveats_fire_where_runs_tie_on_many_tasks_the_iqm_does_not():
    rng = np.random.default_rng(7)
    capped = [np.ones(3)] * 4 + [rng.uniform(0.2, 0.9, 3) for _ in range(6)]
    features = cv.algorithm_features(_cells(capped))
    assert features["tied_share"] == 0.4
    for kind in ("mean", "optimality_gap"):
        assert (
            cv.aggregate_caveat(kind, features)
            == "runs all equal on 4 of 10 tasks: those add no width; may under-cover"
        )
    assert cv.aggregate_caveat("iqm", features) == ""
    few_tied = cv.algorithm_features(_cells([np.ones(3)] + [rng.uniform(0.2, 0.9, 3) for _ in range(9)]))
    assert cv.aggregate_caveat("mean", few_tied) == ""


def test_median_caveat_names_the_runs_per_task():
    rng = np.random.default_rng(1)
    few = cv.algorithm_features(_cells([rng.normal(m, 0.2, 5) for m in np.linspace(0, 2, 15)]))
    assert (
        cv.aggregate_caveat("median", few) == "median: depends on the tasks near the middle; may under-cover at 5 runs"
    )
    many = cv.algorithm_features(_cells([rng.normal(m, 0.2, 40) for m in np.linspace(0, 2, 15)]))
    assert cv.aggregate_caveat("median", many) == ""


def test_improvement_caveat_fires_at_the_boundary_only():
    rng = np.random.default_rng(2)
    x = _cells([rng.normal(5.0, 0.1, 3) for _ in range(10)])
    y = _cells([rng.normal(0.0, 0.1, 3) for _ in range(10)])
    close = _cells([rng.normal(0.1, 1.0, 3) for _ in range(10)])
    boundary = cv.pair_features(x, y)
    assert boundary["separated_share"] == 1.0 and boundary["point"] == 1.0
    assert cv.improvement_caveat(boundary, 10).startswith("P(X>Y) at the boundary: the runs separate on 10 of 10 tasks")
    assert cv.improvement_caveat(cv.pair_features(close, y), 10) == ""


def test_task_caveat_marks_runs_without_spread():
    features = cv.task_features(_cells([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]))
    assert cv.task_caveat(features[0]) == "runs all equal (3 runs): the interval has no width"
    assert cv.task_caveat(features[1]) == ""


def test_every_table_carries_the_caveats_its_rules_give():
    rng = np.random.default_rng(3)
    runs = {
        "A": [list(rng.normal(1.0, 0.1, 3)) for _ in range(8)] + [[1.0, 2.0, 40.0], [1.0, 1.0, 1.0]],
        "B": [list(rng.normal(0.0, 0.1, 3)) for _ in range(10)],
    }
    report = evaluate(_frame(runs), metrics=["mean", "median", "iqm"], **FAST)
    cells = {a: _cells(r) for a, r in runs.items()}
    features = {a: cv.algorithm_features(c) for a, c in cells.items()}
    for row in report.aggregates.itertuples():
        assert row.caveat == cv.aggregate_caveat(row.metric, features[row.algorithm])
    for row in report.differences.itertuples():
        assert row.caveat == cv.difference_caveat(row.metric, features[row.algorithm_x], features[row.algorithm_y])
    assert report.aggregates.set_index("metric").loc["mean", "caveat"].tolist()[0].startswith("heavy tails")
    pair = cv.improvement_caveat(cv.pair_features(cells["A"], cells["B"]), 10)
    assert pair and report.improvement["caveat"].tolist() == [pair, pair]
    per_task = report.per_task.set_index(["algorithm", "task"])["caveat"]
    assert per_task.loc[("A", "t09")].startswith("runs all equal") and per_task.loc[("A", "t00")] == ""


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


def test_caveats_are_marked_once_in_the_console_the_paper_tables_and_the_methods():
    from rl_reliable_logger.analysis.notices import caveated
    from rl_reliable_logger.cli.common import format_summary
    from rl_reliable_logger.render.methods import methods_paragraph
    from rl_reliable_logger.render.tables import to_latex, to_markdown

    rng = np.random.default_rng(8)
    runs = {
        "A": [list(rng.normal(1.0, 0.1, 3)) for _ in range(8)] + [[1.0, 2.0, 40.0], [1.0, 1.5, 2.0]],
        "B": [list(rng.normal(0.5, 0.1, 3)) for _ in range(10)],
    }
    report = evaluate(_frame(runs), metrics=["mean", "median", "iqm"], **FAST)
    notes = caveated(report)
    mean_a = next(c for c in notes if (c.algorithm, c.metric, c.other) == ("A", "mean", None))
    assert mean_a.text.startswith("A mean: heavy tails at 3 runs: one task makes up")
    summary = format_summary(report)
    assert summary.count(f"† {mean_a.text}") == 1 and "†" in summary.split("\n† ")[0]
    assert not any(c.metric == "iqm" for c in notes)  # the IQM is not marked
    assert to_markdown(report).count(mean_a.text) == 1 and "heavy tails at 3 runs" in to_latex(report)
    methods = methods_paragraph(report)
    assert "at 10 runs per task or fewer its cells carry a caveat" in methods and "0.48-0.98" not in methods
