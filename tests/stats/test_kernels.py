"""The optional compiled kernel draws the same replicates and computes the same metrics as numpy, bit for bit
(the numpy metrics of drawn replicates do the kernel's floating-point operations in the kernel's order)."""

import numpy as np
import pytest

from rl_reliable_logger.stats import engine
from rl_reliable_logger.stats import kernels as _kernels
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.bootstrap import Cells, draw
from rl_reliable_logger.stats.registry import Statistic
from tests.support.paths import REPO

pytestmark = pytest.mark.skipif(not engine.compiled(), reason="numba not installed")

NAMES = ["mean", "median", "iqm", "optimality_gap", "dp25", "p_above_1", "trimmed_mean_0.1"]


@pytest.mark.parametrize("task_bootstrap", [False, True])
@pytest.mark.parametrize("ragged", [False, True])
def test_kernel_equals_numpy_metrics(task_bootstrap, ragged):
    rng = np.random.default_rng(11)
    if ragged:
        cells = Cells.from_list([rng.lognormal(size=n) for n in (3, 8, 5, 2, 6)])
    else:
        cells = Cells.from_array(rng.lognormal(size=(7, 9)))
    batch = draw(cells, 300, np.random.default_rng(12), task_bootstrap=task_bootstrap)
    metrics = [mt.get_metric(n) for n in NAMES]
    numpy_values = np.stack([m(batch) for m in metrics], axis=1)
    kernel_values = _kernels.fused_metrics(batch, [m.spec for m in metrics])
    np.testing.assert_array_equal(kernel_values, numpy_values)


def test_kernel_handles_ties_and_single_run_cells():
    cells = Cells.from_list([np.array([1.0, 1.0, 1.0]), np.array([2.0]), np.array([0.0, 1.0])])
    batch = draw(cells, 50, np.random.default_rng(0))
    metrics = [mt.get_metric(n) for n in NAMES]
    np.testing.assert_array_equal(
        _kernels.fused_metrics(batch, [m.spec for m in metrics]), np.stack([m(batch) for m in metrics], axis=1)
    )


def test_kernel_profiles_and_task_means_equal_numpy():
    from rl_reliable_logger.stats import profiles as pf

    rng = np.random.default_rng(13)
    cells = Cells.from_list([rng.normal(size=n) for n in (4, 6, 5)])
    batch = draw(cells, 200, np.random.default_rng(14))
    taus = np.linspace(-2, 2, 9)
    gammas = np.linspace(0, 1.5, 4)
    specs = (
        [(Statistic.FRACTION_ABOVE, t) for t in taus]
        + [(Statistic.TASKS_ABOVE, t) for t in taus]
        + [(Statistic.OPTIMALITY_GAP, g) for g in gammas]
    )
    values, means = _kernels.fused_metrics(batch, specs, task_means=True)
    expected = np.concatenate(
        [pf.run_score_profile(batch, taus), pf.average_score_profile(batch, taus), pf.gap_curve(batch, gammas)], axis=1
    )
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(means, batch.task_means())


@pytest.mark.parametrize("ragged", [False, True])
def test_kernel_improvement_equals_numpy(ragged):
    rng = np.random.default_rng(15)
    sizes_x, sizes_y = ((3, 6, 4), (5, 2, 4)) if ragged else ((5, 5, 5), (4, 4, 4))
    x_cells = Cells.from_list([np.sort(np.round(rng.normal(size=n), 1)) for n in sizes_x])
    # y unsorted within tasks on purpose: the wrapper must reorder the counts with the runs
    y_cells = Cells.from_list([np.round(rng.normal(size=n), 1) for n in sizes_y])
    cx = draw(x_cells, 100, rng).counts().astype(np.uint16)
    cy = draw(y_cells, 100, rng).counts().astype(np.uint16)
    np.testing.assert_array_equal(
        _kernels.improvement(x_cells, cx, y_cells, cy), mt.improvement_replicates(x_cells, cx, y_cells, cy)
    )


def test_kernel_draw_counts_equal_numpy():
    cells = Cells.from_list([np.arange(3.0), np.arange(7.0), np.arange(5.0)])
    batch = draw(cells, 50, np.random.default_rng(16))
    np.testing.assert_array_equal(_kernels.draw_counts(batch), batch.counts())


def test_evaluate_gives_the_same_numbers_with_and_without_numba(tmp_path):
    """Both engines read the same random draws and do the same arithmetic: every table is byte-identical."""
    import subprocess
    import sys

    import pandas as pd

    script = (
        "import sys, pandas as pd\n"
        "from rl_reliable_logger import ScoreTable, evaluate\n"
        "df = pd.read_csv('examples/atari100k_scores.csv')\n"
        "df = df[df.task.isin(['Pong', 'Qbert', 'Boxing', 'Alien'])]\n"
        "r = evaluate(ScoreTable(df), normalize='atari100k', seed=3, reps=500, profile_reps=200, improvement_reps=200)\n"
        "r.save_tables(sys.argv[1])\n"
    )
    root = REPO
    for name, env in (("fast", {}), ("numpy", {"RL_RELIABLE_NO_NUMBA": "1"})):
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / name)],
            cwd=root,
            check=True,
            env={**__import__("os").environ, **env},
        )
    for table in ("aggregates", "improvement", "profiles", "per_task", "ranks", "gap_curve", "differences"):
        fast = (tmp_path / "fast" / f"{table}.csv").read_bytes()
        assert len(pd.read_csv(tmp_path / "fast" / f"{table}.csv")) > 0
        assert fast == (tmp_path / "numpy" / f"{table}.csv").read_bytes(), table


def test_engine_statistics_do_not_depend_on_the_engine(monkeypatch):
    """What analysis asks the engine for is the same numbers with numba and with numpy."""
    rng = np.random.default_rng(21)
    cells = Cells.from_list([rng.lognormal(size=n) for n in (3, 8, 5)])
    metrics = [mt.get_metric(n) for n in NAMES]
    taus, gammas = np.linspace(0, 3, 7), np.linspace(0, 1, 3)

    def run():
        batch = draw(cells, 100, np.random.default_rng(5))
        counts = engine.draw_counts(batch)
        return [
            engine.aggregates(metrics)(batch),
            engine.profile_curves(taus, gammas)(batch),
            engine.task_means()(batch),
            counts,
            engine.improvement(cells, counts, cells, counts[::-1].copy()),
        ]

    compiled = run()
    monkeypatch.setenv("RL_RELIABLE_NO_NUMBA", "1")
    assert not engine.compiled()
    for a, b in zip(compiled, run()):
        np.testing.assert_array_equal(a, b)


def test_a_numba_that_does_not_import_falls_back_to_numpy_with_a_warning(monkeypatch):
    """Installed (found by importlib) but broken, e.g. built for another numpy: the statistics still run."""
    import sys

    monkeypatch.setattr(engine, "_NUMBA", True)
    monkeypatch.setattr(engine, "_importable", [])
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    with pytest.warns(UserWarning, match="numba is installed but does not import"):
        assert not engine.compiled()
    assert engine.name() == "numpy"
    cells = Cells.from_list([np.arange(3.0), np.arange(5.0)])
    batch = draw(cells, 20, np.random.default_rng(2))
    values = engine.aggregates([mt.get_metric("iqm")])(batch)
    np.testing.assert_array_equal(values[:, 0], mt.get_metric("iqm")(batch))
