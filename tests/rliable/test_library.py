"""The drop-in's library and metrics: every behaviour rliable 1.2's own test suite checks (its library_test.py and
metrics_test.py, restated here in our words), plus the fast path against the per-replicate path, rliable's
interval rules and reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.rliable import library as rly
from rl_reliable_logger.rliable import metrics


@pytest.fixture
def arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.arange(5 * 16).reshape(5, 16)
    return x, np.flip(x, axis=0), np.stack([x, 2 * x], axis=-1)


def four(x):
    return np.array(
        [
            metrics.aggregate_iqm(x),
            metrics.aggregate_mean(x),
            metrics.aggregate_median(x),
            metrics.aggregate_optimality_gap(x),
        ]
    )


# ---------------------------------------------------------------- rliable's metrics_test
def test_aggregate_metrics_values() -> None:
    x = np.array([[1, 2], [2, 2], [1, 1], [2, 1]])
    y = np.array([[1, 1], [2, 2], [3, 3]])
    for fn in (metrics.aggregate_median, metrics.aggregate_mean, metrics.aggregate_iqm):
        assert fn(x) == 1.5
        assert fn(y) == 2
    assert metrics.probability_of_improvement(x, y) == pytest.approx(1 / 3)
    assert metrics.aggregate_optimality_gap(y, gamma=2) == pytest.approx(2 - 5 / 3)


def test_probability_of_improvement_ties_and_equal_arrays() -> None:
    x = np.array([[1.0, 5.0], [2.0, 5.0]])
    assert metrics.probability_of_improvement(x, x) == 0.5
    assert metrics.probability_of_improvement(x + 10, x) == 1.0


# ---------------------------------------------------------------- rliable's library_test
@pytest.mark.parametrize("task_bootstrap", [False, True])
def test_stratified_bootstrap_index(arrays, task_bootstrap) -> None:
    x, y, z = arrays
    bs = rly.StratifiedBootstrap(x, y=y, z=z, task_bootstrap=task_bootstrap, random_state=1)
    seen = 0
    for data, kwdata in bs.bootstrap(5):
        index = bs.index
        assert len(data) == 1 and sorted(kwdata) == ["y", "z"]
        np.testing.assert_array_equal(x[index], data[0])
        np.testing.assert_array_equal(y[index], kwdata["y"])
        np.testing.assert_array_equal(z[index], kwdata["z"])
        np.testing.assert_array_equal(y[index], bs.y)
        np.testing.assert_array_equal(z[index], bs.z)
        # runs are redrawn within each task column; without task resampling every column keeps its task
        assert index[0].shape == x.shape and ((index[0] >= 0) & (index[0] < 5)).all()
        if not task_bootstrap:
            np.testing.assert_array_equal(index[1], np.arange(16)[None, :])
        seen += 1
    assert seen == 5


def test_task_bootstrap_resamples_tasks(arrays) -> None:
    x, _, _ = arrays
    bs = rly.StratifiedBootstrap(x, task_bootstrap=True, random_state=2)
    tasks = [bs.index[1].ravel().copy() for _ in bs.bootstrap(20)]
    assert any(len(set(t)) < 16 for t in tasks)  # some task drawn twice


def test_stratified_independent_bootstrap_index(arrays) -> None:
    x, y, z = arrays
    bs = rly.StratifiedIndependentBootstrap(x, y=y[:3], z=z, random_state=1)
    for data, kwdata in bs.bootstrap(2):
        assert isinstance(bs.index, tuple)
        index_x, kw_index = bs.index
        assert len(data) == 1 and sorted(kwdata) == ["y", "z"]
        np.testing.assert_array_equal(x[index_x[0]], data[0])
        np.testing.assert_array_equal(y[:3][kw_index["y"]], kwdata["y"])
        np.testing.assert_array_equal(z[kw_index["z"]], kwdata["z"])
        np.testing.assert_array_equal(y[:3][kw_index["y"]], bs.y)
        assert kwdata["y"].shape == (3, 16) and kwdata["z"].shape == z.shape


@pytest.mark.parametrize(
    ("method", "task_bootstrap"), [("percentile", False), ("basic", True), ("bc", False), ("bca", False)]
)
def test_interval_estimation(arrays, method, task_bootstrap) -> None:
    x, y, _ = arrays
    score_dict = {"method": x, "baseline": y}
    points, cis = rly.get_interval_estimates(score_dict, four, method=method, task_bootstrap=task_bootstrap, reps=100)
    for key, scores in score_dict.items():
        lower, upper = cis[key]
        assert cis[key].shape == (2, 4)
        np.testing.assert_array_equal(points[key], four(scores))
        np.testing.assert_array_less(lower, points[key])
        np.testing.assert_array_less(points[key], upper)


@pytest.mark.parametrize("use_score_distribution", [True, False])
def test_performance_profiles(arrays, use_score_distribution) -> None:
    x, y, _ = arrays
    taus = [0.0, 0.25, 0.5, 1.0]
    profiles, cis = rly.create_performance_profile(
        {"x": x, "y": y}, taus, use_score_distribution=use_score_distribution, reps=100
    )
    for key in ("x", "y"):
        assert isinstance(profiles[key], np.ndarray) and len(profiles[key]) == len(taus)
        np.testing.assert_array_equal(profiles[key], sorted(profiles[key], reverse=True))
        assert cis[key].shape == (2, len(taus))


def test_improvement_probability_cis(arrays) -> None:
    x, y, _ = arrays
    points, cis = rly.get_interval_estimates({"x,y": [x, y]}, metrics.probability_of_improvement, reps=100)
    lower, upper = cis["x,y"]
    assert cis["x,y"].shape == (2, 1)  # one number per pair: rliable's (2, 1)
    np.testing.assert_array_equal(points["x,y"], metrics.probability_of_improvement(x, y))
    np.testing.assert_array_less(lower, points["x,y"])
    np.testing.assert_array_less(points["x,y"], upper)


# ---------------------------------------------------------------- the fast path
def per_replicate(func):
    """``func`` hidden from the tracer: the arrays reach it as plain arrays only."""
    return lambda *a: func(*(np.asarray(v) for v in a))


rng = np.random.default_rng(7)
MATRIX = rng.normal(size=(6, 9))
CUBE = rng.normal(size=(4, 7, 3))
TAUS = np.linspace(-1.5, 1.5, 13)
FUNCS = {
    "mean": metrics.aggregate_mean,
    "median": metrics.aggregate_median,
    "iqm": metrics.aggregate_iqm,
    "optimality_gap": metrics.aggregate_optimality_gap,
    "gap_gamma_half": lambda x: metrics.aggregate_optimality_gap(x, gamma=0.5),
    "four": four,
    "composed": lambda x: np.array([1 - metrics.aggregate_mean(x) * 2, metrics.aggregate_iqm(x) / 3 + 1]),
    "tuple_output": lambda x: (metrics.aggregate_median(x), -metrics.aggregate_iqm(x)),
    "run_profile": lambda x: rly.score_distributions(x, TAUS),
    "task_profile": lambda x: rly.average_score_distributions(x, TAUS),
}
CURVE_FUNCS = {
    "readme_iqm_curve": lambda s: np.array([metrics.aggregate_iqm(s[..., f]) for f in range(s.shape[-1])]),
    "mean_curve_colon": lambda s: np.array([metrics.aggregate_mean(s[:, :, f]) for f in range(s.shape[2])]),
    "two_columns_difference": lambda s: metrics.aggregate_iqm(s[..., 2]) - metrics.aggregate_iqm(s[..., 0]),
}


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("name", sorted(FUNCS) + sorted(CURVE_FUNCS))
def test_fast_path_equals_per_replicate_path(name, task_bootstrap) -> None:
    func = FUNCS.get(name) or CURVE_FUNCS[name]
    data = MATRIX if name in FUNCS else CUBE
    fast_boot = rly.StratifiedBootstrap(data, random_state=11, task_bootstrap=task_bootstrap)
    assert fast_boot._plan(func, None, func(data)) is not None, "not recognised: the test would not test the fast path"
    fast = fast_boot.apply(func, 150)
    slow = rly.StratifiedBootstrap(data, random_state=11, task_bootstrap=task_bootstrap).apply(per_replicate(func), 150)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


def test_fast_path_probability_of_improvement_unequal_runs() -> None:
    x, y = MATRIX, rng.normal(size=(4, 9))
    func = metrics.probability_of_improvement
    fast = rly.StratifiedIndependentBootstrap(x, y, random_state=5).apply(func, 150)
    slow = rly.StratifiedIndependentBootstrap(x, y, random_state=5).apply(per_replicate(func), 150)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "func",
    [
        lambda x: np.mean(x),  # numpy on the scores: not a drop-in metric
        lambda x: np.array([metrics.aggregate_iqm(x), np.std(x)]),
        lambda x: float(metrics.aggregate_iqm(x)),
        lambda x: metrics.aggregate_iqm(x[:3]),  # a subset of runs
    ],
)
def test_other_functions_run_per_replicate_with_rliable_semantics(func) -> None:
    boot = rly.StratifiedBootstrap(MATRIX, random_state=3)
    assert boot._plan(func, None, func(MATRIX)) is None
    values = boot.apply(func, 20)
    # the same draws, iterated the rliable way
    again = rly.StratifiedBootstrap(MATRIX, random_state=3)
    expected = [np.atleast_1d(func(data[0])) for data, _ in again.bootstrap(20)]
    np.testing.assert_array_equal(values, np.array(expected))


# ---------------------------------------------------------------- rliable's rules and reproducibility
def test_intervals_are_reproducible_from_numpy_global_seed() -> None:
    score_dict = {"a": MATRIX, "b": MATRIX[::-1] + 0.3}
    np.random.seed(4)
    first = rly.get_interval_estimates(score_dict, four, reps=300)[1]
    np.random.seed(4)
    second = rly.get_interval_estimates(score_dict, four, reps=300)[1]
    third = rly.get_interval_estimates(score_dict, four, reps=300)[1]
    for key in score_dict:
        np.testing.assert_array_equal(first[key], second[key])
        assert not np.array_equal(first[key], third[key])


def test_random_state_forms_are_reproducible() -> None:
    for make in (lambda: np.random.RandomState(3), lambda: 3, lambda: np.random.default_rng(3)):
        a = rly.get_interval_estimates({"a": MATRIX}, four, reps=200, random_state=make())[1]["a"]
        b = rly.get_interval_estimates({"a": MATRIX}, four, reps=200, random_state=make())[1]["a"]
        np.testing.assert_array_equal(a, b)


def test_percentile_and_basic_intervals_from_the_replicates() -> None:
    boot = rly.StratifiedBootstrap(MATRIX, random_state=9)
    reps = boot.apply(four, 400)
    base = four(MATRIX)
    pct = rly.StratifiedBootstrap(MATRIX, random_state=9).conf_int(four, 400, method="percentile", size=0.9)
    np.testing.assert_allclose(pct, np.percentile(reps, [5, 95], axis=0))
    basic = rly.StratifiedBootstrap(MATRIX, random_state=9).conf_int(four, 400, method="basic", size=0.9)
    np.testing.assert_allclose(basic, [2 * base - pct[1], 2 * base - pct[0]])


def test_bias_correction_refuses_an_extreme_statistic() -> None:
    low = lambda x: np.array([np.min(x)])
    with pytest.raises(RuntimeError, match="percentile"):
        rly.get_interval_estimates({"a": MATRIX}, low, method="bc", reps=50, random_state=0)


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"method": "other"}, "method"), ({"confidence_interval_size": 1.5}, "size")]
)
def test_bad_arguments_name_the_argument(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        rly.get_interval_estimates({"a": MATRIX}, four, reps=10, **kwargs)


def test_bca_uses_leave_one_run_out_jackknife() -> None:
    """rliable's BCa: the acceleration from leaving out run index i of every task; deterministic given the draws."""
    boot = rly.StratifiedBootstrap(MATRIX, random_state=1)
    jack = boot._jackknife(four, None)
    assert jack.shape == (MATRIX.shape[0], 4)
    np.testing.assert_allclose(jack[0], four(MATRIX[1:]))
    a = rly.StratifiedBootstrap(MATRIX, random_state=1).conf_int(four, 300, method="bca")
    b = rly.StratifiedBootstrap(MATRIX, random_state=1).conf_int(four, 300, method="bc")
    assert a.shape == b.shape == (2, 4) and not np.array_equal(a, b)


def test_library_and_metrics_load_no_matplotlib() -> None:
    import subprocess
    import sys

    code = "import sys; from rl_reliable_logger.rliable import library, metrics; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("reps", [0, -1])
def test_a_count_of_replicates_below_one_is_said_before_numpy_meets_it(reps):
    scores = {"x": np.random.default_rng(0).random((5, 3))}
    with pytest.raises(ValueError, match=f"reps must be a positive whole number of bootstrap replicates; got {reps}"):
        rly.get_interval_estimates(scores, metrics.aggregate_iqm, reps=reps)
    with pytest.raises(ValueError, match="reps must be a positive whole number"):
        rly.create_performance_profile(scores, np.linspace(0, 1, 5), reps=reps)
