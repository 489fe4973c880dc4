"""``rl-reliable evaluate``: evaluate per-run scores from a CSV, Parquet or JSON file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EPILOG, check_output, read_scores, run_and_report
from .flags import CliError
from .options import FILE_FIELDS, add_analysis_options, add_field_options, add_output_options

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
    check_output(args, inputs=[path])  # before any computation: never replace an input or foreign files
    table = read_scores(path, args)
    if (args.curves or args.budget is not None) and not table.has_steps:
        flag = "--curves" if args.curves else "--budget"
        raise CliError(
            f"{flag} needs per-step scores: {path} has no column {args.step_key!r}; name the step column with "
            "--step-key COLUMN"
        )
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
    add_field_options(p, FILE_FIELDS)
    add_analysis_options(p)
    add_output_options(p)
    p.set_defaults(func=_cmd_evaluate)
