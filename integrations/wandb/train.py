"""A small, real training script for a W&B grid sweep (algorithm x task x seed), seconds per run.

The "environments" are stochastic multi-armed bandits (numpy only); the learners are classic
value- and policy-based agents. Each run logs its evaluation return as history (``eval/return``)
and ends with the one-line rl_reliable_logger call, which records the final score and the
algorithm / task / seed in the documented convention so ``rl-reliable wandb`` needs no flags.

    python train.py --algorithm ucb --task bandit-hard --seed 3            # one run (online)
    WANDB_MODE=offline python train.py --algorithm ucb --task bandit-hard  # no account needed
    wandb sweep sweep.yaml && wandb agent ENTITY/PROJECT/SWEEP_ID          # the whole grid
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

#: task -> (number of arms, gap between the best arm and the others' mean, reward noise std)
TASKS: dict[str, tuple[int, float, float]] = {
    "bandit-easy": (5, 1.0, 1.0),
    "bandit-hard": (30, 0.3, 1.5),
    "bandit-noisy": (10, 0.5, 4.0),
}
ALGORITHMS = ("eps-greedy", "ucb", "gradient")


def make_task(task: str, seed: int) -> np.ndarray:
    """True arm means of one task instance (the instance depends on the seed, like an env seed)."""
    if task not in TASKS:
        raise SystemExit(f"unknown task {task!r}; choose one of {sorted(TASKS)}")
    arms, gap, _ = TASKS[task]
    rng = np.random.default_rng([seed, 7919])
    means = rng.normal(0.0, 0.5 * gap, size=arms)
    means[rng.integers(arms)] = means.max() + gap
    return means


def train(
    algorithm: str,
    task: str,
    seed: int,
    *,
    steps: int = 400,
    eval_every: int = 40,
    log: Callable[[dict, int], None] | None = None,
) -> float:
    """Train one agent; return its final score (the fraction of the best arm's mean it earns greedily).

    Evaluation is exact: the expected reward of the current greedy (or softmax) policy, divided by
    the best arm's mean after shifting so that the worst arm scores 0.
    """
    means = make_task(task, seed)
    _, _, noise = TASKS[task]
    rng = np.random.default_rng(seed)
    k = len(means)
    q = np.zeros(k)
    n = np.zeros(k)
    h = np.zeros(k)  # preferences (gradient bandit)
    baseline = 0.0
    lo, hi = means.min(), means.max()

    def policy() -> np.ndarray:
        if algorithm == "gradient":
            z = np.exp(h - h.max())
            return z / z.sum()
        p = np.zeros(k)
        p[np.argmax(q)] = 1.0
        return p

    def evaluate() -> float:
        return float((policy() @ means - lo) / (hi - lo))

    score = evaluate()
    for t in range(1, steps + 1):
        if algorithm == "eps-greedy":
            a = rng.integers(k) if rng.random() < 0.1 else int(np.argmax(q))
        elif algorithm == "ucb":
            a = int(np.argmin(n)) if n.min() == 0 else int(np.argmax(q + np.sqrt(2.0 * np.log(t) / n)))
        elif algorithm == "gradient":
            a = int(rng.choice(k, p=policy()))
        else:
            raise SystemExit(f"unknown algorithm {algorithm!r}; choose one of {ALGORITHMS}")
        r = rng.normal(means[a], noise)
        n[a] += 1
        q[a] += (r - q[a]) / n[a]
        if algorithm == "gradient":
            pi = policy()
            baseline += (r - baseline) / t
            h -= 0.1 * (r - baseline) * pi
            h[a] += 0.1 * (r - baseline)
        if t % eval_every == 0:
            score = evaluate()
            if log is not None:
                log({"eval/return": score, "train/mean_reward_estimate": float(q.max())}, t)
    return score


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="ucb", choices=ALGORITHMS)
    parser.add_argument("--task", default="bandit-easy", choices=sorted(TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--project", default="rl-reliable-bandits")
    args = parser.parse_args(argv)

    import wandb

    from rl_reliable_logger import log_final_score

    # Under `wandb agent` the sweep's parameters arrive as --algorithm/--task/--seed arguments.
    run = wandb.init(project=args.project, config=vars(args), group=f"{args.algorithm}-{args.task}")
    score = train(args.algorithm, args.task, args.seed, steps=args.steps, log=lambda row, step: run.log(row, step=step))
    log_final_score(score, algorithm=args.algorithm, task=args.task, seed=args.seed)  # the one line
    run.finish()
    return score


if __name__ == "__main__":
    main()
