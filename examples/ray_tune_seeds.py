"""Tune on a seed aggregate: a real local Ray Tune experiment over algorithms, tasks, seeds and one
hyperparameter, read back with ``raytune_table`` and evaluated with the tuning view (docs/raytune.md).

    pip install 'rl_reliable_logger[raytune]'
    python examples/ray_tune_seeds.py /tmp/tune-demo       # 24 tiny trials, then the analysis
"""

from __future__ import annotations

import sys

import numpy as np

TASKS = {"easy": (0.2, 0.4, 0.8), "hard": (0.45, 0.5, 0.55)}  # Bernoulli arm means of two 3-armed bandits
REPORTS, PULLS = 5, 40  # each trial reports its mean reward 5 times, every 40 pulls


def learning_curve(config: dict) -> list[float]:
    """The mean reward after every PULLS pulls of one bandit run: a pure function of the config."""
    rng = np.random.default_rng([config["seed"], list(TASKS).index(config["task"])])
    means = np.array(TASKS[config["task"]])
    counts, sums, curve, total = np.zeros(len(means)), np.zeros(len(means)), [], 0.0
    for t in range(1, REPORTS * PULLS + 1):
        if config["algo"] == "eps-greedy":
            arm = (
                rng.integers(len(means))
                if rng.random() < config["explore"]
                else int(np.argmax(sums / np.maximum(counts, 1)))
            )
        else:  # ucb
            bonus = config["explore"] * np.sqrt(np.log(t) / np.maximum(counts, 1e-9))
            arm = int(np.argmax(sums / np.maximum(counts, 1) + bonus))
        reward = float(rng.random() < means[arm])
        counts[arm], sums[arm], total = counts[arm] + 1, sums[arm] + reward, total + reward
        if t % PULLS == 0:
            curve.append(total / t)
    return curve


def trainable(config: dict) -> None:
    from ray import train, tune

    report = getattr(tune, "report", None) or train.report  # Ray 2.40 has train.report only
    for value in learning_curve(config):
        report({"eval/return": value})


def run(storage: str, *, seeds=(0, 1, 2), algos=("eps-greedy", "ucb"), explore=(0.1, 0.5)):
    """Every algorithm x task x explore x seed as one trial; returns the ResultGrid."""
    from ray import train, tune

    run_config = getattr(tune, "RunConfig", None) or train.RunConfig  # Ray 2.40 has train.RunConfig only
    grid = {"algo": algos, "task": list(TASKS), "explore": explore, "seed": seeds}
    tuner = tune.Tuner(
        trainable,
        param_space={key: tune.grid_search(list(values)) for key, values in grid.items()},
        run_config=run_config(storage_path=storage, name="bandits", verbose=0),
    )
    return tuner.fit()


if __name__ == "__main__":
    import ray

    from rl_reliable_logger import evaluate
    from rl_reliable_logger.trackers import ReadOptions
    from rl_reliable_logger.trackers.raytune import raytune_table

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    results = run(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tune-demo")
    table = raytune_table(results, score_key="eval/return", algorithm_key="config/algo",
                          read=ReadOptions(hyperparameter_keys=["config/explore"]))  # fmt: skip
    report = evaluate(table, hyperparameter_keys=["explore"], seed=0)
    print(report.extra["tuning"].to_string(index=False))  # complete / tuned / split-half views with intervals
    ray.shutdown()
