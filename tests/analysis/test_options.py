"""AnalysisOptions: validated up front, one options object, the complete Report built by evaluate()."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import AnalysisOptions, OptionError, ScoreTable, evaluate
from rl_reliable_logger.analysis.aggregates import aggregate
from rl_reliable_logger.analysis.options import JORDAN_METHODS, as_options, ci_label
from rl_reliable_logger.analysis.report import LOOK_TABLES, OPTIONAL_TABLES, REPORT_TABLES, TABLES, Report
from rl_reliable_logger.render.writer import save_tables
from rl_reliable_logger.stats import intervals

FAST = dict(reps=300, profile_reps=100, improvement_reps=100, tuning_reps=100)


def _frame(algorithms=("A", "B", "C"), tasks=("x", "y"), runs=4, steps=False, sweep=False):
    rng = np.random.default_rng(1)
    rows = []
    for i, alg in enumerate(algorithms):
        for task in tasks:
            for seed in range(runs):
                base = {"algorithm": alg, "task": task, "seed": seed}
                if sweep:
                    base["lr"] = [0.1, 0.01][seed % 2]
                final = i * 0.3 + rng.normal()
                if steps:
                    for step in (0, 50, 100):
                        rows.append({**base, "step": step, "score": final * step / 100})
                else:
                    rows.append({**base, "score": final})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table():
    return ScoreTable(_frame())


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "given, fraction, label",
    [
        (0.95, 0.95, "95%"),
        (0.995, 0.995, "99.5%"),
        (95, 0.95, "95%"),
        (99.5, 0.995, "99.5%"),
        (0.5, 0.5, "50%"),
        (50, 0.5, "50%"),
    ],
)
def test_ci_rule_and_exact_label(given, fraction, label):
    opts = AnalysisOptions(ci=given)
    assert opts.ci == pytest.approx(fraction, abs=1e-15)
    assert ci_label(opts.ci) == label


@pytest.mark.parametrize("bad", [0, 1, 100, 150, -0.5, 0.3, 1.5, 49.9, float("nan"), float("inf"), True, "0.95"])
def test_ci_outside_the_rule_is_refused_naming_the_keyword(bad):
    with pytest.raises(OptionError) as err:
        AnalysisOptions(ci=bad)
    assert err.value.keyword == "ci" and str(err.value).startswith("`ci=")  # names the Python keyword


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -1.0])
def test_gamma_must_be_finite_and_positive(bad):
    with pytest.raises(OptionError, match="gamma"):
        AnalysisOptions(gamma=bad)


def test_unknown_methods_list_the_choices():
    with pytest.raises(OptionError) as err:
        AnalysisOptions(method="studentized")
    assert all(m in str(err.value) for m in intervals.METHODS)
    with pytest.raises(OptionError) as err:
        AnalysisOptions(jordan_method="exact")
    assert all(m in str(err.value) for m in JORDAN_METHODS)
    with pytest.raises(OptionError, match="metrics"):
        AnalysisOptions(metrics=("iqm", "iqmm"))


@pytest.mark.parametrize("keyword", ["reps", "profile_reps", "improvement_reps", "curve_reps", "jordan_reps"])
@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_replicate_counts_are_positive_integers(keyword, bad):
    with pytest.raises(OptionError, match=keyword):
        AnalysisOptions(**{keyword: bad})


def test_unknown_keyword_lists_the_options(table):
    with pytest.raises(TypeError, match="unknown analysis option.*repz.*the options are:.*reps"):
        evaluate(table, repz=10)


def test_memory_estimate_refuses_with_estimate_and_largest_feasible_value():
    opts = AnalysisOptions(reps=10_000_000)
    est = sum(opts.memory_estimate(6, 26, 100).values())
    available = est / 10
    with pytest.raises(OptionError) as err:
        opts.check_memory(6, 26, 100, available=available)
    text = str(err.value)
    assert err.value.keyword == "reps" and "`reps=10000000`" in text and ("GB" in text or "MB" in text)
    largest = int(text.rsplit("largest feasible `reps=` is ", 1)[1].replace(",", ""))
    assert 1 <= largest < 10_000_000
    opts.replace(reps=largest).check_memory(6, 26, 100, available=available)  # fits
    with pytest.raises(OptionError):
        opts.replace(reps=largest + 1).check_memory(6, 26, 100, available=available)
    # the estimate grows with the problem, not only with reps
    assert sum(opts.memory_estimate(12, 26, 100).values()) > est


def test_memory_estimate_counts_the_tables_that_grow_with_the_square_of_the_algorithms():
    """The rank table has A x A x (tasks + 1) rows: at 650 configurations analysed as algorithms, about 1 GB."""
    base = [AnalysisOptions().memory_estimate(a, 26, 130)["base"] for a in (1, 200, 400)]
    assert base[2] - base[0] > 3.9 * (base[1] - base[0]) > 0
    assert AnalysisOptions().memory_estimate(650, 26, 130)["base"] > 2**30


def test_memory_estimate_counts_the_group_of_curve_steps_evaluated_at_once():
    """Curves evaluate groups of grid steps whose arrays stay within chunk_bytes (stats.bootstrap.column_groups,
    tests/stats/test_columns.py): the estimate holds one such group more when curves are on."""
    for chunk in (2**20, 64 * 2**20):
        without = AnalysisOptions(chunk_bytes=chunk).memory_estimate(6, 26, 100)
        with_curves = AnalysisOptions(chunk_bytes=chunk, curves=True).memory_estimate(6, 26, 100)
        assert with_curves["base"] - without["base"] >= chunk


def test_evaluate_refuses_infeasible_reps_before_computing(table):
    with pytest.raises(OptionError, match="largest feasible `reps=`"):
        evaluate(table, reps=10**14)


# ----------------------------------------------------------------------------- one options object
def test_options_object_and_keywords_give_the_same_report(table):
    opts = AnalysisOptions(**FAST, seed=3, ci=0.9)
    a = evaluate(table, opts)
    b = evaluate(table, **FAST, seed=3, ci=0.9)
    c = evaluate(table, AnalysisOptions(**FAST, seed=5, ci=0.9), seed=3)  # keywords override the object
    for other in (b, c):
        pd.testing.assert_frame_equal(a.aggregates, other.aggregates)
        pd.testing.assert_frame_equal(a.improvement, other.improvement)
    assert a.provenance["options"]["seed"] == 3 and a.provenance["ci_label"] == "90%"


def test_seed_defaults_to_zero_and_is_recorded(table):
    a = evaluate(table, **FAST)
    b = evaluate(table, **FAST, seed=0)
    pd.testing.assert_frame_equal(a.aggregates, b.aggregates)
    assert a.provenance["seed"] == 0
    assert not any("no seed" in w for w in a.warnings)
    assert any("seed=None" in w for w in evaluate(table, **FAST, seed=None).warnings)


@pytest.mark.parametrize("task_bootstrap", [False, True])
def test_aggregates_only_entry_point_equals_evaluate(table, task_bootstrap):
    opts = AnalysisOptions(**FAST, seed=7, metrics=("iqm", "mean"), task_bootstrap=task_bootstrap)
    pd.testing.assert_frame_equal(aggregate(table, opts), evaluate(table, opts).aggregates)


def test_only_algorithms_and_tasks_select_and_typos_name_the_known(table):
    report = evaluate(table, **FAST, only_algorithms=["A", "C"], only_tasks="y")
    assert report.algorithms == ["A", "C"] and report.provenance["tasks"] == ["y"]
    assert report.provenance["filters"] == {"only_algorithms": ["A", "C"], "only_tasks": ["y"]}
    direct = ScoreTable(_frame().query("algorithm in ['A', 'C'] and task == 'y'"))
    pd.testing.assert_frame_equal(report.aggregates, evaluate(direct, **FAST).aggregates)
    with pytest.raises(OptionError) as err:
        evaluate(table, **FAST, only_algorithms=["A", "Cc"])
    assert "'Cc'" in str(err.value) and "'A', 'B', 'C'" in str(err.value) and err.value.keyword == "only_algorithms"
    with pytest.raises(OptionError, match="`only_tasks=` names 'z'.*'x', 'y'"):
        evaluate(table, **FAST, only_tasks=["z"])


def test_selection_warns_about_the_selected_algorithms_only():
    frame = _frame()
    frame = frame[~((frame["algorithm"] == "C") & (frame["seed"] == 3))]  # C has fewer runs
    table = ScoreTable(frame)
    table.warnings.append("a note from the source")
    report = evaluate(table, **FAST, only_algorithms=["A", "B"])
    assert not any("runs.unequal" in w for w in report.warnings)
    assert "a note from the source" in report.warnings
    assert any(
        "runs.unequal" in w and "C has the fewest" in w
        for w in evaluate(table, **FAST, only_algorithms=["A", "C"]).warnings
    )


def test_jordan_and_tuning_are_part_of_the_analysis():
    sweep = ScoreTable(_frame(sweep=True))
    report = evaluate(sweep, **FAST, jordan=True, jordan_method="pbp-t", hyperparameter_keys=["lr"], comparisons=True)
    # LOOK_TABLES: a published watch or race look; success_*: scores with success counts (test_success_tables)
    success = {"success_rates", "success_aggregates", "success_differences"}
    assert set(report.extra) == set(OPTIONAL_TABLES) - set(LOOK_TABLES) - success
    assert list(report.extra["jordan"]["algorithm"]) == ["A", "B", "C"]
    assert set(report.extra["tuning"]["view"]) >= {"complete", "tuned"}
    assert report.provenance["jordan"]["method"] == "pbp-t"
    assert report.provenance["tuning"] == {"hyperparameter_keys": ["lr"], "metric": "iqm", "reps": 100}
    plain = evaluate(sweep, **FAST)
    assert plain.extra == {}
    pd.testing.assert_frame_equal(report.aggregates, plain.aggregates)  # extra parts do not move the core numbers


# ----------------------------------------------------------------------------- the table registry
def test_registry_declares_every_table():
    assert TABLES == tuple(f for f in TABLES if hasattr(Report(), f))
    names = [s.name for s in REPORT_TABLES]
    assert len(names) == len(set(names)) and set(names) == set(TABLES) | set(OPTIONAL_TABLES)
    with pytest.raises(ValueError, match="undeclared table"):
        Report(extra={"bogus": pd.DataFrame()})


def test_save_load_round_trips_every_table(tmp_path):
    names = ("007", "1e3", "True")  # names that look like numbers stay text
    frame = _frame(algorithms=names, steps=True, sweep=True)
    frame["won"], frame["n"] = np.arange(len(frame)) % 11, 10  # success counts: the success tables
    report = evaluate(
        ScoreTable(frame, step="step"),
        **FAST,
        curves=True,
        curve_points=3,
        curve_reps=100,
        jordan=True,
        jordan_method="bootstrap",
        jordan_reps=100,
        hyperparameter_keys=["lr"],
        comparisons=True,
        successes="won",
        episodes="n",
    )
    report.extra["watch"] = pd.DataFrame(  # a published watch look's tables (cli/watch.py adds them)
        {
            "algorithm_x": ["007"],
            "algorithm_y": ["1e3"],
            "metric": ["iqm"],
            "decision": ["x>y"],
            "low": [0.1],
            "high": [0.5],
            "look": [2],
        }
    )
    report.extra["watch_launch"] = pd.DataFrame({"algorithm": ["True"], "task": ["007"], "add_runs": [3]})
    race = {"algorithm": ["007"], "config": ["lr=1e3"]}  # a published race look's tables (cli/race.py adds them)
    report.extra["race"] = pd.DataFrame(
        {**race, "metric": ["iqm"], "point": [0.4], "low": [0.2], "high": [0.6], "regret": [0.01]}
        | {"margin_low": [-0.01], "margin_high": [0.3], "reason": ["within delta"], "look": [2]}
    )
    report.extra["race_alive"] = pd.DataFrame({**race, "point": [0.4], "runs": [12], "settled": [False]})
    report.extra["race_eliminated"] = pd.DataFrame(
        {**race, "look": [1], "against": ["True [lr=0.1]"], "low": [-0.5], "high": [-0.1], "reason": ["worse"]}
    )
    report.extra["race_launch"] = pd.DataFrame({**race, "task": ["NA"], "add_runs": [2]})
    report.extra["gate"] = pd.DataFrame(  # a published gate look's stream (cli/gate.py adds it)
        {"candidate": [1], "name": ["007"], "verdict": ["keep"], "outcome": ["keep"], "seeds": [6], "mean": [0.9]}
        | {"estimate": [0.8], "low": [0.3], "high": [1.5], "level": [0.01], "incumbent": ["1e3"], "look": [2]}
        | {"reason": ["keep: better than the incumbent"]}
    )
    present = dict(report.tables(written=True))
    assert set(present) == set(TABLES) | set(OPTIONAL_TABLES)  # every table is exercised
    save_tables(report, tmp_path)
    loaded = Report.load(tmp_path)
    assert [n for n, _ in loaded.tables(written=True)] == list(present)
    for name, original in present.items():
        if name == "scores":  # a seed is a name: read back as text, as from any file
            original = original.astype({"seed": str})
        pd.testing.assert_frame_equal(loaded.table(name), original, check_dtype=False, check_exact=True, obj=name)
        for col in next(s for s in REPORT_TABLES if s.name == name).text_columns:
            assert all(isinstance(v, str) for v in loaded.table(name)[col]), (name, col)
    assert loaded.algorithms == list(names)
    assert loaded.warnings == report.warnings
    assert loaded.provenance == json.loads(json.dumps(report.provenance, default=str))


def test_empty_curves_are_not_written_and_load_empty(tmp_path, table):
    report = evaluate(table, **FAST)
    save_tables(report, tmp_path)
    assert not (tmp_path / "curves.csv").exists()
    assert Report.load(tmp_path).curves.empty
    assert math.isclose(Report.load(tmp_path).aggregates["point"].sum(), report.aggregates["point"].sum())


def test_how_to_add_an_option_runs_as_written():
    """The worked example of docs/architecture.md ("How to add an option") runs as it is written."""
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
    section = doc.read_text(encoding="utf-8").split("## How to add an option", 1)[1].split("\n## ", 1)[0]
    test = doctest.DocTestParser().get_doctest(section, {}, "how to add an option", str(doc), 0)
    assert test.examples  # the example is still there
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0


@pytest.mark.parametrize(
    ("given", "switch"),
    [
        (dict(curve_reps=100), "curves"),
        (dict(curve_points=5), "curves"),
        (dict(curve_metrics=["iqm"]), "curves"),
        (dict(jordan_reps=100), "jordan"),
        (dict(jordan_delta=0.1), "jordan"),
        (dict(jordan_method="pbp-t"), "jordan"),
        (dict(score_range=(0, 1)), "jordan"),
    ],
)
def test_an_option_that_acts_only_under_a_switch_is_refused_without_it(table, given, switch):
    """An option given while the switch it acts under is off would be ignored: refused, naming both, before any
    statistics; with the switch on it is taken, and an option left at its default is never refused."""
    (keyword,) = given
    with pytest.raises(OptionError, match=rf"`{keyword}=` acts only with `{switch}=True`") as err:
        evaluate(table, **FAST, **given)
    assert err.value.keyword == keyword
    assert getattr(as_options(**given, **{switch: True}), keyword) is not None
    assert as_options(AnalysisOptions(**given), seed=1).seed == 1  # an options object is taken as it is
