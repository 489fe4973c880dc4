"""The library API validates its arguments like the CLI: ``evaluate()`` takes what a user would pass or says what
it needs; ``log_final_score`` refuses unusable arguments with ``ValueError`` at the call, before anything is written.
Never an AttributeError, OverflowError, RuntimeError or TypeError from deep inside."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import evaluate, log_final_score
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError
from tests.support.mlflow_store import make_store, mlflow, use_store

FAST = {"reps": 100, "profile_reps": 50, "improvement_reps": 50, "seed": 0}


def _long() -> pd.DataFrame:
    return pd.DataFrame(
        {"algorithm": ["A"] * 4 + ["B"] * 4, "task": ["x", "x", "y", "y"] * 2, "seed": [0, 1] * 4,
         "score": [1.0, 2, 3, 4, 2, 3, 4, 5]}
    )  # fmt: skip


# ------------------------------------------------------------------------------------------ evaluate()
def test_evaluate_reads_a_long_dataframe_and_a_path_like_a_score_table(tmp_path):
    want = evaluate(ScoreTable(_long()), **FAST).aggregates
    pd.testing.assert_frame_equal(evaluate(_long(), **FAST).aggregates, want)
    path = tmp_path / "scores.csv"
    _long().to_csv(path, index=False)
    pd.testing.assert_frame_equal(evaluate(path, **FAST).aggregates, want)
    pd.testing.assert_frame_equal(evaluate(str(path), **FAST).aggregates, want)


@pytest.mark.parametrize(
    "given, says",
    [
        (None, r"not NoneType"),
        (
            {"A": {"x": [1.0, 2.0]}},
            r"not dict; for \{algorithm: \{task: \[score per run\]\}\} use ScoreTable\.from_nested",
        ),
        (3.5, r"not float"),
        ([1.0, 2.0], r"not list"),
    ],
)
def test_evaluate_says_what_it_needs(given, says):
    with pytest.raises(InputError, match=r"evaluate\(\) needs the scores as a ScoreTable, a pandas DataFrame.*" + says):
        evaluate(given, **FAST)


def test_evaluate_refuses_a_bad_dataframe_or_path_like_the_cli(tmp_path):
    with pytest.raises(InputError, match=r"unknown column\(s\)"):
        evaluate(pd.DataFrame({"a": [1]}), **FAST)
    with pytest.raises(InputError, match=r"empty or missing algorithm name"):
        evaluate(_long().assign(algorithm=["A", "", "A", "A", "B", "B", "B", "B"]), **FAST)
    with pytest.raises(InputError, match=r"no such file"):
        evaluate(tmp_path / "missing.csv", **FAST)


# ------------------------------------------------------------------------------------ log_final_score
class _NotCallableItem:
    item = 3  # `.item` that is not a method


class _TwoElementTensor:
    """What torch does: ``.size()`` is a method and ``.item()`` raises RuntimeError for two elements."""

    def size(self):
        return (2,)

    def item(self):
        raise RuntimeError("a Tensor with 2 elements cannot be converted to Scalar")


BAD_CALLS = {
    "int_beyond_float": ({"score": 10**400}, r"beyond the range of a float"),
    "negative_int_beyond_float": ({"score": -(10**400)}, r"beyond the range of a float"),
    "inf": ({"score": float("inf")}, r"non-finite"),
    "nan": ({"score": float("nan")}, r"non-finite"),
    "two_element_array": ({"score": np.array([1.0, 2.0])}, r"one number, got a ndarray of 2 elements"),
    "two_element_tensor": ({"score": _TwoElementTensor()}, r"one number"),
    "item_not_callable": ({"score": _NotCallableItem()}, r"must be a real number"),
    "newline_algorithm": ({"algorithm": "PP\nO"}, r"algorithm 'PP\\nO' holds a control character \(U\+000A\)"),
    "rtl_override_task": ({"task": "a\u202eb"}, r"task .* control character \(U\+202E\)"),
    "nul_seed_label": ({"seed": "s\x00"}, r"seed .* control character \(U\+0000\)"),
}


@pytest.mark.parametrize("case", list(BAD_CALLS), ids=list(BAD_CALLS))
def test_log_final_score_refuses_at_the_call_and_writes_nothing(case, tmp_path, monkeypatch):
    changes, says = BAD_CALLS[case]
    kwargs = {"score": 1.0, "algorithm": "PPO", "task": "Hopper", "seed": 1, **changes}
    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("refuse")
        with mlflow.start_run() as run:
            with pytest.raises(ValueError, match=says):
                log_final_score(kwargs.pop("score"), **kwargs)
        got = mlflow.MlflowClient(uri).get_run(run.info.run_id)
    assert not [k for k in got.data.metrics if k.startswith("rl_reliable")], got.data.metrics
    assert not [k for k in got.data.tags if k.startswith("rl_reliable")], got.data.tags
    assert not (tmp_path / "rl-reliable-pending").exists()


def test_one_element_arrays_and_numpy_scalars_are_still_accepted():
    from rl_reliable_logger.trackers.base.final_score import check_final_score

    for score in (np.float32(2.5), np.array(2.5), np.array([2.5])):
        assert check_final_score(score, algorithm="A", task="t", seed=np.int64(0)).score == 2.5


# ---------------------------------------------------------------------------------- custom metrics
def test_a_custom_metric_returning_nan_is_said_not_a_silent_nan(monkeypatch):
    from rl_reliable_logger.stats import registry

    monkeypatch.setitem(registry.METRICS, "nanny", registry.METRICS["mean"])  # restored after the test
    registry.register("nanny", lambda r: np.full(r.task_means().shape[0], np.nan))
    report = evaluate(_long(), metrics=["mean", "nanny"], **FAST)
    said = [w for w in report.warnings if "is NaN" in w]
    assert said == [
        f"{alg}: metric 'nanny' is NaN (its function returned NaN on these scores, e.g. an empty slice or 0/0); "
        "its point and interval mean nothing: fix the metric or leave it out"
        for alg in ("A", "B")
    ], report.warnings
    assert not [w for w in evaluate(_long(), **FAST).warnings if "is NaN" in w]
