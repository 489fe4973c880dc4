"""Run a grid of algorithms x tasks x seeds as child runs of one parent run, then aggregate.

Each grid point is the project's ``train`` entry point, started either in this process as a nested
run (``--launcher inline``, the default: same code, about 0.2 s per run) or as an MLflow project
step (``--launcher mlflow``: ``mlflow.projects.run(..., "train")``, one process per run, the usual
multi-step workflow, a few seconds per run). Either way the child runs carry ``mlflow.parentRunId`` and
``mlflow.project.entryPoint = train``. The ``aggregate`` step then analyses exactly those children
and publishes the report onto the parent run.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="epsilon_greedy,ucb1,thompson")
    parser.add_argument("--tasks", default="bernoulli-10,bernoulli-10-close,gaussian-5")
    parser.add_argument("--seeds", type=float, default=5)
    parser.add_argument("--steps", type=float, default=2000)
    parser.add_argument("--reps", type=float, default=2000)
    parser.add_argument("--launcher", choices=("mlflow", "inline"), default="inline")
    args = parser.parse_args(argv)

    import mlflow

    sys.path.insert(0, str(HERE))
    import _path

    _path.ensure_package()
    import train

    grid = list(itertools.product(_split(args.algorithms), _split(args.tasks), range(int(args.seeds))))
    with mlflow.start_run(run_name="rl-reliable-grid") as parent:
        parent_id = parent.info.run_id
        experiment_id = parent.info.experiment_id
        mlflow.set_tag("rl_reliable.role", "grid-parent")
        for i, (algorithm, task, seed) in enumerate(grid, 1):
            print(f"[{i}/{len(grid)}] train {algorithm} on {task}, seed {seed}", flush=True)
            params = {"algorithm": algorithm, "task": task, "seed": seed, "steps": int(args.steps)}
            if args.launcher == "mlflow":
                mlflow.projects.run(
                    str(HERE),
                    "train",
                    parameters=params,
                    env_manager="local",
                    experiment_id=experiment_id,
                    synchronous=True,
                )
            else:
                with mlflow.start_run(run_name=f"{algorithm}-{task}-s{seed}", nested=True):
                    mlflow.set_tag("mlflow.project.entryPoint", "train")
                    mlflow.log_params(params)
                    train.main(
                        ["--algorithm", algorithm, "--task", task, "--seed", str(seed), "--steps", str(int(args.steps))]
                    )
        aggregate = {"parent_run_id": parent_id, "reps": int(args.reps)}
        if args.launcher == "mlflow":
            mlflow.projects.run(
                str(HERE),
                "aggregate",
                parameters=aggregate,
                env_manager="local",
                experiment_id=experiment_id,
                synchronous=True,
            )
        else:
            import aggregate as aggregate_step

            aggregate_step.main(
                ["--parent-run-id", parent_id, "--reps", str(int(args.reps)), "--experiment", experiment_id]
            )
    print(f"grid parent run {parent_id}: the analysis is in its artifacts under rl_reliable/", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
