"""Which engine runs a call (``RL_RELIABLE_ENGINE``), and the lazily imported distribution functions.

The default ``auto`` runs small calls in numpy so that a small analysis neither loads nor compiles the numba
kernels; the numbers must not depend on that choice, and a small CLI evaluation must not import numba or
scipy.stats at all (they cost more than the whole analysis).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.stats import bootstrap, distributions, engine, kernels

needs_numba = pytest.mark.skipif(not engine._NUMBA, reason="numba not installed")


def test_auto_runs_small_calls_in_numpy_until_a_large_one_loaded_the_kernels(monkeypatch):
    monkeypatch.setenv("RL_RELIABLE_ENGINE", "auto")
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    monkeypatch.setattr(kernels, "_jitted", {})  # no kernel loaded, as in a new process
    assert not engine.compiled(engine.SMALL_WORK - 1)
    assert not engine.compiled(1)
    assert engine.compiled(engine.SMALL_WORK) is engine._NUMBA
    # a large call loads a kernel: its cost is paid, so small calls use the kernels too (when numba is there)
    one_task = bootstrap.Cells.from_list([np.arange(10.0)])
    engine.task_mean_replicates(one_task, engine.SMALL_WORK // 10, np.random.default_rng(0))
    assert kernels.loaded() is engine._NUMBA
    assert engine.compiled(1) is engine._NUMBA
    monkeypatch.setattr(kernels, "_jitted", {})
    assert engine.compiled(None) is engine._NUMBA  # a call of unknown size keeps the kernels


def test_forced_engines_and_the_old_switch(monkeypatch):
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    monkeypatch.setenv("RL_RELIABLE_ENGINE", "numpy")
    assert not engine.compiled(10**12)
    monkeypatch.setenv("RL_RELIABLE_ENGINE", "NumBa ")
    assert engine.compiled(1) is engine._NUMBA
    monkeypatch.setenv("RL_RELIABLE_NO_NUMBA", "1")  # the documented switch still wins
    assert not engine.compiled(10**12)


def test_an_unknown_engine_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    monkeypatch.setenv("RL_RELIABLE_ENGINE", "gpu")
    with pytest.raises(InputError, match=r"RL_RELIABLE_ENGINE must be one of auto, numba, numpy .*'gpu'"):
        engine.compiled(10)


def _ragged_table() -> ScoreTable:
    rng = np.random.default_rng(3)
    rows = [
        {"algorithm": alg, "task": f"t{m}", "seed": s, "score": float(rng.lognormal(m * 0.1, 1.0))}
        for alg in ("A", "B", "C")
        for m in range(5)
        for s in range(3 + (m + len(alg)) % 3)
    ]
    return ScoreTable(pd.DataFrame(rows))


@needs_numba
def test_auto_gives_the_numbers_of_either_forced_engine(monkeypatch):
    """A small analysis in auto (numpy here) equals the same analysis forced onto the kernels, bit for bit."""
    monkeypatch.delenv("RL_RELIABLE_NO_NUMBA", raising=False)
    table = _ragged_table()
    reports = {}
    for choice in ("auto", "numba"):
        monkeypatch.setattr(kernels, "_jitted", {})  # no kernel loaded, as in a new process
        monkeypatch.setenv("RL_RELIABLE_ENGINE", choice)
        reports[choice] = evaluate(table, reps=2_000, profile_reps=500, improvement_reps=500, seed=4)
    assert 2_000 * len(table) < engine.SMALL_WORK  # so auto ran every call in numpy
    for name in ("aggregates", "profiles", "gap_curve", "per_task", "ranks", "improvement", "differences"):
        a, b = getattr(reports["auto"], name), getattr(reports["numba"], name)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)


def test_a_small_cli_evaluation_loads_neither_numba_nor_scipy_stats(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "algorithm,task,seed,score\nA,t1,0,1\nA,t1,1,2\nA,t2,0,3\nA,t2,1,4\nB,t1,0,2\nB,t1,1,3\nB,t2,0,1\n"
    )
    code = (
        "import sys\n"
        "from rl_reliable_logger.cli.main import main\n"
        f"code = main(['evaluate', {str(scores)!r}, '--seed', '0', '--no-figures', '--out', {str(tmp_path / 'out')!r}])\n"
        "print(sorted(m for m in ('numba', 'scipy.stats', 'scipy.special', 'matplotlib') if m in sys.modules))\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RL_RELIABLE_ENGINE", "RL_RELIABLE_NO_NUMBA")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "out" / "aggregates.csv").is_file()


def test_distribution_functions_equal_scipy_stats_bit_for_bit():
    q = np.array([1e-12, 0.001, 0.025, 0.3, 0.5, 0.77, 0.975, 0.999999])
    df = np.array([1.0, 2.0, 3.5, 9.0, 29.0, 200.0, 1e6, 4.0])
    x = np.linspace(-9.0, 9.0, 41)
    assert np.array_equal(distributions.t_ppf(q, df), sps.t.ppf(q, df))
    assert np.array_equal(distributions.norm_ppf(q), sps.norm.ppf(q))
    assert np.array_equal(distributions.norm_cdf(x), sps.norm.cdf(x))
    assert float(distributions.t_ppf(0.975, 9.0)) == pytest.approx(2.262157, abs=1e-6)  # textbook t table
