"""``rl-reliable report DIR``: redraw figures, ``report.html`` and paper tables of a results bundle.

Useful after upgrading the package, without re-running the bootstrap: the bundle is read only
through its manifest (a partial or modified bundle is refused), and its tables are kept byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .flags import CliError, cli_message
from .options import OUTPUT_FLAGS

_EPILOG = """\
examples:
  rl-reliable report results/           # redraw results/figures, report.html, table.tex, table.md
  rl-reliable report results/ --quiet   # the same, printing only the summary line
  rl-reliable report results/ --figure-formats png,svg   # also SVG copies of the figures (PNG only by default)

The statistics options of the analysing commands do not apply: nothing is recomputed.
"""


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser(
        "report",
        help="redraw figures, report.html, table.tex and table.md of a results bundle",
        description="Verify the results bundle that `rl-reliable evaluate --out DIR` wrote (manifest.json) and "
        "redraw DIR/figures/*.png|svg, DIR/report.html, DIR/table.tex and DIR/table.md; the bundle is replaced "
        "as a whole.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="results bundle written by `rl-reliable evaluate --out DIR`")
    output = p.add_argument_group("output")
    output.add_argument(  # the writing commands' flag; its default here: keep the bundle's formats
        "--figure-formats",
        **{
            **OUTPUT_FLAGS["--figure-formats"],
            "default": None,
            "help": "the figure files to draw: png, svg or png,svg (default: the formats the bundle has)",
        },
    )
    output.add_argument("--quiet", action="store_true", help="do not list the files written")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..analysis.report import Report
    from ..errors import InputError
    from ..render.writer import figure_note, rerender
    from ..store.bundle import recover_swap
    from .common import say_note

    folder = Path(args.dir)
    try:
        recovered = recover_swap(folder)
        if recovered:
            say_note(recovered)
        out, files = rerender(folder, args.figure_formats)  # a bad list is one sentence naming the flag
    except InputError as err:
        raise CliError(cli_message(err)) from None
    print(f"rewrote {len(files)} files in {out}/; open {out / 'report.html'} in a browser")
    note = figure_note(Report.load(out))  # the figures left algorithms out: say which, as evaluate does
    if note:
        say_note(note)
    if not args.quiet:
        for name in files:
            print(f"  {out / name}")
    return 0
