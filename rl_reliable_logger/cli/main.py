"""The ``rl-reliable`` command: evaluate scores from a file or a tracker and write the results.

Run ``rl-reliable --help`` or ``rl-reliable evaluate --help``. The subcommands are registered
explicitly below (a broken subcommand module fails loudly); each imports numpy, pandas, matplotlib
or a tracker client only when it runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..trackers import registry
from ..version import __version__
from ..wording import Message
from . import evaluate as evaluate_command
from . import gate as gate_command
from . import pending as pending_command
from . import plan as plan_command
from . import race as race_command
from . import report as report_command
from . import trackers as tracker_commands
from . import watch as watch_command
from .common import EPILOG, command_scope, console
from .flags import CliError, as_flags, command_flags, user_message
from .options import run_name_redactor

#: Every subcommand, in help order (``tracker_commands`` adds one per registered tracker).
SUBCOMMANDS = (
    evaluate_command,
    tracker_commands,
    report_command,
    plan_command,
    watch_command,
    race_command,
    gate_command,
    pending_command,
)


class _Command(argparse.ArgumentParser):
    """A subcommand's parser: records itself as ``args.command_parser`` (the innermost one parsed wins), so that
    messages name only the flags of the command that was run (:func:`.flags.command_flags`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_defaults(command_parser=self)


def build_parser() -> argparse.ArgumentParser:
    """The full ``rl-reliable`` parser."""
    parser = argparse.ArgumentParser(
        prog="rl-reliable",
        description="Reliable evaluation of RL results (IQM, optimality gap, stratified-bootstrap intervals, "
        "performance profiles, probability of improvement, Jordan et al.'s aggregate) from files, "
        + ", ".join(p.label for p in registry.plugins()[:-1])
        + f" or {registry.plugins()[-1].label}.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Command)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rl-reliable``; returns the exit status."""
    from ..errors import RLReliableError
    from ..memory import check_libraries, out_of_memory
    from ..redaction import redacting_run_names
    from ..trackers.base.messages import describe_failure, describe_os_error, is_tracker_failure

    parser = build_parser()
    words = plan_command.with_source(sys.argv[1:] if argv is None else argv)
    words = plan_command.with_source(words, command="watch")
    words = plan_command.with_source(words, command="race")
    args = parser.parse_args(plan_command.with_source(words, command="gate"))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    debug = bool(os.environ.get("RL_RELIABLE_DEBUG"))
    # The command owns its process, so it (not the library, which must not change a user's environment) lets idle
    # OpenMP workers of the compiled kernels sleep instead of spinning between the many short parallel kernels:
    # spinning buys nothing measurable on a quiet machine and, on a shared one, burns the CPU the next chunk's
    # random words need (about 0.5 s of CPU per paper-default evaluation under load). A value the user set wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    too_little = check_libraries()  # before numpy and pandas are imported: under such a limit the imports fail
    if too_little:
        print(f"error: {as_flags(too_little)}", file=sys.stderr)
        return 2
    try:
        redactor = run_name_redactor(args)  # before anything is read: a bad --redact-run-names is one line
    except CliError as err:
        print(f"error: {user_message(err)}", file=sys.stderr)
        return 2
    # every message hides matching run names; warnings and log lines reach the console as ours; locks end with it
    command = getattr(args, "command_parser", None)
    with redacting_run_names(redactor), command_flags(command), console(), command_scope():
        try:
            return int(args.func(args) or 0)
        except CliError as err:
            print(f"error: {user_message(err)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except Exception as err:  # last resort: one line, the traceback only on request
            if debug:
                raise
            if isinstance(err, RLReliableError):
                print(f"error: {user_message(err)}", file=sys.stderr)
                return 2
            if is_tracker_failure(
                err, registry.client_modules()
            ):  # the store, its database or the network: not a bug of ours
                print(f"error: tracker request failed: {user_message(describe_failure(err))}", file=sys.stderr)
                return 2
            memory: Message | str | None
            try:
                memory = out_of_memory(err)
            except (MemoryError, SystemError):
                memory = "ran out of memory; raise the job's memory limit, or analyse less at a time"
            if memory:  # what no estimate caught: a MemoryError, a library that could not be mapped
                print(f"error: {as_flags(memory)}", file=sys.stderr)
                return 2
            if isinstance(err, OSError):  # the file system (permissions, disk full), named with its file
                print(f"error: {user_message(describe_os_error(err))}", file=sys.stderr)
                return 2
            print(
                f"error: {user_message(f'{type(err).__name__}: {err}')} (set RL_RELIABLE_DEBUG=1 for the traceback)",
                file=sys.stderr,
            )
            return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
