"""trackers/base: shared selection, keyword messages (Python) vs flags (CLI), headline keys, run names."""

from __future__ import annotations

import pandas as pd
import pytest

from rl_reliable_logger.cli.flags import as_flags
from rl_reliable_logger.errors import InputError, TrackerError
from rl_reliable_logger.trackers.base.publishing import headline_metrics, key_segment, run_name
from rl_reliable_logger.trackers.base.records import RunRecord, parse_field_ref, records_to_table
from rl_reliable_logger.trackers.base.selection import select_records
from tests.support.reports import small_report

REFS = {"algorithm": "config.algo", "task": "config.env", "seed": "config.seed", "score": "summary.ret"}


def _rec(run_id: str, algo: str | None, env: str = "Pong", seed: int = 0, score: float | None = 1.0) -> RunRecord:
    config = {"env": env, "seed": seed, **({"algo": algo} if algo else {})}
    return RunRecord(run_id, run_id, "finished", config=config, summary={} if score is None else {"ret": score})


def test_library_messages_name_keywords_and_the_cli_turns_them_into_flags():
    with pytest.raises(InputError) as err:
        records_to_table([_rec("a", "PPO", score=None)], **REFS)
    text = str(err.value)
    assert "`on_invalid='drop'`" in text and "`score=`" in text and "--" not in text
    flags = as_flags(err.value.message_parts)
    assert "--drop-invalid" in flags and "--score-key" in flags and "`" not in flags.split("\n")[-1]


def test_selection_skips_analysis_and_unrelated_runs_and_names_unknown_values():
    refs = {k: parse_field_ref(v) for k, v in REFS.items()}
    records = [_rec("a", "PPO"), _rec("b", "DQN"), RunRecord("p", "parent", "finished"), _rec("x", "PPO")]
    kept, skipped = select_records(records, refs, is_analysis=lambda r: r.run_id == "x", algorithms=["PPO"])
    assert [r.run_id for r in kept] == ["a"]
    assert {s["run_id"]: s["reason"] for s in skipped} == {
        "b": "algorithm 'DQN' not selected",
        "p": "has none of the fields config.algo, config.env, config.seed, summary.ret",
        "x": "is an rl-reliable analysis run",
    }
    with pytest.raises(
        InputError, match=r"`algorithms=` names 'PP0', which no run has; known algorithms: 'DQN', 'PPO'"
    ):
        select_records(records, refs, is_analysis=lambda r: False, algorithms=["PP0"])


def test_key_segments_are_plain_or_hashed_and_distinct():
    assert key_segment("DrQ-eps_1.0") == "DrQ-eps_1.0"
    hostile = ["PPO/low", "A+B", "A=B", "../x", "_x", "a" * 65, "ε"]
    segments = [key_segment(n) for n in hostile]
    assert len(set(segments)) == len(hostile)
    assert all("/" not in s and ".." not in s and not s.startswith(("_", ".", "-")) for s in segments)


def test_headline_keys_and_run_name():
    report = small_report()
    keys = headline_metrics(report)
    assert keys["iqm/ucb"] == pytest.approx(0.9) and keys["iqm_low/ucb"] == 0.8 and keys["mean_high/gradient"] == 0.75
    report.scores = pd.DataFrame({"algorithm": ["ucb"], "task": ["t1"], "run_id": ["0"], "seed": [0], "score": [1.0]})
    assert run_name(report, "0123456789abcdef") == (
        "01234567 · IQM ucb 0.900, gradient 0.600 · rl-reliable · 1 run · 2 algorithms × 1 task"  # the IQM, shown
    )  # in a runs list that shows names only
    with pytest.raises(InputError, match="not accepted by the tracker"):
        headline_metrics(report, valid=lambda key: not key.startswith("iqm_low/"))


def test_a_deadline_shares_one_budget_between_the_steps_of_a_call():
    """Each step gets what is left (its retries and its last request end at the call's end), and the message of
    a spent budget names the whole call's budget and time, not the step's."""
    from rl_reliable_logger.trackers.base.retry import Deadline, RetryPolicy

    now = [100.0]
    policy = RetryPolicy(total=30, request_timeout=20, clock=lambda: now[0], progress=None)
    deadline = Deadline(policy)
    assert (deadline.end, deadline.left()) == (150.0, 50.0)
    now[0] = 112.0
    step = deadline.step()
    assert (step.total, step.request_timeout) == (18.0, 20.0)  # 18 s of retrying left, then the last request
    assert deadline.timeout(reserve=10) == 28.0
    now[0] = 140.0
    step = deadline.step()
    assert (step.total, step.request_timeout) == (0.0, 10.0)  # the budget is spent: only the last request's time
    now[0] = 149.5
    assert deadline.timeout(reserve=10) == 1.0  # never 0 (a library reads it as "wait forever")
    now[0] = 151.0
    assert deadline.spent() and deadline.left() == 0.0
    message = str(deadline.out_of_time("uploading the artifact"))
    assert message.endswith(
        "Gave up after 1 attempt in 51 s: the time budget is 30 s (`retry_for=`) plus 20 s for the last request."
    ), message
    with pytest.raises(TrackerError, match=r"in 51 s: the time budget is 30 s \(`retry_for=`\) plus 20 s"):
        now[0] = 151.0
        deadline.step().call(lambda: (_ for _ in ()).throw(ConnectionError("connection refused")), "listing runs")
