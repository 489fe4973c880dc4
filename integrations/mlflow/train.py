"""One small, real learning run: a multi-armed bandit learner in numpy, logged to MLflow.

It ends with the one-line call that makes the run findable by ``rl-reliable mlflow``::

    rl_reliable_logger.log_final_score(score, algorithm=..., task=..., seed=...)

Algorithms: ``epsilon_greedy`` (exploration rate ``--epsilon``, 0.1 by default; sample averages), ``ucb1`` (Auer et al. 2002) and
``thompson`` (Beta posterior for Bernoulli arms, Gaussian posterior for Gaussian arms).
Tasks (arm means fixed per task, independent of the seed):

- ``bernoulli-10``: 10 Bernoulli arms, means spread over [0.1, 0.9];
- ``bernoulli-10-close``: 10 Bernoulli arms, best 0.55, the others 0.45-0.50 (hard to tell apart);
- ``gaussian-5``: 5 unit-variance Gaussian arms with means drawn once from N(0, 1).

Score: the expected reward of the arms pulled in the last 10% of the steps, normalised so that
0 = picking arms uniformly at random and 1 = always pulling the best arm. During training the
same quantity over a moving window is logged as the metric ``normalized_reward`` (the curve).

Run alone:  ``python train.py --algorithm ucb1 --task bernoulli-10 --seed 0``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

ALGORITHMS = ("epsilon_greedy", "ucb1", "thompson")
TASKS = ("bernoulli-10", "bernoulli-10-close", "gaussian-5")


def task_arms(task: str) -> tuple[np.ndarray, str]:
    """Arm means and reward family of a task; the same for every seed."""
    rng = np.random.default_rng(zlib.crc32(task.encode()))
    if task == "bernoulli-10":
        return np.sort(rng.uniform(0.1, 0.9, size=10)), "bernoulli"
    if task == "bernoulli-10-close":
        return np.concatenate([rng.uniform(0.45, 0.50, size=9), [0.55]]), "bernoulli"
    if task == "gaussian-5":
        return rng.normal(0.0, 1.0, size=5), "gaussian"
    raise SystemExit(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")


def run_bandit(
    algorithm: str, task: str, seed: int, steps: int = 2000, n_points: int = 20, epsilon: float = 0.1
) -> tuple[float, list[tuple[int, float]]]:
    """Train one learner; return (final normalised score, curve as [(step, normalised reward)]). ``epsilon`` is
    epsilon-greedy's exploration rate (the hyperparameter the race example tunes; the other learners ignore it)."""
    if algorithm not in ALGORITHMS:
        raise SystemExit(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    means, family = task_arms(task)
    k = len(means)
    rng = np.random.default_rng(seed)
    counts = np.zeros(k)
    sums = np.zeros(k)
    chosen_mean = np.empty(steps)
    for t in range(steps):
        if algorithm == "epsilon_greedy":
            if rng.random() < epsilon or t < k:
                arm = int(rng.integers(k)) if t >= k else t
            else:
                arm = int(np.argmax(sums / np.maximum(counts, 1)))
        elif algorithm == "ucb1":
            if t < k:
                arm = t
            else:
                bonus = np.sqrt(2.0 * np.log(t + 1) / counts)
                arm = int(np.argmax(sums / counts + bonus))
        else:  # thompson
            if family == "bernoulli":
                draws = rng.beta(1.0 + sums, 1.0 + counts - sums)
            else:  # N(0, 1) prior, unit observation noise
                precision = 1.0 + counts
                draws = rng.normal(sums / precision, 1.0 / np.sqrt(precision))
            arm = int(np.argmax(draws))
        if family == "bernoulli":
            reward = float(rng.random() < means[arm])
        else:
            reward = float(rng.normal(means[arm], 1.0))
        counts[arm] += 1
        sums[arm] += reward
        chosen_mean[t] = means[arm]

    def normalised(values: np.ndarray) -> float:
        return float((values.mean() - means.mean()) / (means.max() - means.mean()))

    window = max(1, steps // 10)
    every = max(1, steps // n_points)
    curve = [(t, normalised(chosen_mean[max(0, t - window) : t])) for t in range(every, steps + 1, every)]
    return normalised(chosen_mean[-window:]), curve


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="ucb1", choices=ALGORITHMS)
    parser.add_argument("--task", default="bernoulli-10", choices=TASKS)
    parser.add_argument("--seed", type=float, default=0)
    parser.add_argument("--steps", type=float, default=2000)
    parser.add_argument("--epsilon", type=float, default=0.1, help="epsilon_greedy's exploration rate")
    args = parser.parse_args(argv)
    if not float(args.seed).is_integer():
        parser.error(f"--seed must be a whole number, got {args.seed}")
    seed, steps = int(args.seed), int(args.steps)  # `mlflow run -P seed=3.0` passes floats

    import _path
    import mlflow

    _path.ensure_package()
    import rl_reliable_logger

    score, curve = run_bandit(args.algorithm, args.task, seed, steps, epsilon=args.epsilon)
    # Under `mlflow run` the run already exists (MLFLOW_RUN_ID) and start_run() resumes it; when a
    # caller already has an active run (main.py --launcher inline) we log into that one.
    active = mlflow.active_run()
    # read before start_run(): MLflow removes MLFLOW_RUN_ID from the environment when it resumes that run
    resumed = "MLFLOW_RUN_ID" in os.environ
    run = (
        contextlib.nullcontext(active) if active else mlflow.start_run(run_name=f"{args.algorithm}-{args.task}-s{seed}")
    )
    with run:
        if not active and not resumed:  # plain `python train.py`: record the config (`mlflow run` logged -P params)
            params = {"algorithm": args.algorithm, "task": args.task, "seed": seed, "steps": steps}
            mlflow.log_params({**params, "epsilon": args.epsilon} if args.algorithm == "epsilon_greedy" else params)
        for step, value in curve:
            mlflow.log_metrics({"normalized_reward": value}, step=step)
        # The one line a training script needs:
        rl_reliable_logger.log_final_score(score, algorithm=args.algorithm, task=args.task, seed=seed)
    print(f"{args.algorithm} on {args.task} (seed {seed}): final normalised score {score:.3f}")
    return score


if __name__ == "__main__":
    main()
