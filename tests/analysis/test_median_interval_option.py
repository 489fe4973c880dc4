"""``median_interval=order-statistic``: the aggregates' median gets the order-statistic interval, end to end."""

import json

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.declared import OptionError
from rl_reliable_logger.analysis.options import AnalysisOptions
from rl_reliable_logger.stats import aggregate as agg
from rl_reliable_logger.stats import bootstrap as bs
from tests.support.cli import run_cli

FAST = {"reps": 300, "profile_reps": 100, "improvement_reps": 100, "seed": 0}


def _table() -> ScoreTable:
    rng = np.random.default_rng(11)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "score": float(rng.normal(m * 0.1 + shift, 0.3))}
        for alg, shift in (("A", 0.0), ("B", 0.2))
        for m in range(7)
        for s in range(4)
    ]
    return ScoreTable(pd.DataFrame(rows))


@pytest.mark.parametrize("method", ["percentile", "bootstrap-t"])
def test_the_option_replaces_the_median_interval_and_nothing_else(method):
    table = _table()
    plain = evaluate(table, method=method, **FAST)
    ordered = evaluate(table, method=method, median_interval="order-statistic", **FAST)
    is_median = ordered.aggregates["metric"] == "median"
    pd.testing.assert_frame_equal(plain.aggregates[~is_median], ordered.aggregates[~is_median])
    for name in ("differences", "improvement", "per_task", "profiles"):
        pd.testing.assert_frame_equal(getattr(plain, name), getattr(ordered, name))
    for alg in ("A", "B"):
        runs = table.frame[table.frame["algorithm"] == alg]
        cells = bs.Cells.from_list(
            [runs.loc[runs["task"] == t, "score"].to_numpy() for t in sorted(runs["task"].unique())]
        )
        row = ordered.aggregates[(ordered.aggregates["algorithm"] == alg) & is_median].iloc[0]
        # the engine sums each task's runs in its canonical order: equal to the last bits
        assert (row["low"], row["high"]) == pytest.approx(agg.median_order_statistic_interval(cells, 0.95), rel=1e-12)
        assert row["low"] <= row["point"] <= row["high"]
    record = ordered.provenance["intervals"]["aggregates"]
    assert record["statistics"]["median"] == "order-statistic"
    others = {k: v for k, v in record["statistics"].items() if k != "median"}
    rule = plain.provenance["intervals"]["aggregates"].get("statistics") or dict.fromkeys(others, method)
    assert others == {k: v for k, v in rule.items() if k != "median"}
    assert ordered.provenance["options"]["median_interval"] == "order-statistic"
    assert plain.provenance["options"]["median_interval"] == "method"
    assert ordered.provenance["intervals"]["differences"] == plain.provenance["intervals"]["differences"]


def test_the_default_records_no_statistics_rule_under_percentile():
    report = evaluate(_table(), method="percentile", **FAST)
    assert "statistics" not in report.provenance["intervals"]["aggregates"]


def test_an_unknown_value_is_refused_naming_the_option():
    with pytest.raises(OptionError, match="median_interval='order'.*choose one of method, order-statistic"):
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
    assert "order-statistic (median of the per-task Student-t bounds" in console
    assert "intervals for median" in console
    methods = (out / "methods.md").read_text(encoding="utf-8")
    assert "order-statistic (median of the per-task Student-t bounds" in methods
    code, _, err = run_cli(capsys, "evaluate", path, *flags, "--median-interval", "orderstat")
    assert code == 2
    assert "--median-interval" in err and "order-statistic" in err and len(err.strip().splitlines()) == 1


def test_the_methods_text_states_what_the_median_interval_can_be_trusted_for():
    from rl_reliable_logger.render.methods import methods_paragraph

    table = _table()
    default = methods_paragraph(evaluate(table, method="percentile", **FAST))
    assert "The median's interval is approximate" in default and "nearly" not in default
    assert "how near the task means next to the middle tie relative to their standard errors" in default
    ordered = methods_paragraph(evaluate(table, method="percentile", median_interval="order-statistic", **FAST))
    assert "The median's interval is the order-statistic one" in ordered and "approximate" not in ordered
    without = methods_paragraph(evaluate(table, method="percentile", metrics=["iqm"], **FAST))
    assert "The median's interval" not in without
