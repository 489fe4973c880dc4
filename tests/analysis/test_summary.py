"""What ``repr()`` and a notebook show of a Report, a plan, a watch's and a race's look: at most 20 lines (the rest
counted), where the scores came from, and every name escaped in the HTML (names are untrusted)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ReliabilityWarning, ScoreTable, plan, race, watch
from rl_reliable_logger.analysis.summary import MAX_LINES, Summary
from tests.support.reports import make_report

HOSTILE = "<script>alert(1)</script>&\"'"  # a name that is markup (names with control characters are refused)


def _scores(names: list[str], configs: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        (name, task, seed, 0.1 * i + 0.05 * c + rng.normal(0, 0.05), c)
        for i, name in enumerate(names)
        for c in range(configs)
        for task in ("x", "y")
        for seed in range(4)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score", "lr"])


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)
        return call(*args, **kwargs)


def test_a_report_of_many_algorithms_prints_twenty_lines_and_counts_the_rest():
    report = make_report(34, curves=False, reps=10)
    text = repr(report)
    lines = text.splitlines()
    assert len(lines) == MAX_LINES
    assert lines[0].startswith("Report: ") and "34 algorithms" in lines[0]
    assert lines[-1].strip().startswith("… and ") and "more" in lines[-1]
    shown = [line.split()[0] for line in lines if line.startswith("  ") and "[" in line]
    assert shown == [str(a) for a in report.algorithms][: len(shown)]  # report order, as every output


def test_a_report_says_where_its_scores_came_from_and_escapes_every_name(tmp_path):
    frame = _scores([HOSTILE, "B"])
    path = tmp_path / "runs.csv"
    frame.drop(columns="lr").to_csv(path, index=False)
    from rl_reliable_logger.cli.main import main

    assert main(["evaluate", str(path), "--reps", "100", "--profile-reps", "10", "--improvement-reps", "10",
                 "--quiet", "--no-figures", "--out", str(tmp_path / "out")]) == 0  # fmt: skip
    from rl_reliable_logger.render.writer import load_report

    report = load_report(tmp_path / "out")
    text = repr(report)
    assert f"source: {path}, score column 'score'" in text
    assert HOSTILE in text and len(text.splitlines()) <= MAX_LINES  # the text shows names as they are
    page = report._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_plan_a_watch_and_a_race_print_their_look_and_escape_every_name(tmp_path):
    table = ScoreTable(_scores([HOSTILE, "B", "C"]).drop(columns="lr"))
    planned = _quiet(plan, table, target_width=0.2, sim_reps=50, trials=5, seed=0)
    looked = _quiet(watch, table, state=tmp_path / "watch", looks=3, max_runs=8, reps=100)
    raced = _quiet(
        race, _scores([HOSTILE, "B"], configs=2), state=tmp_path / "race", looks=3, max_runs=8,
        hyperparameter_keys=["lr"], reps=100,
    )  # fmt: skip
    for result, title in ((planned, "Plan: "), (looked, "Watch look 1 of 3"), (raced, "Race look 1 of 3")):
        text = repr(result)
        assert text.startswith(title) and len(text.splitlines()) <= MAX_LINES
        assert HOSTILE in text
        page = result._repr_html_()
        assert page.startswith("<table") and "<script>" not in page and "&lt;script&gt;" in page


@pytest.mark.parametrize("facts", [0, 5, 30])
def test_the_text_never_passes_twenty_lines(facts):
    summary = Summary("t", tuple((f"f{i}", "x") for i in range(facts)), ("a",), tuple((str(i),) for i in range(50)))
    lines = summary.text().splitlines()
    assert len(lines) == MAX_LINES and lines[-1].startswith("  … and ")
