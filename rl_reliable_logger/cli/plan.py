"""``rl-reliable plan``: how many runs per task before the intervals are narrow enough.

Wiring only: read the pilot scores — from a file (``rl-reliable plan pilot.csv``) or from a tracker
with the very source flags of that tracker's command (``rl-reliable plan <tracker> [flags]``; those
flags are declared once, by the tracker's plugin, and added by ``cli/trackers.py``) — call
:func:`~rl_reliable_logger.analysis.planning.plan`, print the widths (and the pair's separation
probability), write ``plan.csv``, ``launch.csv`` and the figure.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..analysis.options import DEFAULT_METHOD
from ..analysis.plan_options import PLANNED_METHOD
from ..trackers import registry
from . import trackers as tracker_commands
from .common import read_scores, say_warning
from .flags import PLAN_FLAGS, CliError, cli_message
from .options import (
    FILE_FIELDS,
    add_declared_option,
    add_field_options,
    add_output_options,
    add_shared_option,
    given_options,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.planning import Plan

EPILOG = """\
examples:
  rl-reliable plan pilot.csv --normalize atari100k --target-width 0.05 --out plan/
  rl-reliable plan pilot.csv --compare SPR,DrQ --max-runs 30 --out plan/
{trackers}

Each (algorithm, task) cell's pilot runs are resampled to N runs (variance-corrected), and each
synthetic experiment gets the stratified-bootstrap {planned} interval an evaluation computes with
--method {planned} (with --sim-reps replicates). Widths are averaged over --trials synthetic experiments.
An evaluation's default method, {default}, gives wider intervals at few runs per task: it may need more
runs than planned.
""".format(
    trackers="\n".join(f"  {line}" for t in registry.plugins() for line in t.cli.plan_examples),
    planned=PLANNED_METHOD,
    default=DEFAULT_METHOD,
)

_DESCRIPTION = (
    "Plan how many runs per task an evaluation needs: from pilot runs, predict by simulation the width of each "
    "algorithm's interval (and, with --compare, the chance that a pair separates) for N runs per task, the "
    "smallest N meeting the target, and how many more runs to launch in each cell."
)

#: The pilot's sources: the first word after ``plan`` names a tracker, anything else is the input file.
FILE, TRACKERS = "file", registry.names()

#: What the tracker sources read for planning: final scores only (no curves, no selection, no sweep columns).
_PILOT = SimpleNamespace(curves=False, only_algorithms=None, only_tasks=None, hyperparameter_keys=())


def with_source(argv: Sequence[str], command: str = "plan") -> list[str]:
    """``plan INPUT ...`` is short for ``plan file INPUT ...``: ``argv`` with the word ``file`` put in when the word
    after ``command`` (``plan``, or ``watch``, which reads its runs the same way) names no source (so a file called
    like a tracker is ``plan file NAME``)."""
    words = list(argv)
    if len(words) > 1 and words[0] == command and words[1] not in (FILE, *TRACKERS) and not words[1].startswith("-"):
        words.insert(1, FILE)
    return words


def _add_planning(p: argparse.ArgumentParser) -> None:
    """The planning and output flags, the same for every source: from the declarations of PlanOptions (the
    options a plan shares with an evaluation are the very declarations of AnalysisOptions)."""
    from ..analysis.declared import declared
    from ..analysis.plan_options import PLANNING, PlanOptions

    g = p.add_argument_group(PLANNING)
    for field, decl in declared(PlanOptions):
        if decl.flag:
            add_declared_option(g, field, decl)
    add_output_options(
        p,
        out_help="write plan.csv, launch.csv (with a target) and plan.png here",
        only=("--out", "--no-figures", "--quiet"),
    )
    add_shared_option(p.add_argument_group("protocol checks"), "strict")
    p.set_defaults(func=_cmd_plan)


def _or(words: list[str]) -> str:
    """``a, b or c``."""
    return " or ".join([", ".join(words[:-1]), words[-1]]) if len(words) > 1 else "".join(words)


def _drop_invalid(group: Any) -> None:
    group.add_argument("--drop-invalid", action="store_true", help="drop bad rows instead of failing")


def register(sub: Any) -> None:
    """Add the ``plan`` subcommand: ``plan INPUT``, and ``plan <tracker> ...`` for every registered tracker."""
    names, labels = registry.names(), [t.label for t in registry.plugins()]
    p = sub.add_parser(
        "plan",
        help=f"predict interval widths / power for N runs per task from pilot runs (a file, {_or(labels)})",
        description=_DESCRIPTION
        + "\n\nThe pilot runs come from a file (rl-reliable plan INPUT [flags]) or from a tracker, selected with "
        "the same flags as "
        + " / ".join(f"`rl-reliable {n}`" for n in names)
        + f" (rl-reliable plan {'|'.join(names)} "
        "[flags]). Each source's flags: rl-reliable plan file --help, "
        + ", ".join(f"rl-reliable plan {n} --help" for n in names)
        + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=f"rl-reliable plan [-h] {{INPUT | {' | '.join(names)}}} [flags]",
    )
    sources = p.add_subparsers(
        dest="plan_source",
        metavar=" | ".join(("INPUT", *names)),
        title="pilot runs from",
        required=True,
    )
    f = sources.add_parser(
        FILE,
        prog="rl-reliable plan",
        usage="rl-reliable plan [file] INPUT [flags]",
        help="INPUT: a CSV, Parquet or JSON file of pilot scores in long form (the word `file` is optional)",
        description=_DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    f.add_argument("input", help="CSV, Parquet or JSON file of pilot scores in long form")
    k = add_field_options(f, FILE_FIELDS)
    _drop_invalid(k)
    _add_planning(f)
    for plugin in registry.plugins():
        name, what = plugin.name, plugin.cli.pilot_help
        t = sources.add_parser(
            name,
            prog=f"rl-reliable plan {name}",
            help=f"{what}, selected with the source flags of `rl-reliable {name}`",
            description=_DESCRIPTION
            + f"\n\nThe pilot is {what}, read with the same source flags as `rl-reliable {name}` (final scores "
            "only: no learning curves).",
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _drop_invalid(tracker_commands.add_source(t, plugin, curves=False))
        _add_planning(t)


def _cmd_plan(args: argparse.Namespace) -> int:
    from ..analysis.plan_options import PlanOptions
    from ..analysis.planning import plan_with
    from ..analysis.protocol import enforce, format_findings
    from ..errors import InputError, ScoreTableError
    from .common import check_output

    check_output(args, inputs=[args.input] if args.plan_source == FILE else [], kind="plan")  # before any work
    table = _pilot(args)
    if args.strict:  # fail before the simulation, not after it
        from ..analysis.protocol import check_protocol

        try:
            enforce(check_protocol(table), strict=True)
        except InputError as err:
            raise CliError(str(err)) from None
    try:
        options = PlanOptions(progress=not args.quiet and sys.stderr.isatty(), **given_options(args, PlanOptions))
        result = plan_with(table, options)
    except (InputError, ScoreTableError, ValueError) as err:
        raise CliError(cli_message(err, table=PLAN_FLAGS)) from None
    if result.findings:  # protocol problems first, before any number
        print(format_findings(result.findings), file=sys.stderr)
    for w in table.warnings:  # what the source dropped or left out is never only in provenance
        say_warning(w)
    for w in result.warnings:
        say_warning(w, table=PLAN_FLAGS)
    if not args.quiet:
        print(format_plan(result))
    if args.out:
        from ..render.plan_figures import save_plan

        try:
            written = save_plan(result, args.out, figures=not args.no_figures)
        except InputError as err:
            raise CliError(cli_message(err)) from None
        for w in written:
            print(f"wrote {w}")
    return 0


def _pilot(args: argparse.Namespace) -> Any:
    """The pilot runs as a ScoreTable, from the file or the tracker the flags name; on stderr, where they
    came from (unless --quiet)."""
    from ..errors import RLReliableError

    if args.plan_source == FILE:
        table = read_scores(Path(args.input), args)
    else:
        try:
            table = tracker_commands.read_table(registry.get(args.plan_source), args, _PILOT)
        except RLReliableError as err:
            raise CliError(cli_message(err)) from None
    if not args.quiet:
        from ..data.counts import count_runs

        counts = count_runs(table.final().frame)
        print(f"pilot: {counts.text()} from {describe_source(table.source)}", file=sys.stderr)
    return table


def describe_source(source: Mapping[str, Any]) -> str:
    """Where a pilot's runs came from, in one phrase (file path, or the tracker plugin's words)."""
    if source.get("tracker") in registry.names():
        return registry.get(str(source["tracker"])).describe(source)
    return str(source.get("path") or "the input")


def format_plan(result: Plan) -> str:
    """Widths as an N × algorithm table, then the pair, the runs needed and the launch summary."""
    from ..analysis.options import ci_label

    t = result.table
    prov = result.provenance
    planned = str(prov.get("interval_method", PLANNED_METHOD))
    lines = [
        f"predicted width of the {ci_label(prov['ci'])} {prov['metric']} {planned} interval by runs per task "
        f"({prov['trials']} synthetic experiments x {prov['sim_reps']} bootstrap replicates per N, seed {prov['seed']})"
    ]
    if planned != DEFAULT_METHOD:
        lines.append(
            f"(an evaluation gets these with --method {planned}; its default, {DEFAULT_METHOD}, gives wider "
            "intervals at few runs per task, so it may need more runs than planned)"
        )
    algs = t[t["kind"] == "algorithm"]
    wide = algs.pivot(index="n_runs", columns="algorithm", values="expected_width")
    wide = wide.reindex(columns=list(dict.fromkeys(algs["algorithm"])))
    lines.append(wide.to_string(float_format=lambda v: f"{v:.4f}"))
    pairs = t[t["kind"] == "pair"]
    if len(pairs):
        name = pairs["algorithm"].iloc[0]
        lines.append(f"\n{name}: probability the interval separates (difference ≠ 0 / P(A > B) ≠ 0.5)")
        lines.append(
            pairs.set_index("n_runs")[["expected_width", "p_separate", "p_separate_poi"]].to_string(
                float_format=lambda v: f"{v:.3f}"
            )
        )
    if result.needed:
        from ..data.counts import plural

        lines.append("")
        targets = {}
        if prov.get("target_width") is not None:
            targets["width"] = f"the target width {prov['target_width']:g}"
        if prov.get("compare"):
            targets["power"] = f"the {' - '.join(prov['compare'])} comparison's power {prov['power'] * 100:g}%"
        within = f"within {plural(int(prov['grid'][-1]), 'run')} per task"
        for alg, n in result.needed.items():
            if n is None:
                unmet = [targets[what] for what in result.unmet.get(alg, ())] or ["the target"]
                lines.append(f"{alg}: {' and '.join(unmet)} {'is' if len(unmet) == 1 else 'are'} not reached {within}")
                continue
            more = result.launch[result.launch["algorithm"] == alg]["more_runs"]
            lines.append(f"{alg}: {plural(n, 'run')} per task needed; launch {plural(int(more.sum()), 'run', 'more')}")
    return "\n".join(lines)
