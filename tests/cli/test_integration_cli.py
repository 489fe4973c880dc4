"""The command line shows protocol findings first, refuses with --strict, prints the letter display of
--compare-all and prints every warning (issue 13 item 7) on the console."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.cli import run_cli

FAST = ["--reps", "300", "--profile-reps", "100", "--improvement-reps", "100", "--seed", "0"]


def _csv(tmp_path, runs: dict[str, int], scale: float = 1.0):
    rows = []
    for a, (alg, n) in enumerate(runs.items()):
        for task, k in (("Pong", 1.0), ("Breakout", scale)):
            rows += [{"algorithm": alg, "task": task, "seed": s, "score": k * (a + 0.1 * s + 1)} for s in range(n)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_findings_are_printed_after_the_table_and_not_twice(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "evaluate", _csv(tmp_path, {"A": 5, "B": 3}), *FAST)
    assert code == 0
    lines = out.splitlines()
    finding = next(
        i for i, line in enumerate(lines) if line.startswith("protocol warning: ") and "[runs.unequal;" in line
    )
    assert finding > next(i for i, line in enumerate(lines) if line.startswith("A "))  # results first
    assert sum("runs.unequal" in line for line in lines) == 1


def test_strict_exits_2_naming_the_check(tmp_path, capsys):
    out_dir = tmp_path / "res"
    code, out, err = run_cli(capsys, "evaluate", _csv(tmp_path, {"A": 5, "B": 3}), *FAST, "--strict", "--out", out_dir)
    assert code == 2
    assert "runs.unequal" in err and "strict mode" in err and "Traceback" not in err
    assert not out_dir.exists()  # nothing computed, nothing written
    code, _, _ = run_cli(capsys, "evaluate", _csv(tmp_path, {"A": 4, "B": 4}), *FAST, "--strict", "--quiet")
    assert code == 0


def test_compare_all_prints_letters_and_writes_the_table(tmp_path, capsys):
    out_dir = tmp_path / "res"
    code, out, _ = run_cli(
        capsys, "evaluate", _csv(tmp_path, {"A": 5, "B": 5, "C": 5}), *FAST, "--compare-all", "--out", out_dir
    )
    assert code == 0
    assert "which algorithms are distinguishable" in out
    letters = out.split("which algorithms are distinguishable")[1].splitlines()[1:4]
    assert [line.split()[0] for line in letters] == ["C", "B", "A"]  # best first
    pairs = pd.read_csv(out_dir / "comparisons.csv")
    assert set(pairs["statistic"]) == {"difference", "improvement"}
    prov = json.loads((out_dir / "provenance.json").read_text())
    assert "max-T" in prov["comparisons"] and prov["options"]["comparisons"] is True
    assert "methods.md" in {f["path"] for f in json.loads((out_dir / "manifest.json").read_text())["files"]}
    # `rl-reliable report` rebuilds from the folder: the letters come back from the saved tables
    from rl_reliable_logger.cli.common import format_comparisons
    from rl_reliable_logger.render.writer import load_report

    again = format_comparisons(load_report(out_dir))
    assert again.splitlines()[1:4] == out.split("which algorithms are distinguishable")[1].splitlines()[1:4]


def test_raw_scale_and_gap_warnings_are_printed(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "evaluate", _csv(tmp_path, {"A": 4, "B": 4}, scale=1000.0), *FAST)
    assert code == 0
    assert any(
        line.startswith("warning: scores are not normalised and the tasks' typical scores differ")
        for line in out.splitlines()
    )
    assert any("optimality gap" in line and line.startswith("warning:") for line in out.splitlines())


@pytest.mark.parametrize("flag", ["--strict", "--compare-all"])
def test_new_flags_are_shared_by_every_analysing_subcommand(flag):
    from rl_reliable_logger.cli.main import build_parser

    parser = build_parser()
    for command in ("evaluate", "mlflow", "wandb"):
        sub = parser._subparsers._group_actions[0].choices[command]
        assert flag in sub._option_string_actions, (command, flag)
