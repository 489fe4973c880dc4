"""``rl-reliable evaluate``: evaluate per-run scores from a CSV, Parquet or JSON file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..data.scores import ScoreTable
from ..errors import InputError, ScoreTableError
from ..render.bundle import check_output_folder
from .common import EPILOG, CliError, add_evaluate_options, run_and_report
from .flags import as_flags


def _cmd_evaluate(args: argparse.Namespace) -> int:
    path = Path(args.input)
    if not path.exists():
        raise CliError(f"input file {path} does not exist")
    if args.out:
        try:  # before any computation: never replace an input or files the tool did not write
            check_output_folder(args.out, inputs=[path], force=args.force)
        except InputError as err:
            raise CliError(as_flags(str(err))) from None
    try:
        table = ScoreTable.from_file(
            path,
            algorithm=args.algorithm_key,
            task=args.task_key,
            seed=args.seed_key,
            score=args.score_key,
            run_id=args.run_key,
            step=args.step_key,
            on_invalid="drop" if args.drop_invalid else "raise",
            source={"kind": "file", "path": str(path), "score_column": args.score_key},
        )
    except ScoreTableError as err:
        message = str(err)
        raise CliError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read {path}: {err}") from None
    run_and_report(table, args, source={"kind": "file", "path": str(path)})
    return 0


def register(sub: Any) -> None:
    """Add the ``evaluate`` subcommand."""
    p = sub.add_parser(
        "evaluate",
        help="evaluate per-run scores from a CSV, Parquet or JSON file",
        description="Evaluate per-run final scores (long form: one row per run and task) with stratified-bootstrap "
        "confidence intervals, performance profiles and probability of improvement.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="CSV, Parquet or JSON file in long form")
    k = p.add_argument_group("columns")
    k.add_argument("--algorithm-key", default="algorithm", help="column with the algorithm (default: algorithm)")
    k.add_argument("--task-key", default="task", help="column with the task / environment (default: task)")
    k.add_argument("--seed-key", default="seed", help="column with the seed (default: seed)")
    k.add_argument("--score-key", default="score", help="column with the final score (default: score)")
    k.add_argument(
        "--run-key",
        default=None,
        help="column with a unique run id, when a seed number is not unique (e.g. two batches of seeds)",
    )
    k.add_argument("--step-key", default=None, help="column with the training step (for --curves)")
    add_evaluate_options(p)
    p.set_defaults(func=_cmd_evaluate)
