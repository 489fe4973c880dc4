"""The executor seam: names, validation, and the same numbers from the serial executor and from Ray.

Ray runs for real: a local Ray with two workers (``ray.init(num_cpus=2)``). Those tests are skipped, with the
reason, only when Ray cannot be imported (it is the optional ``[ray]`` extra).
"""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger import executors
from rl_reliable_logger.analysis.options import AnalysisOptions, OptionError
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.stats import jordan as jd
from rl_reliable_logger.stats.jordan import bounds as jbounds
from rl_reliable_logger.stats.jordan.ecdf import as_samples, resolve_support


def _payoff_intervals(n_alg: int, n_env: int = 8, runs: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    loc = rng.normal(size=(n_alg, n_env))
    s = as_samples([[rng.normal(loc[a, t], 1.0, size=runs) for t in range(n_env)] for a in range(n_alg)])
    support, _ = resolve_support(s, None)
    return jbounds.pbp_payoff_bounds(s, 0.05, support, presorted=True)


class _Reversed:
    """An executor that runs the units last to first: map must still return them in unit order."""

    name = "reversed"

    def map(self, fn, units):
        return [fn(u) for u in reversed(units)][::-1]


def test_resolve_names_objects_and_refusals():
    assert isinstance(executors.resolve(None), executors.SerialExecutor)
    assert isinstance(executors.resolve(" Serial "), executors.SerialExecutor)
    custom = _Reversed()
    assert executors.resolve(custom) is custom
    with pytest.raises(InputError, match="serial, ray"):
        executors.resolve("dask")
    with pytest.raises(InputError, match="int"):
        executors.resolve(3)


def test_options_validate_the_executor_without_starting_it():
    import importlib.util
    import sys

    if importlib.util.find_spec("ray") is None:
        with pytest.raises(OptionError, match=r"pip install 'rl_reliable_logger\[ray\]'"):
            AnalysisOptions(executor="ray")  # refused before any statistics run
    else:
        assert AnalysisOptions(executor="RAY").executor == "ray"
        assert "ray" not in sys.modules or sys.modules["ray"].is_initialized() is False  # validating starts nothing
    assert AnalysisOptions().executor is None
    assert AnalysisOptions(executor=_Reversed()).to_dict()["executor"] == "reversed"
    with pytest.raises(OptionError, match="choose one of serial, ray") as err:
        AnalysisOptions(executor="threads")
    assert err.value.keyword == "executor"


def test_cli_flag_sets_the_option():
    import argparse

    from rl_reliable_logger.cli.options import add_analysis_options, analysis_options

    parser = argparse.ArgumentParser()
    add_analysis_options(parser)
    assert analysis_options(parser.parse_args(["--executor", "serial"])).executor == "serial"
    assert analysis_options(parser.parse_args([])).executor is None


def test_jordan_bounds_do_not_depend_on_the_order_units_run_in():
    lo, hi = _payoff_intervals(4)
    ref = jbounds.aggregate_bounds(lo, hi)
    other = jbounds.aggregate_bounds(lo, hi, executor=_Reversed())
    np.testing.assert_array_equal(ref[0], other[0])
    np.testing.assert_array_equal(ref[1], other[1])
    assert ref[2] == other[2]


# --------------------------------------------------------------------------- Ray, for real
def test_ray_map_keeps_unit_order(ray_cluster):
    assert executors.resolve("ray").map(abs, [-3, 1, -2, 5, -4]) == [3, 1, 2, 5, 4]
    assert executors.resolve("ray").map(abs, []) == []


def _serial_bounds(lo, hi):
    return jbounds.aggregate_bounds(lo, hi, executor="serial")


def test_jordan_bounds_on_ray_equal_the_serial_executor(ray_cluster):
    """Three algorithms: dense chains (exact LAPACK solves), the same bits in any process."""
    lo, hi = _payoff_intervals(3)
    serial = jbounds.aggregate_bounds(lo, hi)
    on_ray = jbounds.aggregate_bounds(lo, hi, executor="ray")
    np.testing.assert_array_equal(serial[0], on_ray[0])
    np.testing.assert_array_equal(serial[1], on_ray[1])
    assert serial[2] == on_ray[2]


def test_jordan_bounds_on_ray_bit_identical_on_the_iterative_path(ray_cluster):
    """Six algorithms (936 states: GMRES). An iterative solve's last bits depend on how the BLAS library was
    started (its thread count at start-up, which Ray sets to 1 in its workers), so the serial reference runs in
    a process started like the workers: one more Ray task. In this process the serial numbers agree to the
    solver's certified round-off."""
    lo, hi = _payoff_intervals(6, 26)
    assert lo.size > jd.DENSE_MAX_STATES  # the structured path, not the dense one
    on_ray = jbounds.aggregate_bounds(lo, hi, executor="ray")
    serial = ray_cluster.get(ray_cluster.remote(_serial_bounds).remote(lo, hi))
    np.testing.assert_array_equal(serial[0], on_ray[0])
    np.testing.assert_array_equal(serial[1], on_ray[1])
    assert serial[2] == on_ray[2]
    here = jbounds.aggregate_bounds(lo, hi)
    tol = 10 * max(here[2]["max_slack"], 1e-12)
    np.testing.assert_allclose(here[0], on_ray[0], rtol=0, atol=tol)
    np.testing.assert_allclose(here[1], on_ray[1], rtol=0, atol=tol)


# --------------------------------------------------------------------------- bootstrap replicate ranges
def _cells():
    from rl_reliable_logger.stats import bootstrap as bs

    rng = np.random.default_rng(3)
    return bs.Cells.from_list([rng.normal(size=n) for n in (5, 7, 6, 5)])


def _task_means(resample):
    return resample.task_means()


@pytest.mark.parametrize("task_bootstrap", [False, True, "shared"])
@pytest.mark.parametrize("range_reps", [1, 7, 64, 1000])
def test_replicate_ranges_equal_the_serial_stream(task_bootstrap, range_reps):
    from rl_reliable_logger.stats import bootstrap as bs

    cells = _cells()
    tb = np.random.SeedSequence(11) if task_bootstrap == "shared" else task_bootstrap
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    ref = bs.replicates(cells, _task_means, 300, rng_a, task_bootstrap=tb, chunk_bytes=4096)
    got = bs.replicate_ranges(
        cells, _task_means, 300, rng_b, range_reps=range_reps, executor=_Reversed(), task_bootstrap=tb
    )
    np.testing.assert_array_equal(ref, got)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state  # left where replicates() leaves it
    np.testing.assert_array_equal(rng_a.random(3), rng_b.random(3))


def test_replicate_ranges_on_ray_equal_the_serial_stream(ray_cluster):
    from rl_reliable_logger.stats import bootstrap as bs

    cells = _cells()
    ref = bs.replicates(cells, _task_means, 500, np.random.default_rng(9))
    got = bs.replicate_ranges(cells, _task_means, 500, np.random.default_rng(9), range_reps=120, executor="ray")
    np.testing.assert_array_equal(ref, got)


def _score_table():
    import pandas as pd

    from rl_reliable_logger import ScoreTable

    rng = np.random.default_rng(2)
    rows = [
        {"algorithm": f"A{i}", "task": f"t{t}", "seed": s, "score": i * 0.3 + rng.normal()}
        for i in range(3)
        for t in range(4)
        for s in range(6)
    ]
    return ScoreTable(pd.DataFrame(rows))


def test_evaluate_routes_jordan_through_the_executor():
    from rl_reliable_logger import evaluate

    calls = []

    class Counting(_Reversed):
        def map(self, fn, units):
            calls.append(len(units))
            return super().map(fn, units)

    kw = dict(jordan=True, reps=200, profile_reps=100, improvement_reps=100)
    ref = evaluate(_score_table(), **kw)
    got = evaluate(_score_table(), executor=Counting(), **kw)
    assert calls == [6]  # 2 nA bound optimisations
    assert got.table("jordan").equals(ref.table("jordan"))
    assert got.provenance["options"]["executor"] == "reversed"


def test_plan_on_ray_equals_the_serial_executor(ray_cluster):
    """plan's (algorithm, N) units on two Ray workers: the same plan, bit for bit, the compared pair included."""
    import pandas as pd

    from rl_reliable_logger import ScoreTable, plan

    rng = np.random.default_rng(7)
    rows = [
        {"algorithm": a, "task": f"t{t}", "seed": s, "score": rng.gamma(2.0, 0.3) + shift}
        for a, shift in (("A", 0.0), ("B", 0.3), ("C", 0.1))
        for t in range(4)
        for s in range(int(rng.integers(3, 6)))
    ]
    table = ScoreTable(pd.DataFrame(rows))
    kwargs = dict(runs=[3, 6], trials=6, sim_reps=40, compare=["A", "B"], target_width=0.3, seed=3)
    serial, on_ray = plan(table, **kwargs), plan(table, executor="ray", **kwargs)
    pd.testing.assert_frame_equal(serial.table, on_ray.table, check_exact=True)
    assert serial.needed == on_ray.needed
