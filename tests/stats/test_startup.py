"""Start-up: a small CLI evaluation imports neither scipy.stats nor matplotlib (they cost more than the whole
analysis), and the lazily imported distribution functions equal scipy.stats'."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from rl_reliable_logger.stats import distributions
from tests.support.imports import modules_loaded


@pytest.mark.parametrize(
    ("flags", "loaded"),
    [
        # the default (bootstrap-t) needs normal and t quantiles: scipy.special, not scipy.stats
        ([], "['scipy.special']"),
        (["--method", "percentile"], "[]"),
    ],
)
def test_a_small_cli_evaluation_loads_neither_scipy_stats_nor_matplotlib(tmp_path, flags, loaded):
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "algorithm,task,seed,score\nA,t1,0,1\nA,t1,1,2\nA,t2,0,3\nA,t2,1,4\nB,t1,0,2\nB,t1,1,3\nB,t2,0,1\n"
    )
    args = ["evaluate", str(scores), "--seed", "0", "--no-figures", "--out", str(tmp_path / "out"), *flags]
    code = (
        "import sys\n"
        "from rl_reliable_logger.cli.main import main\n"
        f"code = main({args!r})\n"
        "print(sorted(m for m in ('numba', 'scipy.stats', 'scipy.special', 'matplotlib') if m in sys.modules))\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == loaded
    assert (tmp_path / "out" / "aggregates.csv").is_file()


def test_distribution_functions_equal_scipy_stats_bit_for_bit():
    q = np.array([1e-12, 0.001, 0.025, 0.3, 0.5, 0.77, 0.975, 0.999999])
    df = np.array([1.0, 2.0, 3.5, 9.0, 29.0, 200.0, 1e6, 4.0])
    x = np.linspace(-9.0, 9.0, 41)
    assert np.array_equal(distributions.t_ppf(q, df), sps.t.ppf(q, df))
    assert np.array_equal(distributions.norm_ppf(q), sps.norm.ppf(q))
    assert np.array_equal(distributions.norm_cdf(x), sps.norm.cdf(x))
    assert float(distributions.t_ppf(0.975, 9.0)) == pytest.approx(2.262157, abs=1e-6)  # textbook t table


def test_the_looks_import_neither_matplotlib_nor_a_root_finder():
    """Issue 56: ``from rl_reliable_logger import race, watch, gate`` (what a loop calling a look imports) loads no
    matplotlib and no scipy.optimize: the root searches of later looks import it where they run."""
    code = (
        "from rl_reliable_logger import gate, race, watch\n"
        "import rl_reliable_logger.looks.gate, rl_reliable_logger.looks.race, rl_reliable_logger.looks.watch\n"
        "import rl_reliable_logger.stats.gate.estimate, rl_reliable_logger.stats.gate.student\n"
    )
    assert modules_loaded(code, ("scipy.optimize", "matplotlib")) == []
