"""rliable's README usage (aggregates, probability of improvement, sample-efficiency curve, performance profile) as
one function of the modules ``rly``, ``metrics``: run unchanged by rliable 1.2 (in its venv, through
``benchmarks/rliable/rliable_readme_worker.py``) and by the drop-in ``rl_reliable_logger.rliable``. Plain numpy only, so both
interpreters import it; the data come in as arrays (``load_inputs`` builds them in the package's environment).

Data: Atari 100k final scores (``atari_data.py``: 6 algorithms x 10 runs x 26 games, human-normalised) for the
aggregates, the probabilities of improvement and the profile; the README's sample-efficiency curve needs
learning curves, which Atari 100k does not publish, so it uses the dopamine ALE 200M curves of the shared data
folder (6 agents x 5 runs, every game of the 57-game table the agents share, human-normalised), at the README's
frames (its last, 200, is iteration 199 of 199: the last one, 198, here).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

#: The README's frames (in millions), the last clipped to the 199 iterations the dopamine curves have.
FRAMES = np.array([1, 10, 25, 50, 75, 100, 125, 150, 175, 199]) - 1
#: The README's thresholds of the Atari 200M profile.
TAUS = np.linspace(0.0, 8.0, 81)
PAIRS = [("SPR", "SPR-b"), ("SPR", "DrQ(eps)"), ("DrQ(eps)", "DER")]


def readme_usage(
    rly: Any, metrics: Any, finals: dict[str, np.ndarray], curves: dict[str, np.ndarray], reps: dict[str, int]
) -> dict[str, Any]:
    """The README's four snippets (reps as given per snippet); returns every estimate and each snippet's time."""
    out: dict[str, Any] = {"seconds": {}}
    t0 = time.perf_counter()
    aggregate_func = lambda x: np.array(
        [
            metrics.aggregate_median(x),
            metrics.aggregate_iqm(x),
            metrics.aggregate_mean(x),
            metrics.aggregate_optimality_gap(x),
        ]
    )
    out["aggregates"] = rly.get_interval_estimates(finals, aggregate_func, reps=reps["aggregates"])
    t1 = time.perf_counter()
    pairs = {f"{x},{y}": (finals[x], finals[y]) for x, y in PAIRS}
    out["poi"] = rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=reps["poi"])
    t2 = time.perf_counter()
    frames_dict = {algorithm: score[:, :, FRAMES] for algorithm, score in curves.items()}
    iqm = lambda scores: np.array([metrics.aggregate_iqm(scores[..., frame]) for frame in range(scores.shape[-1])])
    out["curve"] = rly.get_interval_estimates(frames_dict, iqm, reps=reps["curve"])
    t3 = time.perf_counter()
    out["profile"] = rly.create_performance_profile(finals, TAUS, reps=reps["profile"])
    t4 = time.perf_counter()
    out["seconds"] = {"aggregates": t1 - t0, "poi": t2 - t1, "curve": t3 - t2, "profile": t4 - t3, "total": t4 - t0}
    return out


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    """The result with arrays as nested lists."""
    out: dict[str, Any] = {"seconds": result["seconds"]}
    for name in ("aggregates", "poi", "curve", "profile"):
        points, cis = result[name]
        out[name] = {
            "points": {k: np.asarray(v, dtype=float).tolist() for k, v in points.items()},
            "intervals": {k: np.asarray(v, dtype=float).tolist() for k, v in cis.items()},
        }
    return out


def mc_tolerance(interval: np.ndarray, reps: int, step: float = 0.0) -> np.ndarray:
    """Tolerance of an endpoint of two independent bootstraps of ``reps`` replicates: about five standard
    errors of the difference of two 2.5% quantiles of a normal replicate distribution (each ≈ 2.7·sd/√reps,
    sd ≈ width / 3.92), 2% of the width, and one ``step`` of the statistic's lattice (a profile's replicates are
    multiples of 1/(runs·tasks): two bootstraps' quantiles can sit one multiple apart)."""
    width = np.abs(interval[1] - interval[0])
    return 5 * 1.42 * 2.7 * (width / 3.92) / np.sqrt(reps) + 0.02 * width + step + 1e-9


def lattice_step(snippet: str, finals: dict[str, np.ndarray]) -> float:
    """The spacing of a snippet's replicate values when they lie on a lattice (the profile's), else 0."""
    return 1.0 / next(iter(finals.values())).size if snippet == "profile" else 0.0


def load_inputs() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(Atari 100k finals {alg: (10, 26)}, ALE curves {agent: (5, games, 199)}), human-normalised."""
    import sys
    from pathlib import Path

    import pandas as pd

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import atari_data

    from rl_reliable_logger.data.normalize import get_normalizer
    from rl_reliable_logger.data.scores import ScoreTable

    table = ScoreTable(atari_data.rectangular_frame())
    finals = atari_data.score_dict(get_normalizer("atari100k").apply(table.final()))

    shared = atari_data.SHARED_DATA
    ref = pd.read_csv(shared / "reference_scores" / "atari_57_random_human_record.csv")
    ref["key"] = ref["game_snake"].str.replace("_", "", regex=False)
    wide = pd.read_csv(shared / "dopamine_atari_baselines" / "atari_curves_wide.csv")
    wide = wide[wide["game"].isin(ref["key"])]
    runs = wide.groupby(["agent", "game"]).size().unstack()
    games = sorted(runs.columns[(runs == 5).all(axis=0)])
    anchors = ref.set_index("key").loc[games]
    iters = [c for c in wide.columns if c.startswith("iter_")]
    curves = {}
    for agent, frame in wide[wide["game"].isin(games)].groupby("agent"):
        frame = frame.sort_values(["game", "run"])
        raw = frame[iters].to_numpy(float).reshape(len(games), 5, len(iters)).transpose(1, 0, 2)
        lo, hi = anchors["random"].to_numpy(float), anchors["human"].to_numpy(float)
        curves[str(agent)] = (raw - lo[None, :, None]) / (hi - lo)[None, :, None]
    return finals, curves
