"""evaluate(): the Report's tables, their contracts and the invariants between them."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render.writer import save_tables
from tests.support.paths import REPO

FAST = dict(reps=600, profile_reps=300, improvement_reps=300)


@pytest.fixture(scope="module")
def atari_subset():
    df = pd.read_csv(REPO / "examples/atari100k_scores.csv")
    keep = ["Alien", "Breakout", "Pong", "Qbert", "Seaquest", "Boxing"]
    df = df[df["task"].isin(keep) & df["algorithm"].isin(["DER", "DrQ", "SPR"])]
    return ScoreTable(df)


@pytest.fixture(scope="module")
def report(atari_subset):
    return evaluate(atari_subset, normalize="atari100k", seed=0, **FAST)


def test_tables_have_the_documented_columns(report):
    assert list(report.aggregates.columns) == ["algorithm", "metric", "point", "low", "high", "caveat"]
    assert set(report.aggregates["metric"]) == {"mean", "median", "iqm", "optimality_gap"}
    assert list(report.improvement.columns) == ["algorithm_x", "algorithm_y", "point", "low", "high", "caveat"]
    assert list(report.profiles.columns) == ["algorithm", "kind", "tau", "fraction", "low", "high"]
    assert {"algorithm", "task", "n_runs", "mean", "low", "high"} <= set(report.per_task.columns)
    assert list(report.ranks.columns) == ["algorithm", "task", "rank", "probability"]
    prov = report.provenance
    assert prov["reps"] == 600 and prov["seed"] == 0 and prov["method"] == "bootstrap-t"
    assert prov["normalization"].startswith("human-normalised")
    assert {"numpy", "scipy", "pandas", "rl_reliable_logger"} <= set(prov["versions"])


def test_points_equal_published_definitions(atari_subset, report):
    from rl_reliable_logger.data.normalize import normalize

    scores, tasks = normalize(atari_subset, "atari100k").to_rliable()
    for alg, x in scores.items():
        got = report.aggregates.set_index(["algorithm", "metric"])["point"]
        assert got[(alg, "iqm")] == pytest.approx(scipy.stats.trim_mean(x, 0.25, axis=None), rel=1e-12)
        assert got[(alg, "mean")] == pytest.approx(x.mean(), rel=1e-12)
        assert got[(alg, "median")] == pytest.approx(np.median(x.mean(axis=0)), rel=1e-12)
        assert got[(alg, "optimality_gap")] == pytest.approx(1 - np.minimum(x, 1).mean(), rel=1e-12)
    x, y = scores["SPR"], scores["DER"]
    u = np.mean(
        [((x[:, m, None] > y[None, :, m]) + 0.5 * (x[:, m, None] == y[None, :, m])).mean() for m in range(len(tasks))]
    )
    poi = report.improvement.set_index(["algorithm_x", "algorithm_y"])["point"]
    assert poi[("SPR", "DER")] == pytest.approx(u)
    assert poi[("DER", "SPR")] == pytest.approx(1 - u)


def test_intervals_contain_points_and_seed_reproduces(atari_subset, report):
    agg = report.aggregates
    assert (agg["low"] <= agg["point"] + 1e-12).all() and (agg["point"] <= agg["high"] + 1e-12).all()
    again = evaluate(atari_subset, normalize="atari100k", seed=0, **FAST)
    pd.testing.assert_frame_equal(again.aggregates, report.aggregates)
    pd.testing.assert_frame_equal(again.improvement, report.improvement)
    other = evaluate(atari_subset, normalize="atari100k", seed=1, **FAST)
    assert not np.allclose(other.aggregates["low"], report.aggregates["low"])


def test_profiles_are_monotone_and_ranks_are_distributions(report):
    for (alg, kind), g in report.profiles.groupby(["algorithm", "kind"]):
        assert np.all(np.diff(g["fraction"].to_numpy()) <= 1e-12), (alg, kind)
        assert ((g["low"] <= g["fraction"] + 1e-12) & (g["fraction"] <= g["high"] + 1e-12)).all()
    totals = report.ranks.groupby(["algorithm", "task"])["probability"].sum()
    np.testing.assert_allclose(totals, 1.0)
    per_rank = report.ranks.groupby(["task", "rank"])["probability"].sum()
    np.testing.assert_allclose(per_rank, 1.0)


def test_differences_are_point_differences(report):
    points = report.aggregates.set_index(["algorithm", "metric"])["point"]
    for row in report.differences.itertuples():
        assert row.point == pytest.approx(points[(row.algorithm_x, row.metric)] - points[(row.algorithm_y, row.metric)])
        assert row.low <= row.point + 1e-12 <= row.high + 2e-12


def test_rank_probabilities_share_ties():
    from rl_reliable_logger.stats.profiles import rank_probabilities

    means = np.array([[[1.0], [2.0]], [[2.0], [2.0]]])  # (A=2, R=2, M=1): replicate 2 is a tie
    probs = rank_probabilities(means)
    assert probs[0, 0].tolist() == [0.25, 0.75] and probs[1, 0].tolist() == [0.75, 0.25]


@pytest.mark.parametrize("levels", [3, 0])
def test_rank_probabilities_by_sorting_match_all_pairs_comparisons(levels):
    """Ranks from one sort per (replicate, task), chunked over replicates, are the pairwise definition: the
    number of algorithms above and tied with each, the tie's ranks shared equally (many ties with 3 levels)."""
    from rl_reliable_logger.stats.profiles import rank_probabilities

    rng = np.random.default_rng(levels)
    shape = (7, 301, 4)
    means = rng.integers(0, levels, shape).astype(float) if levels else rng.normal(size=shape)
    above = (means[None] > means[:, None]).sum(axis=1)  # (A, R, M)
    ties = (means[None] == means[:, None]).sum(axis=1)
    expected = np.stack([(((above <= k) & (k < above + ties)) / ties).mean(axis=1) for k in range(shape[0])], axis=-1)
    for chunk_bytes in (1, 5_000, 2**26):  # 1, 2 and all replicates per chunk
        np.testing.assert_allclose(rank_probabilities(means, chunk_bytes=chunk_bytes), expected, rtol=0, atol=1e-14)


