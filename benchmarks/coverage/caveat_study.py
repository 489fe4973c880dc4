"""Cover or say so (issue 52): every default interval on every real per-run data set, and the caveat of its row.

One command measures and writes the tables of ``docs/validation.md``:

    nice -n 10 python benchmarks/coverage/caveat_study.py --out benchmarks/results/caveat_study

For each real data set of ``../shared/data`` (its algorithms' runs per task are the *populations*), at 3, 5 and
10 runs per task, ``--trials`` data sets are drawn: each task's N runs drawn independently, with replacement, from
that task's population (its empirical distribution is the population, so the truth is exact: the statistic of
all its runs; draws repeat runs where a population is small, stated per set). Each data set is analysed by the
library's own table modules (``analysis.tables.aggregates``, ``differences``, ``improvement``; the per-task means'
interval is the Student-t one the ``per_task`` table gives under the default) with the default options
(``bootstrap-t``, 95%), ``--reps`` replicates; for every row the study records whether the interval covers the
truth (and on which side it misses) and the caveat features of :mod:`rl_reliable_logger.analysis.caveats`, so the
rules are rated offline on exactly what the tables read.

Sets (``--sets``; ``role``: where rules may be tuned, ``train``, or only rated, ``held-out``):

* ``atari100k-train``: Atari 100k (the rliable paper's runs, human-normalised, 100 runs per game) DER, OTR, DrQ,
  and SimPLe (5 runs per game); train.
* ``atari100k-heldout``: CURL, DrQ(eps), SPR (100 runs per game); held out.
* ``dreamerv2``: DreamerV2 on 45 ALE games (11 runs each reaching 190M frames), human-normalised, each run's score
  at 200M, 100M, 50M, 25M and 5M frames as five "algorithms"; train.
* ``dopamine``: Dopamine's DQN, C51, Rainbow, IQN on 55 ALE games (5 runs per game, 200M frames), and DQN at
  3M frames (``DQN@3M``: IQN beats it with probability 0.977, Rainbow 0.965, the issue's boundary case),
  human-normalised; held out.
* ``procgen``: PPO (5 runs) and PPG (3 runs) on 16 Procgen games (DreamerV3's logs), easy-mode min-max
  normalised; held out.
* ``matrax``: Mava's five algorithms on 12 Matrax tasks (10-20 seeds; both batches of seeds), min-max normalised
  by each task's lowest and highest run; held out.

The raw records go beside ``--out`` (``.npz``); ``--from-npz`` prints the tables again (after the rules changed).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
import pandas as pd
from atari_data import SHARED_DATA

from rl_reliable_logger.analysis import caveats as cv
from rl_reliable_logger.analysis.options import AnalysisOptions
from rl_reliable_logger.analysis.tables import aggregates, differences, improvement
from rl_reliable_logger.analysis.tables.base import TableInputs, compared_pairs, pairs, spawn_streams
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats import registry
from rl_reliable_logger.stats.intervals.bounds import expanded_level, normal_interval, student_t_runs

METRICS = ("mean", "median", "iqm", "optimality_gap")


@dataclass(frozen=True)
class DataSet:
    """A real data set as populations: ``{algorithm: [runs of task m]}`` (tasks in one order for all)."""

    name: str
    role: str
    tasks: list[str]
    populations: dict[str, list[np.ndarray]]

    def sizes(self) -> str:
        counts = sorted({len(r) for p in self.populations.values() for r in p})
        return f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else str(counts[0])


# ----------------------------------------------------------------------------- loaders
def _rows(frame: pd.DataFrame, alg: str, tasks: list[str], col: str = "score") -> list[np.ndarray]:
    part = frame[frame["algorithm"] == alg]
    return [part.loc[part["task"] == t, col].to_numpy(float) for t in tasks]


def atari100k(algorithms: tuple[str, ...], name: str, role: str) -> Callable[[], DataSet]:
    def load() -> DataSet:
        hns = json.loads((SHARED_DATA / "rliable_atari_100k" / "final_scores_hns.json").read_text())
        games = sorted(hns[algorithms[0]])
        return DataSet(name, role, games, {a: [np.asarray(hns[a][g], float) for g in games] for a in algorithms})

    return load


def dreamerv2() -> DataSet:
    folder = SHARED_DATA / "dreamerv2_atari"
    runs = pd.DataFrame(json.loads((folder / "atari-dreamerv2.json").read_text()))
    refs = json.loads((folder / "baselines.json").read_text())
    runs["end"] = runs["xs"].map(max)
    games = sorted(g for g, ends in runs.groupby("task")["end"] if ends.min() >= 1.9e8)
    checkpoints = {"200M": np.inf, "100M": 1e8, "50M": 5e7, "25M": 2.5e7, "5M": 5e6}
    pops: dict[str, list[np.ndarray]] = {k: [] for k in checkpoints}
    for g in games:
        rows = runs[runs["task"] == g]
        lo, hi = refs[g]["random"], refs[g]["human_gamer"]
        for k, at in checkpoints.items():
            vals = [np.asarray(r.ys)[np.asarray(r.xs) <= at][-1] for r in rows.itertuples()]
            pops[k].append((np.array(vals, float) - lo) / (hi - lo))
    return DataSet("dreamerv2", "train", games, pops)


def dopamine() -> DataSet:
    frame = pd.read_csv(SHARED_DATA / "dopamine_atari_baselines" / "atari_final_scores.csv")
    refs = pd.read_csv(SHARED_DATA / "reference_scores" / "atari_57_random_human_record.csv")
    refs["key"] = refs["game_snake"].str.replace("_", "")
    ref = refs.set_index("key")
    frame = frame[frame["game"].isin(ref.index)].copy()
    frame["score"] = (frame["return"] - frame["game"].map(ref["random"])) / (
        frame["game"].map(ref["human"]) - frame["game"].map(ref["random"])
    )
    frame = frame.rename(columns={"agent": "algorithm", "game": "task"})
    tasks = sorted(frame["task"].unique())
    algs = ("DQN", "C51", "Rainbow", "IQN")
    pops = {a: _rows(frame, a, tasks) for a in algs}
    # DQN early in training (iteration 2, 3M frames): P(IQN > it) = 0.977, the boundary case of issue 52
    curves = pd.read_csv(SHARED_DATA / "dopamine_atari_baselines" / "atari_curves_wide.csv")
    early = curves[curves["agent"] == "DQN"]
    pops["DQN@3M"] = [
        (early.loc[early["game"] == t, "iter_2"].to_numpy(float) - ref.loc[t, "random"])
        / (ref.loc[t, "human"] - ref.loc[t, "random"])
        for t in tasks
    ]
    return DataSet("dopamine", "held-out", tasks, pops)


def procgen() -> DataSet:
    frame = pd.read_csv(SHARED_DATA / "dreamerv3_procgen" / "procgen_final_scores.csv")
    bounds = json.loads((SHARED_DATA / "reference_scores" / "procgen_easy_min_max.json").read_text())
    bounds = bounds["easy_mode_min_max"]
    frame["score"] = [
        (r.last_return - bounds[r.env]["min"]) / (bounds[r.env]["max"] - bounds[r.env]["min"])
        for r in frame.itertuples()
    ]
    frame = frame.rename(columns={"method": "algorithm", "env": "task"})
    tasks = sorted(frame["task"].unique())
    return DataSet("procgen", "held-out", tasks, {a: _rows(frame, a, tasks) for a in ("ppo_fixhp", "ppg")})


def matrax() -> DataSet:
    frame = pd.read_csv(SHARED_DATA / "marl_eval_mava_matrax" / "final_absolute_metrics.csv")
    ret = frame["absolute_mean_episode_return"]
    low, high = frame.groupby("task")[ret.name].transform("min"), frame.groupby("task")[ret.name].transform("max")
    frame["score"] = (ret - low) / (high - low)
    tasks = sorted(frame["task"].unique())
    algs = tuple(sorted(frame["algorithm"].unique()))
    return DataSet("matrax", "held-out", tasks, {a: _rows(frame, a, tasks) for a in algs})


def simulated(model: str, tasks: int) -> Callable[[], DataSet]:
    """A held-out simulation (``tests/support/simulation.py``): four task sets of ``model`` as four algorithms, each
    task a population of 5,000 runs drawn from the model (its statistics stand for the model's within 0.01 of a
    standard error at 10 runs)."""

    def load() -> DataSet:
        import simulation as sim

        rng = np.random.default_rng([52, tasks, sim.STUDY_MODELS.index(model)])
        pops = {f"{model}-{k}": [t.sample(rng, 5000) for t in sim.make_tasks(model, tasks, 5200 + 97 * k + tasks)]
                for k in range(4)}  # fmt: skip
        return DataSet(f"sim-{model}-{tasks}", "simulated", [f"task{m}" for m in range(tasks)], pops)

    return load


LOADERS: dict[str, Callable[[], DataSet]] = {
    "atari100k-train": atari100k(("DER", "OTR", "DrQ", "SimPLe"), "atari100k-train", "train"),
    "atari100k-heldout": atari100k(("CURL", "DrQ(eps)", "SPR"), "atari100k-heldout", "held-out"),
    "dreamerv2": dreamerv2,
    "dopamine": dopamine,
    "procgen": procgen,
    "matrax": matrax,
    "sim-lognormal-1.5-26": simulated("lognormal-1.5", 26),
    "sim-pareto-mix-26": simulated("pareto-mix", 26),
    "sim-lognormal-1.0-10": simulated("lognormal-1.0", 10),
}
#: The sets the rules were chosen on (the others are held out: the done-when is rated on those).
TRAIN = ("atari100k-train", "dreamerv2")
#: The sets the command runs by default: the real ones (the simulated ones on request, ``--sets``).
REAL = ("atari100k-train", "atari100k-heldout", "dreamerv2", "dopamine", "procgen", "matrax")


# ----------------------------------------------------------------------------- truth and one trial
def _metric_objs() -> list[mt.Metric]:
    return [registry.get_metric(m) for m in METRICS]


def truths(data: DataSet) -> dict[str, np.ndarray]:
    """The population's statistics: each algorithm's metrics and task means, each pair's P(X > Y)."""
    out: dict[str, np.ndarray] = {}
    for a, pop in data.populations.items():
        original = bs.original(bs.Cells.from_list(pop))
        out[a] = np.array([float(m(original)[0]) for m in _metric_objs()])
        out[f"{a}/tasks"] = np.array([float(r.mean()) for r in pop])
    for x, y in pairs(list(data.populations)):
        out[f"{x}>{y}"] = np.array([mt.probability_of_improvement(data.populations[x], data.populations[y])])
    return out


