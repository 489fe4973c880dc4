"""evaluate() against rliable's published definitions (numpy/scipy, computed here) and, when the
benchmark venv exists, against rliable 1.2 itself.

Data: a small real subset of ``examples/atari100k_scores.csv`` (the rliable paper's Atari 100k
runs): DER, DrQ, SPR (10 runs per game) and SimPLe (5 runs per game) on six games chosen to include
tied run scores (PrivateEye, Freeway), human-normalised with the standard random/human scores typed
in below (independent of the package's reference table; they reproduce the published
``human_normalized`` column exactly).
"""

from __future__ import annotations

import itertools
import json
import subprocess

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from rl_reliable_logger import evaluate
from rl_reliable_logger.data.scores import ScoreTable
from tests.support.paths import REPO, SHARED_DATA

ROOT = REPO
CSV = ROOT / "examples" / "atari100k_scores.csv"
VENV_PY = ROOT / "benchmarks" / ".rliable-venv" / "bin" / "python"
WORKER = ROOT / "benchmarks" / "rliable" / "rliable_worker.py"

# (random, human) scores: Mnih et al. (2015) / Agarwal et al. (2021) Atari 100k table
REFERENCE = {
    "Alien": (227.8, 7127.7),
    "Boxing": (0.1, 12.1),
    "Breakout": (1.7, 30.5),
    "Freeway": (0.0, 29.6),
    "Pong": (-20.7, 14.6),
    "PrivateEye": (24.9, 69571.3),
}
GAMES = sorted(REFERENCE)
ALGS = ["DER", "DrQ", "SPR", "SimPLe"]


@pytest.fixture(scope="module")
def subset() -> pd.DataFrame:
    df = pd.read_csv(CSV)
    return df[df["algorithm"].isin(ALGS) & df["task"].isin(GAMES)].reset_index(drop=True)


@pytest.fixture(scope="module")
def normalised(subset) -> dict[str, np.ndarray]:
    """{algorithm: (runs, games)} human-normalised, computed here by hand."""
    out = {}
    for alg in ALGS:
        cols = []
        for g in GAMES:
            raw = subset[(subset["algorithm"] == alg) & (subset["task"] == g)].sort_values("seed")["score"].to_numpy()
            lo, hi = REFERENCE[g]
            cols.append((raw - lo) / (hi - lo))
        out[alg] = np.stack(cols, axis=1)
    return out


def rliable_poi(x: np.ndarray, y: np.ndarray) -> float:
    """Per-task Mann-Whitney U / (n_x n_y) with ties 1/2, averaged over tasks: explicit loops."""
    per_task = []
    for m in range(x.shape[1]):
        wins = 0.0
        for a in x[:, m]:
            for b in y[:, m]:
                wins += 1.0 if a > b else (0.5 if a == b else 0.0)
        per_task.append(wins / (x.shape[0] * y.shape[0]))
    return float(np.mean(per_task))


def test_subset_is_what_the_test_claims(subset, normalised):
    assert {a: normalised[a].shape for a in ALGS} == {"DER": (10, 6), "DrQ": (10, 6), "SPR": (10, 6), "SimPLe": (5, 6)}
    # ties between runs exist, so the 1/2-for-ties rule is actually exercised by the POI check
    ties = sum(
        int(np.sum(normalised[x][:, m][:, None] == normalised[y][:, m][None, :]))
        for x, y in itertools.combinations(ALGS, 2)
        for m in range(len(GAMES))
    )
    assert ties > 0


def test_reference_scores_reproduce_the_published_normalised_scores(normalised):
    """The typed-in random/human scores give the published human-normalised scores (to 1e-12)."""
    long = SHARED_DATA / "rliable_atari_100k" / "final_scores_long.csv"
    if not long.exists():
        pytest.skip(f"shared data not found at {long} (set RL_RELIABLE_SHARED_DATA)")
    pub = pd.read_csv(long)
    pub = pub[pub["algorithm"].isin(ALGS) & pub["game"].isin(GAMES) & (pub["run_index"] < 10)]
    for alg in ALGS:
        for j, g in enumerate(GAMES):
            p = pub[(pub["algorithm"] == alg) & (pub["game"] == g)].sort_values("run_index")["human_normalized"]
            np.testing.assert_allclose(normalised[alg][:, j], p.to_numpy(), rtol=0, atol=1e-12)


