"""Issue 23: every interval method on every table, invariant to row order and scale; the degenerate cases."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from rl_reliable_logger import OptionError, ScoreTable, evaluate
from rl_reliable_logger.stats import intervals

FAST = dict(reps=400, profile_reps=150, improvement_reps=150, seed=3, metrics=["iqm", "mean", "median"])
TABLES = ("aggregates", "differences", "improvement", "per_task", "profiles", "gap_curve")


def _frame(runs=4, tasks=("x", "y", "z"), algorithms=("A", "B", "C"), seed=5):
    rng = np.random.default_rng(seed)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(rng.lognormal(0.3 * i, 1.0))}
        for i, a in enumerate(algorithms)
        for t in tasks
        for s in range(runs)
    ]
    return pd.DataFrame(rows)


VALUES = ("point", "low", "high", "fraction", "mean", "median", "min", "max")


def _endpoints(report) -> dict[str, np.ndarray]:
    """Each table's (low, high), rows in a canonical order (the input's algorithm order sets the table's)."""
    out = {}
    for name in TABLES:
        frame = report.table(name)
        keys = [c for c in frame.columns if c not in VALUES]
        out[name] = frame.sort_values(keys, kind="stable")[["low", "high"]].to_numpy(float)
    return out


@pytest.mark.parametrize("method", intervals.METHODS)
def test_row_order_and_scale_change_no_endpoint(method):
    df = _frame()
    base = evaluate(ScoreTable(df), method=method, **FAST)
    # rows shuffled (algorithms kept in their order of first appearance, which orients the pair tables)
    rows = df.sample(frac=1.0, random_state=1).sort_values("algorithm", kind="stable")
    shuffled = evaluate(ScoreTable(rows), method=method, **FAST)
    scaled_df = df.assign(score=df["score"] * 3.0)
    # the same τ and γ grids, scaled, so that profiles and gap curves are comparable
    taus = np.linspace(0, 5, 11)
    ref = evaluate(ScoreTable(df), method=method, taus=taus, **FAST)
    scaled = evaluate(ScoreTable(scaled_df), method=method, taus=taus * 3.0, **FAST)
    unit = float(df["score"].abs().max())
    for name, ends in _endpoints(base).items():
        np.testing.assert_allclose(_endpoints(shuffled)[name], ends, rtol=1e-12, atol=1e-12 * unit, err_msg=name)
    for name in ("aggregates", "differences", "improvement", "per_task", "profiles"):
        factor = 1.0 if name in ("improvement", "profiles") else 3.0
        np.testing.assert_allclose(
            _endpoints(scaled)[name], factor * _endpoints(ref)[name], rtol=1e-12, atol=3e-12 * unit, err_msg=name
        )


def test_bootstrap_t_never_gives_a_zero_width_interval_and_says_it_fell_back():
    df = pd.DataFrame({"algorithm": "A", "task": "x", "seed": [0, 1], "score": [0.2, 0.9]})
    report = evaluate(ScoreTable(df), method="bootstrap-t", **FAST)
    row = report.aggregates.set_index("metric").loc["mean"]
    assert row["high"] - row["low"] > 0.5  # the expanded interval of two runs, [0.2, 0.9]
    assert any("bootstrap-t" in w and "expanded" in w for w in report.warnings)
    assert report.provenance["interval_fallbacks"]


def test_bca_works_on_a_single_task():
    df = _frame(runs=5, tasks=("only",))
    report = evaluate(ScoreTable(df), method="bca", **FAST)
    agg = report.aggregates
    assert ((agg["low"] <= agg["point"]) & (agg["point"] <= agg["high"])).all()
    assert (agg["high"] > agg["low"]).all()


def test_bca_with_one_run_per_cell_is_refused_naming_the_option():
    df = _frame(runs=1)
    with pytest.raises(OptionError, match=r"`method='bca'`.*one run per task") as err:
        evaluate(ScoreTable(df), method="bca", **FAST)
    assert err.value.keyword == "method"


@pytest.mark.parametrize("method", intervals.METHODS)
def test_provenance_records_each_tables_method(method):
    report = evaluate(ScoreTable(_frame()), method=method, **FAST)
    recorded = {t: r["method"] for t, r in report.provenance["intervals"].items()}
    rule = intervals.table_rule(method)
    assert recorded == {t: rule[t] for t in TABLES}
    assert set(recorded) == set(TABLES)
    assert recorded["aggregates"] == method


def test_expanded_widens_every_table_it_names():
    df = _frame(runs=3)
    pct = evaluate(ScoreTable(df), method="percentile", **FAST)
    exp = evaluate(ScoreTable(df), method="expanded", **FAST)
    for name in ("aggregates", "differences", "improvement", "gap_curve"):
        w_pct = np.diff(_endpoints(pct)[name], axis=1).sum()
        w_exp = np.diff(_endpoints(exp)[name], axis=1).sum()
        assert w_exp > 1.05 * w_pct, name


