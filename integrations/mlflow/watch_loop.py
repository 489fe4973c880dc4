"""The ``watch`` step: train k seeds per cell, then watch and launch the listed runs until the comparison is decided.

    mlflow run integrations/mlflow -e watch --env-manager local -P algorithms=ucb1,thompson -P looks=3 -P max_runs=9

1. trains ``seeds`` seeds of every algorithm x task (the ``train`` entry point, as nested runs of this step);
2. runs ``rl-reliable watch mlflow --experiment <this experiment> --state <state> ...``: exit 3 means more runs are
   needed, listed one per line in ``<state>/mlflow-params.txt`` as ``-P key=value`` arguments of ``mlflow run``;
3. trains exactly those runs and looks again, until the watch exits 0 (every pair decided, or the last look taken).

Each look is published to the experiment as an analysis run (decisions and launch list as tables); the training
runs are never written to. An error (exit 2) ends the step with that status.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: Exit status of ``rl-reliable watch`` when more runs are needed.
MORE_RUNS = 3


def run_loop(watch_args: Sequence[str], launch: Callable[[dict[str, str]], None], *, state: str, rounds: int) -> int:
    """Watch, launch the runs of ``<state>/mlflow-params.txt``, watch again; the first status other than 3 ends it."""
    from rl_reliable_logger.cli.main import main as rl_reliable

    for _ in range(rounds):
        print("rl-reliable " + shlex.join(watch_args), flush=True)
        code = rl_reliable(list(watch_args))
        if code != MORE_RUNS:
            return code
        for line in (Path(state) / "mlflow-params.txt").read_text().splitlines():
            words = shlex.split(line)
            launch(dict(word.split("=", 1) for word in words if word != "-P"))
    return MORE_RUNS


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="ucb1,thompson")
    parser.add_argument("--tasks", default="bernoulli-10,gaussian-5")
    parser.add_argument("--seeds", type=float, default=3)
    parser.add_argument("--steps", type=float, default=2000)
    parser.add_argument("--looks", type=float, default=3)
    parser.add_argument("--max-runs", type=float, default=9)
    parser.add_argument("--reps", type=float, default=2000)
    parser.add_argument("--state", default="watch-state")
    args = parser.parse_args(argv)

    import _path
    import mlflow

    _path.ensure_package()
    import train

    with mlflow.start_run(run_name="rl-reliable-watch") as parent:
        experiment = parent.info.experiment_id

        def launch(params: dict[str, str]) -> None:  # the `train` entry point as a nested run of this step
            with mlflow.start_run(run_name=f"{params['algorithm']}-{params['task']}-s{params['seed']}", nested=True):
                mlflow.set_tag("mlflow.project.entryPoint", "train")
                mlflow.log_params({**params, "steps": int(args.steps)})
                train.main([w for k, v in params.items() for w in (f"--{k}", v)] + ["--steps", str(int(args.steps))])

        for algorithm, task, seed in itertools.product(
            _split(args.algorithms), _split(args.tasks), range(int(args.seeds))
        ):
            launch({"algorithm": algorithm, "task": task, "seed": str(seed)})
        watch = ["watch", "mlflow", "--experiment", experiment, "--state", args.state, "--looks", str(int(args.looks))]
        watch += ["--max-runs", str(int(args.max_runs)), "--reps", str(int(args.reps)), "--seed", "0"]
        watch += ["--normalize", "already-normalized", "--publish", "new", "--no-figures"]
        return run_loop(watch, launch, state=args.state, rounds=int(args.looks))


if __name__ == "__main__":
    raise SystemExit(main())