def test_point_estimates_equal_published_definitions(subset, normalised):
    report = evaluate(
        ScoreTable(subset),
        normalize="atari100k",
        method="percentile",
        reps=200,
        profile_reps=50,
        improvement_reps=50,
        seed=0,
    )
    agg = report.aggregates.set_index(["algorithm", "metric"])["point"]
    for alg, x in normalised.items():
        expected = {
            "mean": x.mean(),  # rliable aggregate_mean: mean of per-task means (rectangular: of all runs)
            "median": np.median(x.mean(axis=0)),  # median of per-task means
            "iqm": scipy.stats.trim_mean(x, 0.25, axis=None),  # over all runs x tasks
            "optimality_gap": 1.0 - np.mean(np.minimum(x, 1.0)),  # gamma = 1
        }
        for metric, value in expected.items():
            assert agg[(alg, metric)] == pytest.approx(value, abs=1e-9), (alg, metric)
    imp = report.improvement.set_index(["algorithm_x", "algorithm_y"])["point"]
    assert len(imp) == len(ALGS) * (len(ALGS) - 1)  # both directions of every pair
    for x, y in itertools.permutations(ALGS, 2):
        assert imp[(x, y)] == pytest.approx(rliable_poi(normalised[x], normalised[y]), abs=1e-9), (x, y)


def _run_rliable(tmp_path, scores, workloads, reps, improvement_reps, pairs, seed=1):
    algs = list(scores)
    src, dst = tmp_path / "in.npz", tmp_path / "out.json"
    np.savez(
        src,
        algorithms=np.array(algs),
        scores=np.stack([scores[a] for a in algs]),
        taus=np.linspace(0, 1, 5),
        seed=seed,
        reps=reps,
        profile_reps=10,
        improvement_reps=improvement_reps,
        ci=0.95,
        poi_pairs=np.array(pairs, dtype=int).reshape(-1, 2),
        workloads=np.array(workloads),
    )
    proc = subprocess.run([str(VENV_PY), str(WORKER), str(src), str(dst)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(dst.read_text())


@pytest.mark.skipif(not VENV_PY.exists(), reason="rliable venv absent: bash benchmarks/rliable/setup_rliable_venv.sh")
def test_intervals_agree_with_rliable_within_monte_carlo_error(tmp_path, subset, normalised):
    """Both libraries use independent random streams, so endpoints differ by Monte-Carlo error only.

    Tolerance: the 2.5% / 97.5% quantile of B bootstrap replicates has standard error about
    sqrt(p(1-p)/B) / f(q); for a near-normal bootstrap distribution with sd s, f(q) = phi(1.96)/s, so
    SE = s * sqrt(.025*.975/B) / 0.0584 = 0.019 s at B = 20,000, and the difference of two independent
    endpoints has SE 0.027 s. We allow 0.05 x the interval width (= 0.05 x 3.92 s = 0.196 s, 7 SE):
    noise essentially never fails it, while a wrong level (90% instead of 95%) shifts endpoints by
    0.31 s and a non-stratified or task-pooled resampling changes the width far more.
    For POI at 1,000 reps (rliable needs ~25 ms per replicate here) the SE of the difference is 0.12 s,
    so the tolerance is 0.2 x width (0.78 s, 6.5 SE).
    """
    rect = {a: normalised[a] for a in ("DER", "SPR")}  # rliable needs rectangular arrays per algorithm
    sub = subset[subset["algorithm"].isin(rect)]
    reps, poi_reps = 20_000, 1_000
    ours = evaluate(  # rliable's intervals: percentile
        ScoreTable(sub),
        normalize="atari100k",
        method="percentile",
        reps=reps,
        profile_reps=50,
        improvement_reps=poi_reps,
        seed=3,
    )
    theirs = _run_rliable(tmp_path, rect, ["aggregates", "poi"], reps, poi_reps, [(0, 1)])
    agg = ours.aggregates.set_index(["algorithm", "metric"])
    for alg in rect:
        r = theirs["aggregates"][alg]
        for j, metric in enumerate(("mean", "median", "iqm", "optimality_gap")):
            width = r["high"][j] - r["low"][j]
            assert width > 0
            assert agg.loc[(alg, metric), "point"] == pytest.approx(r["point"][j], abs=1e-9)
            for end in ("low", "high"):
                assert abs(agg.loc[(alg, metric), end] - r[end][j]) <= 0.05 * width, (alg, metric, end)
    r = theirs["poi"]["DER,SPR"]
    row = ours.improvement.set_index(["algorithm_x", "algorithm_y"]).loc[("DER", "SPR")]
    assert row["point"] == pytest.approx(r["point"], abs=1e-9)
    width = r["high"] - r["low"]
    for end in ("low", "high"):
        assert abs(row[end] - r[end]) <= 0.2 * width, end
