"""Hand-built Reports for the figure/HTML/table tests, independent of ``evaluate()``.

Scores are the first runs of real Atari 100k human-normalised results (Agarwal et al. 2021,
copied from the team's shared data, rliable_atari_100k) for up to 5 algorithms; more algorithms are
made by scaling those. Every table follows the Report schema and its intervals come from a
small, explicit stratified bootstrap written here in plain numpy (not the package's engine).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from rl_reliable_logger.analysis.report import Report

# human-normalised final scores, first 5 runs: {algorithm: {game: [...]}}, from final_scores_hns.json
# (DrQ(eps) renamed DrQ(ε) and OTR renamed OTRainbow to exercise unicode and longer names)
REAL = {
    "DER": {
        "Alien": [0.0448, 0.0863, 0.0661, 0.1042, 0.0782],
        "Breakout": [0.2021, 0.2243, 0.2503, 0.2042, 0.3035],
        "Pong": [0.7147, 0.2669, 0.2329, 0.0343, 0.3788],
        "Seaquest": [0.0065, 0.0042, 0.0042, 0.0070, 0.0032],
        "Boxing": [-0.3275, -0.1392, 0.0033, -0.3358, -0.3400],
    },
    "SPR": {
        "Alien": [0.0705, 0.0917, 0.0911, 0.0842, 0.1000],
        "Breakout": [0.5170, 0.4552, 0.6163, 0.5267, 0.4632],
        "Pong": [0.6445, 0.2006, 0.3796, 0.7280, 0.4215],
        "Seaquest": [0.0127, 0.0090, 0.0160, 0.0116, 0.0108],
        "Boxing": [3.5417, 5.0575, 2.6342, 2.6900, 1.4342],
    },
    "DrQ(ε)": {
        "Alien": [0.0779, 0.0926, 0.0862, 0.0795, 0.0606],
        "Breakout": [4.1233, 0.4656, 0.5920, 0.4372, 0.6934],
        "Pong": [0.0116, 0.8932, 0.4487, 0.1351, 0.0997],
        "Seaquest": [0.0042, 0.0041, 0.0074, 0.0071, 0.0069],
        "Boxing": [1.3058, 0.5083, 0.6942, 0.6008, 0.5917],
    },
    "OTRainbow": {
        "Alien": [0.0448, 0.0408, 0.0548, 0.0411, 0.0436],
        "Breakout": [0.2868, 0.2278, 0.1816, 0.1622, 0.2139],
        "Pong": [0.4170, 0.2898, 0.3561, 0.4397, 0.4034],
        "Seaquest": [0.0068, 0.0046, 0.0039, 0.0031, 0.0054],
        "Boxing": [0.1875, 0.1467, 0.2542, 0.2350, 0.0450],
    },
    "SimPLe": {
        "Alien": [0.0651, 0.0301, 0.0418, 0.0286, 0.1163],
        "Breakout": [0.2990, 0.5104, 0.7314, 0.5104, 0.4982],
        "Pong": [1.1813, 0.0796, 1.1335, 1.1720, 1.1809],
        "Seaquest": [0.0153, 0.0092, 0.0118, 0.0187, 0.0181],
        "Boxing": [1.0464, 1.7404, -0.0005, -0.3716, 0.7729],
    },
}


def _metric(scores: list[np.ndarray], name: str) -> float:
    """rliable's definitions on a ragged list of per-task run arrays."""
    task_means = np.array([s.mean() for s in scores])
    flat = np.concatenate(scores)
    if name == "mean":
        return float(task_means.mean())
    if name == "median":
        return float(np.median(task_means))
    if name == "iqm":
        return float(stats.trim_mean(flat, 0.25))
    if name == "optimality_gap":
        return float(1.0 - np.minimum(flat, 1.0).mean())
    raise KeyError(name)


