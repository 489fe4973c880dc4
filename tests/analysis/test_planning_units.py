"""plan()'s independent units: the same numbers whatever executor runs them in whatever order, and the same
numbers as building each synthetic experiment and bootstrapping it with the engine's own draw."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable
from rl_reliable_logger.analysis.planning import SHARED_DRAWS, PlanUnit, plan, simulate_unit
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import intervals, registry
from rl_reliable_logger.stats import metrics as mt

T = TypeVar("T")
R = TypeVar("R")


class ReversedExecutor:
    """Computes the units last to first (returning them in order) and remembers the order it ran them in."""

    name = "reversed"

    def __init__(self) -> None:
        self.ran: list[int] = []

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> list[R]:
        out: dict[int, R] = {}
        for i in reversed(range(len(units))):
            self.ran.append(i)
            out[i] = fn(units[i])
        return [out[i] for i in range(len(units))]


def _pilot(rng: np.random.Generator) -> ScoreTable:
    """Three algorithms x 5 tasks, 4-6 runs per cell (ragged), one cell with a single run."""
    rows = []
    for a, shift in (("A", 0.0), ("B", 0.4), ("C", 0.1)):
        for t in range(5):
            runs = 1 if (a, t) == ("C", 2) else int(rng.integers(4, 7))
            rows += [
                {"algorithm": a, "task": f"t{t}", "seed": s, "score": rng.gamma(2.0, 0.3) + shift} for s in range(runs)
            ]
    return ScoreTable(pd.DataFrame(rows))


def test_a_reversed_executor_gives_the_same_plan():
    table = _pilot(np.random.default_rng(0))
    kwargs = dict(runs=[3, 7], trials=12, sim_reps=60, compare=["A", "B"], target_width=0.3, seed=5)
    serial = plan(table, **kwargs)
    backwards = ReversedExecutor()
    reverse = plan(table, executor=backwards, **kwargs)
    pd.testing.assert_frame_equal(serial.table, reverse.table, check_exact=True)
    pd.testing.assert_frame_equal(serial.launch, reverse.launch, check_exact=True)
    assert serial.needed == reverse.needed
    # per N: C alone and the pair (A, B) together -- 4 units, run last to first
    assert backwards.ran == [3, 2, 1, 0]
    assert plan(table, executor="serial", **kwargs).table.equals(serial.table)
    # with a progress bar the units go to the executor one N at a time: the same numbers
    by_n = ReversedExecutor()
    assert plan(table, executor=by_n, progress=True, **kwargs).table.equals(serial.table)
    assert by_n.ran == [1, 0, 1, 0]


def _unit(pilots, n: int, metric: str, trials: int = 7, reps: int = 40) -> PlanUnit:
    seeds = tuple(np.random.SeedSequence(11, spawn_key=(i, n)) for i in range(len(pilots)))
    return PlanUnit(pilots, seeds, n, registry.get_metric(metric), trials, reps, 0.9, "variance")


def _cells(rng: np.random.Generator, sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    return tuple(np.sort(rng.lognormal(0.0, 1.0, k)) for k in sizes)


def _one_experiment_at_a_time(unit: PlanUnit) -> dict[str, np.ndarray]:
    """The definition: per experiment, build the synthetic data set (n draws per task from the pilot cell,
    variance-corrected); every SHARED_DRAWS-th experiment then draws bootstrap replicates with bs.draw, which it
    and the next ones resample their own data sets with (a new Resample on the same uniforms); take the metric
    and its interval."""
    rngs = [np.random.default_rng(s) for s in unit.seeds]
    shared: list = [None] * len(rngs)
    out: dict[str, list] = {"widths": [[] for _ in rngs], "diff_width": [], "sep": [], "sep_poi": []}

    def interval(dist):
        low, high = intervals.interval(dist[:, None], np.zeros(1), ci=unit.ci, method="percentile")
        return low[0], high[0]

    for t in range(unit.trials):
        dists, kept = [], []
        for i, (pilot, rng) in enumerate(zip(unit.pilots, rngs)):
            per_task = []
            for x in pilot:
                pick = x[np.sort(rng.integers(0, x.size, size=unit.n_runs))]  # ascending, as the pilot cell
                if x.size > 1:
                    pick = x.mean() + (pick - x.mean()) * math.sqrt(x.size / (x.size - 1))
                per_task.append(pick)
            cells = bs.Cells.from_list(per_task)
            if t % SHARED_DRAWS == 0:
                shared[i] = bs.draw(cells, unit.sim_reps, rng).uniforms
            draws = bs.Resample(cells, cells.values, uniforms=shared[i])
            dists.append(unit.metric(draws))
            kept.append((cells, draws.counts()))
            low, high = interval(dists[-1])
            out["widths"][i].append(high - low)
        if len(rngs) == 2:
            low, high = interval(dists[0] - dists[1])
            out["diff_width"].append(high - low)
            out["sep"].append(low > 0 or high < 0)
            low, high = interval(mt.improvement_replicates(*kept[0], *kept[1]))
            out["sep_poi"].append(low > 0.5 or high < 0.5)
    return {k: np.asarray(v) for k, v in out.items() if len(v)}


@pytest.mark.parametrize(
    ("metric", "sizes"),
    [("iqm", [5, 5, 5]), ("iqm", [2, 6, 1]), ("optimality_gap", [4, 4, 4]), ("dp25", [3, 6, 4]), ("mean", [2, 6, 4])],
)
def test_a_unit_equals_its_experiments_drawn_one_at_a_time(metric, sizes):
    rng = np.random.default_rng(2)
    pilots = (_cells(rng, sizes), _cells(rng, sizes[::-1]))
    unit = _unit(pilots, 7, metric, trials=2 * SHARED_DRAWS + 3)  # two whole blocks of shared draws and a part
    got, want = simulate_unit(unit), _one_experiment_at_a_time(unit)
    assert set(got) == set(want) == {"widths", "diff_width", "sep", "sep_poi"}
    for key, value in want.items():
        if metric != "mean" or value.dtype == bool:
            np.testing.assert_array_equal(got[key], value)
        else:  # task means summed over the draws in another memory order: the last digits may differ
            np.testing.assert_allclose(got[key], value, rtol=1e-13, atol=1e-15)


def test_one_algorithm_alone_gives_its_widths_only():
    rng = np.random.default_rng(5)
    unit = _unit((_cells(rng, [3, 4, 2]),), 4, "iqm", trials=5)
    got, want = simulate_unit(unit), _one_experiment_at_a_time(unit)
    assert set(got) == {"widths"}
    np.testing.assert_array_equal(got["widths"], want["widths"])
    assert got["widths"].shape == (1, 5)


def test_an_unknown_executor_is_an_input_error():
    table = _pilot(np.random.default_rng(3))
    with pytest.raises(InputError, match="executor"):
        plan(table, runs=[3], trials=2, sim_reps=10, executor="nowhere")


def test_units_travel_by_value():
    cloudpickle = pytest.importorskip("cloudpickle", reason="Ray ships units with cloudpickle")
    rng = np.random.default_rng(4)
    unit = _unit((_cells(rng, [3, 4]),), 5, "iqm")
    copy = cloudpickle.loads(cloudpickle.dumps(unit))
    np.testing.assert_array_equal(simulate_unit(copy)["widths"], simulate_unit(unit)["widths"])


# ----------------------------------------------------------------------------- P(X > Y) a block at a time (issue: speed)
def _distributions_one_at_a_time(unit: PlanUnit) -> tuple[np.ndarray, np.ndarray]:
    """The definition of every experiment's bootstrap distributions, as :func:`_one_experiment_at_a_time` builds its
    experiments: the metric of each algorithm (algorithms, trials, reps) and P(A > B) from the engine's own
    ``improvement_replicates`` on the experiment's data sets and draw counts (trials, reps)."""
    rngs = [np.random.default_rng(s) for s in unit.seeds]
    shared: list = [None] * len(rngs)
    dists = np.empty((len(rngs), unit.trials, unit.sim_reps))
    poi = np.empty((unit.trials, unit.sim_reps))
    for t in range(unit.trials):
        kept = []
        for i, (pilot, rng) in enumerate(zip(unit.pilots, rngs)):
            per_task = []
            for x in pilot:
                pick = x[np.sort(rng.integers(0, x.size, size=unit.n_runs))]
                if x.size > 1 and unit.correction == "variance":
                    pick = x.mean() + (pick - x.mean()) * math.sqrt(x.size / (x.size - 1))
                per_task.append(pick)
            cells = bs.Cells.from_list(per_task)
            if t % SHARED_DRAWS == 0:
                shared[i] = bs.draw(cells, unit.sim_reps, rng).uniforms
            draws = bs.Resample(cells, cells.values, uniforms=shared[i])
            dists[i, t] = unit.metric(draws)
            kept.append((cells, draws.counts()))
        poi[t] = mt.improvement_replicates(*kept[0], *kept[1])
    return dists, poi


