"""One run per (algorithm, task) cell (issue 52, "cover or say so"): a task of one run gets no interval, an
algorithm of one run per task gets the caveat on every row its intervals are in, and a plan refuses such a pilot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis import caveats as cv
from rl_reliable_logger.analysis.planning import plan
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.errors import InputError

FAST = dict(reps=200, profile_reps=50, improvement_reps=50, seed=0)


def _frame(runs: dict[tuple[str, str], int]) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = [
        (alg, task, s, rng.normal(1.0 if alg == "A" else 1.4, 0.3)) for (alg, task), n in runs.items() for s in range(n)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def _table(runs: dict[tuple[str, str], int]) -> ScoreTable:
    return ScoreTable(_frame(runs))


def _design(a: list[int], b: list[int]) -> dict[tuple[str, str], int]:
    tasks = ["t1", "t2", "t3"]
    return {**{("A", t): n for t, n in zip(tasks, a)}, **{("B", t): n for t, n in zip(tasks, b)}}


@pytest.mark.filterwarnings("ignore")
def test_one_run_per_task_carries_the_caveat_and_no_task_interval():
    report = evaluate(_table(_design([1, 1, 1], [1, 1, 1])), **FAST)
    for table in (report.aggregates, report.differences, report.improvement):
        assert len(table) and (table["caveat"] == cv.REASONS["one_run"]).all()
    per_task = report.per_task
    assert per_task["low"].isna().all() and per_task["high"].isna().all()
    assert (per_task["caveat"] == cv.REASONS["single_task"]).all()
    assert per_task["mean"].notna().all()  # the point stays


@pytest.mark.filterwarnings("ignore")
def test_one_algorithm_of_one_run_marks_its_rows_and_its_pairs_only():
    report = evaluate(_table(_design([1, 1, 1], [4, 4, 4])), **FAST)
    agg = report.aggregates.set_index("algorithm")["caveat"]
    assert (agg.loc["A"] == cv.REASONS["one_run"]).all()
    assert not (agg.loc["B"] == cv.REASONS["one_run"]).any()
    assert (report.differences["caveat"] == cv.REASONS["one_run"]).all()
    assert (report.improvement["caveat"] == cv.REASONS["one_run"]).all()
    b_tasks = report.per_task[report.per_task["algorithm"] == "B"]
    assert (b_tasks["low"] < b_tasks["high"]).all() and (b_tasks["caveat"] != cv.REASONS["single_task"]).all()


@pytest.mark.filterwarnings("ignore")
def test_some_tasks_of_one_run_lose_only_their_own_interval():
    report = evaluate(_table(_design([1, 4, 4], [4, 4, 4])), **FAST)
    rows = report.per_task.set_index(["algorithm", "task"])
    assert np.isnan(rows.loc[("A", "t1"), "low"]) and rows.loc[("A", "t1"), "caveat"] == cv.REASONS["single_task"]
    others = rows.drop(index=("A", "t1"))
    assert (others["low"] < others["high"]).all()
    assert not report.aggregates["caveat"].eq(cv.REASONS["one_run"]).any()  # the algorithm has spread elsewhere


def test_plan_refuses_a_pilot_of_one_run_per_task_naming_the_algorithms():
    with pytest.raises(InputError, match=r"one run per task for 'A' and 'B'.*at least 2 seeds per task"):
        plan(_table(_design([1, 1, 1], [1, 1, 1])), target_width=0.5, trials=10, sim_reps=50)
    with pytest.raises(InputError, match=r"one run per task for 'A',") as caught:
        plan(_table(_design([1, 1, 1], [3, 3, 3])), compare=("A", "B"), trials=10, sim_reps=50)
    assert "'B'" not in str(caught.value)


@pytest.mark.filterwarnings("ignore")
def test_plan_with_some_single_run_cells_warns_truly_and_names_the_algorithm():
    found = plan(_table(_design([1, 4, 4], [4, 4, 4])), runs=[4], trials=20, sim_reps=200, seed=0)
    (warning,) = [w for w in found.warnings if "single pilot run" in w]
    assert "(A / t1): it adds no spread" in warning and "predicted widths of A are too narrow" in warning
    # what the warning says: the same pilot with t1's other runs kept predicts a wider interval for A
    full = plan(_table(_design([4, 4, 4], [4, 4, 4])), runs=[4], trials=20, sim_reps=200, seed=0)
    width = {p: f.table.set_index("algorithm")["expected_width"]["A"] for p, f in (("cut", found), ("full", full))}
    assert width["cut"] < width["full"]


def test_plan_cli_exits_2_with_one_sentence(tmp_path, capsys):
    path = tmp_path / "one.csv"
    _frame(_design([1, 1, 1], [1, 1, 1])).to_csv(path, index=False)
    code = main(["plan", str(path), "--target-width", "0.5", "--compare", "A,B"])
    err = capsys.readouterr().err
    assert code == 2 and "error: the pilot has one run per task for 'A' and 'B'" in err and "Traceback" not in err
