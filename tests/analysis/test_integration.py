"""The library features wired into evaluate(): protocol checks first, all-pairs comparisons, the methods
file of every bundle, and the warnings and noise tidying of issue 13 item 7."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.comparisons import compare_all
from rl_reliable_logger.analysis.protocol import check_protocol, format_finding
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.render.writer import load_report, save_report, save_tables
from rl_reliable_logger.store.bundle import read_bundle
from tests.support.paths import REPO

FAST = dict(reps=300, profile_reps=100, improvement_reps=100, seed=0)


def _frame(runs: dict[str, int], tasks=("Pong", "Breakout"), scale: dict[str, float] | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for a, (alg, n) in enumerate(runs.items()):
        for task in tasks:
            k = (scale or {}).get(task, 1.0)
            rows += [
                {"algorithm": alg, "task": task, "seed": s, "score": k * (1.0 + a + rng.normal(0, 0.3))}
                for s in range(n)
            ]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- protocol checks
def test_unequal_runs_are_the_first_warning_and_in_provenance():
    table = ScoreTable(_frame({"A": 5, "B": 3}))
    report = evaluate(table, **FAST)
    expected = check_protocol(table)
    assert [f.check for f in expected] == ["runs.unequal"]
    assert report.provenance["protocol"] == [f.to_dict() for f in expected]
    assert report.warnings[0] == format_finding(expected[0])
    assert "runs.unequal" in report.warnings[0] and "B" in report.warnings[0]
    # equal runs: the checks ran (recorded) and nothing fired
    quiet = evaluate(ScoreTable(_frame({"A": 4, "B": 4})), **FAST)
    assert quiet.provenance["protocol"] == [] and not any(w.startswith("protocol") for w in quiet.warnings)


def test_strict_turns_a_finding_into_an_error_before_any_statistics(monkeypatch):
    from rl_reliable_logger.analysis import evaluation

    def no_statistics(*args, **kwargs):  # pragma: no cover - reaching it is the failure
        raise AssertionError("statistics ran before the protocol checks refused the table")

    monkeypatch.setattr(evaluation, "_tables", no_statistics)
    with pytest.raises(InputError, match=r"(?s)strict mode.*runs\.unequal"):
        evaluate(ScoreTable(_frame({"A": 5, "B": 3})), **FAST, strict=True)


def test_strict_passes_a_clean_table():
    report = evaluate(ScoreTable(_frame({"A": 4, "B": 4})), **FAST, strict=True)
    assert report.provenance["options"]["strict"] is True


def test_max_over_training_key_is_one_protocol_finding_not_two():
    df = _frame({"A": 4, "B": 4}).rename(columns={"score": "eval/best_return"})
    table = ScoreTable(df, score="eval/best_return", source={"score_column": "eval/best_return"})
    report = evaluate(table, **FAST)
    assert [f["check"] for f in report.provenance["protocol"]] == ["score.maximum"]
    assert sum("maximum over training" in w for w in report.warnings) == 1
    assert report.warnings[0].startswith("protocol warning: ") and "[score.maximum;" in report.warnings[0]
    # a word that merely contains "top" is not a maximum (the old substring test warned on it)
    df = _frame({"A": 4, "B": 4}).rename(columns={"score": "return_at_stop"})
    table = ScoreTable(df, score="return_at_stop", source={"score_column": "return_at_stop"})
    assert not any("maximum" in w for w in evaluate(table, **FAST).warnings)


def test_findings_follow_the_selection():
    table = ScoreTable(_frame({"A": 4, "B": 4, "C": 2}))
    assert {f["check"] for f in evaluate(table, **FAST).provenance["protocol"]} == {"runs.unequal", "runs.few"}
    assert evaluate(table, **FAST, only_algorithms=["A", "B"]).provenance["protocol"] == []


def test_reused_tuning_seeds_are_found_with_hyperparameter_keys():
    df = pd.concat([_frame({"A": 4, "B": 4}).assign(lr=lr) for lr in (0.1, 0.01)], ignore_index=True)
    df["run"] = df["algorithm"] + "-" + df["lr"].astype(str) + "-" + df["seed"].astype(str)
    report = evaluate(ScoreTable(df, run_id="run"), **FAST, hyperparameter_keys=["lr"])
    assert "tuning.reused_seeds" in [f["check"] for f in report.provenance["protocol"]]


# ----------------------------------------------------------------------------- all-pairs comparisons
def test_comparisons_table_is_compare_all_on_the_normalised_headline_metric():
    table = ScoreTable(_frame({"A": 5, "B": 5, "C": 5}))
    report = evaluate(table, **FAST, comparisons=True)
    pairs = report.extra["comparisons"]
    direct = compare_all(table, metric="iqm", reps=100, seed=0)
    assert list(pairs.columns) == list(direct.columns)
    assert list(zip(pairs["algorithm_x"], pairs["algorithm_y"])) == list(
        zip(direct["algorithm_x"], direct["algorithm_y"])
    )
    # the same points as the aggregates of the same metric; its own random stream
    iqm = report.headline("iqm").set_index("algorithm")["point"]
    diffs = pairs[pairs["statistic"] == "difference"]
    for r in diffs.itertuples():
        assert r.point == pytest.approx(iqm[r.algorithm_x] - iqm[r.algorithm_y])
    assert report.provenance["comparisons"] == pairs.attrs["method"]
    assert "Holm" in report.provenance["comparisons"]
    # asking for the comparisons moves no other number
    plain = evaluate(table, **FAST)
    for name, frame in plain.tables():
        if name != "scores":
            pd.testing.assert_frame_equal(report.table(name), frame, obj=name)


def test_comparisons_round_trip_through_a_bundle(tmp_path):
    report = evaluate(ScoreTable(_frame({"A": 5, "B": 5, "C": 5})), **FAST, comparisons=True)
    out = save_report(report, tmp_path / "res", figures=False)
    assert "comparisons.csv" in {f.path for f in read_bundle(out).files}
    back = load_report(out)
    pd.testing.assert_frame_equal(
        back.extra["comparisons"], report.extra["comparisons"], check_dtype=False, check_exact=True
    )
    assert back.extra["comparisons"]["distinguishable"].dtype == bool
    assert back.provenance["comparisons"] == report.provenance["comparisons"]


def test_comparisons_with_one_algorithm_warn_and_add_nothing():
    report = evaluate(ScoreTable(_frame({"A": 4})), **FAST, comparisons=True)
    assert "comparisons" not in report.extra and "comparisons" not in report.provenance
    assert any("`comparisons=True` needs at least two algorithms" in w for w in report.warnings)


# ----------------------------------------------------------------------------- methods.md
def test_every_bundle_has_methods_md_in_its_manifest_reflecting_the_options(tmp_path):
    table = ScoreTable(_frame({"A": 5, "B": 3}))
    out = save_report(evaluate(table, **FAST, comparisons=True, ci=0.9), tmp_path / "res")
    bundle = read_bundle(out)
    assert "methods.md" in {f.path for f in bundle.files}
    text = bundle.contents["methods.md"].decode()
    assert "90%" in text and "family-wise error control" in text
    assert "runs.unequal" in text  # the protocol finding of this table
    other = save_report(evaluate(ScoreTable(_frame({"A": 4, "B": 4})), **FAST), tmp_path / "other")
    other_text = read_bundle(other).contents["methods.md"].decode()
    assert "No protocol check fired" in other_text and "family-wise" not in other_text
    tables_only = save_report(evaluate(table, **FAST, ci=0.9), tmp_path / "tables-only", figures=False)
    assert "90%" in read_bundle(tables_only).contents["methods.md"].decode()


# ----------------------------------------------------------------------------- issue 13 item 7
def test_raw_multi_task_scores_of_different_scales_are_warned():
    raw = ScoreTable(_frame({"A": 4, "B": 4}, scale={"Pong": 1.0, "Breakout": 500.0}))
    warned = evaluate(raw, **FAST, metrics=["iqm"]).warnings
    assert any("typical scores differ" in w and "'Breakout'" in w for w in warned)
    same_scale = ScoreTable(_frame({"A": 4, "B": 4}))
    assert not any("typical scores differ" in w for w in evaluate(same_scale, **FAST, metrics=["iqm"]).warnings)


def test_optimality_gap_on_raw_scores_is_warned_only_when_asked_for():
    table = ScoreTable(_frame({"A": 4, "B": 4}))
    assert any("optimality gap" in w and "not normalised" in w for w in evaluate(table, **FAST).warnings)
    assert not any("optimality gap" in w for w in evaluate(table, **FAST, metrics=["iqm"]).warnings)


def test_normalised_scores_far_above_gamma_warn_about_the_gap():
    df = pd.read_csv(REPO / "examples/atari100k_scores.csv")
    df = df[df["task"].isin(["Boxing", "Krull"]) & df["algorithm"].isin(["SPR", "DrQ"])]
    report = evaluate(ScoreTable(df), normalize="atari100k", gamma=0.01, **FAST)
    assert any("about 0 for every algorithm" in w for w in report.warnings)
    assert not any("typical scores differ" in w for w in report.warnings)  # normalised: no raw-scale warning


def test_points_lie_in_their_intervals_and_fractions_in_unit_interval():
    # the README main job's data: without the noise tolerance, gap points lay 1e-15 outside their intervals
    table = ScoreTable(pd.read_csv(REPO / "examples/atari100k_scores.csv"))
    report = evaluate(table, normalize="atari100k", **FAST)
    for name, col in (("gap_curve", "point"), ("aggregates", "point"), ("differences", "point"), ("per_task", "mean")):
        frame = report.table(name)
        assert ((frame["low"] <= frame[col]) & (frame[col] <= frame["high"])).all(), name
    prof = report.profiles
    assert ((prof["low"] <= prof["fraction"]) & (prof["fraction"] <= prof["high"])).all()
    assert prof[["fraction", "low", "high"]].stack().between(0, 1).all()


def test_provenance_json_carries_the_findings(tmp_path):
    report = evaluate(ScoreTable(_frame({"A": 5, "B": 3})), **FAST)
    save_tables(report, tmp_path)
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert [f["check"] for f in prov["protocol"]] == ["runs.unequal"]
    assert (
        prov["warnings"][0].startswith("protocol warning: algorithms have") and "[runs.unequal;" in prov["warnings"][0]
    )
    assert Report.load(tmp_path).warnings == report.warnings
