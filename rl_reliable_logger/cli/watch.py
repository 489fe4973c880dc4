"""``rl-reliable watch {INPUT | <tracker>} --state DIR --looks K --max-runs N``: one group-sequential look at a sweep.

Wiring only: read the runs — from a file (the field flags of ``evaluate``) or from a tracker with the very source
flags of that tracker's command (``rl-reliable watch <tracker> ...``: declared once by the tracker's
plugin and added by ``cli/trackers.py``, as for ``plan``) — call :func:`rl_reliable_logger.watch` (which records
the look and writes the launch list and what each launcher runs next in the state folder), print the look, publish
the decisions and launch list to the tracker as a report (its publishing flags), and return 0 when the watch stops,
3 when more runs are needed (an error is 2, as for every command), so a sweep post-hook or a pipeline step can
loop on it. The design flags are the declarations of the design's options
(:class:`~rl_reliable_logger.analysis.watch_options.WatchDesign`), the analysis flags those of the options a watch
freezes (:data:`~rl_reliable_logger.analysis.watch_options.FROZEN_OPTIONS`); the state and launch flags below are
the watch command's own, but for each launch format's settings (declared by the tracker contributing the format,
:mod:`~rl_reliable_logger.looks.launch_formats`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..analysis.declared import declared
from ..analysis.watch_options import DESIGN, WatchDesign
from ..looks import launch_formats
from ..trackers import registry
from ..wording import kw, said
from . import trackers as tracker_commands
from .flags import CliError, cli_message
from .options import (
    FILE_FIELDS,
    add_declared_option,
    add_field_options,
    add_force_publish_option,
    add_shared_option,
    given_options,
    names,
)
from .plan import FILE

if TYPE_CHECKING:  # pragma: no cover
    from ..data.scores import ScoreTable
    from ..trackers.base.plugin import TrackerPlugin
    from ..trackers.base.protocols import Sink

#: Exit status when the watch has not stopped: launch the listed runs, then look again.
MORE_RUNS = 3

#: The state folder of the watch (where its design and looks are kept; the design's own flags are declared with its
#: options, :class:`~rl_reliable_logger.analysis.watch_options.WatchDesign`).
STATE_FLAG: tuple[str, dict[str, Any]] = (
    "--state",
    {
        "required": True,
        "metavar": "DIR",
        "help": "state folder: the frozen design and every look (new or empty "
        "at the first look); launch.csv, decisions.csv and the launch files of the last look are written there",
    },
)

#: The launch names flag (how the next runs are written for the launchers; not part of the design).
LAUNCH_NAMES: tuple[str, dict[str, Any]] = (
    "--launch-names",
    {
        "type": names,
        "metavar": "FIELD=NAME,...",
        "help": "the parameter names of the launch files ({files}) for "
        "algorithm, task and seed, e.g. algorithm=algo,task=env (default: the key each field is read from, "
        "without its kind: --algorithm-key params.algo gives algo; the field's own name for the "
        "log_final_score convention)",
    },
)


def launch_flags() -> dict[str, tuple[str, dict[str, Any]]]:
    """The launch flags: ``--launch-names`` and every registered launch format's settings (``--sweep-program``)."""
    files = ", ".join(["runs.csv", *(f.name for f in launch_formats.formats())])
    flag, kwargs = LAUNCH_NAMES
    return {"launch_names": (flag, {**kwargs, "help": kwargs["help"].format(files=files)}), **launch_formats.settings()}


def watch_flags() -> dict[str, str]:
    """Keywords of ``watch()`` -> flags, read first when a library message is put in flag words."""
    return {
        "state=": STATE_FLAG[0],
        **{f"{field.name}=": str(decl.flag) for field, decl in declared(WatchDesign)},
        **{f"{keyword}=": flag for keyword, (flag, _) in launch_flags().items()},
        "launch_parameters=": LAUNCH_NAMES[0],
    }


#: What a tracker source reads for a watch: final scores only (no curves; the analysis selects the tasks).
_SOURCE = SimpleNamespace(curves=False, only_algorithms=None, only_tasks=None, hyperparameter_keys=())