def test_bootstrap_t_studentizes_the_mean_iqm_and_gap_differences_normal_median_and_expands_the_others():
    df = _frame(runs=5)
    # the method's rule for the median (median_interval=method; auto gives 5 runs per task the order-statistic one)
    options = {**FAST, "metrics": ["iqm", "mean", "median", "optimality_gap", "dp25"], "median_interval": "method"}
    boot_t = evaluate(ScoreTable(df), method="bootstrap-t", **options)
    expanded = evaluate(ScoreTable(df), method="expanded", **options)
    assert boot_t.provenance["intervals"]["differences"]["method"] == "bootstrap-t"
    a = boot_t.differences[boot_t.differences["metric"] == "dp25"][["low", "high"]].to_numpy()
    b = expanded.differences[expanded.differences["metric"] == "dp25"][["low", "high"]].to_numpy()
    assert a.shape == (3, 2)
    np.testing.assert_array_equal(a, b)
    # the median and its differences: a normal interval, symmetric about the estimate, not the expanded one
    for name in ("aggregates", "differences"):
        med = boot_t.table(name)[boot_t.table(name)["metric"] == "median"]
        other = expanded.table(name)[expanded.table(name)["metric"] == "median"]
        np.testing.assert_allclose(med["high"] - med["point"], med["point"] - med["low"], rtol=1e-9)
        assert not np.allclose(med[["low", "high"]].to_numpy(), other[["low", "high"]].to_numpy())
    for metric in ("mean", "iqm", "optimality_gap"):  # studentized: not the expanded interval, around the estimate
        own = boot_t.differences[boot_t.differences["metric"] == metric]
        other = expanded.differences[expanded.differences["metric"] == metric]
        assert not np.allclose(own[["low", "high"]].to_numpy(), other[["low", "high"]].to_numpy())
        assert ((own["low"] < own["point"]) & (own["point"] < own["high"])).all()


def test_the_means_caveat_speaks_where_the_skew_warning_did_and_no_warning_repeats_it():
    """One rule per cell (issue 52): the mean's right tail is the caveat's (the share of the mean above the runs'
    medians, one task's share of the mean), never a warning beside it."""
    from rl_reliable_logger.analysis import caveats as cv

    rng = np.random.default_rng(9)
    rows = [
        {"algorithm": a, "task": f"t{m}", "seed": s, "score": float(score)}
        for a in ("heavy", "calm", "lone")
        for m in range(6)
        for s, score in enumerate(rng.lognormal(0.0, 0.3, 5) if a == "heavy" else rng.normal(1.0, 0.05, 5))
    ]
    df = pd.DataFrame(rows)
    # every task of the heavy algorithm has one rare huge run that carries its mean; "lone" has one such task
    df.loc[(df["algorithm"] == "heavy") & (df["seed"] == 0), "score"] = 400.0
    df.loc[(df["algorithm"] == "lone") & (df["seed"] == 0) & (df["task"] == "t0"), "score"] = 400.0
    report = evaluate(ScoreTable(df), method="bootstrap-t", **FAST)
    mean = report.aggregates[report.aggregates["metric"] == "mean"].set_index("algorithm")["caveat"]
    assert mean.to_dict() == {"heavy": cv.REASONS["above_median"], "calm": "", "lone": cv.REASONS["top"]}
    diff = report.differences[report.differences["metric"] == "mean"].set_index(["algorithm_x", "algorithm_y"])
    assert diff.loc[("calm", "heavy"), "caveat"] == cv.REASONS["above_median"]
    assert not any("may under-cover" in w or "skewed" in w for w in report.warnings)
    assert "mean_skewness" not in report.provenance


def test_bootstrap_t_gives_per_task_means_the_student_t_interval():
    df = _frame(runs=3)
    report = evaluate(ScoreTable(df), method="bootstrap-t", **FAST)
    assert report.provenance["intervals"]["per_task"]["method"] == "student-t"
    for row in report.per_task.itertuples():
        runs = df[(df["algorithm"] == row.algorithm) & (df["task"] == row.task)]["score"].to_numpy()
        # each task's standard deviation at least the median of its algorithm's tasks' (TASK_SPREAD_FLOOR = 1)
        variances = df[df["algorithm"] == row.algorithm].groupby("task")["score"].var(ddof=1)
        scale = max(scipy.stats.sem(runs), np.sqrt(np.median(variances) / runs.size))
        ref = scipy.stats.t.interval(0.95, runs.size - 1, loc=runs.mean(), scale=scale)
        assert (row.low, row.high) == pytest.approx(ref, rel=1e-12)
    widened = 0
    for row in report.per_task.itertuples():
        runs = df[(df["algorithm"] == row.algorithm) & (df["task"] == row.task)]["score"].to_numpy()
        plain = scipy.stats.t.interval(0.95, runs.size - 1, loc=runs.mean(), scale=scipy.stats.sem(runs))
        widened += row.high - row.low > (plain[1] - plain[0]) * (1 + 1e-9)
    assert 0 < widened < len(report.per_task)  # the tasks below the median spread, not every task
