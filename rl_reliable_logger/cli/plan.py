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
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..trackers import registry
from . import trackers as tracker_commands
from .common import read_scores
from .flags import PLAN_FLAGS, CliError, as_flags, cli_message
from .options import FILE_FIELDS, add_field_options, add_shared_option

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.planning import Plan

EPILOG = """\
examples:
  rl-reliable plan pilot.csv --normalize atari100k --target-width 0.05 --out plan/
  rl-reliable plan pilot.csv --compare SPR,DrQ --max-runs 30 --out plan/
{trackers}

Each (algorithm, task) cell's pilot runs are resampled to N runs (variance-corrected), and each
synthetic experiment gets the same stratified-bootstrap interval an evaluation would compute
(with --sim-reps replicates). Widths are averaged over --trials synthetic experiments.
""".format(trackers="\n".join(f"  {line}" for t in registry.plugins() for line in t.plan_examples))

_DESCRIPTION = (
    "Plan how many runs per task an evaluation needs: from pilot runs, predict by simulation the width of each "
    "algorithm's interval (and, with --compare, the chance that a pair separates) for N runs per task, the "
    "smallest N meeting the target, and how many more runs to launch in each cell."
)

#: The pilot's sources: the first word after ``plan`` names a tracker, anything else is the input file.
FILE, TRACKERS = "file", registry.names()

#: What the tracker sources read for planning: final scores only (no curves, no selection, no sweep columns).
_PILOT = SimpleNamespace(curves=False, only_algorithms=None, only_tasks=None, hyperparameter_keys=())


class _AnyName(Mapping[str, Any]):
    """The source names as argparse's ``choices``: any word is accepted (a word that is no tracker is a file)."""

    def __init__(self, parsers: dict[str, Any]) -> None:
        self._parsers = parsers

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __getitem__(self, name: str) -> Any:
        return self._parsers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parsers)

    def __len__(self) -> int:
        return len(self._parsers)


class _Sources(argparse._SubParsersAction):
    """``plan INPUT ...`` or ``plan <tracker> ...``: a first word that names no tracker is the input file
    (``plan file INPUT`` also works, e.g. for a file called like a tracker)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = _AnyName(self._name_parser_map)  # type: ignore[assignment]  # any word: see _AnyName

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        if values and values[0] not in self._name_parser_map:
            values = [FILE, *values]
        super().__call__(parser, namespace, values, option_string)


def _add_planning(p: argparse.ArgumentParser) -> None:
    """The planning and output flags, the same for every source."""
    g = p.add_argument_group("planning")
    g.add_argument("--metric", default="iqm", help="aggregate metric to plan for (default: iqm)")
    g.add_argument("--normalize", metavar="NAME|PATH", help="normalise scores per task, as for evaluate")
    g.add_argument("--target-width", type=float, metavar="W", help="interval width wanted (in score units)")
    g.add_argument("--compare", metavar="A,B", help="two algorithms: predict the chance their intervals separate")
    g.add_argument("--power", type=float, default=0.8, help="separation probability wanted with --compare: 0.8 or 80")
    g.add_argument("--max-runs", type=int, metavar="N", help="largest N (default: max(20, 2x the pilot))")
    g.add_argument("--runs", metavar="N1,N2", help="exact list of N to simulate (instead of a grid)")
    g.add_argument("--trials", type=int, default=200, help="synthetic experiments per N (default: 200)")
    g.add_argument("--sim-reps", type=int, default=500, help="bootstrap replicates per experiment (default: 500)")
    g.add_argument(
        "--ci", type=float, default=0.95, help="confidence level being planned for: 0.95 or 95, as for evaluate"
    )
    g.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    add_shared_option(g, "executor")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="DIR", help="write plan.csv, launch.csv (with a target) and plan.png here")
    o.add_argument("--no-figures", action="store_true", help="with --out, write tables only")
    o.add_argument("--quiet", action="store_true", help="no progress bar, no table on stdout")
    o.add_argument(
        "--strict", action="store_true", help="protocol warnings (unequal runs, budgets, ...) are errors (for CI)"
    )
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
        action=_Sources,
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
        name, what = plugin.name, plugin.pilot_help
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


def _names(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) != 2:
        raise CliError(f"{flag} needs two algorithm names separated by a comma, got {text!r}")
    return names


def _runs(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        raise CliError(f"--runs needs comma-separated integers (e.g. 5,10,20), got {text!r}") from None


def _cmd_plan(args: argparse.Namespace) -> int:
    from ..analysis.planning import plan
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
        result = plan(
            table,
            metric=args.metric,
            normalize=args.normalize,
            target_width=args.target_width,
            compare=_names(args.compare, "--compare"),
            power=args.power / 100.0 if args.power > 1 else args.power,
            max_runs=args.max_runs,
            runs=_runs(args.runs),
            trials=args.trials,
            sim_reps=args.sim_reps,
            ci=args.ci,
            seed=args.seed,
            progress=not args.quiet and sys.stderr.isatty(),
            executor=args.executor,
        )
    except (InputError, ScoreTableError, ValueError) as err:
        raise CliError(as_flags(str(err), table=PLAN_FLAGS)) from None
    if result.findings:  # protocol problems first, before any number
        print(format_findings(result.findings), file=sys.stderr)
    for w in table.warnings:  # what the source dropped or left out is never only in provenance
        print(f"warning: {as_flags(w)}", file=sys.stderr)
    for w in result.warnings:
        print(f"warning: {as_flags(w, table=PLAN_FLAGS)}", file=sys.stderr)
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
        return registry.get(str(source["tracker"])).describe_source(source)
    return str(source.get("path") or "the input")


def format_plan(result: Plan) -> str:
    """Widths as an N × algorithm table, then the pair, the runs needed and the launch summary."""
    from ..analysis.options import ci_label

    t = result.table
    prov = result.provenance
    lines = [
        f"predicted width of the {ci_label(prov['ci'])} {prov['metric']} interval by runs per task "
        f"({prov['trials']} synthetic experiments x {prov['sim_reps']} bootstrap replicates per N, seed {prov['seed']})"
    ]
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
        for alg, n in result.needed.items():
            if n is None:
                lines.append(f"{alg}: target not reached within {prov['grid'][-1]} runs per task")
                continue
            more = result.launch[result.launch["algorithm"] == alg]["more_runs"]
            lines.append(f"{alg}: {n} runs per task needed; launch {plural(int(more.sum()), 'run', 'more')}")
    return "\n".join(lines)
