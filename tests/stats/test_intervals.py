"""The interval-method registry: its rule is the one evaluate() applies, and the documented example runs."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from rl_reliable_logger.stats import intervals
from rl_reliable_logger.stats.intervals import bounds

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
    assert {rule[t] for t in ("profiles", "gap_curve")} == {"expanded"}
    assert rule["improvement"] == "mann-whitney"  # issue 52: the bootstrap of P(X > Y) collapses at the boundary
    spec = intervals.requested("bootstrap-t")
    got = {k: spec.for_statistic("aggregates", k).name for k in intervals.STATISTIC_KINDS}
    assert got == {
        "mean": "bootstrap-t", "iqm": "bootstrap-t", "optimality_gap": "bootstrap-t", "median": "normal", "*": "expanded"
    }  # fmt: skip
    assert intervals.table_rule("bca") == {t: ("bca" if t == "aggregates" else "bc") for t in intervals.TABLES}


# ---------------------------------------------------------------------------- the request and its results (issue 42)
def test_the_request_answers_every_interval_question():
    import numpy as np

    request = intervals.ResamplingRequest("bootstrap-t", 0.9, {"aggregates": 400, "*": 100})
    assert request.reps("aggregates") == 400 and request.reps("profiles") == 100
    assert request.table_method("per_task").name == "student-t"
    assert request.statistic_method("aggregates", "median").name == "normal"
    assert request.needs_standard_errors("aggregates", ["median", "*"]) is False
    assert request.needs_standard_errors("aggregates", ["mean"]) is True
    assert request.widens_level("profiles") and not request.widens_level("curves")
    assert not request.widens_level("improvement")  # mann-whitney, from the runs
    kinds = {"mean": "mean", "median": "median", "iqm": "*"}
    assert request.record("aggregates", kinds) == {
        "method": "bootstrap-t",
        "level": 0.9,
        "replicates": 400,
        "statistics": {"mean": "bootstrap-t", "median": "normal", "iqm": "expanded"},
    }
    assert request.record("per_task")["replicates"] is None  # Student-t uses none
    ordered = request.replace(median_interval="order-statistic")
    assert ordered.statistic_method("aggregates", "median").name == "order-statistic"
    assert ordered.statistic_method("differences", "median").name == "order-statistic-mover"
    assert ordered.record("differences", kinds)["statistics"]["median"] == "order-statistic-mover"
    # auto, the default: resolved by the fewest runs of a task (unresolved, the method's rule)
    assert request.median_interval == "auto" and request.statistic_method("aggregates", "median").name == "normal"
    assert request.for_runs(10).median_interval == "order-statistic" and request.for_runs(11) == request.replace(
        median_interval="method"
    )
    assert ordered.for_runs(40) is ordered  # an explicit choice stays
    with pytest.raises(ValueError, match="median_interval must be one of"):
        intervals.ResamplingRequest(median_interval="order")
    with pytest.raises(ValueError, match="method must be one of"):
        intervals.ResamplingRequest("studentized")
    # a sample's extras are computed only where a method needs them
    asked = []
    sample = intervals.Sample(level=lambda ci: asked.append("level") or 0.01)
    dist, point = np.random.default_rng(0).normal(size=(500, 2)), np.zeros(2)
    plain = intervals.estimate(intervals.ResamplingRequest("percentile"), "aggregates", dist, point, sample)
    assert asked == [] and plain.methods == ("percentile", "percentile") and plain.notes == ()
    wide = intervals.estimate(intervals.ResamplingRequest("expanded"), "aggregates", dist, point, sample)
    assert asked == ["level"] and (wide.low < plain.low).all() and (wide.high > plain.high).all()


def test_each_statistic_gets_its_own_method_and_a_stack_gives_the_same_numbers():
    import numpy as np

    from rl_reliable_logger.stats import bootstrap as bs
    from rl_reliable_logger.stats import metrics as mt

    rng = np.random.default_rng(5)
    cells = bs.Cells.from_list([rng.lognormal(size=4) for _ in range(6)])
    stat = lambda r: np.stack([mt.mean(r), mt.median(r), mt.iqm(r)], axis=1)
    dist = bs.replicates(cells, stat, 800, np.random.default_rng(1))
    se = bs.replicates(cells, mt.mean_se, 800, np.random.default_rng(1))
    point = stat(bs.original(cells))[0]
    sample = intervals.Sample(
        level=lambda ci: bounds.expanded_level(cells, ci),
        runs=cells,
        standard_errors=lambda kind: (se, mt.mean_se(bs.original(cells))[0]),  # the mean: the one studentized
    )
    request = intervals.ResamplingRequest("bootstrap-t", 0.95)
    kinds = ["mean", "median", "*"]
    result = intervals.estimate(request, "aggregates", dist, point, sample, kinds=kinds, labels=["a", "b", "c"])
    assert result.methods == ("bootstrap-t", "normal", "expanded")
    tail = bounds.expanded_level(cells, 0.95)
    assert (result.low[0], result.high[0]) == bounds.studentized_mean_interval(se, mt.mean_se(bs.original(cells))[0])
    np.testing.assert_array_equal(
        np.r_[result.low[1], result.high[1]], np.r_[intervals.normal_interval(dist[:, 1], point[1], tail)]
    )
    expanded = intervals.interval(dist, point, method="expanded", cells=cells)
    assert (result.low[2], result.high[2]) == (expanded[0][2], expanded[1][2])
    # stacked a chunk at a time (here one distribution per chunk): the same numbers
    tiny = request.replace(chunk_bytes=1)
    stacked = intervals.estimate_stacked(
        tiny, "aggregates", (2, *dist.shape), lambda i, out: out.__setitem__(..., dist), [point, point],
        [sample, sample], kinds=kinds, labels=["a", "b", "c"],
    )  # fmt: skip
    for r in stacked:
        np.testing.assert_array_equal(r.low, result.low)
        np.testing.assert_array_equal(r.high, result.high)


def test_a_stack_of_distributions_gives_each_one_its_own_intervals_bit_for_bit():
    """``estimate_stacked`` computes a statistic's own method (the median's normal interval under bootstrap-t) and the
    studentized ones over every distribution of a stack at once: each distribution's numbers are those of its own
    ``estimate`` call, to the last bit (a reduction over a column read in another layout rounds differently)."""
    import numpy as np

    from rl_reliable_logger.stats import bootstrap as bs
    from rl_reliable_logger.stats import metrics as mt

    rng = np.random.default_rng(0)
    stat = lambda r: np.stack([mt.mean(r), mt.median(r), mt.iqm(r)], axis=1)
    parts = []
    for a in range(4):
        cells = bs.Cells.from_list([rng.normal(size=int(rng.integers(3, 8))) for _ in range(int(rng.integers(3, 27)))])
        dist = bs.replicates(cells, stat, 3001, np.random.default_rng(a))
        se = bs.replicates(cells, mt.mean_se, 3001, np.random.default_rng(a))
        sample = intervals.Sample(
            level=lambda ci, c=cells: bounds.expanded_level(c, ci),
            runs=cells,
            standard_errors=lambda kind, se=se, c=cells: (se, mt.mean_se(bs.original(c))[0]),
        )
        parts.append((dist, stat(bs.original(cells))[0], sample))
    request, kinds = intervals.ResamplingRequest("bootstrap-t", 0.95), ["mean", "median", "*"]
    stacked = intervals.estimate_stacked(
        request, "aggregates", (4, 3001, 3), lambda i, out: out.__setitem__(..., parts[i][0]),
        [p[1] for p in parts], [p[2] for p in parts], kinds=kinds, labels=["a", "b", "c"],
    )  # fmt: skip
    for (dist, point, sample), got in zip(parts, stacked):
        one = intervals.estimate(request, "aggregates", dist, point, sample, kinds=kinds, labels=["a", "b", "c"])
        assert one.methods == got.methods == ("bootstrap-t", "normal", "expanded")
        np.testing.assert_array_equal(got.low, one.low)
        np.testing.assert_array_equal(got.high, one.high)
