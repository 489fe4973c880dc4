"""``rl-reliable report DIR``: rebuild figures, ``report.html`` and paper tables from a results folder.

Useful after upgrading the package, or after editing ``provenance.json`` (e.g. to set a
``score_label``), without re-running the bootstrap: only the saved tables are read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..analysis.report import Report
from ..render.writer import write_all
from .common import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser(
        "report",
        help="rebuild figures, report.html, table.tex and table.md from a results folder",
        description="Read the CSV tables and provenance.json that `rl-reliable evaluate --out DIR` wrote, and "
        "(re)write DIR/figures/*.png|svg, DIR/report.html, DIR/table.tex and DIR/table.md.",
    )
    p.add_argument("dir", metavar="DIR", help="results folder written by `rl-reliable evaluate --out DIR`")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder; pass the DIR given to `rl-reliable evaluate --out DIR`")
    try:
        report = Report.load(folder)
    except FileNotFoundError as err:
        raise CliError(str(err)) from None
    if report.aggregates.empty:
        raise CliError(f"{folder / 'aggregates.csv'} has no rows; re-run `rl-reliable evaluate --out {folder}`")
    written = write_all(report, folder)
    for path in written:
        print(path)
    print(f"wrote {len(written)} files; open {folder / 'report.html'} in a browser")
    return 0
