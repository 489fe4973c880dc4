"""The optional compiled kernel draws the same replicates and computes the same metrics as numpy."""
import numpy as np
import pytest

from rl_reliable_logger.stats import _kernels
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.bootstrap import Cells, draw

pytestmark = pytest.mark.skipif(not _kernels.AVAILABLE, reason="numba not installed")

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
    np.testing.assert_allclose(kernel_values, numpy_values, rtol=1e-12, atol=1e-12)


def test_kernel_handles_ties_and_single_run_cells():
    cells = Cells.from_list([np.array([1.0, 1.0, 1.0]), np.array([2.0]), np.array([0.0, 1.0])])
    batch = draw(cells, 50, np.random.default_rng(0))
    metrics = [mt.get_metric(n) for n in NAMES]
    np.testing.assert_allclose(
        _kernels.fused_metrics(batch, [m.spec for m in metrics]), np.stack([m(batch) for m in metrics], axis=1), atol=1e-12
    )
