"""Issue 56 items 2-3: every column's quantile at its own level in one sort (``bounds.column_quantiles``) is
``np.quantile`` of that column, bit for bit (numpy's ``linear`` definition, its ends and its NaN rule), and the
bootstrap-t intervals of many statistics at once (``bounds.studentized_intervals``) are those of one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats.intervals import bounds


def one_by_one(dist: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The per-column ``np.quantile`` calls the vectorised reading replaces (NaN for a level that is not finite)."""
    flat = dist.reshape(dist.shape[0], -1)
    qs = np.broadcast_to(q, dist.shape[1:]).ravel()
    out = [np.quantile(flat[:, i], qs[i]) if np.isfinite(qs[i]) else np.nan for i in range(flat.shape[1])]
    return np.array(out).reshape(dist.shape[1:])


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 200, 2001])
def test_each_columns_quantile_is_np_quantiles(rows):
    rng = np.random.default_rng(rows)
    dist = rng.lognormal(size=(rows, 4, 9)) * rng.choice([-1.0, 1.0], size=(rows, 4, 9))
    dist[:, 0, 0] = 3.25  # a constant column: every level reads the same value
    dist[rows // 2, 1, 1] = np.nan  # a column holding NaN: NaN, as np.quantile
    dist[0, 1, 2] = np.inf  # infinite replicates interpolate as numpy does (inf, or NaN from inf - inf)
    dist[-1, 1, 3] = -np.inf
    levels = rng.random((4, 9))
    levels[0, :5] = [0.0, 1.0, 0.5, 1e-300, 1 - 1e-16]  # the ends, the middle, next to the ends
    levels[2, 0] = np.nan  # a level that is not finite: NaN
    levels[3, :] = np.linspace(0, 1, 9)  # exact order statistics where (rows - 1) q is whole
    per_row = np.repeat(rng.random((4, 1)), 9, axis=1)  # a few shared levels: one np.quantile per group
    with np.errstate(invalid="ignore"):  # inf - inf, as in np.quantile
        for level in (levels, 1 - levels, 0.025, per_row):
            (found,) = bounds.column_quantiles(dist, [level])
            np.testing.assert_array_equal(found, one_by_one(dist, np.asarray(level, dtype=float)))


def test_several_levels_share_one_sort_and_give_each_its_quantiles():
    dist = np.random.default_rng(0).normal(size=(999, 5))
    low, high = np.full(5, 0.025), np.linspace(0.9, 0.99, 5)
    got = bounds.column_quantiles(dist, [low, high])
    np.testing.assert_array_equal(got[0], one_by_one(dist, low))
    np.testing.assert_array_equal(got[1], one_by_one(dist, high))
    np.testing.assert_array_equal(bounds.diag_quantile(dist, high), got[1])


def test_a_level_outside_zero_one_is_refused_as_np_quantile_refuses_it():
    with pytest.raises(ValueError, match="range"):
        bounds.column_quantiles(np.zeros((3, 2)), [np.array([0.5, 1.5])])


def studentized_one(dist: np.ndarray, point: np.ndarray, ci: float) -> tuple[float, float] | None:
    """The bootstrap-t interval as it was computed one statistic at a time (np.quantile of the kept t*)."""
    stat, se = float(point[0]), float(point[1])
    values = dist[:, 0][np.isfinite(dist[:, 0])]
    rounding = 1e-9 * max(float(np.abs(values).max(initial=0.0)), abs(stat) if np.isfinite(stat) else 0.0)
    if not (np.isfinite(se) and se > rounding):
        return None
    ok = dist[:, 1] > bounds.DEGENERATE_SE * se
    if not ok.any() or 1.0 - ok.mean() > bounds.DEGENERATE_SHARE:
        return None
    t = (dist[ok, 0] - stat) / dist[ok, 1]
    hi_t, lo_t = np.quantile(t, [1 - (1 - ci) / 2, (1 - ci) / 2])
    if not hi_t > lo_t:
        return None
    return stat - hi_t * se, stat - lo_t * se


def test_studentized_intervals_of_many_columns_are_those_of_each():
    rng = np.random.default_rng(7)
    reps, width = 3001, 9
    stats = rng.normal(size=(reps, width))
    errors = rng.lognormal(sigma=0.3, size=(reps, width))
    stat, se = rng.normal(size=width) * 0.1, np.ones(width)
    errors[:20, 1] = 1e-3  # 20 degenerate replicates of 3001 (0.7%): dropped, the interval kept
    errors[:40, 2] = 1e-3  # 40 (1.3%): more than DEGENERATE_SHARE, no interval
    se[3] = 0.0  # a zero standard error: no interval
    stats[:, 4] = stat[4]  # every t* equal: no interval
    stats[5, 5] = np.nan  # a NaN replicate: np.quantile gives NaN, so no interval
    stats[6, 6] = np.inf  # an infinite one is a replicate like another
    for ci in (0.95, 0.8):
        low, high = bounds.studentized_intervals(stats, errors, stat, se, ci)
        for c in range(width):
            want = studentized_one(np.column_stack([stats[:, c], errors[:, c]]), np.array([stat[c], se[c]]), ci)
            got = bounds.studentized_interval(
                np.column_stack([stats[:, c], errors[:, c]]), np.array([stat[c], se[c]]), ci
            )
            assert got == want, c
            assert (np.isnan(low[c]) and want is None) or (low[c], high[c]) == want, c
    assert np.isnan(low[[2, 3, 4, 5]]).all() and not np.isnan(low[[0, 1, 6, 7, 8]]).any()
