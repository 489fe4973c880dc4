"""Tuning-aware sweep views: complete algorithm, tune-and-report, split-half."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger.stats import tuning as tn


def _sweep(seed=0, n_seeds=4, tasks=("x", "y"), best_lr=3e-4, effect=1.0, algorithms=("PPO",)):
    rng = np.random.default_rng(seed)
    rows = []
    for alg in algorithms:
        for lr in (1e-3, 3e-4, 1e-4):
            for ent in (0.0, 0.01):
                for s in range(n_seeds):
                    for t in tasks:
                        rows.append(
                            {
                                "algorithm": alg,
                                "task": t,
                                "seed": s,
                                "run_id": f"{alg}-{lr}-{ent}-{s}",
                                "lr": lr,
                                "ent": ent,
                                "score": effect * (lr == best_lr) + 0.1 * rng.normal(),
                            }
                        )
    return pd.DataFrame(rows)


def test_config_labels():
    frame = pd.DataFrame({"lr": [0.001, 3e-4], "arch": ["mlp", None]})
    assert tn.config_labels(frame, ["lr", "arch"]).tolist() == ["lr=0.001, arch=mlp", "lr=0.0003, arch=NA"]
    with pytest.raises(ValueError, match="not in the table"):
        tn.config_labels(frame, ["gamma"])
    with pytest.raises(ValueError):
        tn.config_labels(frame, [])


def test_views_complete_tuned_split():
    frame = _sweep()
    runs, choices, warnings = tn.tuning_views(frame, ["lr", "ent"], seed=0)
    by_view = choices.set_index("view")
    assert set(by_view.index) == {"complete", "tuned", "split"}
    complete = runs[runs["view"] == "complete"]
    assert len(complete) == len(frame) and by_view.loc["complete", "n_configs"] == 6
    assert by_view.loc["tuned", "config"].startswith("lr=0.0003")
    tuned = runs[runs["view"] == "tuned"]
    assert set(tuned["lr"]) == {3e-4} and tuned["config"].nunique() == 1 and len(tuned) == 4 * 2
    split = runs[runs["view"] == "split"]
    assert split["config"].nunique() == 1 and split["lr"].iloc[0] == 3e-4
    assert len(split) == 2 * 2  # the evaluation half: 2 of 4 seeds, on both tasks
    assert set(runs["algorithm"]) == {"PPO [complete]", "PPO [tuned, same data]", "PPO [tuned, split-half]"}
    assert any("optimistically biased" in w for w in warnings)


def test_split_halves_are_disjoint_and_reproducible():
    rng = np.random.default_rng(0)
    sel, ev = tn.split_halves(["3", "1", "2", "0", "4"], rng)
    assert sel.isdisjoint(ev) and sel | ev == {"0", "1", "2", "3", "4"} and len(sel) == 2
    frame = _sweep(n_seeds=6)
    a = tn.tuning_views(frame, ["lr", "ent"], seed=5)[0]
    b = tn.tuning_views(frame, ["lr", "ent"], seed=5)[0]
    pd.testing.assert_frame_equal(a, b)


def test_split_half_reports_runs_not_used_for_selection():
    """With pure noise, 'tuned' is biased upwards and split-half is not (on average)."""
    gaps_tuned, gaps_split = [], []
    crit = tn.metric_criterion("mean")
    for seed in range(30):
        frame = _sweep(seed=seed, n_seeds=6, effect=0.0)
        runs, choices, _ = tn.tuning_views(frame, ["lr", "ent"], seed=seed, criterion=crit)
        mean = lambda v, runs=runs: runs.loc[runs["view"] == v, "score"].mean()
        gaps_tuned.append(mean("tuned") - mean("complete"))
        gaps_split.append(mean("split") - mean("complete"))
    assert np.mean(gaps_tuned) > 0.025  # E[max of 6 means of 12 runs, sd 0.1] = 1.27 * 0.029 = 0.037
    assert abs(np.mean(gaps_split)) < 0.02


def test_single_seed_configs():
    rows = [
        {"algorithm": "A", "task": "x", "seed": i, "run_id": str(i), "lr": lr, "score": float(i)}
        for i, lr in enumerate([0.1, 0.2, 0.3, 0.4])
    ]
    runs, choices, warnings = tn.tuning_views(pd.DataFrame(rows), ["lr"], seed=0)
    assert set(choices["view"]) == {"complete", "tuned"}
    assert choices.set_index("view").loc["tuned", "config"] == "lr=0.4"
    assert any("single run per task" in w for w in warnings)
    assert any("split-half view left out" in w for w in warnings)


def test_config_missing_a_task_is_not_eligible():
    frame = _sweep()
    # drop the best config on task y: it can no longer be chosen
    frame = frame[~((frame["lr"] == 3e-4) & (frame["ent"] == 0.0) & (frame["task"] == "y"))]
    _, choices, _ = tn.tuning_views(frame, ["lr", "ent"], seed=0)
    assert choices.set_index("view").loc["tuned", "config"] == "lr=0.0003, ent=0.01"
    assert choices.set_index("view").loc["tuned", "n_eligible"] == 5


def test_optimality_gap_criterion_prefers_lower():
    crit = tn.metric_criterion("optimality_gap")
    assert crit([np.array([0.9, 1.0])]) > crit([np.array([0.1, 0.2])])


def test_tuning_table_end_to_end():
    from rl_reliable_logger import ScoreTable
    from rl_reliable_logger.analysis.jordan import TUNING_COLUMNS, tuning_table

    frame = _sweep(algorithms=("PPO", "DQN"), n_seeds=4)
    table = ScoreTable(frame, run_id="run_id")
    out, warnings = tuning_table(table, ["lr", "ent"], reps=300, seed=0)
    assert list(out.columns) == TUNING_COLUMNS
    assert len(out) == 6 and out["metric"].eq("iqm").all()
    assert (out["low"] <= out["point"] + 1e-12).all() and (out["point"] <= out["high"] + 1e-12).all()
    tuned = out[out["view"] == "tuned"].set_index("algorithm")
    complete = out[out["view"] == "complete"].set_index("algorithm")
    assert (tuned["point"] > complete["point"]).all()
    assert any("optimistically biased" in w for w in warnings)
    assert any("not normalised" in w for w in warnings)
    again, _ = tuning_table(table, ["lr", "ent"], reps=300, seed=0)
    pd.testing.assert_frame_equal(out, again)
    normed, warnings = tuning_table(table, ["lr", "ent"], reps=300, seed=0, normalize="percentiles")
    assert normed["point"].between(0, 1).all() and not any("not normalised" in w for w in warnings)
    with pytest.raises(ValueError):
        tuning_table(table, ["nope"], reps=100, seed=0)


def _reference_choice(runs, tasks, criterion):
    """The definition, one configuration at a time: (config, score, n_eligible) over sorted configurations."""
    best, best_score, eligible = None, -np.inf, 0
    for config in sorted(runs["config"].unique()):
        rows = runs[runs["config"] == config]
        per_task = [rows.loc[rows["task"] == t, "score"].to_numpy(float) for t in tasks]
        if all(x.size for x in per_task):
            eligible += 1
            score = criterion(per_task)
            if score > best_score:
                best, best_score = config, score
    return best, best_score, eligible


@pytest.mark.parametrize("trial", range(12))
def test_views_match_the_per_configuration_definition(trial):
    """Grouped once, the views choose and split exactly as comparing each configuration on its own does:
    ragged cells, configurations missing tasks, missing hyperparameter values, seeds or run ids as keys."""
    rng = np.random.default_rng(trial)
    tasks = ["y", "x", "z"][: 1 + trial % 3]
    rows = [
        {
            "algorithm": alg,
            "task": t,
            "seed": s,
            "run_id": f"{alg}{c}-{s}",
            "lr": [1e-3, 3e-4, np.nan, 1e-4][c % 4],
            "w": c // 4,
            "score": float(rng.normal()),
        }
        for alg in ("B", "A")
        for c in range(int(rng.integers(2, 20)))
        for s in range(int(rng.integers(1, 6)))
        for t in tasks
        if rng.random() > 0.1
    ]
    frame = pd.DataFrame(rows).sample(frac=1, random_state=trial)
    if trial % 2:
        frame.loc[frame.index[0], "seed"] = None  # the run ids identify runs
    crit = tn.metric_criterion(["iqm", "mean", "optimality_gap"][trial % 3])
    runs, choices, _ = tn.tuning_views(frame, ["lr", "w"], seed=trial, criterion=crit)
    rng_split = np.random.default_rng(trial)
    base = frame.assign(config=tn.config_labels(frame, ["lr", "w"]))
    key = base["seed"].astype(int).astype(str) if base["seed"].notna().all() else base["run_id"].astype(str)
    by = choices.set_index(["algorithm", "view"])
    for alg in pd.unique(frame["algorithm"]):  # one random stream, algorithms in order of appearance
        own = base[base["algorithm"] == alg]
        config, score, eligible = _reference_choice(own, tasks, crit)
        assert (by.loc[(alg, "tuned"), "config"], by.loc[(alg, "tuned"), "n_eligible"]) == (config, eligible)
        assert by.loc[(alg, "tuned"), "selection_score"] == score
        select, evaluate = [], []
        for c in sorted(own["config"].unique()):
            rows_c = own[own["config"] == c]
            first, second = tn.split_halves(list(key[rows_c.index]), rng_split)
            select.append(rows_c[key[rows_c.index].isin(first)])
            evaluate.append(rows_c[key[rows_c.index].isin(second)])
        sel, ev = pd.concat(select), pd.concat(evaluate)
        ok = [
            c
            for c in own["config"].unique()
            if {*tasks} <= {*sel.loc[sel.config == c, "task"]} & {*ev.loc[ev.config == c, "task"]}
        ]
        config, score, eligible = _reference_choice(sel[sel["config"].isin(ok)], tasks, crit)
        if config is None:
            assert (alg, "split") not in by.index
            continue
        assert (by.loc[(alg, "split"), "config"], by.loc[(alg, "split"), "n_eligible"]) == (config, eligible)
        assert by.loc[(alg, "split"), "selection_score"] == score
        reported = runs[runs["algorithm"] == f"{alg} [tuned, split-half]"]
        assert list(reported["score"]) == list(ev.loc[ev["config"] == config, "score"])
