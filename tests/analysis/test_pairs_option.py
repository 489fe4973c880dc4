"""``pairs=``: the differences table compares every pair, or each algorithm against the leader (issue 56)."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.declared import OptionError
from rl_reliable_logger.analysis.options import ALL_PAIRS_UP_TO
from rl_reliable_logger.render.methods import methods_markdown, methods_paragraph
from tests.support.cli import run_cli

FAST = {"reps": 200, "profile_reps": 50, "improvement_reps": 50, "seed": 0, "method": "percentile"}


def _table(shifts: dict[str, float]) -> ScoreTable:
    rng = np.random.default_rng(5)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "score": float(rng.normal(m * 0.1 + shift, 0.2))}
        for alg, shift in shifts.items()
        for m in range(5)
        for s in range(3)
    ]
    return ScoreTable(pd.DataFrame(rows))


def test_leader_compares_the_best_headline_estimate_with_each_other_and_changes_nothing_else():
    table = _table({"A": 0.0, "B": 1.0, "C": 0.3, "D": 0.1})  # B leads by far
    every = evaluate(table, pairs="all", **FAST)
    led = evaluate(table, pairs="leader", **FAST)
    metrics = every.aggregates["metric"].nunique()
    assert len(every.differences) == 6 * metrics and len(led.differences) == 3 * metrics
    assert set(led.differences["algorithm_x"]) == {"B"}
    assert sorted(set(led.differences["algorithm_y"])) == ["A", "C", "D"]
    # B's rows against C and D are the all-pairs rows: the same replicates, the same intervals
    both = every.differences.merge(led.differences, on=["algorithm_x", "algorithm_y", "metric"], suffixes=("", "_led"))
    assert len(both) == 2 * metrics
    for col in ("point", "low", "high"):
        assert np.array_equal(both[col].to_numpy(), both[f"{col}_led"].to_numpy())
    for name in ("aggregates", "per_task", "profiles"):
        pd.testing.assert_frame_equal(getattr(every, name), getattr(led, name))
    # P(X > Y) of B against each other algorithm, in both orders: the all-pairs rows, bit for bit
    assert len(every.improvement) == 12 and len(led.improvement) == 6
    assert set(zip(led.improvement["algorithm_x"], led.improvement["algorithm_y"])) == {
        pair for a in "ACD" for pair in (("B", a), (a, "B"))
    }
    keys = ["algorithm_x", "algorithm_y"]
    pd.testing.assert_frame_equal(
        led.improvement.reset_index(drop=True),
        every.improvement.merge(led.improvement[keys], on=keys).reset_index(drop=True),
    )
    assert led.provenance["pairs"] == {
        "rule": "leader",
        "used": "leader",
        "tables": ["differences", "improvement"],
        "all": 6,
        "compared": 3,
        "leader": "B",
        "metric": "iqm",
    }
    assert "P(X > Y) between the leader and each other algorithm" in methods_paragraph(led)
    said = methods_markdown(led)  # which pairs, in full: methods.md's details
    assert (
        "improvement tables compare the leader, B (the best iqm estimate), with each other algorithm: 3 of the 6"
        in said
    )
    assert "the leader" not in methods_markdown(every)


def test_a_metric_where_lower_is_better_leads_with_its_lowest_estimate():
    table = _table({"A": 0.0, "B": 1.0, "C": 0.3})
    led = evaluate(table, pairs="leader", metrics=["optimality_gap"], **FAST)
    assert led.provenance["pairs"]["metric"] == "optimality_gap"
    gaps = led.aggregates.set_index("algorithm")["point"]
    assert led.provenance["pairs"]["leader"] == gaps.idxmin() == "B"


def test_auto_is_every_pair_up_to_the_limit_and_the_leader_above():
    small = evaluate(_table({f"a{i}": 0.1 * i for i in range(3)}), metrics=["iqm"], **FAST)
    assert small.provenance["pairs"]["used"] == "all" and len(small.differences) == 3
    many = {f"a{i:02d}": 0.5 * i for i in range(ALL_PAIRS_UP_TO + 1)}
    sweep = evaluate(_table(many), metrics=["iqm"], **FAST)
    record = sweep.provenance["pairs"]
    assert (record["rule"], record["used"], record["leader"]) == ("auto", "leader", f"a{ALL_PAIRS_UP_TO:02d}")
    assert len(sweep.differences) == ALL_PAIRS_UP_TO and record["all"] == 55
    assert len(sweep.improvement) == 2 * ALL_PAIRS_UP_TO


def test_an_unknown_rule_is_one_sentence_naming_the_option(capsys, tmp_path):
    with pytest.raises(OptionError, match="pairs"):
        evaluate(_table({"A": 0.0, "B": 1.0}), pairs="best", **FAST)
    path = tmp_path / "scores.csv"
    _table({"A": 0.0, "B": 1.0}).frame.to_csv(path, index=False)
    code, _, err = run_cli(capsys, "evaluate", path, "--pairs", "best")
    assert code == 2 and "--pairs" in err and "Traceback" not in err
