"""Curves and final scores on real, ragged training logs (issue 13, item 3).

DreamerV2 (danijar/dreamerv2 scores, 55 games, 605 runs): most runs last logged at 200M frames, 211 at
199M (logging every 1M), 30 stop much earlier. Dopamine (examples/): identical steps for every run. A
synthetic case logs seeds at jittered steps, as episode-end logging does.
"""

import json

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from tests.support.paths import EXAMPLES, SHARED_DATA

FAST = {"reps": 50, "profile_reps": 20, "improvement_reps": 20}
DREAMER = SHARED_DATA / "dreamerv2_atari" / "atari-dreamerv2.json"


@pytest.fixture(scope="module")
def dreamer_runs() -> list[dict]:
    if not DREAMER.exists():
        pytest.skip(f"shared data not found at {DREAMER} (set RL_RELIABLE_SHARED_DATA)")
    return json.loads(DREAMER.read_text())


def _long(runs: list[dict]) -> pd.DataFrame:
    rows = [(r["method"], r["task"], r["seed"], x, y) for r in runs for x, y in zip(r["xs"], r["ys"])]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "step", "score"])


def _expected_counts(runs: list[dict], grid: np.ndarray, end: float, tolerance: float) -> dict[str, np.ndarray]:
    """Brute force: a run counts at step t if it logged at or after t, or finished within tolerance of the end."""
    out: dict[str, np.ndarray] = {}
    for r in runs:
        last = r["xs"][-1]
        counts = np.array([last >= t or last >= end - tolerance for t in grid], dtype=int)
        out[r["method"]] = out.get(r["method"], 0) + counts
    return out


def test_dreamerv2_curves_keep_every_run_up_to_its_last_step(dreamer_runs):
    """Old rule: the grid stopped at 199M and 30 runs left the whole curve (211 more whenever every cell
    has a 200M run). Now 199M counts as the end, and the 30 short runs count until they stop."""
    games = {"atari_breakout", "atari_qbert", "atari_pong", "atari_montezuma_revenge", "atari_phoenix"}
    runs = [r for r in dreamer_runs if r["task"] in games]
    report = evaluate(ScoreTable(_long(runs), step="step"), seed=0, curves=True, curve_reps=100, **FAST)
    curves = report.curves
    grid = np.sort(curves["step"].unique())
    assert grid[0] == 1e6 and grid[-1] == 200e6  # to the real end, though qbert's longest run stops at 199M
    expected = _expected_counts(runs, grid, 200e6, 1e6)
    for alg, g in curves[curves["metric"] == "iqm"].groupby("algorithm"):
        np.testing.assert_array_equal(g.sort_values("step")["n_runs"].to_numpy(), expected[alg])
    # at the first step every run counts; at 199M-or-later every run that logged 199M still counts
    first = curves[curves["step"] == grid[0]].drop_duplicates("algorithm").set_index("algorithm")["n_runs"]
    assert first.to_dict() == {"dreamerv2": 40, "nosched": 15}
    at_199 = sum(r["xs"][-1] >= 199e6 for r in runs)
    assert curves[curves["step"] == grid[-1]].drop_duplicates("algorithm")["n_runs"].sum() == at_199
    # the warning names the cells that lose runs, and where
    lost = [w for w in report.warnings if w.startswith("curves:")]
    assert len(lost) == 1
    assert "dreamerv2 / atari_breakout 8 → 4 runs from step" in lost[0]
    assert "dreamerv2 / atari_montezuma_revenge 8 → 2 runs" in lost[0]
    assert "atari_pong" not in lost[0] and "atari_qbert" not in lost[0]  # 199M is not a loss
    cells = {(c["algorithm"], c["task"]): c for c in report.provenance["curves"]["runs_per_cell"]}
    assert cells[("dreamerv2", "atari_qbert")]["n_runs"] == [8] * grid.size
    assert cells[("dreamerv2", "atari_qbert")]["tolerance"] == 1e6


def test_dreamerv2_final_scores_name_runs_below_the_others_and_budget_takes_a_common_step(dreamer_runs):
    games = {"atari_breakout", "atari_gopher", "atari_pong"}
    runs = [r for r in dreamer_runs if r["task"] in games]
    table = ScoreTable(_long(runs), step="step")
    report = evaluate(table, seed=0, **FAST)
    (mixed,) = [w for w in report.warnings if "mix training budgets" in w]
    short = sorted((r["method"], r["task"], r["seed"]) for r in runs if r["xs"][-1] < 199e6)
    assert short  # breakout and gopher have runs stopping early
    for alg, task, seed in short:
        assert f"{alg} / {task} run {seed} (last step" in mixed
    assert "(last step 1.99e+08" not in mixed  # one logging interval short is not a different budget

    at = evaluate(table, seed=0, budget=100e6, **FAST)
    scores = at.scores.set_index(["algorithm", "task", "run_id"])["score"]
    for r in runs:
        xs = np.asarray(r["xs"])
        if xs[0] > 100e6:
            continue
        expected = r["ys"][int(np.searchsorted(xs, 100e6, side="right")) - 1]
        assert scores[(r["method"], r["task"], r["seed"])] == expected
    (below,) = [w for w in at.warnings if "taken at the budget" in w]
    stops = sorted((r["method"], r["task"], r["seed"]) for r in runs if r["xs"][-1] < 99e6)
    assert stops and all(f"{a} / {t} run {s} (last step" in below for a, t, s in stops)
    assert at.provenance["options"]["budget"] == 100e6


