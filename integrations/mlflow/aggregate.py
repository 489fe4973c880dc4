"""The ``aggregate`` step: analyse finished training runs and publish the report to MLflow.

With ``--parent-run-id P`` it analyses exactly the ``train`` children of P (filter
``tags.mlflow.parentRunId = 'P' and tags.mlflow.project.entryPoint = 'train'``) and publishes onto
P. Without it, it analyses every run of the experiment that follows the ``log_final_score``
convention and publishes onto this step's own MLflow run (``MLFLOW_RUN_ID``, set by
``mlflow run``), or onto a new ``rl-reliable-analysis`` run when started outside ``mlflow run``.

This is a thin wrapper over ``rl-reliable mlflow ...``; see ``docs/mlflow.md``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def build_cli_args(
    experiment: str, parent_run_id: str, filter_string: str, reps: int, seed: int, out: str, active_run_id: str | None
) -> list[str]:
    """The ``rl-reliable`` argument list this step runs (separate so it can be printed and tested)."""
    clauses = [filter_string.strip()] if filter_string.strip() else []
    if parent_run_id:
        clauses += [f"tags.mlflow.parentRunId = '{parent_run_id}'", "tags.mlflow.project.entryPoint = 'train'"]
    publish = parent_run_id or active_run_id or "new"
    argv = ["mlflow", "--experiment", experiment, "--reps", str(reps), "--seed", str(seed), "--publish", publish]
    argv += ["--normalize", "already-normalized"]  # train.py normalises its scores (1 = always the best arm)
    if clauses:
        argv += ["--filter", " and ".join(clauses)]
    if out:
        argv += ["--out", out]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="", help="experiment name or id (default: this run's experiment)")
    parser.add_argument("--parent-run-id", default="")
    parser.add_argument("--filter", default="")
    parser.add_argument("--reps", type=float, default=2000)
    parser.add_argument("--seed", type=float, default=0)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)

    import _path

    _path.ensure_package()
    from rl_reliable_logger.cli import main as cli

    experiment = args.experiment
    if not experiment and args.parent_run_id:
        import mlflow

        experiment = mlflow.MlflowClient().get_run(args.parent_run_id).info.experiment_id
    experiment = experiment or os.environ.get("MLFLOW_EXPERIMENT_ID") or "0"
    cli_args = build_cli_args(
        experiment,
        args.parent_run_id,
        args.filter,
        int(args.reps),
        int(args.seed),
        args.out,
        os.environ.get("MLFLOW_RUN_ID"),
    )
    print("rl-reliable " + shlex.join(cli_args), flush=True)
    return cli.main(cli_args) or 0


if __name__ == "__main__":
    raise SystemExit(main())
