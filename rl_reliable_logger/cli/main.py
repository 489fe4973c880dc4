"""The ``rl-reliable`` command: evaluate scores from a file or a tracker and write the results.

Run ``rl-reliable --help`` or ``rl-reliable evaluate --help``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..errors import RLReliableError
from ..version import __version__
from . import evaluate as evaluate_command
from . import mlflow as mlflow_command
from . import plan as plan_command
from . import report as report_command
from . import wandb as wandb_command
from .common import EPILOG, CliError


def build_parser() -> argparse.ArgumentParser:
    """The full ``rl-reliable`` parser (subcommands from the tracker modules included)."""
    parser = argparse.ArgumentParser(
        prog="rl-reliable",
        description="Reliable evaluation of RL results (IQM, optimality gap, stratified-bootstrap intervals, "
        "performance profiles, probability of improvement) from files, MLflow or W&B.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in (
        evaluate_command.register,
        mlflow_command.register,
        wandb_command.register,
        report_command.register,
        plan_command.register,
    ):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rl-reliable``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    debug = bool(os.environ.get("RL_RELIABLE_DEBUG"))
    try:
        return int(args.func(args) or 0)
    except CliError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # last resort: a short message, the traceback only on request
        if debug:
            raise
        if isinstance(err, RLReliableError):
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"error: {type(err).__name__}: {err}\n(set RL_RELIABLE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
