"""``rl-reliable watch INPUT --state DIR --looks K --max-runs N``: one group-sequential look at a running sweep's scores.

Wiring only: read the file (the field flags of ``evaluate``), call :func:`rl_reliable_logger.watch` (which
records the look and writes ``launch.csv`` and ``decisions.csv`` in the state folder), print the look, and
return 0 when the watch stops, 3 when more runs are needed (an error is 2, as for every command), so a sweep
post-hook or a pipeline step can loop on it. The analysis flags are the declarations of the options a watch
freezes (:data:`~rl_reliable_logger.analysis.watch_options.FROZEN_OPTIONS`); the design flags below are the
watch command's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .flags import CliError, as_flags
from .options import FILE_FIELDS, add_field_options, add_shared_option, given_options, names

#: Exit status when the watch has not stopped: launch the listed runs, then look again.
MORE_RUNS = 3

#: The design flags of the watch (its own declarations): keyword of ``watch()`` -> flag and argparse definition.
DESIGN_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "state": (
        "--state",
        {
            "required": True,
            "metavar": "DIR",
            "help": "state folder: the frozen design and every look (new or empty "
            "at the first look); launch.csv and decisions.csv of the last look are written there",
        },
    ),
    "looks": ("--looks", {"required": True, "type": int, "metavar": "K", "help": "number of looks of the design"}),
    "max_runs": (
        "--max-runs",
        {"required": True, "type": int, "metavar": "N", "help": "maximum runs per (algorithm, task) cell"},
    ),
    "compare": (
        "--compare",
        {"type": names, "metavar": "A,B", "help": "algorithms to compare, every pair among them (default: all)"},
    ),
    "alpha": (
        "--alpha",
        {
            "type": float,
            "default": 0.05,
            "metavar": "A",
            "help": "family-wise error over all looks and pairs (default: %(default)s)",
        },
    ),
    "metric": (
        "--metric",
        {"default": "iqm", "metavar": "NAME", "help": "aggregate metric compared (default: %(default)s)"},
    ),
    "spending": (
        "--spending",
        {
            "default": "obf",
            "metavar": "NAME",
            "help": "error spending over the looks: obf (O'Brien-Fleming type) or pocock (default: %(default)s)",
        },
    ),
}

#: Keywords of ``watch()`` -> flags, read first when a library message is put in flag words.
WATCH_FLAGS: dict[str, str] = {f"{keyword}=": flag for keyword, (flag, _) in DESIGN_FLAGS.items()}

_DESCRIPTION = """\
Take the next look of a group-sequential watch of a running sweep: compare pairs of algorithms on an
aggregate metric (IQM by default) with the family-wise error over all K looks and all pairs at most
--alpha. The design (K, N, alpha, metric, pairs, spending, tasks, the analysis options) is frozen in
--state at the first look; the same scores again return the recorded look without spending one; fewer
runs than the last look, a look beyond K or another design are refused. Prints each pair's decision
with its repeated interval and the runs each cell needs before the next look (also in DIR/launch.csv).
Exit status: 0 when the watch stops (every pair decided, or the last look taken), 3 when more runs are
needed, 2 on an error. See docs/watch.md.
"""

_EPILOG = """\
examples:
  rl-reliable watch scores.csv --state watch/ --looks 3 --max-runs 12 --normalize atari100k
  rl-reliable watch scores.csv --state watch/ --looks 3 --max-runs 12 --compare SPR,DER --reps 5000
  until rl-reliable watch scores.csv --state watch/ --looks 4 --max-runs 20; do
      [ $? -eq 3 ] || exit 2; launch-runs watch/launch.csv; collect-scores > scores.csv; done
"""


def register(sub: Any) -> None:
    """Add the ``watch`` subcommand."""
    from ..analysis.watch_options import FROZEN_OPTIONS

    p = sub.add_parser(
        "watch",
        help="one look of a sequential watch of a running sweep: decisions, launch list, exit 0 (stop) or 3 (more)",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="CSV, TSV, Parquet or JSON file in long form: every run so far")
    fields = add_field_options(p, FILE_FIELDS)
    fields.add_argument("--drop-invalid", action="store_true", help="drop bad rows instead of failing")
    design = p.add_argument_group("design (frozen at the first look)")
    for keyword, (flag, kwargs) in DESIGN_FLAGS.items():
        design.add_argument(flag, dest=keyword, **kwargs)
    analysis = p.add_argument_group("analysis (frozen at the first look)")
    for keyword in FROZEN_OPTIONS:
        add_shared_option(analysis, keyword)
    p.set_defaults(func=_cmd_watch)


def _cmd_watch(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..render.watch_state import watch
    from .common import read_scores

    path = Path(args.input)
    table = read_scores(path, args)
    design = {keyword: getattr(args, keyword) for keyword in DESIGN_FLAGS}
    try:
        result = watch(table, **design, **given_options(args))
    except RLReliableError as err:
        raise CliError(as_flags(str(err), analysis=True, table=WATCH_FLAGS)) from None
    for w in table.warnings:
        print(f"warning: {as_flags(w)}", file=sys.stderr)
    print(format_look(result, args.state))
    return 0 if result.stop else MORE_RUNS


def format_look(result: Any, state: str, *, rows: int = 20) -> str:
    """The look (k of K), each pair's decision with its repeated interval, and the launch list (at most ``rows``)."""
    from ..data.counts import plural
    from ..trackers.base.messages import printable

    design = result.design
    how = " (the same scores as this recorded look: no look spent)" if result.replayed else ""
    lines = [f"look {result.look} of {design.looks}{how}; {design.metric}, alpha {design.alpha:g} over all looks"]
    for row in result.decisions.itertuples(index=False):
        x, y = printable(row.algorithm_x), printable(row.algorithm_y)
        said = {"x>y": f"{x} > {y}", "y>x": f"{y} > {x}", "futile": "futile (max runs would not decide it)"}.get(
            row.decision, "undecided"
        )
        when = f" (look {row.look})" if row.decision != "undecided" else ""
        lines.append(f"  {x} - {y}: {said}{when}; repeated interval [{row.low:.4g}, {row.high:.4g}]")
    launch = result.launch
    if result.stop:
        ends = set(result.decisions["decision"])
        lines.append(
            "stop: no more runs (undecided stays undecided)"
            if "undecided" in ends
            else (
                "stop: every comparison is decided or futile"
                if "futile" in ends
                else "stop: every comparison is decided"
            )
        )
        return "\n".join(lines)
    total = int(launch["add_runs"].sum())
    lines.append(
        f"launch {plural(total, 'run', 'more')} in {plural(len(launch), 'cell')} before look {result.look + 1} "
        f"(listed in {Path(state) / 'launch.csv'}):"
    )
    lines += _launch_lines(launch, len(design.tasks), rows)
    return "\n".join(lines)


def _launch_lines(launch: Any, tasks: int, rows: int) -> list[str]:
    """One line per algorithm whose every task needs the same runs, else one per cell (at most ``rows`` cells)."""
    from ..data.counts import plural
    from ..trackers.base.messages import printable

    lines, cells = [], []
    for algorithm, group in launch.groupby("algorithm", sort=True):
        more = set(group["add_runs"])
        if len(group) == tasks and len(more) == 1:
            lines.append(f"  {printable(algorithm)}: +{more.pop()} in each of its {plural(tasks, 'task')}")
        else:
            cells += [f"  {printable(algorithm)}  {printable(r.task)}  +{r.add_runs}" for r in group.itertuples()]
    lines += cells[:rows]
    if len(cells) > rows:
        lines.append(f"  ... {plural(len(cells) - rows, 'cell', 'more')}")
    return lines
