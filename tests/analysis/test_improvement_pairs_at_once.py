"""Issue 56 item 3: the improvement table and the comparisons table take P(X > Y) of every pair from one array
operation (``stats.pairwise``); their numbers stay those of one pair at a time, bit for bit.

The one-pair-at-a-time path is rebuilt here from the public per-pair functions
(:func:`stats.metrics.probability_of_improvement`, :func:`stats.metrics.improvement_replicates`) and put in place of
``stats.pairwise`` for a second evaluation with the same seed: the two tables must be equal, not close."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis import comparisons
from rl_reliable_logger.analysis.tables import improvement
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import pairwise

RUNS = {"A": 3, "B": 6, "C": 4, "D": 5, "E": 3}  # unequal runs across algorithms
TASKS = 4


def _runs(c: bs.Cells) -> list[np.ndarray]:
    return [c.values[o : o + n] for o, n in zip(c.offsets, c.sizes)]


def _points_pair_by_pair(cells: Sequence[bs.Cells], pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    return np.array([mt.probability_of_improvement(_runs(cells[x]), _runs(cells[y])) for x, y in pairs])


def _replicates_pair_by_pair(
    cells: Sequence[bs.Cells], counts: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]]
) -> np.ndarray:
    return np.column_stack([mt.improvement_replicates(cells[x], counts[x], cells[y], counts[y]) for x, y in pairs])


PAIR_BY_PAIR = SimpleNamespace(
    improvement_points=_points_pair_by_pair, improvement_pair_replicates=_replicates_pair_by_pair
)


class Checked:
    """``stats.pairwise`` that also checks each call's numbers against one pair at a time (every replicate, bit for
    bit: an interval's ends would hide a difference in a replicate far from them) and counts the calls."""

    def __init__(self) -> None:
        self.calls = {"improvement_points": 0, "improvement_pair_replicates": 0}

    def improvement_points(self, cells: Sequence[bs.Cells], pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        self.calls["improvement_points"] += 1
        got = pairwise.improvement_points(cells, pairs)
        np.testing.assert_array_equal(got, _points_pair_by_pair(cells, pairs), strict=True)
        return got

    def improvement_pair_replicates(
        self, cells: Sequence[bs.Cells], counts: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]]
    ) -> np.ndarray:
        self.calls["improvement_pair_replicates"] += 1
        got = pairwise.improvement_pair_replicates(cells, counts, pairs)
        np.testing.assert_array_equal(got, _replicates_pair_by_pair(cells, counts, pairs), strict=True)
        return got


def _table(*, ragged: bool) -> ScoreTable:
    """Scores rounded to a tenth (many ties within and across algorithms); ``ragged``: one of B's tasks lacks a run."""
    rng = np.random.default_rng(56)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "score": round(float(rng.normal(0.1 * i + 0.2 * m, 0.3)), 1)}
        for i, (alg, n) in enumerate(RUNS.items())
        for m in range(TASKS)
        for s in range(n)
        if not (ragged and alg == "B" and m == 2 and s == 5)
    ]
    return ScoreTable(pd.DataFrame(rows))


def _improvement(table: ScoreTable, **options: object) -> pd.DataFrame:
    report = evaluate(table, pairs="all", reps=200, profile_reps=50, seed=3, **options)  # type: ignore[arg-type]
    return report.improvement


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize(
    "options",
    [
        {},  # the default method: P(X > Y)'s interval from the runs
        {"method": "percentile", "improvement_reps": 300},
        {"method": "percentile", "improvement_reps": 300, "chunk_bytes": 4096},  # many chunks of replicates
        {"method": "expanded", "improvement_reps": 300},  # replicates at a widened level
        {"method": "percentile", "improvement_reps": 300, "task_bootstrap": True},  # pair by pair on shared tasks
    ],
    ids=["default", "percentile", "percentile-chunked", "expanded", "task-bootstrap"],
)
def test_every_pair_at_once_gives_the_table_of_one_pair_at_a_time_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, options: dict, ragged: bool
) -> None:
    table = _table(ragged=ragged)
    at_once = _improvement(table, **options)
    checked = Checked()
    with monkeypatch.context() as m:
        m.setattr(improvement, "pairwise", checked)
        assert _improvement(table, **options).equals(at_once)
        m.setattr(improvement, "pairwise", PAIR_BY_PAIR)
        pair_by_pair = _improvement(table, **options)
    resampled = options.get("method") in ("percentile", "expanded") and not options.get("task_bootstrap")
    assert checked.calls["improvement_points"] == 1
    assert (checked.calls["improvement_pair_replicates"] > 0) == resampled  # once per chunk of replicates
    assert len(at_once) == len(RUNS) * (len(RUNS) - 1)  # every ordered pair
    pd.testing.assert_frame_equal(at_once, pair_by_pair, check_exact=True)
    # and each estimate is P(X > Y) of the runs, pair by pair: one order of each pair is it, the other 1 minus it
    runs = {a: [table.final().cells()[(a, f"t{m}")] for m in range(TASKS)] for a in RUNS}
    rows = {(r.algorithm_x, r.algorithm_y): r.point for r in at_once.itertuples()}
    for (x, y), point in rows.items():
        assert point in (
            mt.probability_of_improvement(runs[x], runs[y]),
            1 - mt.probability_of_improvement(runs[y], runs[x]),
        )
    assert any(np.isin(runs["A"][m], runs["E"][m]).any() for m in range(TASKS))  # tied runs are compared


@pytest.mark.parametrize("ragged", [False, True])
def test_compare_all_takes_every_pair_at_once_bit_for_bit(monkeypatch: pytest.MonkeyPatch, ragged: bool) -> None:
    table = _table(ragged=ragged)
    at_once = comparisons.compare_all(table, metric="iqm", reps=300, seed=4)
    checked = Checked()
    with monkeypatch.context() as m:
        m.setattr(comparisons, "pairwise", checked)
        assert comparisons.compare_all(table, metric="iqm", reps=300, seed=4).equals(at_once)
        assert checked.calls == {"improvement_points": 1, "improvement_pair_replicates": 1}
        m.setattr(comparisons, "pairwise", PAIR_BY_PAIR)
        pair_by_pair = comparisons.compare_all(table, metric="iqm", reps=300, seed=4)
    assert (at_once["statistic"] == "improvement").sum() == len(RUNS) * (len(RUNS) - 1) // 2
    pd.testing.assert_frame_equal(at_once, pair_by_pair, check_exact=True)
