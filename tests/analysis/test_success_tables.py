"""Success rates in evaluate() (``successes=`` / ``episodes=``, ``--successes`` / ``--episodes``): the tables are
``stats.success``'s intervals, never [0, 0] at 0% nor [1, 1] at 100%; nothing else changes; bad input is named."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import InputError, evaluate
from rl_reliable_logger.analysis.declared import OptionError
from rl_reliable_logger.render.methods import methods_details, methods_paragraph
from rl_reliable_logger.stats import success as su

FAST = {"reps": 1000, "profile_reps": 100, "improvement_reps": 100, "seed": 0}


def _frame() -> pd.DataFrame:
    """A never succeeds on x, B always on z; 3 seeds of 10 episodes."""
    rows = []
    for a in "AB":
        for t in ("x", "y", "z"):
            for s in range(3):
                if (a, t) == ("A", "x"):
                    k = 0
                elif (a, t) == ("B", "z"):
                    k = 10
                else:
                    k = [3, 5, 7][s] + (a == "B")
                rows.append({"algorithm": a, "task": t, "seed": s, "score": k / 10, "won": k, "n": 10})
    return pd.DataFrame(rows)


def _report(frame: pd.DataFrame, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(frame, **{**FAST, **options})


def test_a_task_that_never_succeeded_is_not_a_point_and_nor_is_one_that_always_did():
    rates = _report(_frame(), successes="won", episodes="n").extra["success_rates"].set_index(["algorithm", "task"])
    never, always = rates.loc[("A", "x")], rates.loc[("B", "z")]
    assert never["rate"] == 0 and never["low"] == 0 and never["high"] > 0
    assert always["rate"] == 1 and always["high"] == 1 and always["low"] < 1
    assert never["high"] == pytest.approx(1 - always["low"])
    assert bool(never["warned"]) and bool(always["warned"]) and not bool(rates.loc[("A", "y"), "warned"])


def test_the_tables_are_the_statistics_of_stats_success():
    frame = _frame()
    report = _report(frame, successes="won", episodes="n")
    rates = report.extra["success_rates"]
    for alg in "AB":
        part = frame[frame["algorithm"] == alg].sort_values(["task", "seed"])
        k = part["won"].to_numpy(float).reshape(3, 3)
        n = part["n"].to_numpy(float).reshape(3, 3)
        want = su.task_intervals(k, n)
        got = rates[rates["algorithm"] == alg]
        assert got["low"].to_numpy() == pytest.approx(want.low) and got["high"].to_numpy() == pytest.approx(want.high)
        average = report.extra["success_aggregates"].set_index("algorithm").loc[alg]
        assert average["rate"] == pytest.approx(want.point.mean()) and average["low"] < average["rate"]
        assert (average["successes"], average["episodes"], average["n_tasks"]) == (k.sum(), n.sum(), 3)
    diffs = report.extra["success_differences"]
    kx = frame[frame["algorithm"] == "A"].sort_values(["task", "seed"])["won"].to_numpy(float).reshape(3, 3)
    ky = frame[frame["algorithm"] == "B"].sort_values(["task", "seed"])["won"].to_numpy(float).reshape(3, 3)
    want = su.difference_intervals(kx, np.full((3, 3), 10.0), ky, np.full((3, 3), 10.0))
    got = diffs[diffs["task"] != "__average__"]
    assert got["low"].to_numpy() == pytest.approx(want.low) and got["high"].to_numpy() == pytest.approx(want.high)


def test_asking_for_success_rates_changes_no_other_number():
    plain, with_rates = _report(_frame()), _report(_frame(), successes="won", episodes="n")
    for name, frame in plain.tables():
        if name != "scores":
            pd.testing.assert_frame_equal(frame, with_rates.table(name), obj=name)
    assert not {"success_rates", "success_aggregates", "success_differences"} & set(plain.extra)


def test_differences_of_the_means_are_newcombe_over_the_aggregate_intervals():
    report = _report(_frame(), successes="won", episodes="n")
    agg = report.extra["success_aggregates"].set_index("algorithm")
    mean = report.extra["success_differences"].set_index("task").loc["__average__"]
    want = su.mover(*agg.loc["A", ["rate", "low", "high"]], *agg.loc["B", ["rate", "low", "high"]])
    assert [mean["difference"], mean["low"], mean["high"]] == pytest.approx([float(v) for v in want])


def test_the_methods_paragraph_names_what_was_used():
    report = _report(_frame(), successes="won", episodes="n")
    assert "We also report success rates" in methods_paragraph(report)
    text = " ".join(said for _, said in methods_details(report))  # each table's intervals: the details
    assert "the per-task success rates: Wilson score at the effective number of episodes" in text
    assert "the differences of success rates: Newcombe hybrid score" in text
    assert "the success rates over tasks: Wilson score at the effective number of episodes of a bootstrap" in text
    assert "`won` of its `n` episodes" in text and "Warned: 2 of the per-task rates lie within 0.2 of 0 or 1" in text
    recorded = report.provenance["intervals"]
    assert recorded["success_rates"]["method"] == "wilson-seeds"
    assert recorded["success_aggregates"] == {"method": "seed-binomial-bootstrap", "level": 0.95, "replicates": 1000}


@pytest.mark.parametrize(
    "options, error, words",
    [
        ({"successes": "won"}, OptionError, "`successes=` needs `episodes=` too"),
        ({"episodes": "n"}, OptionError, "`episodes=` needs `successes=` too"),
        ({"successes": "wins", "episodes": "n"}, InputError, "`successes='wins'` names no column"),
        ({"successes": " ", "episodes": "n"}, OptionError, "names a column"),
    ],
)
def test_bad_options_are_named(options, error, words):
    with pytest.raises(error, match=words):
        _report(_frame(), **options)


def test_bad_counts_are_named_by_run():
    frame = _frame()
    frame.loc[4, "won"] = 11
    with pytest.raises(InputError, match=r"run .* has 11 successes of 10 episodes"):
        _report(frame, successes="won", episodes="n")
    frame["won"] = frame["won"].astype(float)
    frame.loc[4, "won"] = 2.5
    with pytest.raises(InputError, match="not a whole number"):
        _report(frame, successes="won", episodes="n")


def test_the_command_line_flags_give_the_same_tables(tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    path = tmp_path / "scores.csv"
    _frame().to_csv(path, index=False)
    argv = ["evaluate", str(path), "--successes", "won", "--episodes", "n", "--reps", "1000"]
    code = main(
        [*argv, "--profile-reps", "100", "--improvement-reps", "100", "--no-figures", "--out", str(tmp_path / "o")]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "warning: A: success rates within 0.2 of 0 or 1 on 1 task (x)" in out
    written = pd.read_csv(tmp_path / "o" / "success_rates.csv", keep_default_na=False)
    want = _report(_frame(), successes="won", episodes="n").extra["success_rates"]
    assert written["high"].to_numpy() == pytest.approx(want["high"].to_numpy())
