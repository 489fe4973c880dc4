"""The bootstrap cells of evaluate(): one whole-table sort gives the cell-by-cell sorted runs exactly."""

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.prepared import _sorted_cells, cells_by_algorithm


def _table(seed: int, zeros: float = 0.0) -> ScoreTable:
    rng = np.random.default_rng(seed)
    rows = []
    for a in ("zeta", "alpha", "mid"):
        for t in ("t3", "t1", "t2", "t0"):
            for s in range(int(rng.integers(1, 7))):  # unequal runs per cell
                score = float(rng.integers(-2, 3)) if seed % 2 else float(rng.normal())  # ties, or none
                rows.append({"algorithm": a, "task": t, "seed": s, "score": score if score else zeros})
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed)  # row order must not matter
    return ScoreTable(frame)


def _plain(table: ScoreTable, tasks: list[str]) -> dict:
    cells = table.cells()
    return {a: [np.sort(cells[(a, t)]) for t in tasks] for a in table.algorithms}


@pytest.mark.parametrize("seed", range(8))
def test_one_sort_of_the_table_gives_every_cell_sorted(seed):
    table = _table(seed)
    tasks = sorted(table.tasks)
    fast = _sorted_cells(table, tasks)
    assert fast is not None and list(fast) == list(table.algorithms)
    for alg, runs in _plain(table, tasks).items():
        cells = fast[alg]
        assert cells.sizes.tolist() == [r.size for r in runs]
        assert np.array_equal(cells.values.view(np.int64), np.concatenate(runs).view(np.int64))


def test_negative_zeros_take_the_cell_by_cell_path():
    table = _table(1, zeros=-0.0)
    tasks = sorted(table.tasks)
    assert _sorted_cells(table, tasks) is None
    cells = cells_by_algorithm(table, tasks)
    for alg, runs in _plain(table, tasks).items():
        assert np.array_equal(cells[alg].values.view(np.int64), np.concatenate(runs).view(np.int64))


def test_intervals_asked_together_do_not_depend_on_the_memory_budget():
    """evaluate() stacks the distributions of a table up to ``chunk_bytes`` at a time: any budget, same tables."""
    table = _table(3)
    kw = dict(reps=600, profile_reps=300, improvement_reps=300, seed=4)
    small = evaluate(table, chunk_bytes=2_000, **kw)  # every distribution alone
    default = evaluate(table, **kw)  # each table's distributions in one stack
    for name in ("aggregates", "differences", "profiles", "gap_curve", "per_task", "ranks", "improvement"):
        a, b = getattr(small, name), getattr(default, name)
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        for column in a.select_dtypes("float64").columns:
            assert np.array_equal(a[column].to_numpy().view(np.int64), b[column].to_numpy().view(np.int64))
