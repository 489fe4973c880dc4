"""Issue 56: the studentized standard errors (:func:`metrics.standard_errors`) are what their definition says, replicate
by replicate, whatever the layout of the draws, the chunk size or the executor.

The engine sums each slot's draws plane after plane (run-major); the references below take each replicate's drawn
scores one slot at a time with ``np.var(ddof=1)``, so they share no code with it beyond the draws themselves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt

KINDS = [("mean", 0.0), ("trimmed_mean", 0.25), ("optimality_gap", 1.0), ("trimmed_mean", 0.1)]


def reference(resample: bs.Resample, kinds=KINDS) -> np.ndarray:
    """(R, len(kinds)) each replicate's standard errors from its drawn scores, slot by slot (equal runs per slot)."""
    samples = resample.padded_samples()  # (R, N, S), NaN where not drawn
    out = np.empty((samples.shape[0], len(kinds)))
    for r, sample in enumerate(samples):
        slots = [col[~np.isnan(col)] for col in sample.T]
        pooled = np.sort(np.concatenate(slots))
        k, m = pooled.size, len(slots)
        for j, (kind, p) in enumerate(kinds):
            if kind == "mean":
                ys, scale = slots, 1.0
            elif kind == "optimality_gap":
                ys, scale = [np.minimum(s, p) for s in slots], 1.0
            else:
                g = math.floor(p * k)
                ys = [np.clip(s, pooled[g], pooled[k - g - 1]) for s in slots]
                scale = 1.0 - 2.0 * g / k
            var = [np.var(y, ddof=1) if y.size >= 2 else 0.0 for y in ys]
            out[r, j] = math.sqrt(sum(v / y.size for v, y in zip(var, ys))) / m / scale
    return out


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("shape", [(10, 26), (5, 26), (3, 4), (2, 7)])
def test_standard_errors_are_each_replicates_own(shape, task_bootstrap):
    rng = np.random.default_rng(sum(shape))
    scores = np.round(rng.gamma(1.2, 0.7, size=shape), 1)  # ties, and runs on both sides of γ = 1
    scores[:, 0] = np.minimum(scores[:, 0], 0.9)  # a task with no run above γ
    cells = bs.Cells.from_array(scores)
    batch = bs.draw(cells, 60, np.random.default_rng(3), task_bootstrap=task_bootstrap, workspace={})
    # a slot whose winsorized draws are all equal has variance 0, found from sums as ~1e-17 of the scale's square:
    # a standard error of ~1e-9 of the scale, zero up to rounding (what DEGENERATE_SE drops), else 1e-12 relative
    zero = 1e-8 * np.abs(scores).max()
    np.testing.assert_allclose(mt.standard_errors(batch, KINDS), reference(batch), rtol=1e-12, atol=zero)


def test_ragged_cells_mean_and_gap_standard_errors_are_each_replicates_own():
    """Unequal runs per task (positions past a task's runs are not draws): the mean's and the gap's standard errors."""
    rng = np.random.default_rng(8)
    cells = bs.Cells.from_list([rng.normal(0.8, 0.5, size=n) for n in (1, 2, 5, 9, 3)])
    kinds = [("mean", 0.0), ("optimality_gap", 1.0)]
    for task_bootstrap in (False, True):
        batch = bs.draw(cells, 40, np.random.default_rng(4), task_bootstrap=task_bootstrap)
        np.testing.assert_allclose(mt.standard_errors(batch, kinds), reference(batch, kinds), rtol=1e-12, atol=1e-15)


def test_a_few_capped_tasks_and_all_of_them_give_each_slot_its_own_sums():
    """The gap's capped sums are taken for the slots of tasks with runs above γ only when they are few: either way a
    slot's variance is its own draws' (the same numbers as capping every slot)."""
    rng = np.random.default_rng(5)
    scores = rng.uniform(0.0, 0.95, size=(10, 26))
    for above in (1, 20):  # tasks with a run above γ: few (their slots alone) or most (every slot capped)
        with_runs_above = scores.copy()
        with_runs_above[0, :above] = 1.5
        cells = bs.Cells.from_array(with_runs_above)
        batch = bs.draw(cells, 50, np.random.default_rng(6))
        kinds = [("optimality_gap", 1.0)]
        np.testing.assert_allclose(mt.standard_errors(batch, kinds), reference(batch, kinds), rtol=1e-12, atol=0)


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("sizes", [(10,) * 26, (5,) * 13, (1, 2, 3, 5, 7)])
def test_standard_errors_do_not_depend_on_chunk_size_or_executor(sizes, task_bootstrap):
    """Every kind's standard error, bit for bit, in chunks of 1, 3 and 7 replicates and one, whole or in ranges computed apart."""
    rng = np.random.default_rng(41)
    cells = bs.Cells.from_list([np.round(rng.lognormal(size=n), 2) for n in sizes])
    stat = lambda r: mt.standard_errors(r, KINDS)

    def run(chunk_bytes):
        return bs.replicates(
            cells, stat, 101, np.random.default_rng(5), task_bootstrap=task_bootstrap, chunk_bytes=chunk_bytes
        )

    whole = run(bs.DEFAULT_CHUNK_BYTES)
    per_rep = 8 * 4 * max(cells.n_runs, max(sizes) * len(sizes))
    for chunk_bytes in (1, 3 * per_rep, 7 * per_rep):
        np.testing.assert_array_equal(run(chunk_bytes), whole)
    ranges = bs.replicate_ranges(
        cells, stat, 101, np.random.default_rng(5), range_reps=17, executor="serial", task_bootstrap=task_bootstrap
    )
    np.testing.assert_array_equal(ranges, whole)


@pytest.mark.parametrize("shape", [(2, 3), (10, 26), (5, 57), (3, 1)])
def test_per_task_intervals_read_each_tasks_variance_bit_for_bit(shape):
    """Equal runs per task: the tasks' variances in one call, each task's runs reduced as its own array, are the
    numbers of ``np.var(runs, ddof=1)`` task by task (the per-task and median intervals under ``bootstrap-t``)."""
    from rl_reliable_logger.stats import distributions
    from rl_reliable_logger.stats.intervals import bounds

    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    scores = np.round(rng.lognormal(size=shape), 3) * 1e4 - 3e3
    cells = bs.Cells.from_array(scores)
    low, high = bounds.student_t_task_intervals(cells, 0.95)
    unit = bs.magnitude(cells.values)
    runs = [np.ascontiguousarray(scores[:, m]) for m in range(shape[1])]
    means = np.array([r.mean() for r in runs])
    var = np.array([np.var(r / unit, ddof=1) for r in runs])
    half = distributions.t_ppf(0.975, np.full(shape[1], shape[0] - 1.0)) * (unit * np.sqrt(var / shape[0]))
    np.testing.assert_array_equal(low, means - half)
    np.testing.assert_array_equal(high, means + half)
