"""plan(): predicted widths follow the statistics, are reproducible, and targets give launch lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable
from rl_reliable_logger.analysis.planning import plan
from rl_reliable_logger.errors import InputError


def _table(rng: np.random.Generator, spec: dict[str, tuple[float, float]], tasks: int = 6, runs: int = 5):
    rows = []
    for alg, (mu, sd) in spec.items():
        for t in range(tasks):
            for s in range(runs):
                rows.append({"algorithm": alg, "task": f"t{t}", "seed": s, "score": rng.normal(mu + 0.1 * t, sd)})
    return ScoreTable(pd.DataFrame(rows))


def test_width_of_the_mean_matches_the_normal_theory():
    # a large pilot stands for the population: the predicted width at N must match 2·z·SE of the mean
    rng = np.random.default_rng(1)
    table = _table(rng, {"A": (0.0, 1.0)}, tasks=4, runs=200)
    cells = table.cells()
    p = plan(table, metric="mean", runs=[10], trials=150, sim_reps=400, seed=3)
    sd = np.array([cells[("A", f"t{t}")].std(ddof=1) for t in range(4)])
    n = 10
    se = np.sqrt((sd**2 * (n - 1) / n / n).sum()) / 4  # the bootstrap's plug-in SE at N runs
    expected = 2 * 1.959964 * se
    got = p.table["expected_width"].iloc[0]
    assert got == pytest.approx(expected, rel=0.08)


def test_width_shrinks_like_one_over_root_n():
    rng = np.random.default_rng(2)
    table = _table(rng, {"A": (0.0, 1.0)}, runs=30)
    p = plan(table, metric="mean", runs=[5, 20], trials=100, sim_reps=300, seed=0)
    w5, w20 = p.table["expected_width"]
    assert w20 / w5 == pytest.approx(np.sqrt((19 / 20) / 20) / np.sqrt((4 / 5) / 5), rel=0.12)
    assert (p.table["width_q10"] <= p.table["expected_width"]).all()
    assert (p.table["expected_width"] <= p.table["width_q90"]).all()


def test_same_seed_same_numbers_whatever_the_row_order_and_grid():
    rng = np.random.default_rng(3)
    table = _table(rng, {"A": (0.0, 1.0), "B": (0.5, 1.0)})
    shuffled = ScoreTable(table.frame.sample(frac=1.0, random_state=0)[["algorithm", "task", "seed", "score"]])
    a = plan(table, runs=[5, 8], trials=20, sim_reps=100, seed=7)
    b = plan(shuffled, runs=[8], trials=20, sim_reps=100, seed=7)
    row_a = a.table[a.table["n_runs"] == 8].set_index("algorithm")["expected_width"]
    row_b = b.table.set_index("algorithm")["expected_width"]
    pd.testing.assert_series_equal(row_a.sort_index(), row_b.sort_index())
    c = plan(table, runs=[8], trials=20, sim_reps=100, seed=8)
    assert not np.allclose(c.table["expected_width"], b.table.sort_values("algorithm")["expected_width"])


def test_separation_probability_low_for_identical_and_high_for_distant_algorithms():
    rng = np.random.default_rng(4)
    base = _table(rng, {"A": (0.0, 1.0)}, runs=8).frame
    twin = base.assign(algorithm="B")  # exactly the same runs: no difference to find
    far = base.assign(algorithm="C", score=base["score"] + 3.0)
    table = ScoreTable(pd.concat([base, twin, far], ignore_index=True)[["algorithm", "task", "seed", "score"]])
    same = plan(table, compare=("A", "B"), runs=[8], trials=60, sim_reps=300, seed=0)
    pair = same.table[same.table["kind"] == "pair"].iloc[0]
    assert pair["algorithm"] == "A - B"
    assert pair["p_separate"] <= 0.15 and pair["p_separate_poi"] <= 0.15
    assert any("cannot tell A and B apart" in w for w in same.warnings)
    assert same.provenance["pilot_difference"]["point"] == 0.0
    apart = plan(table, compare=("C", "A"), runs=[3, 8], trials=30, sim_reps=300, seed=0)
    rows = apart.table[apart.table["kind"] == "pair"]
    assert (rows["p_separate"] == 1.0).all() and (rows["p_separate_poi"] == 1.0).all()
    assert apart.needed == {"C": 3, "A": 3}
    assert not any("cannot tell" in w for w in apart.warnings)


def test_target_width_gives_needed_runs_and_launch_list():
    rng = np.random.default_rng(5)
    table = _table(rng, {"A": (0.0, 0.2), "B": (0.0, 2.0)}, runs=4)
    grid = [4, 8, 16, 32]
    p = plan(table, metric="mean", runs=grid, trials=30, sim_reps=200, target_width=0.4, seed=0)
    widths = p.table.set_index(["algorithm", "n_runs"])["expected_width"]
    for alg in ("A", "B"):
        ok = [n for n in grid if widths[(alg, n)] <= 0.4]
        assert p.needed[alg] == (min(ok) if ok else None)
    assert p.needed["A"] == 4
    launch = p.launch.set_index(["algorithm", "task"])
    assert (launch.loc["A", "more_runs"] == 0).all()
    if p.needed["B"] is not None:
        assert (launch.loc["B", "more_runs"] == p.needed["B"] - 4).all()
    tight = plan(table, metric="mean", runs=[4, 8], trials=10, sim_reps=100, target_width=1e-4, seed=0)
    assert tight.needed == {"A": None, "B": None}
    assert tight.launch.empty
    assert any("not reached within 8 runs" in w for w in tight.warnings)


def test_variance_correction_widens_small_pilots():
    rng = np.random.default_rng(6)
    table = _table(rng, {"A": (0.0, 1.0)}, runs=2)
    raw = plan(table, metric="mean", runs=[10], trials=60, sim_reps=200, seed=0, correction="none")
    fixed = plan(table, metric="mean", runs=[10], trials=60, sim_reps=200, seed=0, correction="variance")
    ratio = fixed.table["expected_width"].iloc[0] / raw.table["expected_width"].iloc[0]
    assert ratio == pytest.approx(np.sqrt(2), rel=0.1)  # √(n/(n-1)) for n = 2
    assert any("rough" in w for w in raw.warnings)


def test_bad_arguments_name_the_keyword():
    rng = np.random.default_rng(7)
    table = _table(rng, {"A": (0.0, 1.0), "B": (0.0, 1.0)})
    with pytest.raises(InputError, match="compare="):
        plan(table, compare=("A", "Z"))
    with pytest.raises(InputError, match="compare="):
        plan(table, compare=("A", "A"))
    with pytest.raises(InputError, match="target_width="):
        plan(table, target_width=-1)
    with pytest.raises(InputError, match="trials="):
        plan(table, trials=1)


def test_unmet_targets_are_told_apart():
    # the pair's power folded into each algorithm's result used to read as "target not reached" for its width
    rng = np.random.default_rng(4)
    table = _table(rng, {"A": (0.0, 1.0), "B": (0.0, 1.0)}, tasks=4, runs=3)
    p = plan(table, metric="mean", runs=[3, 5], trials=10, sim_reps=100, target_width=100, compare=("A", "B"))
    assert p.needed == {"A": None, "B": None} and p.unmet == {"A": ("power",), "B": ("power",)}
    assert not any("target_width=" in w for w in p.warnings)
    assert any("comparison does not reach power 80%" in w and "power=" in w for w in p.warnings)
    both = plan(table, metric="mean", runs=[3], trials=10, sim_reps=100, target_width=1e-6, compare=("A", "B"))
    assert both.unmet == {"A": ("width", "power"), "B": ("width", "power")}


def test_a_run_count_of_one_is_refused():
    from rl_reliable_logger.analysis.declared import OptionError

    table = _table(np.random.default_rng(0), {"A": (0.0, 1.0)}, tasks=2, runs=3)
    with pytest.raises(OptionError, match="at least 2"):
        plan(table, runs=[1, 3])
    with pytest.raises(OptionError, match="at least 2"):
        plan(table, max_runs=1)
