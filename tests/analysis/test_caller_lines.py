"""Warnings point at the caller's line on every public entry (the first line outside the package), and a
dependency's warning that we cause is not passed through (issue 45)."""

from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger
from rl_reliable_logger import ReliabilityWarning, ScoreTable, evaluate
from rl_reliable_logger.rliable.report import to_report

PACKAGE = os.path.dirname(rl_reliable_logger.__file__)
FAST = {"reps": 200, "profile_reps": 50, "improvement_reps": 50, "seed": 0}


def _few_runs() -> pd.DataFrame:  # 2 runs per cell: warned about, whatever the entry
    rng = np.random.default_rng(0)
    rows = [(a, t, s, float(rng.uniform())) for a in "AB" for t in ("x", "y") for s in range(2)]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def _ours(seen) -> list:
    return [w for w in seen if issubclass(w.category, ReliabilityWarning)]


def test_evaluate_and_to_report_warn_at_the_callers_line():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        evaluate(ScoreTable(_few_runs()), **FAST)
        line = inspect.currentframe().f_lineno - 1
    assert _ours(seen) and {(w.filename, w.lineno) for w in _ours(seen)} == {(__file__, line)}

    scores = {a: np.random.default_rng(i).uniform(size=(2, 3)) for i, a in enumerate("AB")}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = to_report(scores, reps=200, profile_reps=50, improvement_reps=50)
        line = inspect.currentframe().f_lineno - 1
    assert _ours(seen) and {(w.filename, w.lineno) for w in _ours(seen)} == {(__file__, line)}
    # rliable's matrices are normalised already: no "not normalised" warning about them
    assert not any("not normalised" in w for w in report.warnings), report.warnings


def test_publish_mlflow_passes_no_warning_of_mlflow_or_ours_through(tmp_path):
    pytest.importorskip("mlflow")
    from rl_reliable_logger import PublishOptions, publish_mlflow
    from tests.support.mlflow_store import make_store

    uri = make_store(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(ScoreTable(_few_runs()), **FAST)  # integer seeds: MLflow's integer-schema hint
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        publish_mlflow(report, tracking_uri=uri, experiment="warnings", publishing=PublishOptions(figures=False))
    mlflow_dir = os.path.dirname(__import__("mlflow").__file__)
    passed = [(w.category.__name__, w.filename, str(w.message)[:120]) for w in seen]
    assert not [w for w in passed if w[1].startswith((mlflow_dir, PACKAGE))], passed


def test_race_and_watch_warn_at_the_callers_line(tmp_path):
    """What reading the runs found (here: unequal runs per task) is warned about by ``race()`` and ``watch()``
    too, at the line that called them (they were silent: a table built inside ``race()`` lost its warnings)."""
    from rl_reliable_logger import race, watch

    frame = _few_runs()
    frame = pd.concat([frame, frame.iloc[:1].assign(seed=9)], ignore_index=True)  # A / x has 3 runs, the rest 2
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        watch(ScoreTable(frame), tmp_path / "watch", looks=3, max_runs=6, reps=200)
        line = inspect.currentframe().f_lineno - 1
    assert any("runs per task differ within A" in str(w.message) for w in _ours(seen)), [str(w.message) for w in seen]
    assert {(w.filename, w.lineno) for w in _ours(seen)} == {(__file__, line)}

    configs = pd.concat([frame.assign(lr=0.1), frame.assign(lr=0.01, score=frame["score"] + 1)], ignore_index=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        race(configs, tmp_path / "race", looks=3, max_runs=6, hyperparameter_keys=["lr"], reps=200)
        line = inspect.currentframe().f_lineno - 1
    assert any("runs per task differ within A" in str(w.message) for w in _ours(seen)), [str(w.message) for w in seen]
    assert {(w.filename, w.lineno) for w in _ours(seen)} == {(__file__, line)}