def draw(pop: list[np.ndarray], n: int, rng: np.random.Generator) -> bs.Cells:
    return bs.Cells.from_list([rng.choice(r, n, replace=True) for r in pop])


def _side(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """0 where the interval covers, +1 where it lies above the truth, -1 below."""
    return np.where(truth < low, 1, np.where(truth > high, -1, 0)).astype(np.int8)


def trial(data: DataSet, n: int, truth: dict[str, np.ndarray], rng: np.random.Generator, reps: int, seed: int) -> dict:
    """One data set's records: per table, the side of every row's miss and the features of its caveat."""
    algs = list(data.populations)
    cells = {a: draw(data.populations[a], n, rng) for a in algs}
    opts = AnalysisOptions(reps=reps, improvement_reps=reps, profile_reps=reps, seed=seed)
    request = opts.resampling()
    streams = spawn_streams(request, algs)
    request = request.replace(task_bootstrap=streams.shared_tasks)
    inputs = TableInputs(None, cells, data.tasks, _metric_objs(), streams, lambda k: None)  # type: ignore[arg-type]
    agg = aggregates.build(inputs, request)
    every = compared_pairs(algs, "all", {}, "iqm", ["differences", "improvement"])
    diff = differences.build(inputs, request, agg, every).tables["differences"]
    poi = improvement.build(inputs, request, every).tables["improvement"]
    table = agg.part.tables["aggregates"]
    feats = {a: cv.algorithm_features(cells[a]) for a in algs}
    rec: dict[str, list] = {"agg": [], "diff": [], "poi": [], "task": [], "agg_w": [], "diff_w": [], "poi_w": []}
    rec.update(_bootstrap_medians(agg, cells, truth, algs))
    for a in algs:
        rows = table[table["algorithm"] == a]
        side = _side(rows["low"].to_numpy(), rows["high"].to_numpy(), truth[a])
        rec["agg"].append((side, [feats[a][k] for k in cv.ALGORITHM_FEATURES]))
        rec["agg_w"].append((rows["high"] - rows["low"]).to_numpy())
        low, high = student_t_runs(cells[a], 0.95)
        rec["task"].append((_side(low, high, truth[f"{a}/tasks"]), task_columns(cells[a])))
    for x, y in pairs(algs):
        rows = diff[(diff["algorithm_x"] == x) & (diff["algorithm_y"] == y)]
        side = _side(rows["low"].to_numpy(), rows["high"].to_numpy(), truth[x] - truth[y])
        both = [[feats[x][k], feats[y][k]] for k in cv.ALGORITHM_FEATURES]
        rec["diff"].append((side, both))
        rec["diff_w"].append((rows["high"] - rows["low"]).to_numpy())
        row = poi[(poi["algorithm_x"] == x) & (poi["algorithm_y"] == y)]
        rec["poi_w"].append((row["high"] - row["low"]).to_numpy())
        pf = cv.pair_features(cells[x], cells[y])
        rec["poi"].append(
            (_side(row["low"].to_numpy(), row["high"].to_numpy(), truth[f"{x}>{y}"]),
             [pf[k] for k in cv.PAIR_FEATURES])
        )  # fmt: skip
    return rec


MEDIAN = METRICS.index("median")


def _bootstrap_medians(agg: aggregates.Aggregates, cells: dict, truth: dict, algs: list[str]) -> dict[str, list]:
    """The median's interval under ``median_interval=method`` (the bootstrap-t rule's normal interval, the default
    before issue 52), from the same replicates: each algorithm's and each pair's difference, side and width."""
    out: dict[str, list] = {"medboot": [], "medboot_w": [], "meddiffboot": [], "meddiffboot_w": []}
    found = agg.by_algorithm
    for a in algs:
        dist, point = found[a].replicates[:, MEDIAN], found[a].point[MEDIAN]
        low, high = normal_interval(dist[:, None], np.array([point]), expanded_level(cells[a], 0.95))
        out["medboot"].append(int(_side(low, high, truth[a][MEDIAN : MEDIAN + 1])[0]))
        out["medboot_w"].append(float(high[0] - low[0]))
    for x, y in pairs(algs):
        n = min(len(found[x].replicates), len(found[y].replicates))
        dist = found[x].replicates[:n, MEDIAN] - found[y].replicates[:n, MEDIAN]
        point = found[x].point[MEDIAN] - found[y].point[MEDIAN]
        low, high = normal_interval(dist[:, None], np.array([point]), expanded_level([cells[x], cells[y]], 0.95))
        out["meddiffboot"].append(int(_side(low, high, (truth[x] - truth[y])[MEDIAN : MEDIAN + 1])[0]))
        out["meddiffboot_w"].append(float(high[0] - low[0]))
    return out


def run_set(data: DataSet, runs: list[int], trials: int, reps: int, seed: int) -> dict[str, np.ndarray]:
    """Every trial of one set at every run count, stacked into arrays (keys ``<table>_<what>_<N>``)."""
    truth = truths(data)
    out: dict[str, np.ndarray] = {}
    for n in runs:
        rng = np.random.default_rng([seed, n, list(LOADERS).index(data.name)])
        t0 = time.perf_counter()
        recs = [trial(data, n, truth, rng, reps, seed + k) for k in range(trials)]
        for table in ("agg", "diff", "poi", "task"):
            out[f"{table}_side_{n}"] = np.array([[np.asarray(s) for s, _ in r[table]] for r in recs])
            out[f"{table}_feat_{n}"] = np.array([[np.asarray(f, float) for _, f in r[table]] for r in recs])
        for table in ("agg", "diff", "poi", "medboot", "meddiffboot"):
            out[f"{table}_width_{n}"] = np.array([r[f"{table}_w"] for r in recs], dtype=float)
        for table in ("medboot", "meddiffboot"):
            out[f"{table}_side_{n}"] = np.array([r[table] for r in recs], dtype=np.int8)
        print(f"# {data.name} N={n}: {trials} trials in {time.perf_counter() - t0:.0f} s", flush=True)
    algs = list(data.populations)
    out["algorithms"] = np.array(algs)
    out["pairs"] = np.array([f"{x} - {y}" for x, y in pairs(algs)])
    out["truth_poi"] = np.array([truth[f"{x}>{y}"][0] for x, y in pairs(algs)])
    out["meta"] = np.array([data.role, data.sizes(), str(len(data.tasks))])
    return out


def replay_draws(data: DataSet, n: int, trials: int, seed: int) -> Iterator[dict[str, bs.Cells]]:
    """The data sets :func:`run_set` drew at ``n`` runs per task (same ``seed``), drawn again (the draws are the only
    use of its stream), one mapping of cells per trial."""
    algs = list(data.populations)
    rng = np.random.default_rng([seed, n, list(LOADERS).index(data.name)])
    for _ in range(trials):
        yield {a: draw(data.populations[a], n, rng) for a in algs}


def task_records(data: DataSet, n: int, trials: int, seed: int) -> dict[str, np.ndarray]:
    """The per-task means' rows alone (no bootstrap: their interval is Student-t, from the runs), on the data sets of
    :func:`run_set` drawn again: ``--tasks-only`` rates a changed task rule on a recorded set in seconds."""
    truth = truths(data)
    sides, feats = [], []
    for cells in replay_draws(data, n, trials, seed):
        side, feat = [], []
        for a, c in cells.items():
            low, high = student_t_runs(c, 0.95)
            side.append(_side(low, high, truth[f"{a}/tasks"]))
            feat.append(task_columns(c))
        sides.append(side)
        feats.append(feat)
    return {f"task_side_{n}": np.array(sides), f"task_feat_{n}": np.array(feats, dtype=np.float32)}


# ----------------------------------------------------------------------------- the per-task columns
#: The per-task columns the study records (the order of every ``task_feat_<N>``): the library's caveat features
#: (:data:`rl_reliable_logger.analysis.caveats.TASK_FEATURES`), then the spread ratio the study splits the rows by.
TASK_COLUMNS = (*cv.TASK_FEATURES, "spread_ratio")


def spread_ratios(runs: list[np.ndarray]) -> np.ndarray:
    """Each task's standard deviation over the median of those of the tasks with two runs or more (an algorithm's
    typical spread, on the one scale its tasks share after normalisation): 1 for a task of one run, inf for a task
    with spread among tasks whose median has none.

    Example:
        >>> spread_ratios([np.array([0.0, 2.0]), np.array([1.0, 1.1]), np.array([5.0, 9.0]), np.array([3.0])]).round(3)
        array([1.  , 0.05, 2.  , 1.  ])
    """
    sds = np.array([float(np.std(r, ddof=1)) if r.size > 1 else np.nan for r in runs])
    typical = float(np.median(sds[np.isfinite(sds)])) if np.isfinite(sds).any() else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(sds > 0, sds / typical, 0.0) if typical > 0 else np.where(sds > 0, np.inf, 0.0)
    return np.where(np.isfinite(sds), ratios, 1.0)


def task_columns(cells: bs.Cells) -> list[list[float]]:
    """One row of :data:`TASK_COLUMNS` per task of ``cells``."""
    runs = [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]
    features = cv.task_features(cells)
    return [[*(f[k] for k in cv.TASK_FEATURES), float(r)] for f, r in zip(features, spread_ratios(runs), strict=True)]


# ----------------------------------------------------------------------------- rating the rules
#: The study's split of the per-task rows: a task whose runs' spread is under this share of the median spread of its
#: algorithm's tasks ("nearly equal"; a caveat of its own before the per-task interval floored each task's spread at
#: that median, ``stats/intervals/bounds.TASK_SPREAD_FLOOR``).
NEAR_TIED = 0.1
KINDS = ("mean", "median", "iqm", "optimality_gap")  # the order of METRICS, as statistic kinds
#: The rows of an interval that is not a default (the median's bootstrap interval, ``median_interval=method``):
#: rated beside the default, left out of the done-when.
ALTERNATIVE = "[median_interval=method]"
#: Coverage at or above this holds without a caveat; else at least MISSES_CAVEATED of the misses need one.
FLOOR, MISSES_CAVEATED = 0.92, 0.90


def _features(names: tuple[str, ...], values: np.ndarray) -> dict[str, float]:
    return dict(zip(names, (float(v) for v in values)))


def caveated(found: dict[str, np.ndarray], n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per interval (``agg mean``, ``diff iqm``, ``P(X>Y)``, ``task mean``, ...): (misses (T, rows), caveats
    (T, rows)), the caveats by the rules of :mod:`rl_reliable_logger.analysis.caveats` on the recorded features."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    request = AnalysisOptions().resampling().for_runs(n)  # the default intervals at N runs per task
    side, feat = found[f"agg_side_{n}"], found[f"agg_feat_{n}"]
    fx = [[_features(cv.ALGORITHM_FEATURES, feat[t, a]) for a in range(feat.shape[1])] for t in range(feat.shape[0])]
    for j, kind in enumerate(KINDS):
        method = request.statistic_method("aggregates", kind).bootstrap
        marks = np.array([[bool(cv.aggregate_caveat(kind, f, method)) for f in row] for row in fx])
        out[f"agg {kind}"] = (side[..., j] != 0, marks)
    side, feat = found[f"diff_side_{n}"], found[f"diff_feat_{n}"]
    for j, kind in enumerate(KINDS):
        method = request.statistic_method("differences", kind).bootstrap
        marks = np.array(
            [[bool(cv.difference_caveat(kind, _features(cv.ALGORITHM_FEATURES, feat[t, p, :, 0]),
                                        _features(cv.ALGORITHM_FEATURES, feat[t, p, :, 1]), method))
              for p in range(feat.shape[1])] for t in range(feat.shape[0])]
        )  # fmt: skip
        out[f"diff {kind}"] = (side[..., j] != 0, marks)
    side, feat = found[f"poi_side_{n}"], found[f"poi_feat_{n}"]
    method = request.table_method("improvement").bootstrap
    marks = np.array(
        [[bool(cv.improvement_caveat(_features(cv.PAIR_FEATURES, feat[t, p]), method)) for p in range(feat.shape[1])]
         for t in range(feat.shape[0])]
    )  # fmt: skip
    out["P(X>Y)"] = (side[..., 0] != 0, marks)
    if f"medboot_side_{n}" in found:  # the median under median_interval=method, the default before issue 52
        feat = found[f"agg_feat_{n}"]
        marks = np.array([[bool(cv.aggregate_caveat("median", f, True)) for f in row] for row in fx])
        out[f"agg median {ALTERNATIVE}"] = (found[f"medboot_side_{n}"] != 0, marks)
        feat = found[f"diff_feat_{n}"]
        marks = np.array(
            [[bool(cv.difference_caveat("median", _features(cv.ALGORITHM_FEATURES, feat[t, p, :, 0]),
                                        _features(cv.ALGORITHM_FEATURES, feat[t, p, :, 1]), True))
              for p in range(feat.shape[1])] for t in range(feat.shape[0])]
        )  # fmt: skip
        out[f"diff median {ALTERNATIVE}"] = (found[f"meddiffboot_side_{n}"] != 0, marks)
    side, feat = found[f"task_side_{n}"], found[f"task_feat_{n}"]
    flat = feat.reshape(-1, feat.shape[-1])
    marks = np.array([bool(cv.task_caveat(_features(TASK_COLUMNS, f))) for f in flat]).reshape(side.shape)
    out["task mean"] = (side != 0, marks)
    return out


def rate(miss: np.ndarray, mark: np.ndarray) -> dict[str, float]:
    """Coverage (pooled over rows, and of the worst row), the share of misses with a caveat, the caveat rate (over
    rows, where the interval covers and where it misses) and whether the interval passes (covers >= FLOOR, or the
    caveats catch MISSES_CAVEATED of its misses; pooled and on its worst row)."""
    rows = miss.reshape(miss.shape[0], -1) if miss.ndim > 2 else miss
    marks = mark.reshape(mark.shape[0], -1) if mark.ndim > 2 else mark
    cov_rows = 1 - rows.mean(axis=0)
    caught_rows = np.array([marks[rows[:, r], r].mean() if rows[:, r].any() else 1.0 for r in range(rows.shape[1])])
    ok_rows = (cov_rows >= FLOOR) | (caught_rows >= MISSES_CAVEATED)
    return {
        "coverage": float(1 - rows.mean()),
        "worst": float(cov_rows.min()),
        "caught": float(marks[rows].mean()) if rows.any() else float("nan"),
        "fires": float(marks.mean()),
        "fires_cover": float(marks[~rows].mean()) if (~rows).any() else float("nan"),
        "fires_miss": float(marks[rows].mean()) if rows.any() else float("nan"),
        "any_fires": float(marks.any(axis=1).mean()),
        "rows_failing": int((~ok_rows).sum()),
        "rows": int(rows.shape[1]),
    }


def _fmt(v: float) -> str:
    return "-" if np.isnan(v) else f"{v:.3f}"


def recorded(folder: Path, sets: list[str]) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """Each set's recorded rows (its ``.npz`` in ``folder``), in ``sets`` order; sets not run are left out."""
    for name in sets:
        path = folder / f"{name}.npz"
        if path.exists():
            yield name, dict(np.load(path))


def report(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The done-when table: per set x runs per task x interval, coverage (pooled / worst row), the share of misses
    with a caveat, the caveat rate (all rows / where the interval covers / where it misses; per data set: any row),
    and whether it passes (rows failing both criteria)."""
    head = ["set", "role", "N", "interval", "coverage", "worst row", "misses caveated", "caveat rate",
            "rate where covers", "rate where misses", "data sets with a caveat", "rows failing"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, found in recorded(folder, sets):
        for n in runs:
            if f"agg_side_{n}" not in found:
                continue
            for what, (miss, mark) in rows_of(found, n).items():
                r = rate(miss, mark)
                failing = f"**{r['rows_failing']} of {r['rows']}**" if r["rows_failing"] else f"0 of {r['rows']}"
                cov = _fmt(r["coverage"])
                cov = cov if r["coverage"] >= FLOOR else f"**{cov}**"
                lines.append(
                    "| " + " | ".join([name, str(found["meta"][0]), str(n), what, cov, _fmt(r["worst"]),
                                       _fmt(r["caught"]), _fmt(r["fires"]), _fmt(r["fires_cover"]),
                                       _fmt(r["fires_miss"]), _fmt(r["any_fires"]), failing]) + " |"
                )  # fmt: skip
    return lines


def done_when(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The done-when table, pooled over ``sets`` (every row of every set, each data set once): per interval and run
    count, coverage (pooled, and of the worst row), how often the caveat fires where the interval covers and where it
    misses, and the rows that neither cover FLOOR nor carry a caveat on MISSES_CAVEATED of their misses."""
    head = ["interval", "N", "coverage", "worst row", "caveat where covers", "caveat where misses", "rows failing"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    pooled: dict[tuple[str, int], list[tuple[np.ndarray, np.ndarray]]] = {}
    for _, found in recorded(folder, sets):
        for n in runs:
            if f"agg_side_{n}" in found:
                for what, (miss, mark) in rows_of(found, n).items():
                    pooled.setdefault((what, n), []).append((miss.reshape(len(miss), -1), mark.reshape(len(mark), -1)))
    for what, n in [(w, n) for w in dict.fromkeys(k for k, _ in pooled) for n in runs if (w, n) in pooled]:
        parts = pooled[(what, n)]
        rated = [rate(miss, mark) for miss, mark in parts]
        miss = np.concatenate([m.ravel() for m, _ in parts])
        mark = np.concatenate([k.ravel() for _, k in parts])
        failing = sum(r["rows_failing"] for r in rated)
        total = sum(r["rows"] for r in rated)
        cells = [what, str(n), _fmt(float(1 - miss.mean())), _fmt(min(r["worst"] for r in rated)),
                 _fmt(float(mark[~miss].mean()) if (~miss).any() else float("nan")),
                 _fmt(float(mark[miss].mean()) if miss.any() else float("nan")),
                 f"**{failing} of {total}**" if failing else f"0 of {total}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def condensed(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The table of ``docs/validation.md``: one row per set and interval, per run count ``coverage (worst row) /
    misses caveated / caveat rate where it covers`` (coverage bold below FLOOR where fewer than MISSES_CAVEATED of
    the misses are caveated on some row)."""
    head = ["set", "interval", *(f"N = {n}" for n in runs)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, found in recorded(folder, sets):
        by_n = {n: rows_of(found, n) for n in runs if f"agg_side_{n}" in found}
        for what in next(iter(by_n.values())):
            cells = []
            for n in runs:
                if n not in by_n:
                    cells.append("-")
                    continue
                r = rate(*by_n[n][what])
                cov = f"{r['coverage']:.3f} ({r['worst']:.3f})"
                cov = f"**{cov}**" if r["rows_failing"] else cov
                cells.append(f"{cov} / {_fmt(r['fires_miss'])} / {_fmt(r['fires_cover'])}")
            lines.append("| " + " | ".join([f"{name} ({found['meta'][0]})", what, *cells]) + " |")
    return lines


def verdict(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The done-when, per interval over the sets: the rows (algorithms or pairs, per set and run count) that neither
    cover FLOOR nor carry a caveat on MISSES_CAVEATED of their misses; the share of data sets whose IQM carries a
    caveat; P(X > Y)'s coverage on the pairs near 1 (or 0); and, per interval, the caveat rate over every row and the
    (set, run count) blocks where its caveat fires on every row of every data set."""
    failing: dict[str, list[str]] = {}
    rows: dict[str, int] = {}
    fired: dict[str, list[float]] = {}
    everywhere: dict[str, list[str]] = {}
    near: list[str] = []
    iqm_marked, data_sets = 0, 0
    for name, found in recorded(folder, sets):
        labels = {"agg": list(found["algorithms"]), "diff": list(found["pairs"]), "P(X>Y)": list(found["pairs"])}
        near_pairs = [p for p, t in zip(found["pairs"], found["truth_poi"]) if abs(t - 0.5) >= NEAR_ONE]
        labels["P(X>Y) near 1"] = near_pairs
        for n in runs:
            if f"agg_side_{n}" not in found:
                continue
            for what, (miss, mark) in rows_of(found, n).items():
                if what == "agg iqm":
                    iqm_marked += int(mark.any(axis=1).sum())
                    data_sets += mark.shape[0]
                flat_miss = miss.reshape(miss.shape[0], -1)
                flat_mark = mark.reshape(mark.shape[0], -1)
                rows[what] = rows.get(what, 0) + flat_miss.shape[1]
                fired.setdefault(what, []).append(float(flat_mark.mean()))
                if flat_mark.all():
                    everywhere.setdefault(what, []).append(f"{name} N={n}")
                for r in range(flat_miss.shape[1]):
                    cov = 1 - flat_miss[:, r].mean()
                    caught = flat_mark[flat_miss[:, r], r].mean() if flat_miss[:, r].any() else 1.0
                    names = labels.get(what if what in labels else what.split()[0], [])
                    label = names[r] if what != "task mean" and r < len(names) else f"row {r}"
                    if what == "P(X>Y) near 1":
                        near.append(f"{name} N={n} {label} {cov:.3f}")
                    if cov < FLOOR and caught < MISSES_CAVEATED:
                        failing.setdefault(what, []).append(f"{name} N={n} {label} ({cov:.3f}, {caught:.0%} caveated)")
    lines = [f"IQM with a caveat: {iqm_marked} of {data_sets} data sets ({iqm_marked / max(data_sets, 1):.1%})"]
    if near:
        lowest = min(float(x.rsplit(" ", 1)[1]) for x in near)
        lines.append(f"P(X>Y) near 1 (|truth - 1/2| >= {NEAR_ONE}): lowest coverage {lowest:.3f}; " + "; ".join(near))
    for what, total in rows.items():
        bad = failing.get(what, [])
        shown = "; ".join(bad[:12]) + (f"; ... ({len(bad) - 12} more)" if len(bad) > 12 else "")
        default = "" if ALTERNATIVE not in what else " (not a default: rated beside it)"
        every = everywhere.get(what, [])
        lines.append(
            f"{what}{default}: {len(bad)} of {total} rows fail both criteria" + (f": {shown}" if bad else "")
            + f"; caveat rate {float(np.mean(fired[what])):.3f} (blocks up to {max(fired[what]):.3f})"
            + (f"; FIRES ON EVERY ROW in {', '.join(every)}" if every else "")
        )  # fmt: skip
    return lines


#: How the sentences name the real sets (the study's sets: the training and held-out halves of one are one set).
DISPLAY = {
    "atari100k-train": "Atari 100k",
    "atari100k-heldout": "Atari 100k",
    "dreamerv2": "DreamerV2",
    "dopamine": "Dopamine",
    "procgen": "Procgen",
    "matrax": "Matrax",
}
#: A pair whose P(X > Y) lies this far from 1/2 or further is "near 1" (or 0) in the sentences and the verdict.
NEAR_ONE = 0.45
#: The rows the package's sentences quote (``rl_reliable_logger/analysis/coverage_study.json``), by the study's row.
QUOTED = {
    "median: order-statistic": "agg median",
    "median: bootstrap": f"agg median {ALTERNATIVE}",
    "P(X>Y) near 1": "P(X>Y) near 1",
}
#: Which rows a quoted figure was measured on, where not every row of its table (the sentence says so).
QUOTED_ROWS = {"P(X>Y) near 1": f"on the pairs whose P(X > Y) over all the runs lies {NEAR_ONE:g} or more from 1/2"}
SHIPPED = Path(__file__).resolve().parents[2] / "rl_reliable_logger" / "analysis" / "coverage_study.json"


def _near_one(found: dict[str, np.ndarray], every: tuple[np.ndarray, np.ndarray]) -> tuple | None:
    """P(X > Y)'s misses and caveats (``every``: all pairs') on the pairs whose truth lies :data:`NEAR_ONE` from 1/2
    or further."""
    near = np.abs(found["truth_poi"] - 0.5) >= NEAR_ONE
    if not near.any():
        return None
    miss, mark = every
    return miss[:, near], mark[:, near]


def rows_of(found: dict[str, np.ndarray], n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`caveated` with the P(X > Y) rows near 1 (or 0) on their own (``P(X>Y) near 1``)."""
    out = caveated(found, n)
    near = _near_one(found, out["P(X>Y)"])
    if near is not None:
        out["P(X>Y) near 1"] = near
    return out


def shipped(folder: Path, sets: list[str], runs: list[int]) -> dict:
    """What the package's sentences quote: per quoted row, the lowest and highest coverage pooled over a set's rows
    (per set and run count) and the lowest of one row, with the sets, run counts and trials it was measured on."""
    out: dict = {"study": "benchmarks/coverage/caveat_study.py", "runs": runs, "intervals": {}}
    names: list[str] = []
    for name, found in recorded(folder, sets):
        names.append(DISPLAY.get(name, name))
        for n in runs:
            if f"agg_side_{n}" not in found:
                continue
            out["trials"] = int(found[f"agg_side_{n}"].shape[0])
            by_row = rows_of(found, n)
            for key, row in QUOTED.items():
                if row not in by_row:
                    continue
                r = rate(*by_row[row])
                entry = out["intervals"].setdefault(key, {"coverage": [1.0, 0.0], "worst": 1.0})
                if key in QUOTED_ROWS:
                    entry["rows"] = QUOTED_ROWS[key]
                entry["coverage"] = [min(entry["coverage"][0], r["coverage"]), max(entry["coverage"][1], r["coverage"])]
                entry["worst"] = min(entry["worst"], r["worst"])
    out["sets"] = list(dict.fromkeys(names))
    for entry in out["intervals"].values():
        entry["coverage"] = [round(v, 3) for v in entry["coverage"]]
        entry["worst"] = round(entry["worst"], 3)
    return out


def widths(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The mean width of the median's and P(X > Y)'s intervals (the default beside the former one, same data sets)."""
    head = ["set", "interval", *(f"N = {n}" for n in runs)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, found in recorded(folder, sets):
        for label, key, col in (
            ("agg median (order-statistic)", "agg", METRICS.index("median")),
            (f"agg median {ALTERNATIVE}", "medboot", None),
            ("diff median (MOVER)", "diff", METRICS.index("median")),
            (f"diff median {ALTERNATIVE}", "meddiffboot", None),
            ("P(X>Y)", "poi", 0),
        ):
            cells = []
            for n in runs:
                w = found.get(f"{key}_width_{n}")
                cells.append("-" if w is None else f"{float(np.mean(w if col is None else w[..., col])):.3g}")
            lines.append("| " + " | ".join([name, label, *cells]) + " |")
    return lines


def task_split(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The per-task means' coverage on the cells each task rule marks and on the rest (per set and run count, with
    the share of cells marked): what a caveat says of its cells, measured."""
    head = ["set", *(f"N = {n}: runs all equal / nearly equal / rest" for n in runs)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    column = {k: TASK_COLUMNS.index(k) for k in ("runs", "no_spread", "spread_ratio")}
    for name, found in recorded(folder, sets):
        cells = []
        for n in runs:
            miss, feat = found[f"task_side_{n}"] != 0, found[f"task_feat_{n}"]
            zero = feat[..., column["no_spread"]] == 1
            near = ~zero & (feat[..., column["spread_ratio"]] < NEAR_TIED) & (n <= cv.TAIL_RUNS)
            parts = [
                f"{1 - miss[m].mean():.3f} ({m.mean():.1%})" if m.any() else "- (0%)"
                for m in (zero, near, ~zero & ~near)
            ]
            cells.append(" / ".join(parts))
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return lines


def tie_features(cells: bs.Cells) -> dict[str, float]:
    """Features screened for the IQM's and the median's uncaveated shortfalls (``--separate``), none adopted: runs
    tied at the IQM's cut points, runs duplicating another, tasks whose runs are all equal or nearly (a standard
    deviation under :data:`NEAR_TIED` of the median task's), and the share of the runs between the cut points that
    come from tasks whose runs are all equal."""
    runs = [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]
    pooled = np.sort(cells.values)
    k = pooled.size
    low, high = pooled[k // 4], pooled[k - 1 - k // 4]
    tied = np.array([np.ptp(r) == 0 for r in runs])
    middle = [tied[m] for m, r in enumerate(runs) for v in r if low <= v <= high]
    return {
        "cut_ties": float(np.mean((pooled == low) | (pooled == high))),
        "duplicates": 1.0 - np.unique(pooled).size / k,
        "tasks_tied": float(tied.mean()),
        "tasks_near_tied": float(np.mean(spread_ratios(runs) < NEAR_TIED)),
        "middle_from_tied": float(np.mean(middle)) if middle else 0.0,
    }


def separation(folder: Path, sets: list[str], runs: list[int], seed: int) -> list[str]:
    """Whether anything knowable tells the misses of the IQM's and the order-statistic median's failing rows (below
    FLOOR, uncaveated) from their covers: per feature (the recorded :data:`cv.ALGORITHM_FEATURES` and
    :func:`tie_features` on the data sets drawn again), the AUC between misses and covers pooled over those rows
    (0.5: no separation)."""
    from scipy.stats import mannwhitneyu

    lines = []
    for kind in ("iqm", "median"):
        j = KINDS.index(kind)
        misses: dict[str, list[np.ndarray]] = {}
        covers: dict[str, list[np.ndarray]] = {}
        rows: list[str] = []
        for name, found in recorded(folder, sets):
            data = LOADERS[name]()
            for n in runs:
                miss = found[f"agg_side_{n}"][..., j] != 0
                failing = [a for a in range(miss.shape[1]) if 1 - miss[:, a].mean() < FLOOR]
                if not failing:
                    continue
                rows += [f"{name} N={n} {found['algorithms'][a]} ({1 - miss[:, a].mean():.3f})" for a in failing]
                algs = list(data.populations)
                drawn = [tie_features(c[algs[a]]) for c in replay_draws(data, n, miss.shape[0], seed) for a in failing]
                recorded_feats = found[f"agg_feat_{n}"][:, failing, : len(cv.ALGORITHM_FEATURES)].reshape(-1, 7)
                flat = miss[:, failing].ravel()
                values = {k: recorded_feats[:, i] for i, k in enumerate(cv.ALGORITHM_FEATURES[2:], 2)}
                values.update({k: np.array([d[k] for d in drawn]) for k in drawn[0]})
                for k, v in values.items():
                    misses.setdefault(k, []).append(v[flat])
                    covers.setdefault(k, []).append(v[~flat])
        if not rows:
            continue
        aucs = []
        for k in misses:
            m, c = np.concatenate(misses[k]), np.concatenate(covers[k])
            aucs.append(f"{k} {mannwhitneyu(m, c).statistic / (m.size * c.size):.2f}")
        lines.append(f"{kind}: rows below {FLOOR}: {'; '.join(rows)}; AUC miss vs cover: {', '.join(aucs)}")
    return lines


#: The thresholds of the mean's ``above_median`` rule screened (``--calibrate``).
ABOVE_MEDIAN_GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def calibrate_above_median(folder: Path, sets: list[str], runs: list[int]) -> list[str]:
    """The mean's ``above_median`` rule at each threshold of :data:`ABOVE_MEDIAN_GRID`, alone: how often it fires on
    the rows whose mean covers (pooled over ``sets`` and run counts; the real sets choose the threshold, the lowest at
    which this is at most 5%) and on those whose mean misses (the held-out simulation rates it)."""
    column = list(cv.ALGORITHM_FEATURES).index("above_median")
    covers: list[np.ndarray] = []
    misses: list[np.ndarray] = []
    for _, found in recorded(folder, sets):
        for n in runs:
            if f"agg_side_{n}" not in found:
                continue
            value = found[f"agg_feat_{n}"][..., column].ravel()
            miss = (found[f"agg_side_{n}"][..., KINDS.index("mean")] != 0).ravel()
            covers.append(value[~miss])
            misses.append(value[miss])
    cov, mis = np.concatenate(covers), np.concatenate(misses)
    lines = [f"above_median alone on {', '.join(sets)} ({cov.size} rows that cover, {mis.size} that miss):"]
    for threshold in ABOVE_MEDIAN_GRID:
        lines.append(
            f"  >= {threshold:.2f}: fires on {np.mean(cov >= threshold):.3f} of the covers, "
            f"{np.mean(mis >= threshold) if mis.size else float('nan'):.3f} of the misses"
        )
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", nargs="+", default=list(REAL), choices=list(LOADERS))
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--trials", type=int, default=300)
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=52)
    p.add_argument("--out", required=True, help="folder of the raw records (one .npz per set) and the table")
    p.add_argument("--from-npz", action="store_true", help="rate the rules on the records in --out, run nothing")
    p.add_argument("--tasks-only", action="store_true", help="redo the per-task rows of the records in --out alone")
    p.add_argument("--table", default="caveat_study.md", help="the file in --out the tables go to")
    p.add_argument("--separate", action="store_true", help="screen features against the IQM's and median's misses")
    p.add_argument("--calibrate", action="store_true", help="print the mean's above_median rule at each threshold")
    args = p.parse_args()
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    if args.tasks_only:
        for name in args.sets:
            data, path = LOADERS[name](), folder / f"{name}.npz"
            found = dict(np.load(path))
            for n in args.runs:
                found.update(task_records(data, n, int(found[f"agg_side_{n}"].shape[0]), args.seed))
            np.savez_compressed(path, **found)
    elif not args.from_npz:
        for name in args.sets:
            data = LOADERS[name]()
            found = run_set(data, args.runs, args.trials, args.reps, args.seed)
            np.savez_compressed(folder / f"{name}.npz", **found)
    held_out = [name for name in args.sets if name not in TRAIN]
    lines = [f"Done when, pooled over the held-out sets ({', '.join(held_out)}):", "",
             *done_when(folder, held_out, args.runs), ""]  # fmt: skip
    if held_out != args.sets:
        lines += [f"Pooled over every set ({', '.join(args.sets)}):", "", *done_when(folder, args.sets, args.runs), ""]
    lines += [*condensed(folder, args.sets, args.runs), "", *report(folder, args.sets, args.runs), ""]
    lines += [*widths(folder, args.sets, args.runs), "", *verdict(folder, args.sets, args.runs)]
    lines += ["", "Per-task means: coverage (share of cells) where a task rule marks the cell and on the rest:", ""]
    lines += task_split(folder, args.sets, args.runs)
    if args.calibrate:
        lines += ["", *calibrate_above_median(folder, args.sets, args.runs)]
    if args.separate:
        lines += ["", *separation(folder, args.sets, args.runs, args.seed)]
    print("\n".join(lines))
    (folder / args.table).write_text("\n".join(lines) + "\n")
    if set(args.sets) == set(REAL):  # the real sets: what the package's sentences quote
        SHIPPED.write_text(json.dumps(shipped(folder, args.sets, args.runs), indent=1) + "\n")


if __name__ == "__main__":
    main()
