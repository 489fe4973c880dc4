"""The ``race`` step: tune epsilon-greedy's exploration rate by racing, with a guarantee on the choice.

    mlflow run integrations/mlflow -e race --env-manager local -P epsilons=0.01,0.05,0.2,0.5 -P delta=0.05

1. trains the first look's seeds of every exploration rate x task (the ``train`` entry point with ``-P epsilon=...``,
   as nested runs of this step);
2. runs ``rl-reliable race mlflow --experiment <this experiment> --state <state> --hyperparameter-keys params.epsilon
   --delta D ...``: exit 3 means more runs are needed, listed one per line in ``<state>/mlflow-params.txt`` as the
   ``-P key=value`` arguments of ``mlflow run`` (algorithm, epsilon, task, seed);
3. trains exactly those runs and races again, until it exits 0: a rate is selected whose IQM is within ``delta``
   of the best rate's with probability at least 0.95 (``docs/race.md``), or the last look was taken.

Each look is published to the experiment as an analysis run; the training runs are never written to. An error
(exit 2) ends the step with that status.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from watch_loop import run_loop  # noqa: E402  (the same loop: run the command, launch its mlflow-params.txt)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def race_command(experiment: str, args: argparse.Namespace) -> list[str]:
    """The ``rl-reliable race mlflow`` arguments of one look of this step."""
    return [
        "race", "mlflow", "--experiment", experiment, "--state", args.state,
        "--looks", str(int(args.looks)), "--max-runs", str(int(args.max_runs)),
        "--hyperparameter-keys", "params.epsilon", "--delta", str(args.delta),
        "--reps", str(int(args.reps)), "--seed", "0", "--normalize", "already-normalized",
        "--publish", "new", "--no-figures",
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", default="0.01,0.05,0.2,0.5")
    parser.add_argument("--tasks", default="bernoulli-10,gaussian-5")
    parser.add_argument("--steps", type=float, default=2000)
    parser.add_argument("--looks", type=float, default=4)
    parser.add_argument("--max-runs", type=float, default=8)
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--reps", type=float, default=2000)
    parser.add_argument("--state", default="race-state")
    args = parser.parse_args(argv)

    import _path
    import mlflow

    _path.ensure_package()
    import train

    first = math.ceil(int(args.max_runs) / int(args.looks))  # the first look's planned runs per cell
    with mlflow.start_run(run_name="rl-reliable-race") as parent:
        experiment = parent.info.experiment_id

        def launch(params: dict[str, str]) -> None:  # the `train` entry point as a nested run of this step
            name = f"{params['algorithm']}-eps{params['epsilon']}-{params['task']}-s{params['seed']}"
            with mlflow.start_run(run_name=name, nested=True):
                mlflow.set_tag("mlflow.project.entryPoint", "train")
                mlflow.log_params({**params, "steps": int(args.steps)})
                train.main([w for k, v in params.items() for w in (f"--{k}", v)] + ["--steps", str(int(args.steps))])

        for epsilon, task, seed in itertools.product(_split(args.epsilons), _split(args.tasks), range(first)):
            launch({"algorithm": "epsilon_greedy", "epsilon": epsilon, "task": task, "seed": str(seed)})
        return run_loop(race_command(experiment, args), launch, state=args.state, rounds=int(args.looks))


if __name__ == "__main__":
    raise SystemExit(main())
