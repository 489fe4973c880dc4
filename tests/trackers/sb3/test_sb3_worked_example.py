"""docs/sb3.md's worked example, end to end (issue 57): the 12 real SB3 runs of ``examples/sb3_logs/`` (PPO and A2C
on CartPole-v1 and Acrobot-v1, 3 seeds, stable-baselines3 2.9.2) print at most 4 warning lines, each kind once,
while the bundle (``provenance.json``, ``methods.md``) keeps every warning in full."""

from __future__ import annotations

import json
from pathlib import Path

from rl_reliable_logger.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sb3_logs"

#: The kinds of warning the example draws, by how each line starts: one line each.
KINDS = (
    "warning: all 4 cells have fewer than 5 runs (3 each)",
    "warning: scores are not normalised and every run of 'Acrobot-v1' scores at or below 0 where every run of "
    "'CartPole-v1' scores at or above 0",
    "warning: the optimality gap measures the shortfall below gamma = 1",
    "warning: bootstrap-t fell back to the expanded percentile interval for ",
)


def test_the_worked_example_prints_each_kind_of_warning_once_and_keeps_every_one_in_the_bundle(tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["sb3", str(EXAMPLE), "--out", str(out)]) == 0  # the docs' command, with its defaults
    printed = capsys.readouterr()
    lines = (printed.out + printed.err).splitlines()
    warned = [line for line in lines if "warning:" in line]
    assert len(warned) <= 4, "\n".join(warned)
    assert [sum(line.startswith(kind) for line in warned) for kind in KINDS] == [1, 1, 1, 1], "\n".join(warned)

    prov = json.loads((out / "provenance.json").read_text())
    fallen = prov["fallen_back"]
    # before: one line per statistic (8), each blaming "too few distinct runs per task"; now one, naming the cells
    assert len(fallen) == 8 and all(entry["warning"] in prov["warnings"] for entry in fallen)
    line = next(line for line in warned if line.startswith(KINDS[3]))
    assert "the mean, iqm and optimality_gap of every algorithm" in line
    assert "the iqm and optimality_gap differences of a2c - ppo" in line
    low, high = min(e["share"] for e in fallen), max(e["share"] for e in fallen)
    assert f"{100 * low:.2g}-{100 * high:.2g}% of their resamples have a standard error near 0" in line
    assert "too few distinct runs" not in printed.out + json.dumps(prov)

    # nothing lost: every warning in full in methods.md, and the console line of every one that is not folded
    methods = (out / "methods.md").read_text()
    assert len(prov["warnings"]) == 3 + len(fallen)
    for warning in prov["warnings"]:
        assert f"- {warning}" in methods, warning
    assert "every warning in full" in lines[-1]  # the wrote line says where the rest is


def test_the_fix_the_scale_warning_names_removes_it(tmp_path, capsys):
    """Normalised with each task's return range (the fix the warning names): no scale or gap warning is left."""
    ranges = tmp_path / "ranges.csv"
    ranges.write_text("task,low,high\nCartPole-v1,0,500\nAcrobot-v1,-500,0\n")
    fast = ["--reps", "2000", "--profile-reps", "200", "--improvement-reps", "200"]
    assert main(["sb3", str(EXAMPLE), "--normalize", str(ranges), *fast]) == 0
    warned = [line for line in capsys.readouterr().out.splitlines() if "warning:" in line]
    assert not any(line.startswith((KINDS[1], KINDS[2])) for line in warned), warned
    assert sum(line.startswith(KINDS[3]) for line in warned) == 1


def _refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_a_missing_success_key_says_how_to_log_it_not_the_layout(capsys):
    """Issue 57: 'Check --layout' followed a missing `success` key; the runs' folders were right all along."""
    err = _refused(["sb3", str(EXAMPLE), "--score-key", "success"], capsys)
    assert "12 runs lack success" in err and "--layout" not in err
    assert 'Monitor(env, info_keywords=("is_success",))' in err and "EvalCallback" in err


def test_a_run_short_of_the_budget_gets_the_rule_s_fix_not_the_layout(capsys):
    err = _refused(["sb3", str(EXAMPLE), "--score-rule", "at-budget:100000"], capsys)
    assert "stopped short of the budget step 100000" in err and "--layout" not in err
    assert "Score every run by a --score-rule it meets" in err and "or pass --drop-invalid" in err