def _jittered(seed: int = 3) -> pd.DataFrame:
    """2 algorithms × 3 tasks × 5 seeds, logged about every 1000 steps at episode ends (jitter ±150)."""
    rng = np.random.default_rng(seed)
    rows = []
    for alg in ("A", "B"):
        for task in ("x", "y", "z"):
            for s in range(5):
                steps = np.arange(1, 21) * 1000 + rng.integers(-150, 150, size=20)
                scores = np.cumsum(rng.normal(1.0, 0.5, size=20)) + (alg == "B")
                rows += [(alg, task, s, int(st), float(sc)) for st, sc in zip(steps, scores)]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "step", "score"])


def test_jittered_logging_steps_lose_no_run():
    """Old rule: most of the 30 runs (those whose last episode ended before their cell's latest) were
    dropped from the whole curve and cells shrank without a warning. Now every run counts everywhere."""
    report = evaluate(ScoreTable(_jittered(), step="step"), seed=0, curves=True, curve_reps=100, **FAST)
    assert (report.curves["n_runs"] == 15).all()
    assert not any("curves:" in w or "mix training budgets" in w for w in report.warnings)
    assert report.provenance["curves"]["stop_early"] == []


def test_jittered_run_that_crashed_is_counted_until_it_stops_and_named():
    frame = _jittered()
    crashed = (frame["algorithm"] == "A") & (frame["task"] == "y") & (frame["seed"] == 2) & (frame["step"] > 12_500)
    report = evaluate(ScoreTable(frame[~crashed], step="step"), seed=0, curves=True, curve_reps=100, **FAST)
    a = report.curves[(report.curves["algorithm"] == "A") & (report.curves["metric"] == "mean")].sort_values("step")
    last = frame[(frame["algorithm"] == "A") & (frame["task"] == "y") & (frame["seed"] == 2) & ~crashed]["step"].max()
    np.testing.assert_array_equal(a["n_runs"], np.where(a["step"] <= last, 15, 14))
    assert any(w.startswith("curves:") and "A / y 5 → 4 runs" in w for w in report.warnings)
    assert any("mix training budgets" in w and "A / y run 2" in w for w in report.warnings)


def _shuffled_equal(frame: pd.DataFrame, **kwargs) -> None:
    base = evaluate(ScoreTable(frame, **kwargs), seed=0, curves=True, curve_reps=200, **FAST).curves
    for seed in (1, 2):
        shuffled = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
        other = evaluate(ScoreTable(shuffled, **kwargs), seed=0, curves=True, curve_reps=200, **FAST).curves
        # the report lists algorithms in input order (colours); the numbers must not move
        keys = ["algorithm", "metric", "step"]
        pd.testing.assert_frame_equal(
            base.sort_values(keys).reset_index(drop=True), other.sort_values(keys).reset_index(drop=True)
        )


def test_curve_intervals_do_not_depend_on_row_order_dopamine():
    wide = pd.read_csv(EXAMPLES / "dopamine_atari_curves.csv")
    wide = wide[wide["game"].isin(sorted(wide["game"].unique())[:6]) & wide["agent"].isin(["DQN", "Rainbow"])]
    long = wide.melt(id_vars=["game", "agent", "run"], var_name="iteration", value_name="return")
    long["iteration"] = long["iteration"].str.removeprefix("iter_").astype(int)
    _shuffled_equal(long, algorithm="agent", task="game", seed="run", score="return", step="iteration")


def test_curve_intervals_do_not_depend_on_row_order_ragged():
    frame = _jittered()
    crashed = (frame["task"] == "z") & (frame["seed"] == 4) & (frame["step"] > 9_000)
    _shuffled_equal(frame[~crashed], step="step")


def test_curves_with_runs_lost_do_not_depend_on_chunk_size():
    frame = _jittered()
    crashed = (frame["task"] == "z") & (frame["seed"] == 4) & (frame["step"] > 9_000)
    table = ScoreTable(frame[~crashed], step="step")
    runs = [
        evaluate(table, seed=0, curves=True, curve_reps=150, chunk_bytes=c, **FAST).curves for c in (2_000, 1 << 26)
    ]
    assert runs[0]["n_runs"].nunique() == 2  # the crashed run makes two stretches
    pd.testing.assert_frame_equal(runs[0], runs[1])


def test_curves_of_every_step_at_once_do_not_depend_on_how_steps_are_grouped():
    """Rectangular Dopamine cells: the sorted fast path over groups of grid steps; a tiny chunk puts one step in a
    group (and few replicates in a chunk), the default all of them."""
    wide = pd.read_csv(EXAMPLES / "dopamine_atari_curves.csv")
    wide = wide[wide["game"].isin(sorted(wide["game"].unique())[:4]) & wide["agent"].isin(["DQN", "Rainbow"])]
    long = wide.melt(id_vars=["game", "agent", "run"], var_name="iteration", value_name="return")
    long["iteration"] = long["iteration"].str.removeprefix("iter_").astype(int)
    table = ScoreTable(long, algorithm="agent", task="game", seed="run", score="return", step="iteration")
    runs = [
        evaluate(table, seed=0, curves=True, curve_reps=120, chunk_bytes=c, **FAST).curves for c in (3_000, 1 << 26)
    ]
    assert runs[0]["step"].nunique() > 10
    pd.testing.assert_frame_equal(runs[0], runs[1], check_exact=True)
