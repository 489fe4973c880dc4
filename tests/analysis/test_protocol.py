"""Protocol checks fire on purpose-built cases, name what they found, and stay quiet otherwise."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable
from rl_reliable_logger.analysis.protocol import (
    CHECKS,
    REFERENCES,
    Finding,
    check_protocol,
    enforce,
    format_finding,
    format_findings,
    looks_like_maximum,
)
from rl_reliable_logger.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _frame(runs: dict[str, int], tasks=("pong", "breakout"), **extra) -> pd.DataFrame:
    rows = []
    for alg, n in runs.items():
        for t in tasks:
            for s in range(n):
                rows.append({"algorithm": alg, "task": t, "seed": s, "score": float(s), **extra})
    return pd.DataFrame(rows)


def _checks(findings) -> list[str]:
    return [f.check for f in findings]


def test_balanced_clean_table_has_no_findings():
    assert check_protocol(ScoreTable(_frame({"A": 5, "B": 5}))) == []


def test_unequal_runs_and_few_runs_name_algorithms_and_cells():
    findings = check_protocol(ScoreTable(_frame({"A": 5, "B": 2})))
    assert _checks(findings) == ["runs.unequal", "runs.few"]
    unequal, few = findings
    assert unequal.algorithms == ("B",) and "A: 5 runs per task" in unequal.message
    assert few.tasks == ("pong", "breakout") and "B / pong (2)" in few.message
    assert all(f.severity == "warning" and f.cite.startswith("Agarwal et al. (2021), §") for f in findings)
    assert check_protocol(ScoreTable(_frame({"A": 5, "B": 2})), min_runs=2)[1:] == []


def test_unequal_runs_between_algorithms_are_said_once():
    """Issue 13: the data layer's "fewer runs per task" warning repeated the protocol check ``runs.unequal``."""
    from rl_reliable_logger import evaluate

    table = ScoreTable(_frame({"A": 6, "B": 4}))
    assert not any("fewer runs" in w or ("B" in w and "fewer than 5 runs" not in w) for w in table.warnings)
    report = evaluate(table, reps=200, profile_reps=100, improvement_reps=100, seed=0)
    about_runs = [w for w in report.warnings if "fewer runs" in w or "runs.unequal" in w or "the fewest" in w]
    assert len(about_runs) == 1 and "runs.unequal" in about_runs[0] and "B has the fewest" in about_runs[0]


def test_unequal_totals_with_the_same_span_of_runs_are_said_not_a_traceback():
    """A runs 3, 6 and 6 times on its tasks, B 3, 3 and 6 times: the same span of runs per task, different totals.
    Finding the odd algorithm out of identical spans raised IndexError (a traceback through ``evaluate``)."""
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(s)}
        for a, counts in (("A", (3, 6, 6)), ("B", (3, 3, 6)))
        for t, n in zip(("t1", "t2", "t3"), counts)
        for s in range(n)
    ]
    (unequal,) = [f for f in check_protocol(ScoreTable(pd.DataFrame(rows))) if f.check == "runs.unequal"]
    assert unequal.algorithms == ("B",)
    assert "(every algorithm 3–6 runs per task, in all A: 15; B: 12)" in unequal.message, unequal.message


def test_budgets_from_steps_between_algorithms_and_within_a_cell():
    rows = []
    for alg, budget in (("A", 1_000_000), ("B", 500_000)):
        for s in range(3):
            last = budget if not (alg == "A" and s == 2) else 400_000  # A's run 2 crashed early
            for step in range(0, last + 1, 100_000):
                rows.append({"algorithm": alg, "task": "pong", "seed": s, "step": step, "score": step / 1e6})
    table = ScoreTable(pd.DataFrame(rows), step="step")
    findings = {f.check: f for f in check_protocol(table)}
    assert set(findings) == {"budget.unequal", "budget.short_runs"}
    assert findings["budget.unequal"].algorithms == ("B",)
    assert "A 1e+06" in findings["budget.unequal"].message and "B 500000" in findings["budget.unequal"].message
    assert findings["budget.short_runs"].runs == ("2",)
    assert "A / pong run 2 (400000 of 1e+06)" in findings["budget.short_runs"].message


