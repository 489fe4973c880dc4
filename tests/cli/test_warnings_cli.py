"""The console prints the results first (each caveat's reason once under the table it marks), then each warning
once: the same lines evaluate() emits as ReliabilityWarning (caught, not shown a second time by Python)."""

from __future__ import annotations

import pytest

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.selection import unrelated_warning
from tests.support.reports import heavy_tailed_frame

FAST = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--method", "percentile"]


@pytest.fixture
def heavy_csv(tmp_path):
    path = tmp_path / "scores.csv"
    heavy_tailed_frame().to_csv(path, index=False)
    return path


def test_results_first_then_each_warning_once(heavy_csv, tmp_path, capsys):
    assert main(["evaluate", str(heavy_csv), *FAST, "--compare-all", "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    table = next(i for i, line in enumerate(lines) if line.startswith("H1 "))
    letters = next(i for i, line in enumerate(lines) if line.startswith("which algorithms are distinguishable"))
    warned = [i for i, line in enumerate(lines) if line.startswith("warning: ")]
    assert warned and table < letters < min(warned)  # results (table, letters) before any warning
    assert "distinguishable by IQM" in lines[letters]  # the letter display names its metric
    caveats = [i for i, line in enumerate(lines) if line.startswith("† ")]
    # one line per reason, naming its cells (under --method percentile the median's bootstrap interval at few runs
    # carries its caveat too)
    assert sorted(lines[i].split(":")[0] for i in caveats) == [
        "† the mean of H1 and H2",
        "† the median of every algorithm",
    ]
    assert table < min(caveats) and max(caveats) < letters
    assert len(set(lines)) == len(lines) - lines.count("")
    assert "ReliabilityWarning" not in err and "heavy tails" not in err  # not shown a second time
    assert (
        "methods.md (the methods paragraph for a paper)" in out
    )  # no warning folded away: none said in full only there
    methods = (tmp_path / "out" / "methods.md").read_text(encoding="utf-8")
    assert "the mean of H1 and H2; the mean difference of every pair: heavy tails" in methods  # differences too


def test_quiet_prints_each_warning_once_to_stderr(heavy_csv, capsys):
    assert main(["evaluate", str(heavy_csv), *FAST, "--quiet", "--no-figures"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    said = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert said and len(said) == len(set(said))
    assert "ReliabilityWarning" not in err and "heavy tails" not in err  # the caveats are the tables'


@pytest.mark.parametrize(("n", "verb"), [(1, "has"), (2, "have")])
def test_skipped_runs_sentence_agrees_with_its_count(n, verb):
    skipped = [{"run_id": f"r{i}", "reason": "has none of the fields"} for i in range(n)]
    text = unrelated_warning(skipped, {"score": "metrics.return"}, "MLflow")
    assert text is not None and f"MLflow run{'s' if n > 1 else ''} that {verb} none of the fields" in text


def test_rows_left_out_are_said_under_quiet_too(tmp_path, capsys):
    """``--drop-invalid`` leaves rows out: the count is printed with the summary and, under ``--quiet`` (no
    summary), as a note; a drop is never only in provenance.json."""
    from rl_reliable_logger.cli.main import main

    rows = [f"{a},t{t},{s},{1.0 + 0.1 * s + (a == 'B')}" for a in "AB" for t in (1, 2) for s in range(4)]
    scores = tmp_path / "scores.csv"
    scores.write_text("algorithm,task,seed,score\n" + "\n".join(rows + ["A,t1,0,nan"]) + "\n")
    fast = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--drop-invalid"]
    said = "left out 2 rows; each is listed with its reason in provenance.json"
    assert main(["evaluate", str(scores), *fast]) == 0
    assert said in capsys.readouterr().out
    assert main(["evaluate", str(scores), *fast, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"note: {said}" in captured.err, captured
