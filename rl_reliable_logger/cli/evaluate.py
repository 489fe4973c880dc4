"""``rl-reliable evaluate``: evaluate per-run scores from a CSV, Parquet or JSON file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EPILOG, check_output, read_scores, run_and_report
from .flags import CliError
from .options import add_analysis_options, add_field_options, add_output_options

_DESCRIPTION = """\
Evaluate per-run final scores (long form: one row per run and task, or per run, task and step with
--step-key) with stratified-bootstrap confidence intervals, performance profiles, probability of
improvement and rank distributions; optionally Jordan et al.'s aggregate (--jordan), the tuning-aware
view of a sweep (--hyperparameter-keys) and sample-efficiency curves (--curves --step-key step).
The seed defaults to 0, so the same file and options give the same numbers.
"""


def _cmd_evaluate(args: argparse.Namespace) -> int:
    path = Path(args.input)
    if not path.exists():  # before the output check, which names inputs
        raise CliError(f"input file {path} does not exist")
    if args.curves and not args.step_key:
        raise CliError("--curves needs per-step scores: name the step column with --step-key COLUMN")
    check_output(args, inputs=[path])  # before any computation: never replace an input or foreign files
    table = read_scores(path, args)
    run_and_report(table, args, source={"kind": "file", "path": str(path)})
    return 0


def register(sub: Any) -> None:
    """Add the ``evaluate`` subcommand."""
    p = sub.add_parser(
        "evaluate",
        help="evaluate per-run scores from a CSV, Parquet or JSON file",
        description=_DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="CSV, TSV, Parquet or JSON file in long form")
    fields = add_field_options(p, {"algorithm": "algorithm", "task": "task", "seed": "seed", "score": "score"})
    fields.add_argument("--step-key", default=None, metavar="COL", help="column with the training step (for --curves)")
    add_analysis_options(p)
    add_output_options(p)
    p.set_defaults(func=_cmd_evaluate)