def test_unequal_runs_and_single_run_cells_are_handled():
    rng = np.random.default_rng(0)
    rows = [("A", "x", s, rng.normal()) for s in range(5)] + [("A", "y", 0, 1.0)]
    rows += [("B", "x", s, rng.normal() + 1) for s in range(3)] + [("B", "y", s, 2.0 + s) for s in range(4)]
    table = ScoreTable(pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]))
    report = evaluate(table, seed=0, **FAST)
    assert any("single run" in w for w in report.warnings)
    assert report.provenance["runs_per_task"]["A"] == {"x": 5, "y": 1}
    single = report.per_task.set_index(["algorithm", "task"]).loc[("A", "y")]
    # one run: the mean, but no interval (Student-t has 0 degrees of freedom), and the row says why
    assert single["mean"] == 1.0 and np.isnan(single["low"]) and np.isnan(single["high"])
    assert single["caveat"].startswith("one run: no interval")


def test_task_bootstrap_widens_intervals(atari_subset):
    plain = evaluate(atari_subset, normalize="atari100k", seed=0, **FAST).headline("mean")
    tasks = evaluate(atari_subset, normalize="atari100k", seed=0, task_bootstrap=True, **FAST).headline("mean")
    assert ((tasks["high"] - tasks["low"]) > (plain["high"] - plain["low"])).all()


@pytest.mark.parametrize("method", ["basic", "bc", "bca"])
def test_other_interval_methods_run_and_bracket_the_point(atari_subset, method):
    rep = evaluate(atari_subset, normalize="atari100k", seed=0, method=method, **FAST)
    agg = rep.aggregates
    assert (agg["low"] < agg["high"]).all()
    assert rep.provenance["method"] == method


def test_report_tables_round_trip_through_a_folder(report, tmp_path):
    save_tables(report, tmp_path)
    back = Report.load(tmp_path)
    pd.testing.assert_frame_equal(back.aggregates, report.aggregates, check_dtype=False)
    assert back.provenance["seed"] == 0 and back.warnings == report.warnings


def test_max_over_training_score_key_is_warned():
    df = pd.DataFrame({"algorithm": ["A"] * 4, "task": ["x"] * 4, "seed": range(4), "max_return": [1.0, 2, 3, 4]})
    table = ScoreTable(df, score="max_return", source={"score_column": "max_return"})
    assert any("maximum over training" in w for w in evaluate(table, seed=0, **FAST).warnings)


def test_results_do_not_depend_on_row_order(atari_subset):
    shuffled = ScoreTable(atari_subset.frame.sample(frac=1.0, random_state=3), run_id="run_id")
    a = evaluate(atari_subset, seed=0, **FAST)
    b = evaluate(shuffled, seed=0, **FAST)
    pd.testing.assert_frame_equal(a.aggregates, b.aggregates)
    pd.testing.assert_frame_equal(a.differences, b.differences)
    pd.testing.assert_frame_equal(a.improvement, b.improvement)