def test_budget_column_is_used_when_given():
    frame = _frame({"A": 3, "B": 3})
    frame["total_timesteps"] = [1e6 if a == "A" else 2e6 for a in frame["algorithm"]]
    findings = check_protocol(ScoreTable(frame), budget_key="total_timesteps")
    assert _checks(findings) == ["budget.unequal"] and findings[0].algorithms == ("A",)
    with pytest.raises(InputError, match="budget_key="):
        check_protocol(ScoreTable(frame), budget_key="nope")


def test_environment_versions_and_sticky_actions_that_differ_are_named():
    frame = _frame({"A": 3, "B": 3})
    frame["config.env_id"] = [f"ALE/{t.title()}-v5" if a == "A" else f"{t.title()}NoFrameskip-v4"
                              for a, t in zip(frame["algorithm"], frame["task"])]  # fmt: skip
    frame["repeat_action_probability"] = [0.25 if a == "A" else 0.0 for a in frame["algorithm"]]
    frame["learning_rate"] = [1e-3 if a == "A" else 1e-4 for a in frame["algorithm"]]  # not a protocol field
    findings = check_protocol(ScoreTable(frame))
    assert _checks(findings) == ["protocol.mismatch", "protocol.mismatch"]
    env, sticky = findings
    assert "environment version" in env.message and "A: v5" in env.message and "B: v4" in env.message
    assert "repeat_action_probability" in sticky.message and "0.25" in sticky.message
    assert "Machado et al. (2018), §5.2" in sticky.cite and "sticky actions" in sticky.why
    only = check_protocol(ScoreTable(frame), protocol_fields=["frame_skip"])
    assert only == []


def test_same_protocol_with_different_games_is_quiet():
    frame = _frame({"A": 3, "B": 3})
    frame["env_id"] = [f"{t.title()}NoFrameskip-v4" for t in frame["task"]]
    assert check_protocol(ScoreTable(frame)) == []


@pytest.mark.parametrize(
    ("key", "fires"),
    [("max_return", True), ("eval/best_score", True), ("peakReward", True), ("return", False), ("stop_ret", False)],
)
def test_maximum_like_score_keys(key, fires):
    assert looks_like_maximum(key) is fires
    table = ScoreTable(_frame({"A": 3}), source={"score_column": key})
    assert (_checks(check_protocol(table)) == ["score.maximum"]) is fires


def test_tuning_on_the_reporting_seeds_is_flagged():
    frame = pd.concat([_frame({"A": 3}, lr=lr) for lr in (1e-3, 1e-4)] + [_frame({"B": 3}, lr=1e-3)], ignore_index=True)
    frame["run"] = [f"{a}-{lr}-{s}" for a, lr, s in zip(frame["algorithm"], frame["lr"], frame["seed"])]
    findings = check_protocol(ScoreTable(frame, run_id="run"), hyperparameter_keys=["lr"])
    assert _checks(findings) == ["runs.unequal", "tuning.reused_seeds"]
    tuning = findings[1]
    assert tuning.algorithms == ("A",) and "2 configurations share seed(s) 0, 1, 2" in tuning.message
    # the same sweep on disjoint seeds: nothing to flag
    frame.loc[frame["lr"] == 1e-4, "seed"] += 10
    frame["run"] = [f"{a}-{lr}-{s}" for a, lr, s in zip(frame["algorithm"], frame["lr"], frame["seed"])]
    findings = check_protocol(ScoreTable(frame, run_id="run"), hyperparameter_keys=["lr"])
    assert _checks(findings) == ["runs.unequal"]
    with pytest.raises(InputError, match="hyperparameter_keys"):
        check_protocol(ScoreTable(frame, run_id="run"), hyperparameter_keys=["batch"])


