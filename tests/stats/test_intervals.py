"""The interval-method registry: its rule is the one evaluate() applies, and the documented example runs."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from rl_reliable_logger.stats import intervals

DOCS = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_worked_example_of_adding_a_method_runs():
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"\*\*An interval method.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    example = "\n".join(line[2:] if line.startswith("  ") else line for line in block.group(1).splitlines())
    test = doctest.DocTestParser().get_doctest(example, {}, "architecture.md", str(DOCS), 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 5
    assert "shortest" not in intervals.REGISTRY and "shortest" not in intervals.METHODS


def test_rules_name_only_registered_methods_and_requestable_ones_have_bounds():
    for spec in intervals.REGISTRY.values():
        for table in intervals.TABLES:
            assert spec.for_table(table).name in intervals.REGISTRY
            for kind in intervals.STATISTIC_KINDS:
                assert spec.for_statistic(table, kind).name in intervals.REGISTRY
        if spec.requestable:
            assert spec.bounds is not None
        if not spec.replicates:
            assert not spec.bootstrap and spec.bounds is None
    with pytest.raises(ValueError, match="names unregistered"):
        intervals.register(intervals.IntervalMethod("x", "x", None, tables={"curves": "nope"}))
    with pytest.raises(ValueError, match="method must be one of"):
        intervals.requested("student-t")  # given by a rule, not asked for


def test_bootstrap_t_rule_is_the_documented_one():
    rule = intervals.table_rule("bootstrap-t")
    assert rule["per_task"] == "student-t" and rule["curves"] == "percentile"
    assert {rule[t] for t in ("improvement", "profiles", "gap_curve")} == {"expanded"}
    spec = intervals.requested("bootstrap-t")
    got = {k: spec.for_statistic("aggregates", k).name for k in intervals.STATISTIC_KINDS}
    assert got == {
        "mean": "bootstrap-t", "iqm": "bootstrap-t", "optimality_gap": "bootstrap-t", "median": "normal", "*": "expanded"
    }  # fmt: skip
    assert intervals.table_rule("bca") == {t: ("bca" if t == "aggregates" else "bc") for t in intervals.TABLES}
