"""``on_invalid="drop"`` with rows that share a run key: the result never depends on the order of the rows. Every
copy of a key whose rows differ is dropped; of rows identical in every column one is kept; each is recorded."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError


def _small() -> pd.DataFrame:
    """2 algorithms x 3 tasks x 5 seeds (the tester's small.csv)."""
    return pd.DataFrame(
        [
            {"algorithm": a, "task": t, "seed": s, "score": round(0.5 + 0.5 * i + 0.2 * j + 0.07 * s, 4)}
            for i, a in enumerate("AB")
            for j, t in enumerate(("t1", "t2", "t3"))
            for s in range(5)
        ]
    )


def _files(tmp_path, extra: pd.DataFrame) -> tuple[ScoreTable, ScoreTable]:
    """The same rows read from two files: ``extra`` last (dupA.csv) and first (dupB.csv)."""
    last, first = tmp_path / "dupA.csv", tmp_path / "dupB.csv"
    pd.concat([_small(), extra], ignore_index=True).to_csv(last, index=False)
    pd.concat([extra, _small()], ignore_index=True).to_csv(first, index=False)
    return ScoreTable.from_csv(last, on_invalid="drop"), ScoreTable.from_csv(first, on_invalid="drop")


def _same(a: ScoreTable, b: ScoreTable) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.cells().keys() == b.cells().keys()
    for key, runs in a.cells().items():
        np.testing.assert_array_equal(runs, b.cells()[key])


def test_a_seed_scored_twice_differently_is_dropped_whichever_row_comes_first(tmp_path):
    """dupA.csv / dupB.csv: A, t1, seed 0 scored 5.0 beside its own score; the A mean depended on the row order."""
    last, first = _files(tmp_path, pd.DataFrame([{"algorithm": "A", "task": "t1", "seed": 0, "score": 5.0}]))
    _same(last, first)
    assert len(last.cells()[("A", "t1")]) == 4 and 5.0 not in last.frame["score"].to_numpy()
    for table in (last, first):
        assert len(table.dropped) == 2 and set(table.dropped["run_id"]) == {"0"}
        assert all("every copy dropped" in r for r in table.dropped["reason"]), table.dropped["reason"].tolist()


def test_rows_identical_in_every_column_keep_one(tmp_path):
    last, first = _files(tmp_path, _small().iloc[[0]])
    _same(last, first)
    assert len(last.cells()[("A", "t1")]) == 5 and len(last.frame) == 30
    assert len(last.dropped) == 1 and "identical to row" in last.dropped["reason"].iloc[0]


def test_equal_scores_from_two_different_runs_are_not_identical(tmp_path):
    """Same key and score, but another column differs (two tracker runs claim seed 0): neither is kept."""
    base = _small().assign(run_name=lambda d: [f"r{i}" for i in range(len(d))])
    extra = base.iloc[[0]].assign(run_name="other")
    table = ScoreTable(pd.concat([base, extra], ignore_index=True), on_invalid="drop")
    assert len(table.cells()[("A", "t1")]) == 4 and len(table.dropped) == 2


def test_a_missing_copy_drops_its_valid_twin_and_each_row_is_recorded_once():
    frame = pd.concat([_small(), _small().iloc[[0]].assign(score=np.nan)], ignore_index=True)
    for rows in (frame, frame.iloc[::-1].reset_index(drop=True)):
        table = ScoreTable(rows, on_invalid="drop")
        assert len(table.cells()[("A", "t1")]) == 4
        assert len(table.frame) + len(table.dropped) == len(rows)  # nothing vanished, nothing counted twice
    with pytest.raises(InputError, match=r"2 problems in the scores: non-finite score.*duplicate seed '0' for A / t1"):
        ScoreTable(frame)  # raised, every problem is still named
