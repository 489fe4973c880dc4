"""``rl-reliable report DIR``: rebuild figures, ``report.html`` and paper tables from a results folder.

Useful after upgrading the package, or after editing ``provenance.json`` (e.g. to set a
``score_label``), without re-running the bootstrap: only the saved tables are read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .options import CliError

_EPILOG = """\
examples:
  rl-reliable report results/                    # rewrite results/figures, report.html, table.tex, table.md
  rl-reliable report results/ --out results-v2/  # a complete copy (tables too) rebuilt in another folder
"""


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser(
        "report",
        help="rebuild figures, report.html, table.tex and table.md from a results folder",
        description="Read the CSV tables and provenance.json that `rl-reliable evaluate --out DIR` (or mlflow/wandb "
        "--out DIR) wrote, and (re)write DIR/figures/*.png|svg, DIR/report.html, DIR/table.tex and DIR/table.md. "
        "Nothing is recomputed: the statistics options of the other commands do not apply here.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="results folder written by `rl-reliable evaluate --out DIR`")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="OUT", help="write the rebuilt results (tables included) to OUT instead of DIR")
    o.add_argument("--quiet", action="store_true", help="do not list the files written")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..analysis.report import Report
    from ..render.writer import save_report, write_all

    folder = Path(args.dir)
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder; pass the DIR given to `rl-reliable evaluate --out DIR`")
    try:
        report = Report.load(folder)
    except FileNotFoundError as err:
        raise CliError(str(err)) from None
    if report.aggregates.empty:
        raise CliError(f"{folder / 'aggregates.csv'} has no rows; re-run `rl-reliable evaluate --out {folder}`")
    if args.out:
        out = Path(args.out)
        if out.resolve() == folder.resolve():
            written = write_all(report, folder)
        else:
            save_report(report, out)
            written = sorted(p for p in out.rglob("*") if p.is_file())
    else:
        out = folder
        written = write_all(report, folder)
    if not args.quiet:
        for path in written:
            print(path)
    print(f"wrote {len(written)} files; open {out / 'report.html'} in a browser")
    return 0
