"""The compiled selection of two quantiles returns np.quantile's numbers bit for bit, whatever the data."""

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import engine, kernels
from rl_reliable_logger.stats import quantiles as qs

needs_numba = pytest.mark.skipif(not engine.compiled(), reason="numba not installed")


def _same(got, want) -> bool:
    """Equal as bit patterns (so -0.0 differs from 0.0), NaN equal to NaN."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and np.array_equal(got.view(np.int64), want.view(np.int64))


def _check(dist, low, high):
    with np.errstate(invalid="ignore"):  # inf - inf: both warn
        want = np.quantile(dist, [low, high], axis=0)
        got_low, got_high = qs.quantile_pair(dist, low, high, compiled=True)
    assert _same(got_low, want[0]) and _same(got_high, want[1]), (dist.shape, low, high)


def _data(kind: str, rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=(rows, cols))
    if kind == "ties":  # a bootstrap distribution of a fraction: few distinct values
        return rng.integers(0, 5, size=(rows, cols)) / 4.0
    if kind == "ascending":
        return np.sort(rng.normal(size=(rows, cols)), axis=0)
    if kind == "descending":
        return -np.sort(rng.normal(size=(rows, cols)), axis=0)
    if kind == "constant":
        return np.full((rows, cols), 0.3)
    if kind == "infinite":
        return rng.choice([-np.inf, -1.0, 0.0, 2.5, np.inf], size=(rows, cols))
    if kind == "extreme":
        return rng.normal(size=(rows, cols)) * np.array([1e300, 1e-300, 1.0])[rng.integers(0, 3, size=cols)]
    raise ValueError(kind)


KINDS = ["normal", "ties", "ascending", "descending", "constant", "infinite", "extreme"]
LEVELS = [(0.025, 0.975), (0.05, 0.95), (0.0, 1.0), (0.5, 0.5), (0.1, 0.3), (1e-9, 1 - 1e-16), (0.9, 0.1)]


@needs_numba
@pytest.mark.parametrize("rows", [1, 2, 3, 5, 40, 41, 511, 512, 600, 2_000, 5_001])
@pytest.mark.parametrize("kind", KINDS)
def test_compiled_pair_is_np_quantile_bit_for_bit(rows, kind):
    rng = np.random.default_rng(rows)
    dist = _data(kind, rows, 7, rng)
    for low, high in LEVELS:
        _check(dist, low, high)


@needs_numba
@pytest.mark.parametrize("seed", range(40))
def test_compiled_pair_on_random_levels_and_sizes(seed):
    rng = np.random.default_rng(100 + seed)
    rows = int(rng.integers(1, 20_000))
    dist = _data(KINDS[seed % len(KINDS)], rows, int(rng.integers(1, 9)), rng)
    low, high = rng.random(2)
    _check(dist, float(low), float(high))


@needs_numba
def test_paper_scale_columns():
    rng = np.random.default_rng(3)
    _check(rng.standard_t(3, size=(50_000, 4)), 0.025, 0.975)
    _check(rng.integers(0, 261, size=(2_000, 253)) / 260, 0.025, 0.975)


@needs_numba
@pytest.mark.parametrize(
    "layout", ["column-major", "strided", "one-dimensional", "three-dimensional", "blocks", "blocks-with-nan"]
)
def test_any_layout_and_shape(layout):
    rng = np.random.default_rng(4)
    base = rng.normal(size=(3_000, 6))
    blocks = rng.normal(size=(5, 3_000, 4))  # replicates of 5 parts side by side, read without a copy
    if layout == "blocks-with-nan":
        blocks[3, 17, 2] = np.nan
    dist = {
        "column-major": np.asfortranarray(base),
        "strided": base[::2, ::3],
        "one-dimensional": base[:, 2],
        "three-dimensional": base.reshape(3_000, 2, 3),
        "blocks": np.moveaxis(blocks, 0, 1),
        "blocks-with-nan": np.moveaxis(blocks, 0, 1),
    }[layout]
    _check(dist, 0.025, 0.975)


@needs_numba
@pytest.mark.parametrize("rows", [3, 700, 5_000])
def test_nan_and_negative_zero_columns_are_left_to_numpy(rows):
    """Where -0.0 and 0.0 (or NaNs) meet, only numpy's own partition knows which one it returns."""
    rng = np.random.default_rng(rows)
    dist = rng.integers(-1, 2, size=(rows, 5)).astype(float)
    dist[0, 1] = 0.0
    dist[:, 1] *= -1.0  # its zeros are negative zeros
    dist[rows // 2, 2] = np.nan
    dist[:2, 3] = [-0.0, 0.0]  # both zeros
    _, unusual = kernels.select_ranks(dist, np.array([0, rows - 1]))
    assert unusual.tolist() == [False, True, True, True, False]
    for low, high in LEVELS:
        _check(dist, low, high)


@needs_numba
def test_a_sample_that_misleads_the_bands_falls_back_to_the_whole_column():
    """Replicates arranged so that the evenly spaced sample sees only values near 0.5: the ranks fall outside
    the sample's (narrow) bands, and the kernel selects them in the whole column instead."""
    rows = 8_192
    s = min(kernels._SAMPLE, max(64, rows // 16))
    dist = np.linspace(0.0, 1.0, rows)
    sampled = (np.arange(s) * rows) // s
    dist[sampled] = 0.5 + 1e-9 * np.arange(s)
    for low, high in [(0.3, 0.4), (0.025, 0.975), (0.5, 0.999)]:
        _check(dist[:, None], low, high)


@needs_numba
def test_a_band_far_fuller_than_its_sample_says():
    """The sample sees distinct values, but most unsampled replicates tie inside one band."""
    rows = 8_192
    s = min(kernels._SAMPLE, max(64, rows // 16))
    sampled = (np.arange(s) * rows) // s
    dist = np.full(rows, 1.5)
    dist[sampled] = np.arange(s, dtype=float)
    _check(dist[:, None], 0.025, 0.975)


@pytest.mark.parametrize("variable, value", [("RL_RELIABLE_NO_NUMBA", "1"), ("RL_RELIABLE_ENGINE", "numpy")])
def test_when_numpy_is_forced_it_is_np_quantile(variable, value, monkeypatch):
    monkeypatch.setenv(variable, value)
    assert not qs.compiled_selection()
    dist = np.random.default_rng(5).normal(size=(1_000, 3))
    low, high = qs.quantile_pair(dist, 0.025, 0.975)
    want = np.quantile(dist, [0.025, 0.975], axis=0)
    assert _same(low, want[0]) and _same(high, want[1])


def test_integer_and_invalid_inputs_behave_as_np_quantile():
    ints = np.arange(12).reshape(6, 2)
    low, high = qs.quantile_pair(ints, 0.25, 0.75, compiled=True)
    want = np.quantile(ints, [0.25, 0.75], axis=0)
    assert _same(low, want[0]) and _same(high, want[1])
    with pytest.raises(ValueError):
        qs.quantile_pair(np.ones((5, 2)), -0.1, 0.5, compiled=True)


@needs_numba
@pytest.mark.parametrize("method", ["percentile", "basic", "expanded", "bc"])
def test_intervals_do_not_depend_on_the_engine(method, monkeypatch):
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    monkeypatch.setenv("RL_RELIABLE_ENGINE", "auto")
    kernels.select_ranks(np.zeros((2, 1)), np.array([0]))  # the kernels are loaded: intervals use them
    assert qs.compiled_selection()
    rng = np.random.default_rng(9)
    dist = rng.standard_t(4, size=(20_000, 5))
    point = np.median(dist, axis=0)
    cells = bs.Cells.from_list([rng.normal(size=n) for n in (4, 6)])
    fast = bs.interval(dist, point, ci=0.9, method=method, cells=cells)
    monkeypatch.setenv("RL_RELIABLE_NO_NUMBA", "1")
    plain = bs.interval(dist, point, ci=0.9, method=method, cells=cells)
    assert _same(fast[0], plain[0]) and _same(fast[1], plain[1])


@needs_numba
def test_select_ranks_refuses_ranks_outside_the_replicates():
    dist = np.zeros((10, 3))
    for ranks in ([10], [-1], [3, 2]):
        with pytest.raises(ValueError, match="ascending ranks"):
            kernels.select_ranks(dist, np.array(ranks))
