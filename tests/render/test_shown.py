"""Figures of many algorithms show the best and the worst by IQM and say so; the tables keep every algorithm.

300 algorithms with figures ran past 300 s and a re-render was OOM-killed at 20 GB (a 300 x 300 rank grid
of text, P(X > Y) of 89,700 pairs): now every figure draws from the same reduced report. The command-line test
uses the fewest algorithms past the cap that show it (the time at scale is a benchmark's to measure, not a test's).
"""

from __future__ import annotations

import csv

import numpy as np

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.render.view import MAX_SHOWN, shown_algorithms, shown_report
from tests.support.reports import make_report


def test_a_few_algorithms_are_all_shown():
    report = make_report(4)
    assert shown_report(report) == (report, None)


def test_past_the_cap_the_best_and_worst_by_iqm_are_shown_with_a_note():
    # the fewest algorithms past the cap, the fewest replicates: the choice reads the IQM points only
    report = make_report(MAX_SHOWN + 2, curves=False, reps=10)
    iqm = report.aggregates[report.aggregates["metric"] == "iqm"].set_index("algorithm")["point"]
    ranked = list(iqm.sort_values(ascending=False, kind="stable").index)
    chosen, note = shown_algorithms(report)
    half = MAX_SHOWN // 2
    assert set(chosen) == set(ranked[:half] + ranked[-(MAX_SHOWN - half) :])
    assert chosen == [a for a in report.algorithms if a in set(chosen)]  # report order, for the colours
    assert note == (
        f"Figures show the {half} best and {MAX_SHOWN - half} worst of {MAX_SHOWN + 2} algorithms by IQM "
        f"(2 left out); the tables hold all {MAX_SHOWN + 2}."
    )
    shown, _ = shown_report(report)
    for name, frame in shown.tables():
        for col in ("algorithm", "algorithm_x", "algorithm_y"):
            if col in frame.columns:
                assert set(frame[col].astype(str)) <= set(chosen), name
    assert len(shown.improvement) == MAX_SHOWN * (MAX_SHOWN - 1) or shown.improvement.empty
    assert len(report.aggregates) > len(shown.aggregates)  # the report itself is not changed


N_MANY = MAX_SHOWN + 5  # past the cap: the figures show MAX_SHOWN of them, the tables all


def test_many_algorithms_with_figures_finish_and_say_what_was_capped(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["algorithm", "task", "seed", "score"])
        for a in range(N_MANY):
            for t in range(2):
                for s in range(3):
                    writer.writerow([f"algo{a:03d}", f"task{t}", s, round(float(rng.normal(a / N_MANY, 0.2)), 4)])
    out = tmp_path / "out"
    argv = ["evaluate", str(path), "--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0"]
    assert main([*argv, "--quiet", "--figure-formats", "png", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    half = MAX_SHOWN // 2
    note = (
        f"Figures show the {half} best and {MAX_SHOWN - half} worst of {N_MANY} algorithms by IQM "
        f"({N_MANY - MAX_SHOWN} left out); the tables hold all {N_MANY}."
    )
    assert f"note: {note}" in err
    assert note in (out / "report.html").read_text(encoding="utf-8")
    report = Report.load(out)
    assert len(report.algorithms) == N_MANY and report.aggregates["algorithm"].nunique() == N_MANY  # all kept
    # pairs="auto" past 10 algorithms: P(X > Y) of the leader against each other one, in both orders
    assert len(report.improvement) == 2 * (N_MANY - 1)
    assert set(report.improvement["algorithm_x"]) == set(report.algorithms)
    figures = {p.stem for p in (out / "figures").glob("*.png")}
    assert {"interval_estimates", "rank_distribution", "probability_of_improvement", "task_scores"} <= figures