_DESCRIPTION = """\
Take the next look of a group-sequential watch of a running sweep: compare pairs of algorithms on an
aggregate metric (IQM by default) with the family-wise error over all K looks and all pairs at most
--alpha. The design (K, N, alpha, metric, pairs, spending, futility, tasks, the analysis options) is frozen in
--state at the first look; the same scores again return the recorded look without spending one; fewer
runs than the last look, a look beyond K or another design are refused. Prints each pair's decision
with its repeated interval and the runs each cell needs before the next look (DIR/launch.csv), and writes
what each launcher runs next: {files}.
The runs come from a file (rl-reliable watch INPUT) or a tracker, selected with the same source flags as
its command (rl-reliable watch {trackers} [flags]); a tracker watch publishes the decisions and the
launch list to the tracker as a report (never onto a source run).
Exit status: 0 when the watch stops (every pair decided or futile, or the last look taken), 3 when more runs are
needed, 2 on an error. See docs/watch.md.
"""

_EPILOG = """\
examples:
  rl-reliable watch scores.csv --state watch/ --looks 3 --max-runs 12 --normalize atari100k
  rl-reliable watch scores.csv --state watch/ --looks 3 --max-runs 12 --compare SPR,DER --reps 5000
"""


def launch_files_text() -> str:
    """``DIR/runs.csv`` and the file of every registered launch format, each with what it is (for ``--help``)."""
    files = ["DIR/runs.csv (one row per new run)"]
    files += [f"DIR/{f.name} ({f.what})" for f in launch_formats.formats()]
    return ",\n".join(files[:-1]) + "\nand " + files[-1] if len(files) > 1 else files[0]


def _description() -> str:
    """The watch's description: the launch files of every registered format, the trackers it reads."""
    return _DESCRIPTION.format(files=launch_files_text(), trackers="|".join(registry.names()))


def _epilog() -> str:
    """The examples: a file, each tracker's watch examples, then each launch format's launcher loop."""
    lines = [f"  {line}" for p in registry.plugins() for line in p.cli.watch_examples]
    lines += [f"  {line}" for f in launch_formats.formats() for line in f.examples]
    return _EPILOG + "".join(f"{line}\n" for line in lines)


def with_source(argv: Any) -> list[str]:
    """``watch INPUT ...`` is short for ``watch file INPUT ...`` (as for ``plan``)."""
    from .plan import with_source as plan_with_source

    return plan_with_source(argv, command="watch")


def register(sub: Any) -> None:
    """Add the ``watch`` subcommand: ``watch INPUT``, and ``watch <tracker> ...`` for every registered tracker."""
    add_sources(
        sub,
        "watch",
        summary="one look of a sequential watch of a running sweep (a file or "
        f"{', '.join(registry.names())}): decisions, launch list, exit 0 (stop) or 3 (more)",
        usage="--state DIR --looks K --max-runs N [flags]",
        description=_description(),
        epilog=_epilog(),
        add_own=_add_watch,
    )