def test_enforce_strict_turns_warnings_into_an_error():
    findings = check_protocol(ScoreTable(_frame({"A": 5, "B": 2})))
    enforce(findings)  # warnings alone pass
    with pytest.raises(InputError, match="strict") as err:
        enforce(findings, strict=True)
    assert len(err.value.problems) == 2
    text = format_findings(findings)
    assert text.splitlines()[0].startswith("protocol warning: algorithms have different numbers of runs")
    assert "[runs.unequal; Agarwal" in text.splitlines()[0]  # the check's id last, with its citation


def test_packaged_examples_only_flag_what_is_really_there():
    atari = ScoreTable.from_csv(EXAMPLES / "atari100k_scores.csv")
    findings = check_protocol(atari)
    # SimPLe really has 5 runs per game where the others have 10; no cell has fewer than 3
    assert _checks(findings) == ["runs.unequal"] and findings[0].algorithms == ("SimPLe",)
    # issue 57: the odd one out, then the others' count once (not "DER: 10 runs per task; DrQ: 10; ...")
    assert "(SimPLe: 5 runs per task, the others 10)" in findings[0].message
    wide = pd.read_csv(EXAMPLES / "dopamine_atari_curves.csv")
    long = wide.melt(id_vars=["game", "agent", "run"], var_name="iteration", value_name="return")
    long["iteration"] = long["iteration"].str.removeprefix("iter_").astype(int)
    curves = ScoreTable(long, algorithm="agent", task="game", seed="run", score="return", step="iteration")
    assert check_protocol(curves) == []


def test_every_check_has_an_explanation_and_a_cited_section_shown_on_its_line():
    frame = _frame({"A": 3, "B": 2})
    frame["repeat_action_probability"] = [0.25 if a == "A" else 0.0 for a in frame["algorithm"]]
    frame["config"] = [f"c{s % 2}" for s in frame["seed"]]
    table = ScoreTable(frame, source={"score_column": "best_return"})
    findings = check_protocol(table, hyperparameter_keys=["config"])
    assert {f.check for f in findings} == {"runs.unequal", "runs.few", "protocol.mismatch", "score.maximum"}
    for f in findings:
        assert f.why == CHECKS[f.check].why and f.cite == CHECKS[f.check].cite
        assert re.search(r"(§\d|App\. A\.\d|“)", f.cite)  # a section (or a heading of an unnumbered paper)
        assert format_finding(f).endswith(f"[{f.check}; {f.cite}]")  # what was found first, the check's id last
        assert Finding.from_dict(f.to_dict()) == f  # provenance keeps the citation
    # a finding recorded before findings carried citations still reads back (empty cite, line unchanged)
    old = {k: v for k, v in findings[0].to_dict().items() if k != "cite"}
    assert format_finding(Finding.from_dict(old)).endswith(f"[{old['check']}]")
    assert set(CHECKS) == {
        "runs.unequal", "runs.few", "budget.unequal", "budget.short_runs",
        "protocol.mismatch", "score.maximum", "tuning.reused_seeds",
    }  # fmt: skip
    assert all(c.cite.split(",")[0] in REFERENCES for c in CHECKS.values())


def test_a_source_s_last_step_column_is_a_budget_without_curves():
    """A table of final scores whose source knew each run's steps (``last_step``, issue 54): the budget checks run
    on it as on curves, and the provenance says they ran."""
    from rl_reliable_logger.analysis.protocol import checks_run
    from rl_reliable_logger.data.scores import LAST_STEP

    frame = pd.DataFrame(
        {"algorithm": ["A"] * 4 + ["B"] * 4, "task": "x", "seed": [0, 1, 2, 3] * 2, "score": 1.0,
         LAST_STEP: [4000.0, 6000.0, 6000.0, 6000.0] + [6000.0] * 4}
    )  # fmt: skip
    table = ScoreTable(frame)
    short = [f for f in check_protocol(table) if f.check == "budget.short_runs"]
    assert len(short) == 1 and "(4000 of 6000)" in short[0].message
    ran = checks_run(table)
    assert ran["budget"]["ran"] and ran["final"]["ran"]
    plain = ScoreTable(frame.drop(columns=[LAST_STEP]))
    assert not checks_run(plain)["budget"]["ran"]
