"""The one intake (issue 41): a Source only reads; ``read_table`` alone applies the rules, and no Source can skip
one by restating the request."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rl_reliable_logger.trackers.base.intake import SourceRuns, read_table
from rl_reliable_logger.trackers.base.records import RunRecord
from rl_reliable_logger.trackers.base.request import SourceRequest

REQUEST = SourceRequest(algorithm="config.a", task="config.t", seed="config.s", score="summary.v")


class _Runs:
    tracker = "demo"

    def __init__(self, restate=None, states=("finished", "finished", "running")):
        self.restate = restate
        self.states = states

    def runs(self, request):
        records = [
            RunRecord(f"r{i}", None, state, config={"a": "A", "t": "x", "s": i}, summary={"v": float(i)})
            for i, state in enumerate(self.states)
        ]
        read = self.restate(request) if self.restate else None
        return SourceRuns(records, "demo", {"location": "a demo"}, request=read)


def test_unfinished_runs_are_left_out_by_the_intake_not_the_source():
    table = read_table(_Runs(), REQUEST)
    assert len(table.frame) == 2 and table.source["excluded"][0]["state"] == "running"
    assert len(read_table(_Runs(), replace(REQUEST, include_unfinished=True)).frame) == 3


@pytest.mark.parametrize(
    "rule", [{"include_unfinished": True}, {"on_invalid": "drop"}, {"names": "normalize"}, {"run_key": "run.id"}]
)
def test_a_source_that_restates_a_rule_is_refused(rule):
    with pytest.raises(TypeError, match="may restate only the field references"):
        read_table(_Runs(restate=lambda request: replace(request, **rule)), REQUEST)


def test_a_source_may_restate_its_field_references():
    asked = replace(REQUEST, algorithm=None, score="v")
    restated = read_table(
        _Runs(restate=lambda request: replace(request, algorithm="config.a", score="summary.v")), asked
    )
    assert list(restated.frame["algorithm"]) == ["A", "A"]


def test_a_source_must_return_source_runs():
    class Table:
        tracker = "bypass"

        def runs(self, request):
            return "a ready-made table"

    with pytest.raises(TypeError, match="must return SourceRuns"):
        read_table(Table(), REQUEST)  # type: ignore[arg-type]
