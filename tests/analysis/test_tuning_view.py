"""Issue 42: the tuning view (``hyperparameter_keys``) gets the whole resampling request, like every table: its
intervals follow the interval method, task resampling and the median's interval option, and provenance records
its method, which the sentences say. Issue 42 item 3: ``evaluate()`` reads a sweep's DataFrame like the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import OptionError, ScoreTable, evaluate
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render.methods import methods_markdown
from rl_reliable_logger.stats import intervals
from tests.support.cli import run_cli

FAST = dict(reps=300, profile_reps=60, improvement_reps=60, seed=1)


def _sweep() -> pd.DataFrame:
    """Two algorithms, three tasks, two learning rates of four seeds each (the seeds repeat across rates)."""
    rng = np.random.default_rng(4)
    rows = [
        {"algorithm": a, "task": t, "seed": s, "lr": lr, "score": float(rng.lognormal(0.2 * (a == "B") + lr, 0.6))}
        for a in "AB"
        for t in "xyz"
        for lr in (0.01, 0.1)
        for s in range(4)
    ]
    return pd.DataFrame(rows)


def _tuning(method: str, **options) -> Report:
    return evaluate(_sweep(), hyperparameter_keys=["lr"], method=method, **FAST, **options)


def test_the_tuning_intervals_follow_the_method_and_are_recorded():
    ends = {}
    for method in ("percentile", "basic", "bootstrap-t"):
        report = _tuning(method)
        tuning = report.extra["tuning"]
        ends[method] = tuning[["low", "high"]].to_numpy(float)
        record = report.provenance["intervals"]["tuning"]
        assert record["method"] == method and record["level"] == 0.95
        assert record["replicates"] == report.provenance["tuning"]["reps"] == FAST["reps"]
        # the tuning view's statistic gets the aggregates' rule: under bootstrap-t the IQM's interval is studentized
        assert record.get("statistics") == ({"iqm": "bootstrap-t"} if method == "bootstrap-t" else None)
        # the same points whatever the method: only the intervals follow it
        np.testing.assert_array_equal(tuning["point"], _tuning("percentile").extra["tuning"]["point"])
    assert not np.array_equal(ends["percentile"], ends["basic"])
    assert not np.array_equal(ends["percentile"], ends["bootstrap-t"])
    # basic is the percentile interval reflected about the estimate
    point = _tuning("basic").extra["tuning"]["point"].to_numpy(float)
    np.testing.assert_allclose(ends["basic"][:, 0], 2 * point - ends["percentile"][:, 1], rtol=1e-12)


def test_the_tuning_intervals_follow_task_resampling_and_the_median_option():
    plain = _tuning("percentile").extra["tuning"]
    tasks = _tuning("percentile", task_bootstrap=True).extra["tuning"]
    assert not np.array_equal(plain[["low", "high"]].to_numpy(), tasks[["low", "high"]].to_numpy())
    median = _tuning("percentile", tuning_metric="median", median_interval="order-statistic")
    record = median.provenance["intervals"]["tuning"]
    assert record["statistics"] == {"median": "order-statistic"}
    usual = _tuning("percentile", tuning_metric="median").extra["tuning"]
    assert not np.array_equal(usual[["low", "high"]].to_numpy(), median.extra["tuning"][["low", "high"]].to_numpy())


def test_methods_md_says_the_tuning_views_intervals():
    text = methods_markdown(_tuning("basic"))  # the Details section: every table's interval clause
    phrase = intervals.get("basic").phrase
    assert f"{intervals.TABLE_WORDS['tuning']}: {phrase} intervals (300 bootstrap replicates)" in text


def test_every_table_with_interval_columns_is_recorded():
    report = evaluate(
        _sweep(), hyperparameter_keys=["lr"], jordan=True, jordan_method="pbp-t", comparisons=True, **FAST
    )
    recorded = set(report.provenance["intervals"])
    with_intervals = {  # every table holding intervals (curves.csv is empty without curves=True)
        name
        for name, frame in report.tables()
        if not frame.empty and ({"low", "high"} <= set(frame.columns) or "cdf_low" in frame.columns)
    }
    assert with_intervals and with_intervals <= recorded
    assert report.provenance["intervals"]["jordan"]["level"] == pytest.approx(1 - report.provenance["jordan"]["delta"])


def test_evaluate_reads_a_sweeps_dataframe_like_the_command_line(tmp_path, capsys):
    frame = _sweep()
    report = evaluate(frame, hyperparameter_keys=["lr"], **FAST)  # was a duplicate-seed error
    given = evaluate(ScoreTable(frame, hyperparameter_keys=["lr"]), hyperparameter_keys=["lr"], **FAST)
    path = tmp_path / "sweep.csv"
    frame.to_csv(path, index=False)
    from_file = evaluate(path, hyperparameter_keys=["lr"], **FAST)
    out = tmp_path / "out"
    stats = [f"--{k.replace('_', '-')}={v}" for k, v in FAST.items()]
    code, _, err = run_cli(
        capsys, "evaluate", path, "--hyperparameter-keys", "lr", *stats, "--no-figures", "--out", out
    )
    assert code == 0, err
    cli = Report.load(out)
    for name in ("aggregates", "per_task", "tuning"):
        for other in (given, from_file, cli):
            pd.testing.assert_frame_equal(report.table(name), other.table(name), check_dtype=False)


def test_evaluate_takes_the_field_options_of_the_command_line():
    frame = _sweep().rename(columns={"algorithm": "algo", "score": "ret"})
    frame["run"] = [f"r{i}" for i in range(len(frame))]
    report = evaluate(frame, algorithm_key="algo", score_key="ret", run_key="run", hyperparameter_keys=["lr"], **FAST)
    assert report.algorithms == ["A", "B"]
    with pytest.raises(OptionError, match="`run_key=` says how to read a DataFrame or a file"):
        evaluate(ScoreTable(_sweep(), hyperparameter_keys=["lr"]), run_key="run", **FAST)
