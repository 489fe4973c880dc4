"""Issue 43 item 4: every keyword rliable 1.2 and arch's ``conf_int`` accept is accepted (or refused with a
sentence naming it), float32 scores take the vectorised path, and ``reps=0`` is refused in one sentence."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.rliable import library as rly
from rl_reliable_logger.rliable import metrics

SCORES = np.random.default_rng(0).gamma(2.0, 0.5, size=(5, 10))


def test_reuse_takes_the_previous_replicates_for_the_same_function_and_count() -> None:
    boot = rly.StratifiedBootstrap(SCORES, random_state=1)
    first = boot.conf_int(metrics.aggregate_iqm, reps=400, method="percentile")
    basic = boot.conf_int(metrics.aggregate_iqm, reps=400, method="basic", reuse=True)
    point = metrics.aggregate_iqm(SCORES)
    np.testing.assert_allclose(basic[:, 0], 2 * point - first[::-1, 0], rtol=1e-12)  # the same replicates
    again = boot.conf_int(metrics.aggregate_iqm, reps=400, method="percentile")  # no reuse: new draws
    assert not np.array_equal(again, first)
    other = boot.conf_int(metrics.aggregate_iqm, reps=300, method="percentile", reuse=True)  # another count: drawn
    assert other.shape == (2, 1)


def test_reuse_follows_apply_as_in_arch() -> None:
    boot = rly.StratifiedBootstrap(SCORES, random_state=2)
    results = boot.apply(metrics.aggregate_mean, 300)
    ci = boot.conf_int(metrics.aggregate_mean, reps=300, method="percentile", reuse=True)
    np.testing.assert_allclose(ci[:, 0], np.percentile(results[:, 0], [2.5, 97.5]), rtol=1e-12)


def test_studentized_with_a_standard_error_function() -> None:
    se = lambda params, x: np.array([np.std(x.mean(axis=0), ddof=1) / np.sqrt(x.shape[1])])
    boot = rly.StratifiedBootstrap(SCORES, random_state=3)
    ci = boot.conf_int(metrics.aggregate_mean, reps=400, method="studentized", std_err_func=se)
    point = metrics.aggregate_mean(SCORES)
    assert ci.shape == (2, 1) and ci[0, 0] < point < ci[1, 0]


def test_studentized_by_a_nested_bootstrap() -> None:
    boot = rly.StratifiedIndependentBootstrap(SCORES, SCORES[:4] + 0.1, random_state=4)
    ci = boot.conf_int(metrics.probability_of_improvement, reps=60, method="studentized", studentize_reps=40)
    point = metrics.probability_of_improvement(SCORES, SCORES[:4] + 0.1)
    assert ci.shape == (2, 1) and ci[0, 0] <= point <= ci[1, 0]


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"sampling": "semi-parametric"}, "sampling='semi-parametric'"),
        ({"sampling": "parametric"}, "sampling='parametric'"),
        ({"reps": 0}, "reps must be a positive whole number"),
        ({"method": "studentized", "studentize_reps": 0}, "studentize_reps must be a positive whole number"),
    ],
)
def test_what_the_drop_in_refuses_it_names(kwargs, names) -> None:
    with pytest.raises(ValueError, match=names.replace("(", r"\(")):
        rly.StratifiedBootstrap(SCORES, random_state=0).conf_int(metrics.aggregate_mean, **{"reps": 10, **kwargs})


def test_zero_replicates_is_one_sentence_everywhere() -> None:
    for call in (
        lambda: rly.get_interval_estimates({"a": SCORES}, metrics.aggregate_mean, reps=0),
        lambda: rly.create_performance_profile({"a": SCORES}, [0.5, 1.0], reps=0),
        lambda: rly.StratifiedBootstrap(SCORES).apply(metrics.aggregate_mean, 0),
    ):
        with pytest.raises(ValueError, match="reps must be a positive whole number"):
            call()


def test_score_distributions_take_tau_as_rliable_does() -> None:
    taus = np.array([0.5, 1.0, 2.0])
    expected = np.array([np.mean(SCORES > t) for t in taus])
    np.testing.assert_array_equal(rly.score_distributions(SCORES, tau=taus), expected)
    np.testing.assert_array_equal(rly.score_distributions(SCORES, taus), expected)
    np.testing.assert_array_equal(rly.score_distributions(SCORES, tau_list=taus), expected)
    means = SCORES.mean(axis=0)
    np.testing.assert_array_equal(rly.average_score_distributions(SCORES, tau=taus), [np.mean(means > t) for t in taus])
    assert float(rly.score_distributions(SCORES, 1.0)) == np.mean(SCORES > 1.0)
    with pytest.raises(TypeError, match="thresholds once"):
        rly.score_distributions(SCORES, taus, tau_list=taus)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_lower_precision_scores_take_the_vectorised_path(dtype) -> None:
    """float32 input took the per-replicate path (64x slower): ``func`` on float32 arrays rounds differently from
    the plan, which computes in float64. Now ``func`` is called on arrays only for the estimate."""
    calls = []

    def iqm(x):
        if isinstance(x, np.ndarray):
            calls.append(x.dtype)
        return metrics.aggregate_iqm(x)

    data = (SCORES * (10 if dtype is np.int64 else 1)).astype(dtype)
    ci = rly.StratifiedBootstrap(data, random_state=5).conf_int(iqm, reps=500, method="percentile")
    assert len(calls) == 1 and ci[0, 0] < metrics.aggregate_iqm(data) < ci[1, 0]
    wide = rly.StratifiedBootstrap(data.astype(np.float64), random_state=5).conf_int(iqm, reps=500, method="percentile")
    np.testing.assert_allclose(ci, wide, rtol=1e-3)  # the float64 computation of the same replicates


def test_a_different_function_is_still_called_per_replicate_for_float32() -> None:
    """The looser agreement for float32 still tells a function the plan does not compute from one it does."""
    calls = []

    def shifted(x):
        if isinstance(x, np.ndarray):
            calls.append(1)
            return metrics.aggregate_mean(x) + 1e-2 * float(x.max())  # not a recognised combination
        return metrics.aggregate_mean(x) + 1e-2 * x.max()

    rly.StratifiedBootstrap(SCORES.astype(np.float32), random_state=6).conf_int(shifted, reps=50, method="percentile")
    assert len(calls) > 1