def add_sources(
    sub: Any,
    command: str,
    *,
    summary: str,
    usage: str,
    description: str,
    epilog: str,
    add_own: Callable[[argparse.ArgumentParser], None],
    input_help: str = "CSV, TSV, Parquet or JSON file in long form: every run so far",
) -> None:
    """A sequential command (``watch``, ``race``, ``gate``) whose runs come from a file (``command INPUT``,
    ``input_help`` saying what it holds) or a tracker (``command <tracker> ...`` with that tracker's source and
    publishing flags); ``add_own`` adds the command's own flags (its design, launch and frozen analysis flags) to each
    source's parser."""
    p = sub.add_parser(
        command,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=f"rl-reliable {command} [-h] {{INPUT | {' | '.join(registry.names())}}} {usage}",
    )
    sources = p.add_subparsers(
        dest=f"{command}_source", metavar=" | ".join(("INPUT", *registry.names())), title="runs from", required=True
    )
    f = sources.add_parser(
        FILE,
        prog=f"rl-reliable {command}",
        usage=f"rl-reliable {command} [file] INPUT {usage}",
        help="INPUT: a CSV, TSV, Parquet or JSON file of every run so far (the word `file` is optional)",
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    f.add_argument("input", help=input_help)
    fields = add_field_options(f, FILE_FIELDS)
    fields.add_argument("--drop-invalid", action="store_true", help="drop bad rows instead of failing")
    add_own(f)
    for plugin in registry.plugins():
        t = sources.add_parser(
            plugin.name,
            prog=f"rl-reliable {command} {plugin.name}",
            help=f"{plugin.cli.pilot_help}, selected with the source flags of `rl-reliable {plugin.name}`",
            description=description
            + f"\nThe runs are {plugin.cli.pilot_help}, read with the same source flags as `rl-reliable {plugin.name}` "
            "(final scores only).",
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        src = tracker_commands.add_source(t, plugin, curves=False)
        src.add_argument("--drop-invalid", action="store_true", help="drop bad rows instead of failing")
        plugin.cli.add_command_flags(t)
        if plugin.publishes:
            pub = t.add_argument_group(f"publishing the look to {plugin.label}")
            plugin.cli.add_publish_flags(pub)
            add_force_publish_option(pub)
            pub.add_argument("--no-figures", action="store_true", help="publish the report's tables only (no figures)")
        add_own(t)


def _add_watch(p: argparse.ArgumentParser) -> None:
    """The design, launch and analysis flags, the same for every source."""
    design = p.add_argument_group(DESIGN)
    design.add_argument(STATE_FLAG[0], dest="state", **STATE_FLAG[1])
    for field, decl in declared(WatchDesign):
        add_declared_option(design, field, decl)
    add_launch_and_frozen(p)
    p.set_defaults(func=_cmd_watch)


def add_launch_and_frozen(p: argparse.ArgumentParser) -> None:
    """The flag groups a watch and a race share after their design: each registered launch format's settings, and
    the analysis options frozen at the first look."""
    from ..analysis.watch_options import FROZEN_OPTIONS

    launch = p.add_argument_group("launch files (in the state folder)")
    for keyword, (flag, kwargs) in launch_flags().items():
        launch.add_argument(flag, dest=keyword, **kwargs)
    analysis = p.add_argument_group("analysis (frozen at the first look)")
    for keyword in FROZEN_OPTIONS:
        add_shared_option(analysis, keyword)


def _cmd_watch(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..looks.watch import watch
    from .common import hold_lock

    plugin = None if args.watch_source == FILE else registry.get(args.watch_source)
    table, sink = read_runs(args, plugin)
    design = given_options(args, WatchDesign)
    try:
        launch = launch_names(args, plugin)
        hold_lock(args.state, args)  # from here to the end: a second look at this folder waits, then refuses
        settings = {key: getattr(args, key) for key in launch_formats.settings()}
        result = watch(table, args.state, **design, launch_parameters=launch, **settings, **given_options(args))
    except RLReliableError as err:
        raise CliError(cli_message(err, analysis=True, table=watch_flags())) from None

    def publish() -> None:
        assert sink is not None and plugin is not None  # show_look publishes only then
        _publish(sink, plugin, table, result, args)

    show_look(table, plugin, sink, args, format_look(result, args.state), publish)
    return 0 if result.stop else MORE_RUNS


def read_runs(
    args: argparse.Namespace, plugin: TrackerPlugin | None, request: Any = None
) -> tuple[ScoreTable, Sink | None]:
    """The runs of a sequential look: a file's (the field flags) or a tracker's (its source flags, and the Sink its
    publishing flags name); ``request`` as for :func:`_tracker_runs`."""
    from .common import read_scores

    if plugin is None:
        return read_scores(Path(args.input), args), None
    return _tracker_runs(plugin, args, request)


def show_look(
    table: ScoreTable,
    plugin: TrackerPlugin | None,
    sink: Sink | None,
    args: argparse.Namespace,
    text: str,
    publish: Callable[[], None],
    notes: Sequence[str] | None = None,
) -> None:
    """Print the table's warnings (or ``notes``, the ones that apply to the look) and the look, then ``publish`` it
    (a tracker with a Sink) or say why it was not."""
    from .common import say_warning

    for w in table.warnings if notes is None else notes:
        say_warning(w)
    print(text)
    if sink is not None and plugin is not None:
        publish()
    elif plugin is not None and plugin.sink is not None:
        note = plugin.sink.unpublished(args)
        if note:
            print(note, file=sys.stderr)


def _tracker_runs(
    plugin: TrackerPlugin, args: argparse.Namespace, request: Any = None
) -> tuple[ScoreTable, Sink | None]:
    """The runs the source flags select, and the Sink the publishing flags name (opened before the look: a bad
    target is said before anything is recorded). ``request``: what the source reads besides the final scores
    (default: nothing; a race reads its hyperparameter columns)."""
    request = _SOURCE if request is None else request
    from ..errors import RLReliableError
    from ..redaction import redact
    from .common import load_clients, say_warning
    from .options import retry_policy

    try:
        plugin.cli.check_source(args)
        plugin.cli.check_command(args, request)
        retry = retry_policy(args)
        load_clients(plugin)
        source = plugin.source.open(args, retry)
        plugin.source.prepare(args, source, lambda line: print(redact(line), file=sys.stderr, flush=True))
        table = tracker_commands.read_source_table(source, tracker_commands.source_request(args, request, plugin))
        sink = plugin.sink.open(args, source, table, retry) if plugin.sink is not None else None
    except RLReliableError as err:
        raise CliError(cli_message(err)) from None
    for warning in plugin.source.warnings(source):
        say_warning("skipped " + warning)
    return table, sink


def launch_names(args: argparse.Namespace, plugin: TrackerPlugin | None, keys: Sequence[str] = ()) -> dict[str, str]:
    """The launch parameter names: ``--launch-names``, else each field's key without its kind (``params.algo`` ->
    ``algo``), else the field's name (a tracker's default key: the ``log_final_score`` convention). ``keys``: a
    race's hyperparameter columns, launch fields too (``params.lr`` -> ``lr``)."""
    from ..errors import InputError

    defaults = plugin.source.default_refs if plugin is not None else FILE_FIELDS
    out = {}
    for field in ("algorithm", "task", "seed"):
        key = getattr(args, f"{field}_key", None)
        if key and key != defaults.get(field):
            out[field] = plugin.source.launch_name(str(key)) if plugin is not None else str(key)
    for column in keys:
        if plugin is not None:
            out[str(column)] = plugin.source.launch_name(str(column))
    for pair in args.launch_names or ():
        field, sep, name = str(pair).partition("=")
        if not sep:
            raise InputError(
                said(kw("launch_parameters="), f" takes FIELD=NAME pairs (e.g. algorithm=algo), got {pair!r}")
            )
        out[field.strip()] = name.strip()
    return out


def _publish(sink: Sink, plugin: TrackerPlugin, table: ScoreTable, result: Any, args: argparse.Namespace) -> None:
    """Publish the look as a report: the evaluation of these runs with the frozen options, plus the decisions
    (``watch``) and the launch list (``watch_launch``) as tables of the bundle."""
    from ..analysis.options import AnalysisOptions, look_design

    publish_look(
        sink,
        plugin,
        table,
        AnalysisOptions(**given_options(args)),
        {"watch": result.decisions, "watch_launch": result.launch},
        look_design("watch", result.design.to_json()),
    )


def publish_look(
    sink: Sink, plugin: TrackerPlugin, table: ScoreTable, options: Any, extra: dict[str, Any], design: dict[str, Any]
) -> None:
    """Publish a look of a sequential command as a report: the evaluation of ``table`` with ``options``, the
    look's ``extra`` tables in the bundle and its frozen ``design`` in the provenance (``look_design``: published
    beside the options, e.g. as MLflow params); a tracker failure is one line saying the look is recorded."""
    from ..errors import RLReliableError
    from .common import evaluate

    try:
        report = evaluate(table, options, source=table.source)
        report.extra.update(extra)
        report.provenance["look_design"] = design
        published = sink.publish(report)
    except RLReliableError as err:
        raise CliError(
            f"the look was recorded but publishing to {plugin.label} failed: {cli_message(err)}; "
            "run the same command again to publish it (the same runs replay the look)"
        ) from None
    print(published.message(), file=sys.stderr)


#: What a repeated interval is, in one console line (docs/watch.md, "How a look decides", gives the details).
REPEATED_SAID = (
    "  (repeated interval: of {metric}(x) - {metric}(y) for the pair x - y; it keeps its level over every look of the"
    " watch, so it is wider than a one-look interval; a pair is decided when it excludes 0)"
)


def interval_digits(values: Any) -> int:
    """Decimals that print every bound of a look alike: 3 for normalised-size numbers, fewer for large ones.

    Example:
        >>> interval_digits([-0.4158, 0.454]), interval_digits([-215.3, 1840.0]), interval_digits([0.00012, 0.0009])
        (3, 0, 6)
    """
    import math

    finite = [abs(float(v)) for v in values if math.isfinite(float(v)) and float(v) != 0]
    if not finite:
        return 3
    magnitude = math.floor(math.log10(max(finite)))
    return max(0, min(6, 2 - magnitude)) if magnitude < 0 else max(0, 3 - magnitude)


def format_look(result: Any, state: str, *, rows: int = 20) -> str:
    """The look (k of K), each pair's decision with its repeated interval (what that is, in one line), and the
    launch list (at most ``rows``)."""
    from ..data.counts import fixed, plural
    from ..lines import printable

    design = result.design
    how = " (the same scores as this recorded look: no look spent)" if result.replayed else ""
    lines = [f"look {result.look} of {design.looks}{how}; {design.metric}, alpha {design.alpha:g} over all looks"]
    decisions = result.decisions
    digits = interval_digits([*decisions["low"], *decisions["high"]])
    for row in decisions.itertuples(index=False):
        x, y = printable(row.algorithm_x), printable(row.algorithm_y)
        said = {"x>y": f"{x} > {y}", "y>x": f"{y} > {x}", "futile": "futile (max runs would not decide it)"}.get(
            row.decision, "undecided"
        )
        when = f" (look {row.look})" if row.decision != "undecided" else ""
        interval = f"[{fixed(row.low, digits)}, {fixed(row.high, digits)}]"
        lines.append(f"  {x} - {y}: {said}{when}; repeated interval {interval}")
    if len(decisions):
        lines.append(REPEATED_SAID.format(metric=design.metric))
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
    written = launch_files_in(Path(state))
    if written:
        lines.append("launch files: " + ", ".join(f"{path} ({what})" for path, what in written))
    return "\n".join(lines)


def launch_files_in(state: Path) -> list[tuple[Path, str]]:
    """The launch files of the last look in the state folder, each with what it is for: ``runs.csv`` and every
    registered launch format's files (its first file's name, and its numbered siblings such as ``sweep-2.yaml``), so
    the console names every file it wrote without naming a tracker."""
    from ..looks.launch import RUNS

    found = [(state / RUNS, "one row per new run")] if (state / RUNS).is_file() else []
    for fmt in launch_formats.formats():
        stem, suffix = Path(fmt.name).stem, Path(fmt.name).suffix
        siblings = [p for p in state.glob(f"{stem}*{suffix}") if p.name == fmt.name or p.stem[len(stem) :][:1] == "-"]
        found += [(p, fmt.what) for p in sorted(siblings, key=lambda p: (len(p.name), p.name))]
    return found


def _launch_lines(launch: Any, tasks: int, rows: int) -> list[str]:
    """One line per algorithm whose every task needs the same runs, else one per cell (at most ``rows`` cells)."""
    from ..data.counts import plural
    from ..lines import printable

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
