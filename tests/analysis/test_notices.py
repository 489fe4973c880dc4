"""evaluate() emits its warnings through Python's warnings as ReliabilityWarning, each once (a warning tied to a
pair folded into its algorithm's line, as results written before issue 52 carry them), while report.warnings keeps
every warning in full; the caveats are the tables' own, never warnings; and ``normalize=`` takes reference scores
given in code (a mapping or a DataFrame) or refuses in one sentence."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import rl_reliable_logger
from rl_reliable_logger import InputError, ReliabilityWarning, ScoreTable, evaluate
from tests.support.reports import heavy_tailed_frame

FAST = dict(reps=200, profile_reps=50, improvement_reps=50, seed=0, method="percentile")


def _frame() -> pd.DataFrame:
    return heavy_tailed_frame()


def test_reliability_warning_is_public_and_a_user_warning():
    assert issubclass(rl_reliable_logger.ReliabilityWarning, UserWarning)
    assert "ReliabilityWarning" in rl_reliable_logger.__all__


def test_evaluate_warns_each_warning_once_and_says_the_caveats_in_the_tables_only():
    with pytest.warns(ReliabilityWarning) as record:
        report = evaluate(ScoreTable(_frame()), **FAST)
    emitted = [str(w.message) for w in record if issubclass(w.category, ReliabilityWarning)]
    assert emitted == list(dict.fromkeys(report.warnings))  # no warning tied to a cell: each as it is, once
    mean = report.aggregates[report.aggregates["metric"] == "mean"].set_index("algorithm")["caveat"]
    assert mean["H1"] and mean["H2"] and not mean["C"]  # the mean's tail: a caveat of the cells
    assert not any(mean["H1"] in w or "mean's interval" in w for w in emitted)
    mine = [w for w in record if issubclass(w.category, ReliabilityWarning)]
    assert mine[0].filename == __file__  # points at the caller's line (other libraries' warnings aside)


def test_an_older_reports_pair_warnings_fold_into_their_algorithms_line():
    from rl_reliable_logger.analysis.notices import emit, grouped
    from rl_reliable_logger.analysis.report import Report

    own = {a: f"{a}: the mean's interval may under-cover" for a in ("H1", "H2")}
    pair = "H1 - H2: the mean difference's interval may under-cover"
    warned = [{"metric": "mean", "algorithm": a, "warning": w} for a, w in own.items()]
    warned.append({"metric": "mean", "pair": ["H1", "H2"], "warning": pair})
    report = Report(warnings=[*own.values(), pair, "3 runs"], provenance={"mean_skewness": {"warned": warned}})
    lines = grouped(report)
    assert lines == [own["H1"] + " (also flagged: its mean difference with H2)", own["H2"], "3 runs"]
    with pytest.warns(ReliabilityWarning) as record:
        emit(report)
    assert [str(w.message) for w in record] == lines


def test_a_notebook_shows_each_warning_once(capsys):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")  # what a notebook does
        report = evaluate(ScoreTable(_frame()), **FAST)
    texts = [str(w.message) for w in seen if issubclass(w.category, ReliabilityWarning)]
    assert texts and len(texts) == len(set(texts)) == len(set(report.warnings))
    assert capsys.readouterr() == ("", "")  # nothing printed besides: each shown once, as a warning


def test_reliability_warnings_can_be_silenced():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", ReliabilityWarning)
        report = evaluate(ScoreTable(_frame()), **FAST)
    assert report.warnings and not [w for w in seen if issubclass(w.category, ReliabilityWarning)]


def _small() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "algorithm": ["A"] * 6 + ["B"] * 6,
            "task": ["x", "x", "x", "y", "y", "y"] * 2,
            "seed": [0, 1, 2] * 4,
            "score": [1.0, 2, 3, 40, 50, 60, 2, 3, 4, 50, 60, 70],
        }
    )


@pytest.mark.parametrize(
    "given",
    [
        {"x": (0, 10), "y": (0, 100)},
        pd.DataFrame({"task": ["x", "y"], "low": [0, 0], "high": [10, 100]}),
    ],
)
def test_normalize_takes_reference_scores_given_in_code(given, tmp_path):
    refs = tmp_path / "refs.csv"
    refs.write_text("task,low,high\nx,0,10\ny,0,100\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabilityWarning)
        from_code = evaluate(_small(), normalize=given, **FAST)
        from_file = evaluate(_small(), normalize=str(refs), **FAST)
    pd.testing.assert_frame_equal(from_code.aggregates, from_file.aggregates)
    assert from_code.provenance["normalize"] == "reference scores given per task (2 tasks)"
    assert from_code.provenance["normalization"] == from_file.provenance["normalization"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (5, "normalize= was given a 'int'; it takes a packaged name"),
        ({"x": 3, "y": (0, 1)}, "normalize=: task 'x' maps to 3; a mapping gives each task its (low, high)."),
        (pd.DataFrame({"task": ["x", "y"], "low": [0, 0]}), "normalize=: a reference table needs columns"),
        ({"x": (0, "ten"), "y": (0, 1)}, "normalize=: non-numeric low/high for task(s) x"),
    ],
)
def test_normalize_refuses_anything_else_in_one_sentence(given, said):
    with pytest.raises(InputError) as err:
        evaluate(_small(), normalize=given, **FAST)
    assert str(err.value).startswith(said)
    assert "\n" not in str(err.value)


def test_every_bootstrap_t_fallback_is_one_line_naming_its_cells_and_why():
    """Issue 57: 12 SB3 runs gave 8 lines 'X: bootstrap-t: the Y's studentized replicates are degenerate (too few
    distinct runs per task)'; now one line names the cells and the share of degenerate resamples, read from the
    records (``provenance["fallen_back"]``), and report.warnings keeps every sentence."""
    from rl_reliable_logger.analysis.notices import grouped
    from rl_reliable_logger.analysis.report import Report

    texts = [f"{a}: {m} fell back" for a in "AB" for m in ("mean", "iqm")] + ["A - B: iqm fell back"]
    fallen = [
        {"warning": f"{a}: {m} fell back", "metric": m, "algorithm": a, "share": share}
        for a in "AB"
        for m, share in (("mean", 0.038), ("iqm", 0.43))
    ] + [{"warning": "A - B: iqm fell back", "metric": "iqm", "pair": ["A", "B"], "share": 0.1}, "hand-edited"]
    report = Report(
        warnings=["few runs", *texts, "no seed"], provenance={"algorithms": ["A", "B"], "fallen_back": fallen}
    )
    lines = grouped(report)
    assert lines[0] == "few runs" and lines[-1] == "no seed" and len(lines) == 3
    assert lines[1].startswith(
        "bootstrap-t fell back to the expanded percentile interval for the mean and iqm of every algorithm; the iqm "
        "difference of A - B: 3.8-43% of their resamples have a standard error near 0"
    )
    assert report.warnings[1:-1] == texts  # in full in the report
    # a results folder written before the record: every sentence its own line, as it was
    assert grouped(Report(warnings=texts, provenance={"algorithms": ["A", "B"]})) == texts
