"""``median_interval``: the median gets the order-statistic interval (its differences the MOVER over two of them),
by default (``auto``) at 10 runs per task or fewer, end to end."""

import json

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.declared import OptionError
from rl_reliable_logger.analysis.options import AnalysisOptions
from rl_reliable_logger.stats import aggregate as agg
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats.intervals.bounds import median_order_statistic_mover
from tests.support.cli import run_cli

FAST = {"reps": 300, "profile_reps": 100, "improvement_reps": 100, "seed": 0}


def _table(runs: int = 4) -> ScoreTable:
    rng = np.random.default_rng(11)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "score": float(rng.normal(m * 0.1 + shift, 0.3))}
        for alg, shift in (("A", 0.0), ("B", 0.2))
        for m in range(7)
        for s in range(runs)
    ]
    return ScoreTable(pd.DataFrame(rows))


@pytest.mark.parametrize("method", ["percentile", "bootstrap-t"])
def test_the_option_replaces_the_median_interval_and_nothing_else(method):
    table = _table()
    plain = evaluate(table, method=method, median_interval="method", **FAST)
    ordered = evaluate(table, method=method, median_interval="order-statistic", **FAST)
    is_median = ordered.aggregates["metric"] == "median"
    pd.testing.assert_frame_equal(plain.aggregates[~is_median], ordered.aggregates[~is_median])
    for name in ("improvement", "per_task", "profiles"):
        pd.testing.assert_frame_equal(getattr(plain, name), getattr(ordered, name))
    median_diff = ordered.differences["metric"] == "median"
    pd.testing.assert_frame_equal(plain.differences[~median_diff], ordered.differences[~median_diff])
    cells = {}
    for alg in ("A", "B"):
        runs = table.frame[table.frame["algorithm"] == alg]
        cells[alg] = bs.Cells.from_list(
            [runs.loc[runs["task"] == t, "score"].to_numpy() for t in sorted(runs["task"].unique())]
        )
        row = ordered.aggregates[(ordered.aggregates["algorithm"] == alg) & is_median].iloc[0]
        # the engine sums each task's runs in its canonical order: equal to the last bits
        assert (row["low"], row["high"]) == pytest.approx(
            agg.median_order_statistic_interval(cells[alg], 0.95), rel=1e-12
        )
        assert row["low"] <= row["point"] <= row["high"]
    diff = ordered.differences[median_diff].iloc[0]
    assert (diff["low"], diff["high"]) == pytest.approx(
        median_order_statistic_mover((cells["A"], cells["B"])), rel=1e-12
    )
    assert diff["low"] <= diff["point"] <= diff["high"]
    record = ordered.provenance["intervals"]["aggregates"]
    assert record["statistics"]["median"] == "order-statistic"
    assert ordered.provenance["intervals"]["differences"]["statistics"]["median"] == "order-statistic-mover"
    others = {k: v for k, v in record["statistics"].items() if k != "median"}
    rule = plain.provenance["intervals"]["aggregates"].get("statistics") or dict.fromkeys(others, method)
    assert others == {k: v for k, v in rule.items() if k != "median"}
    assert ordered.provenance["options"]["median_interval"] == "order-statistic"
    assert plain.provenance["options"]["median_interval"] == "method"


def test_auto_is_the_order_statistic_interval_at_ten_runs_per_task_or_fewer_and_the_methods_above():
    few, many = _table(), _table(runs=11)
    assert AnalysisOptions().median_interval == "auto"
    for table, expected in ((few, "order-statistic"), (many, "normal")):
        report = evaluate(table, method="bootstrap-t", **FAST)
        assert report.provenance["intervals"]["aggregates"]["statistics"]["median"] == expected
        same = evaluate(table, method="bootstrap-t", median_interval=expected.replace("normal", "method"), **FAST)
        pd.testing.assert_frame_equal(report.aggregates, same.aggregates)
        pd.testing.assert_frame_equal(report.differences, same.differences)
        assert report.provenance["options"]["median_interval"] == "auto"


def test_the_median_alone_gets_its_order_statistic_interval():
    """Only the median asked for: the table's method (its expanded level) is needed by no statistic (a ValueError
    before)."""
    report = evaluate(_table(), metrics=["median"], median_interval="order-statistic", **FAST)
    assert report.aggregates["low"].notna().all() and (report.aggregates["low"] < report.aggregates["high"]).all()


def test_the_methods_own_rule_records_no_statistics_rule_under_percentile():
    report = evaluate(_table(), method="percentile", median_interval="method", **FAST)
    assert "statistics" not in report.provenance["intervals"]["aggregates"]


def test_an_unknown_value_is_refused_naming_the_option():
    with pytest.raises(OptionError, match="median_interval='order'.*choose one of auto, method, order-statistic"):
        AnalysisOptions(median_interval="order")


def test_the_command_line_selects_it_and_says_so(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    _table().frame.to_csv(path, index=False)
    flags = ["--reps", "300", "--profile-reps", "100", "--improvement-reps", "100", "--no-figures"]
    out = tmp_path / "out"
    code, console, _ = run_cli(
        capsys, "evaluate", path, *flags, "--method", "percentile", "--median-interval", "order-statistic", "--out", out
    )
    assert code == 0
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert prov["intervals"]["aggregates"]["statistics"]["median"] == "order-statistic"
    assert "order-statistic (median of each task's own Student-t bounds" in console
    assert "intervals for median" in console
    methods = (out / "methods.md").read_text(encoding="utf-8")
    assert "order-statistic (median of each task's own Student-t bounds" in methods
    code, _, err = run_cli(capsys, "evaluate", path, *flags, "--median-interval", "orderstat")
    assert code == 2
    assert "--median-interval" in err and "order-statistic" in err and len(err.strip().splitlines()) == 1


def test_the_methods_text_states_what_the_median_interval_can_be_trusted_for():
    from rl_reliable_logger.render.methods import methods_markdown

    table = _table()
    default = methods_markdown(evaluate(table, method="percentile", median_interval="method", **FAST))
    assert "The median's interval is approximate" in default and "nearly" not in default
    # what its coverage depends on, in a sentence that parses (issue 57 found it garbled)
    assert "how close the task means around the middle are to one another relative to their standard errors" in default
    assert "next to the middle tie" not in default
    ordered = methods_markdown(evaluate(table, method="percentile", median_interval="order-statistic", **FAST))
    assert "The median's interval is the order-statistic one" in ordered and "approximate" not in ordered
    without = methods_markdown(evaluate(table, method="percentile", metrics=["iqm"], **FAST))
    assert "The median's interval" not in without
