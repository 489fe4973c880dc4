"""``rl-reliable pending [DIR]``: list final scores that ``log_final_score`` could not write, and push them.

Wiring only: reading, checking and sending the files live in ``trackers/base/pending.py`` and in each
tracker's ``final_score`` module.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..trackers import registry
from ..trackers.base.plugin import recorded_fields
from .flags import CliError, cli_message
from .options import add_retry_option, retry_policy

_DESCRIPTION = """\
When log_final_score cannot write a final score to {labels} (even after its retries), it saves
the score to a JSON file in the pending folder (pending_dir=, else RL_RELIABLE_PENDING_DIR, else
./rl-reliable-pending) and prints the file's path. This command lists those files and, with --push,
sends each one to the run it names (only that run) once the tracker is back; a pushed file is moved to
DIR/pushed/. A run that already has a different final score is left unchanged and its file kept.
A file that cannot be read or pushed is named in one line and the others are still sent; the exit
status is then 2 (0 when every file was pushed).
"""

_EPILOG = """\
examples:
  rl-reliable pending                                  # list ./rl-reliable-pending
  rl-reliable pending rl-reliable-pending --push       # send them (to the tracker recorded in each file)
"""


def register(subparsers: Any) -> None:
    """Add the ``pending`` subcommand."""
    p = subparsers.add_parser(
        "pending",
        help=f"list final scores that could not be written to {'/'.join(p.label for p in registry.pending_pushers())}, "
        "and --push them",
        description=_DESCRIPTION.format(labels=" or ".join(p.label for p in registry.pending_pushers())),
        epilog=_EPILOG + "".join(p.cli.pending_note for p in registry.pending_pushers()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dir",
        nargs="?",
        default=None,
        metavar="DIR",
        help="pending folder (default: RL_RELIABLE_PENDING_DIR, else ./rl-reliable-pending)",
    )
    g = p.add_argument_group("pushing")
    g.add_argument("--push", action="store_true", help="send each pending score to its run")
    for plugin in registry.pending_pushers():
        plugin.cli.add_pending_flags(g)
    add_retry_option(g)
    p.set_defaults(func=_handler)


def _handler(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..lines import one_line, printable
    from ..trackers.base.pending import list_pending, pending_dir

    def say(text: object, **kwargs: Any) -> None:  # like every message: redacted, escaped, one line
        print(one_line(printable(text), limit=4000), **kwargs)

    folder = pending_dir(args.dir)
    try:
        items, problems = list_pending(folder)
    except RLReliableError as err:
        raise CliError(cli_message(err)) from None
    for problem in problems:
        say(f"warning: skipped {problem}", file=sys.stderr)
    if not items:
        say(f"no pending final scores in {folder}")
        return 2 if problems else 0
    failed = others = 0
    for item in items:
        if not args.push:
            say(item.describe(_location(item)))
            continue
        with _claim(item.path) as mine:
            if not mine:
                others += 1
                say(f"skipped: {item.path.name}: another `pending --push` is pushing it (or has pushed it)")
                continue
            failed += _push_one(item, args, say)
    if args.push:
        say(
            f"{len(items) - failed - others} of {len(items)} pending score(s) pushed"
            + (f"; {others} by another `pending --push` at the same time" if others else "")
            + (f"; {failed} kept in {folder}" if failed else "")
        )
    else:
        say(f"{len(items)} pending score(s) in {folder}; send them with: rl-reliable pending {folder} --push")
    return 2 if failed or problems else 0  # every file was tried; the ones not pushed are named above


@contextlib.contextmanager
def _claim(path: Path) -> Iterator[bool]:
    """Hold an exclusive lock on a pending file while it is pushed, so that two ``pending --push`` at once send
    each score once; False when another process holds it or has already moved it to ``pushed/``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        yield False
        return
    try:
        yield path.exists()  # moved between our open and our lock: pushed by the other one
    finally:
        os.close(fd)


def _push_one(item: Any, args: argparse.Namespace, say: Any) -> int:
    """Push one file and say what happened; 1 when it was not pushed (named in one line), else 0."""
    from ..errors import RLReliableError
    from ..trackers.base.messages import describe_failure, is_tracker_failure
    from ..trackers.base.pending import mark_pushed

    try:
        outcome = _push(item, args)
    except Exception as err:  # one bad file or run never stops the batch
        if not isinstance(err, RLReliableError) and not is_tracker_failure(err, registry.client_modules()):
            raise
        why = cli_message(err) if isinstance(err, RLReliableError) else describe_failure(err)
        why = why.removeprefix(f"{item.path.name}: ").rstrip()  # the file is named once, first
        say(f"not pushed: {item.path.name}: {why}{'' if why.endswith(('.', '?', '!')) else '.'}", file=sys.stderr)
        return 1
    said = "already there" if outcome == "already" else "written"
    try:
        where = f"file moved to {mark_pushed(item)}"
    except RLReliableError as err:
        where = cli_message(err)
    say(f"pushed: {item.tracker} run {item.run_id}: score {item.score!r} {said}; {where}")
    return 0


def _plugin(item: Any) -> Any:
    """The plugin a pending file names (one with a pending role), or None (a file from another version or tracker)."""
    return next((p for p in registry.pending_pushers() if p.name == item.tracker), None)


def _location(item: Any) -> str:
    plugin = _plugin(item)
    return plugin.pending.location(item.run) if plugin else recorded_fields(item.run)


def _push(item: Any, args: argparse.Namespace) -> str:
    from ..errors import InputError

    plugin = _plugin(item)
    if plugin is None:
        raise InputError(
            f"it names the tracker {item.tracker!r}, which this version cannot write to "
            f"(it writes to {', '.join(p.name for p in registry.pending_pushers())}); keep the file for a version that can"
        )
    return plugin.pending.push(item, args, retry_policy(args))