def _pair_pilots(rng: np.random.Generator, sizes_a: Sequence[int], sizes_b: Sequence[int], ties: bool):
    """Two algorithms' pilot cells (sorted), on a grid of a few values when ``ties`` (runs of A equal to runs of B)."""

    def cell(k: int) -> np.ndarray:
        return rng.integers(0, 4, k) * 0.5 if ties else rng.lognormal(0.0, 1.0, k)

    a = [cell(k) for k in sizes_a]
    b = [cell(k) for k in sizes_b]
    if ties:  # every task of B has a run equal to one of A's
        b = [np.concatenate([x[:1], y[1:]]) for x, y in zip(a, b)]
    return tuple(np.sort(x) for x in a), tuple(np.sort(y) for y in b)


@pytest.mark.parametrize(
    ("sizes_a", "sizes_b", "n", "ties", "correction"),
    [
        ([5, 5, 5], [5, 5, 5], 7, False, "variance"),
        ([4, 6, 2], [3, 1, 5], 9, True, "none"),  # ragged pilots, a single-run cell, runs of A tied with runs of B
        ([4, 6, 2], [3, 2, 5], 4, True, "variance"),
        ([2], [7], 1, True, "none"),  # one task, one run per synthetic task
        ([6, 6, 6, 6], [6, 6, 6, 6], 12, True, "none"),
    ],
)
@pytest.mark.parametrize("pair_bytes", [1, 10**4, 2**30])  # one experiment at a time, a few, the whole block
def test_each_experiments_improvement_replicates_are_the_engines_bit_for_bit(
    sizes_a, sizes_b, n, ties, correction, pair_bytes, monkeypatch
):
    from rl_reliable_logger.analysis import planning

    monkeypatch.setattr(planning, "PAIR_BYTES", pair_bytes)
    rng = np.random.default_rng(n)
    pilots = _pair_pilots(rng, sizes_a, sizes_b, ties)
    seeds = tuple(np.random.SeedSequence(7, spawn_key=(i, n)) for i in range(2))
    unit = PlanUnit(pilots, seeds, n, registry.get_metric("iqm"), 2 * SHARED_DRAWS + 3, 30, 0.9, correction)
    got = planning.unit_distributions(unit)
    dists, poi = _distributions_one_at_a_time(unit)
    np.testing.assert_array_equal(got["dists"], dists)
    np.testing.assert_array_equal(got["poi"], poi)
    if ties:  # the ties between A's and B's runs were there to count
        assert any((a[:, None] == b[None, :]).any() for a, b in zip(*pilots))