def _boot(cells: list[np.ndarray], rng: np.random.Generator, reps: int) -> list[list[np.ndarray]]:
    return [[c[rng.integers(0, len(c), len(c))] for c in cells] for _ in range(reps)]


def make_scores(n_algorithms: int, names: list[str] | None = None, ragged: bool = True) -> pd.DataFrame:
    base = list(REAL)
    names = names or [
        base[i] if i < len(base) else f"{base[i % len(base)]}-v{i // len(base) + 1}" for i in range(n_algorithms)
    ]
    rows = []
    for i, alg in enumerate(names):
        src = REAL[base[i % len(base)]]
        scale = 1.0 + 0.15 * (i // len(base))
        for game, runs in src.items():
            runs = runs[:4] if (ragged and i == 0 and game == "Pong") else runs  # one crashed seed
            for r, v in enumerate(runs):
                rows.append(
                    {"algorithm": alg, "task": game, "run_id": f"{alg}/{game}/{r}", "seed": r, "score": v * scale}
                )
    return pd.DataFrame(rows)


def make_report(
    n_algorithms: int = 3,
    *,
    names: list[str] | None = None,
    reps: int = 150,
    seed: int = 0,
    curves: bool = True,
    normalize: str | None = "atari",
) -> Report:
    """A Report whose every table is filled, computed from ``make_scores`` by a tiny bootstrap."""
    rng = np.random.default_rng(seed)
    scores = make_scores(n_algorithms, names)
    algs = list(pd.unique(scores["algorithm"]))
    tasks = sorted(pd.unique(scores["task"]))
    cells = {a: [scores[(scores.algorithm == a) & (scores.task == t)]["score"].to_numpy() for t in tasks] for a in algs}
    boots = {a: _boot(cells[a], rng, reps) for a in algs}
    metrics = ["mean", "median", "iqm", "optimality_gap"]

    agg, per_task, improvement, differences, profiles, ranks, gap, curve_rows = [], [], [], [], [], [], [], []
    for a in algs:
        for m in metrics:
            dist = np.array([_metric(b, m) for b in boots[a]])
            agg.append(
                {
                    "algorithm": a,
                    "metric": m,
                    "point": _metric(cells[a], m),
                    "low": np.quantile(dist, 0.025),
                    "high": np.quantile(dist, 0.975),
                }
            )
        for t_i, t in enumerate(tasks):
            c = cells[a][t_i]
            d = np.array([b[t_i].mean() for b in boots[a]])
            per_task.append(
                {
                    "algorithm": a,
                    "task": t,
                    "n_runs": len(c),
                    "mean": c.mean(),
                    "low": np.quantile(d, 0.025),
                    "high": np.quantile(d, 0.975),
                    "median": np.median(c),
                    "min": c.min(),
                    "max": c.max(),
                }
            )
        taus = np.linspace(0.0, 1.0, 21)
        for kind in ("runs", "tasks"):

            def prof(cs, kind=kind, taus=taus):
                vals = np.concatenate(cs) if kind == "runs" else np.array([c.mean() for c in cs])
                return np.array([(vals > tau).mean() for tau in taus])

            point = prof(cells[a])
            dist = np.array([prof(b) for b in boots[a]])
            for k, tau in enumerate(taus):
                profiles.append(
                    {
                        "algorithm": a,
                        "kind": kind,
                        "tau": tau,
                        "fraction": point[k],
                        "low": np.quantile(dist[:, k], 0.025),
                        "high": np.quantile(dist[:, k], 0.975),
                    }
                )
        for g in np.linspace(0.25, 1.5, 6):

            def og(cs, g=g):
                return float(g - np.minimum(np.concatenate(cs), g).mean())

            dist = np.array([og(b) for b in boots[a]])
            gap.append(
                {
                    "algorithm": a,
                    "gamma": g,
                    "point": og(cells[a]),
                    "low": np.quantile(dist, 0.025),
                    "high": np.quantile(dist, 0.975),
                }
            )
        if curves:
            iqm_dist = np.array([_metric(b, "iqm") for b in boots[a]])
            for s in range(0, 11):
                f = (s / 10) ** 0.7
                curve_rows.append(
                    {
                        "algorithm": a,
                        "metric": "iqm",
                        "step": s * 10_000,
                        "point": f * _metric(cells[a], "iqm"),
                        "low": f * np.quantile(iqm_dist, 0.025),
                        "high": f * np.quantile(iqm_dist, 0.975),
                    }
                )

    def poi(xs, ys):
        return float(
            np.mean(
                [
                    (np.sum(x[:, None] > y[None, :]) + 0.5 * np.sum(x[:, None] == y[None, :])) / (len(x) * len(y))
                    for x, y in zip(xs, ys)
                ]
            )
        )

    for x in algs:
        for y in algs:
            if x == y:
                continue
            dist = np.array([poi(bx, by) for bx, by in zip(boots[x][:60], boots[y][:60])])
            improvement.append(
                {
                    "algorithm_x": x,
                    "algorithm_y": y,
                    "point": poi(cells[x], cells[y]),
                    "low": np.quantile(dist, 0.025),
                    "high": np.quantile(dist, 0.975),
                }
            )
            for m in ("iqm", "mean"):
                dist = np.array([_metric(bx, m) - _metric(by, m) for bx, by in zip(boots[x], boots[y])])
                differences.append(
                    {
                        "algorithm_x": x,
                        "algorithm_y": y,
                        "metric": m,
                        "point": _metric(cells[x], m) - _metric(cells[y], m),
                        "low": np.quantile(dist, 0.025),
                        "high": np.quantile(dist, 0.975),
                    }
                )
    # rank distribution of the mean score per task, averaged over tasks
    n = len(algs)
    counts = np.zeros((n, n))
    for r in range(reps):
        for t_i in range(len(tasks)):
            means = np.array([-boots[a][r][t_i].mean() for a in algs])
            order = stats.rankdata(means, method="ordinal").astype(int)
            counts[np.arange(n), order - 1] += 1
    probs = counts / (reps * len(tasks))
    for i, a in enumerate(algs):
        for k in range(n):
            ranks.append({"algorithm": a, "task": "__average__", "rank": k + 1, "probability": probs[i, k]})

    prov = {
        "source": {"kind": "test fixture", "path": "tests/report_fixtures.py"},
        "algorithms": algs,
        "tasks": tasks,
        "normalize": normalize,
        "method": "percentile",
        "ci": 0.95,
        "reps": reps,
        "seed": seed,
        "versions": {"rl_reliable_logger": "0.1.0"},
        "runs_dropped": [{"run_id": "x/1", "algorithm": algs[0], "task": "Pong", "reason": "non-finite score (nan)"}],
    }
    warnings = [
        "Only 4-5 runs per task: intervals are wide.",
        "Scores for Boxing look like the max over training, not the final score.",
    ]
    return Report(
        aggregates=pd.DataFrame(agg),
        per_task=pd.DataFrame(per_task),
        improvement=pd.DataFrame(improvement),
        differences=pd.DataFrame(differences),
        profiles=pd.DataFrame(profiles),
        ranks=pd.DataFrame(ranks),
        gap_curve=pd.DataFrame(gap),
        curves=pd.DataFrame(curve_rows) if curves else Report().curves,
        scores=scores,
        provenance=prov,
        warnings=warnings,
    )


def small_report(shift: float = 0.0) -> Report:
    """A tiny two-algorithm Report (aggregates, profiles, improvement) for the tracker sink tests."""
    agg = pd.DataFrame(
        {
            "algorithm": ["ucb", "ucb", "gradient", "gradient"],
            "metric": ["iqm", "mean", "iqm", "mean"],
            "point": [0.9 + shift, 0.85, 0.6, 0.62],
            "low": [0.8, 0.7, 0.5, 0.5],
            "high": [1.0, 0.95, 0.7, 0.75],
        }
    )
    prof = pd.DataFrame(
        {
            "algorithm": ["ucb", "ucb", "gradient", "gradient"],
            "kind": ["runs"] * 4,
            "tau": [0.0, 1.0, 0.0, 1.0],
            "fraction": [1.0, 0.5, 1.0, 0.2],
            "low": [1.0, 0.3, 1.0, 0.1],
            "high": [1.0, 0.7, 1.0, 0.4],
        }
    )
    imp = pd.DataFrame(
        {"algorithm_x": ["ucb"], "algorithm_y": ["gradient"], "point": [0.8], "low": [0.6], "high": [0.95]}
    )
    return Report(
        aggregates=agg,
        profiles=prof,
        improvement=imp,
        provenance={
            "source": "wandb-offline",
            "reps": 200,
            "seed": 0,
            "options": {"reps": 200, "seed": 0},
            "created_at": f"t{shift}",
        },
        warnings=[],
    )


def hand_report(source_runs: dict[tuple[str, int], str], experiment: tuple[str, str], shift: float = 0.0) -> Report:
    """A small report with hand-written numbers (the sink must carry them over unchanged)."""
    aggregates = pd.DataFrame(
        {
            "algorithm": ["PPO", "PPO", "DQN", "DQN"],
            "metric": ["iqm", "mean", "iqm", "mean"],
            "point": [0.75 + shift, 0.70, 0.25, 0.30],
            "low": [0.60, 0.55, 0.10, 0.20],
            "high": [0.90, 0.85, 0.40, 0.45],
        }
    )
    per_task = pd.DataFrame(
        {
            "algorithm": ["PPO", "DQN"],
            "task": ["Pong", "Pong"],
            "n_runs": [2, 2],
            "mean": [0.7, 0.3],
            "low": [0.6, 0.2],
            "high": [0.8, 0.4],
            "median": [0.7, 0.3],
            "min": [0.6, 0.2],
            "max": [0.8, 0.4],
        }
    )
    improvement = pd.DataFrame(
        {"algorithm_x": ["PPO"], "algorithm_y": ["DQN"], "point": [1.0], "low": [1.0], "high": [1.0]}
    )
    scores = pd.DataFrame(
        {
            "algorithm": [a for a, _ in source_runs],
            "task": ["Pong"] * len(source_runs),
            "run_id": [str(s) for _, s in source_runs],
            "seed": [s for _, s in source_runs],
            "score": [0.6, 0.8, 0.2, 0.4],
            "tracker_run_id": list(source_runs.values()),
        }
    )
    exp_id, exp_name = experiment
    provenance = {
        "source": {
            "tracker": "mlflow",
            "experiments": [{"id": exp_id, "name": exp_name}],
            "filter": "tags.sweep = 'a'",
            "fields": {"algorithm": "tags.rl_reliable_algorithm"},
        },
        "reps": 200,
        "seed": 0,
        "method": "percentile",
        "options": {"reps": 200, "seed": 0, "method": "percentile"},
    }
    return Report(
        aggregates=aggregates,
        per_task=per_task,
        improvement=improvement,
        scores=scores,
        provenance=provenance,
        warnings=["2 runs per cell: intervals are wide"],
    )


def heavy_tailed_frame() -> pd.DataFrame:
    """H1 and H2 heavy-tailed (each task's first of 3 runs huge: their means carry the mean's caveat, and so do
    their differences), C calm: the data of the warning and caveat tests (library and command line)."""
    rng = np.random.default_rng(1)
    rows = [
        (alg, f"task{t}", s, float(rng.lognormal(4.0, 0.5)) if alg != "C" and s == 0 else float(rng.normal(1.0, 0.1)))
        for alg in ("H1", "H2", "C")
        for t in range(6)
        for s in range(3)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])
