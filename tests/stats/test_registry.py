"""The one registry: every registered statistic (built in or a user's) is computed by its one batched definition.

The generic test runs over **every** entry of ``registry.METRICS`` at test time, so a metric added later (in the
package or by a user through ``registry.register``) is checked without editing this file: the shortcut a metric
takes on equal-weight data must equal its weighted definition, a batch must equal its replicates one at a time,
and the aggregates' intervals must be the percentile intervals of the definition's replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.aggregates import aggregate, analysis_streams, cells_by_algorithm
from rl_reliable_logger.analysis.comparisons import compare_all
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry
from tests.support.intervals import aggregate_tuple


def best_task(r: bs.Resample) -> np.ndarray:
    """A user's batched metric: the best task mean of each replicate."""
    return r.task_means().max(axis=1)


def best_task_slow(scores: np.ndarray) -> float:
    """The same metric as an rliable-style function of one replicate's ``(runs, tasks)`` array (NaN-padded)."""
    return float(np.nanmax(np.nanmean(scores, axis=0)))


@pytest.fixture
def user_metric():
    """``best_task`` registered the documented way (and removed again afterwards)."""
    registry.register("best_task", best_task, display="Best task mean")
    yield "best_task"
    del registry.METRICS["best_task"]


def _example_name(entry: registry.MetricEntry) -> str:
    """A usable name of an entry: a parametric family gets the parameter 0.1 (``trimmed_mean_0.1``, ``dp10``)."""
    return f"{entry.name}{0.1 / entry.scale:g}" if entry.parametric else entry.name


def _no_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bs.Resample, "equal_weights", property(lambda self: False))


def test_every_registered_statistic_has_one_definition_on_every_path(user_metric, monkeypatch):
    names = [_example_name(e) for e in registry.METRICS.values()]
    assert user_metric in names and "iqm" in names and "trimmed_mean_0.1" in names
    rng = np.random.default_rng(12)
    # scores on a 0.1 grid: ties, and scores equal to the example parameter 0.1 and to γ, where > and >= differ
    grid = np.round(np.arange(0.1, 3.0, 0.1), 1)
    rectangular = bs.Cells.from_list([np.r_[0.1, 1.3, rng.choice(grid[m:], 4)] for m in range(5)])
    ragged = bs.Cells.from_list([np.r_[0.1, 1.3, rng.choice(grid[m:], m)] for m in range(5)])
    for name in names:
        metric = registry.get_metric(name, gamma=1.3)
        for cells in (rectangular, ragged):
            batch = bs.draw(cells, 60, np.random.default_rng(1))
            values = metric(batch)
            # a batch is its replicates, one at a time
            singles = [metric(bs.draw(cells, 1, g)) for g in _replicate_streams(cells, 60, 1)]
            np.testing.assert_allclose(values, np.concatenate(singles), rtol=1e-12, atol=1e-12, err_msg=name)
            # the aggregates' intervals are the percentile intervals of the definition's replicates
            point, low, high, dist = aggregate_tuple(cells, [metric], 300, np.random.default_rng(2))
            direct = bs.replicates(cells, metric, 300, np.random.default_rng(2))
            np.testing.assert_array_equal(dist[:, 0], direct, err_msg=name)
            np.testing.assert_allclose(np.r_[low, high], np.quantile(direct, [0.025, 0.975]), rtol=1e-14, err_msg=name)
            assert point[0] == metric(bs.original(cells))[0]
        # the equal-weights shortcut equals the weighted definition it stands for
        batch = bs.draw(rectangular, 60, np.random.default_rng(3))
        fast = metric(batch)
        with monkeypatch.context() as patch:
            _no_shortcut(patch)
            slow = metric(bs.draw(rectangular, 60, np.random.default_rng(3)))
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12, err_msg=name)


def _replicate_streams(cells: bs.Cells, reps: int, seed: int):
    """One generator per replicate, each advanced to that replicate's words of the stream ``seed``."""
    for r in range(reps):
        g = np.random.default_rng(seed)
        g.bit_generator.advance(r * bs.words_per_replicate(cells))
        yield g


def test_an_unknown_statistic_is_an_error_never_a_fallback():
    with pytest.raises(ValueError, match="unknown metric 'best_task'"):
        registry.get_metric("best_task")
    with pytest.raises(ValueError, match="unknown metric"):
        registry.get_metric("trimmed_mean_x")


def _table() -> ScoreTable:
    rng = np.random.default_rng(5)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "step": step, "score": float(rng.normal(mu + m + step / 4, 1))}
        for alg, mu in (("A", 0.0), ("B", 0.4), ("C", 0.9))
        for m in range(4)
        for s in range(5)
        for step in (1, 2, 3, 4)
    ]
    return ScoreTable(pd.DataFrame(rows))


def test_a_registered_user_metric_gives_the_same_interval_on_every_code_path(user_metric):
    """``best_task`` (registered) against the same metric as a slow per-replicate function, on the aggregates
    table, ``aggregate()``, the differences, the curves and the all-pairs comparisons; and the aggregates'
    interval against the definition's replicates drawn from the analysis' own stream."""
    table = _table()
    slow = mt.per_replicate(best_task_slow, name="best_task_slow")
    # percentile: the definition's interval below is the replicates' 2.5% and 97.5% quantiles
    kw = dict(reps=400, profile_reps=50, improvement_reps=50, seed=3, method="percentile")
    report = evaluate(
        table, metrics=["iqm", user_metric, slow], curves=True, curve_metrics=[user_metric, slow], curve_reps=200, **kw
    )

    def rows(frame: pd.DataFrame, name: str) -> np.ndarray:
        return frame.loc[frame["metric"] == name, ["point", "low", "high"]].to_numpy(float)

    for frame in (report.aggregates, report.differences, report.curves):
        assert len(rows(frame, user_metric))
        np.testing.assert_allclose(rows(frame, user_metric), rows(frame, "best_task_slow"), rtol=1e-12, atol=1e-12)
    agg = aggregate(table, metrics=["iqm", user_metric, slow], reps=400, seed=3, method="percentile")
    np.testing.assert_allclose(rows(agg, user_metric), rows(report.aggregates, user_metric), rtol=0, atol=0)

    # the definition itself, on the aggregates' streams
    final = table.final()
    cells = cells_by_algorithm(final, sorted(final.tasks))
    streams, _ = analysis_streams(3, final.algorithms, False)
    for alg, c in cells.items():
        direct = bs.replicates(c, best_task, 400, streams["aggregates"][alg])
        got = report.aggregates.query("algorithm == @alg and metric == @user_metric")[["low", "high"]].to_numpy()[0]
        np.testing.assert_allclose(got, np.quantile(direct, [0.025, 0.975]), rtol=1e-12)

    fast_pairs = compare_all(final, metric=user_metric, reps=300, seed=1)
    slow_pairs = compare_all(final, metric=slow, reps=300, seed=1)
    cols = ["point", "low", "high", "low_simultaneous", "high_simultaneous"]
    np.testing.assert_allclose(fast_pairs[cols].to_numpy(float), slow_pairs[cols].to_numpy(float), atol=1e-12)