def _atari_like(rng: np.random.Generator) -> pd.DataFrame:
    """Four algorithms x 8 tasks, 3-6 runs per cell (A's vary by task), scores on a coarse grid (ties within and
    across algorithms)."""
    rows = []
    for a, shift, runs in (("A", 0.0, (3, 6)), ("B", 0.3, (6, 7)), ("C", 0.1, (4, 5)), ("D", 0.2, (5, 6))):
        for t in range(8):
            for s in range(int(rng.integers(*runs))):
                score = round(float(rng.gamma(2.0, 0.4)) + shift, 1)
                rows.append({"algorithm": a, "task": f"t{t}", "seed": s, "score": score})
    return pd.DataFrame(rows)


def test_a_compared_plan_prints_and_writes_what_one_experiment_at_a_time_gives(monkeypatch):
    """The whole plan, pair included: its table (every digit), launch list and printed text are those of the
    definition, one experiment at a time (the engine's P(X > Y) on each experiment), whatever the input's row order
    and however many experiments P(X > Y) takes at once."""
    from rl_reliable_logger.analysis import planning
    from rl_reliable_logger.cli.plan import format_plan

    frame = _atari_like(np.random.default_rng(8))
    kwargs = dict(runs=[3, 5, 8], trials=SHARED_DRAWS + 4, sim_reps=50, compare=["B", "A"], target_width=0.4, seed=2)

    def printed(p) -> tuple[str, str, str]:
        return p.table.to_csv(index=False, float_format="%.17g"), p.launch.to_csv(index=False), format_plan(p)

    def numbers(p) -> str:  # the table's rows in one order (algorithms are listed in the order the input has them)
        return p.table.sort_values(["kind", "algorithm", "n_runs"]).to_csv(index=False, float_format="%.17g")

    fast = plan(ScoreTable(frame), **kwargs)
    shuffled = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    monkeypatch.setattr(planning, "PAIR_BYTES", 1)  # one experiment at a time
    assert numbers(plan(ScoreTable(shuffled), **kwargs)) == numbers(fast)
    assert printed(plan(ScoreTable(frame), **kwargs)) == printed(fast)
    monkeypatch.setattr(planning, "simulate_unit", _one_experiment_at_a_time)
    assert printed(plan(ScoreTable(frame), **kwargs)) == printed(fast)
