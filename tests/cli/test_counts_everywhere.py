"""Counts and labels from one place (issue 26): runs, cells, tasks and seeds are counted once
(``data.counts.count_runs``) and said in the same words by the console, report.html, provenance,
methods.md, both trackers and ``plan``.

The file has 2 algorithms x 3 tasks x 5 seeds = 30 runs: counting distinct run ids (seeds) says 5, the
count that was wrong in report.html.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rl_reliable_logger.data.counts import count_runs, plural, span
from tests.support.cli import run_cli

FAST = ["--seed", "0", "--reps", "200", "--profile-reps", "100", "--improvement-reps", "100"]
EXPECTED = "30 runs (2 algorithms × 3 tasks, 5 runs per cell, 5 seeds)"


@pytest.fixture()
def scores_csv(tmp_path):
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": s + 0.5 * (a == "B") + i}
        for a in ("A", "B")
        for i, t in enumerate(("x", "y", "z"))
        for s in range(5)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_count_runs_counts_runs_not_seeds_and_words_them_one_way():
    frame = pd.DataFrame(
        {"algorithm": ["A"] * 3 + ["B"] * 2, "task": ["x", "x", "y", "x", "y"], "run_id": ["0", "1", "0", "0", "0"]}
    )
    frame["seed"] = [0, 1.0, 0, 0, 0]  # 1.0 and 1 are one seed
    counts = count_runs(frame)
    assert (counts.runs, counts.algorithms, counts.tasks, counts.cells, counts.seeds) == (5, 2, 2, 4, 2)
    assert counts.text() == "5 runs (2 algorithms × 2 tasks, 1–2 runs per cell, 2 seeds)"
    steps = pd.concat([frame.assign(step=0), frame.assign(step=10)])  # learning curves: a run is counted once
    assert count_runs(steps) == counts
    assert plural(1, "run") == "1 run" and plural(1430, "run") == "1,430 runs" and span(4, 5) == "4–5"


def test_console_html_provenance_methods_and_plan_say_the_same_counts(scores_csv, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run_cli(capsys, "evaluate", scores_csv, *FAST, "--out", out, "--figure-formats", "svg")
    assert code == 0, err
    assert EXPECTED in stdout.splitlines()[0] or any(EXPECTED in line for line in stdout.splitlines()[:3])
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["counts"]["runs"] == 30 and prov["counts"]["seeds"] == 5
    html = (out / "report.html").read_text()
    assert f"<th>scores used</th><td>{EXPECTED}</td>" in html
    assert EXPECTED in (out / "methods.md").read_text()
    code, _, err = run_cli(capsys, "plan", scores_csv, "--runs", "3,5", "--trials", "5", "--sim-reps", "50")
    assert f"pilot: {EXPECTED} from" in err, err


def test_both_trackers_say_the_same_counts(scores_csv, tmp_path):
    from rl_reliable_logger.analysis.evaluation import evaluate
    from rl_reliable_logger.data.scores import ScoreTable
    from rl_reliable_logger.trackers.base.publishing import run_count
    from rl_reliable_logger.trackers.wandb.report_page import methods_text

    report = evaluate(ScoreTable.from_csv(scores_csv), reps=200, profile_reps=100, improvement_reps=100)
    assert run_count(report) == 30  # MLflow's rl_reliable.n_runs param
    assert EXPECTED in methods_text(report)  # the W&B report page
