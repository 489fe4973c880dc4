"""``rl-reliable race {INPUT | <tracker>} --state DIR --looks K --max-runs N --hyperparameter-keys ... [--delta D]``.

Wiring only, on ``watch``'s: the runs come from a file or a tracker with that tracker's source flags
(:func:`.watch.add_sources`), :func:`rl_reliable_logger.race` takes the look (the watch's state folder, replay,
refusals and launch files), the look is printed and, from a tracker, published as a report (the selected
configuration labelled as tuned), and the exit status is 0 when every race selected a configuration, 3 when more
runs are needed, 2 on an error. The design flags are :class:`~..analysis.race_options.RaceOptions`' declarations;
the frozen analysis flags and the launch flags are the watch's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..analysis.declared import declared
from ..analysis.race_options import LOOK, RaceLookOptions, RaceOptions
from ..analysis.watch_options import DESIGN
from ..looks import launch_formats
from ..trackers import registry
from .flags import CliError, cli_message
from .options import add_declared_option, add_shared_option, given_options
from .plan import FILE
from .watch import (
    MORE_RUNS,
    add_launch_and_frozen,
    add_sources,
    interval_digits,
    launch_files_in,
    launch_files_text,
    launch_flags,
    launch_names,
    publish_look,
    read_runs,
    show_look,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..data.scores import ScoreTable

#: The state folder of the race (its design and looks; the design's flags are declared with its options).
STATE_FLAG: tuple[str, dict[str, Any]] = (
    "--state",
    {
        "required": True,
        "metavar": "DIR",
        "help": "state folder: the frozen design and every look (new or empty at the first look); launch.csv, "
        "selected.csv, alive.csv, eliminated.csv and the launch files of the last look are written there",
    },
)


def race_flags() -> dict[str, str]:
    """Keywords of ``race()`` -> flags, read first when a library message is put in flag words."""
    return {
        "state=": STATE_FLAG[0],
        **{f"{field.name}=": str(decl.flag) for field, decl in declared(RaceOptions)},
        **{f"{field.name}=": str(decl.flag) for field, decl in declared(RaceLookOptions)},
        **{f"{keyword}=": flag for keyword, (flag, _) in launch_flags().items()},
        "launch_parameters=": "--launch-names",
        "hyperparameter_keys=": "--hyperparameter-keys",
    }


_DESCRIPTION = """\
Take the next look of a race among each algorithm's configurations (the values of --hyperparameter-keys):
every configuration runs on every task, those shown worse than another are eliminated, those that cannot be
more than --delta better than the leader stop getting runs, and the race stops when no configuration can be
more than --delta better than the one it selects: with probability at least 1 - --alpha over all K looks, the
selected configuration's metric (IQM by default) is within --delta of the best configuration's. The design is
frozen in --state at the first look; the same scores again return the recorded look; fewer runs than the last
look, a look beyond K or another design are refused. Prints each algorithm's race (eliminated, settled, the
selection with its interval valid after selection, the regret bound and the margin over the runner-up) and the
runs each configuration needs before the next look, and writes what each launcher runs next:
{files}.
The runs come from a file (rl-reliable race INPUT) or a tracker, selected with the same source flags as its
command (rl-reliable race {trackers} [flags]);
a tracker race publishes each look to the tracker as a report.
Exit status: 0 when every race selected a configuration (or the last look was taken, or no runs could change
its selection), 3 when more runs are needed, 2 on an error. See docs/race.md.
"""

_EPILOG = """\
examples:
  rl-reliable race sweep.csv --state race/ --looks 5 --max-runs 10 --hyperparameter-keys lr --delta 0.05
"""


def _description() -> str:
    """The race's description: the launch files of every registered format, the trackers it reads."""
    return _DESCRIPTION.format(files=launch_files_text(), trackers="|".join(registry.names()))


def _epilog() -> str:
    """The examples: a file, then each tracker's race examples (a launcher loop among them)."""
    lines = [f"  {line}" for p in registry.plugins() for line in p.cli.race_examples]
    return _EPILOG + "".join(f"{line}\n" for line in lines)


def register(sub: Any) -> None:
    """Add the ``race`` subcommand: ``race INPUT``, and ``race <tracker> ...`` for every registered tracker."""
    add_sources(
        sub,
        "race",
        summary="one look of a race of a sweep's configurations (a file or "
        f"{', '.join(registry.names())}): selection within --delta, launch list, exit 0 (stop) or 3 (more)",
        usage="--state DIR --looks K --max-runs N --hyperparameter-keys KEY,... [--delta D] [flags]",
        description=_description(),
        epilog=_epilog(),
        add_own=_add_race,
    )


def _add_race(p: argparse.ArgumentParser) -> None:
    """The design, launch and analysis flags, the same for every source."""
    design = p.add_argument_group(DESIGN)
    design.add_argument(STATE_FLAG[0], dest="state", **STATE_FLAG[1])
    add_shared_option(design, "hyperparameter_keys")
    for field, decl in declared(RaceOptions):
        add_declared_option(design, field, decl)
    look = p.add_argument_group(LOOK)
    for field, decl in declared(RaceLookOptions):
        add_declared_option(look, field, decl)
    add_launch_and_frozen(p)
    p.set_defaults(func=_cmd_race)


def _cmd_race(args: argparse.Namespace) -> int:
    from ..analysis.options import AnalysisOptions, look_design
    from ..errors import RLReliableError
    from ..looks.race import race
    from .common import hold_lock

    keys = list(args.hyperparameter_keys or ())
    if not keys:
        raise CliError("--hyperparameter-keys is required: name the fields that make a configuration (e.g. lr)")
    plugin = None if args.race_source == FILE else registry.get(args.race_source)
    request = SimpleNamespace(curves=False, only_algorithms=None, only_tasks=None, hyperparameter_keys=tuple(keys))
    try:
        columns = (
            list(plugin.source.table_options(AnalysisOptions(hyperparameter_keys=tuple(keys))).hyperparameter_keys)
            if plugin
            else keys
        )
    except RLReliableError as err:
        raise CliError(cli_message(err, analysis=True, table=race_flags())) from None
    table, sink = read_runs(args, plugin, request)
    design = {**given_options(args, RaceOptions), **given_options(args, RaceLookOptions)}
    options = {k: v for k, v in given_options(args).items() if k != "hyperparameter_keys"}
    try:
        launch = launch_names(args, plugin, columns)
        hold_lock(args.state, args)  # from here to the end: a second look at this folder waits, then refuses
        result, notes = _look_capturing(
            lambda: race(
                table,
                args.state,
                **design,
                hyperparameter_keys=columns,
                launch_parameters=launch,
                **{key: getattr(args, key) for key in launch_formats.settings()},
                **options,
            )
        )
    except RLReliableError as err:
        raise CliError(cli_message(err, analysis=True, table=race_flags())) from None

    def publish() -> None:
        assert sink is not None and plugin is not None  # show_look publishes only then
        frozen = look_design("race", result.design.to_json())
        publish_look(sink, plugin, tuned_table(table, result), AnalysisOptions(**options), race_tables(result), frozen)

    show_look(table, plugin, sink, args, format_race(result, args.state), publish, notes)
    return 0 if result.stop else MORE_RUNS


def _look_capturing(look: Any) -> tuple[Any, list[str]]:
    """``look()``'s result and the ReliabilityWarnings it emitted (the intake's and the look's own notes), in flag
    words (``first_runs=3`` is ``--first-runs 3``), for the console to print once; any other warning passes on."""
    import warnings

    from ..errors import ReliabilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReliabilityWarning)
        result = look()
    for w in caught:
        if not issubclass(w.category, ReliabilityWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    notes = [cli_message(w.message, analysis=True, table=race_flags()) for w in caught]
    return result, [n for n, w in zip(notes, caught) if issubclass(w.category, ReliabilityWarning)]


def tuned_table(table: ScoreTable, result: Any) -> ScoreTable:
    """The runs a race look publishes: each selected configuration's, its algorithm labelled as tuned by the race
    (``ppo (tuned by race: lr=0.001)``); before an algorithm's race stopped, every configuration still racing,
    labelled by its configuration."""
    import pandas as pd

    from ..data.scores import ScoreTable as Table
    from ..stats.tuning import config_labels

    design = result.design
    keys = list(design.keys)
    frame = table.frame
    chosen = {row["algorithm"]: row for row in result.selected.to_dict("records")}
    inner = config_labels(frame, keys)
    labels, keep = [], []
    alive = {tuple(str(v) for v in (r["algorithm"], *(r[k] for k in keys))) for r in result.alive.to_dict("records")}
    for i, row in enumerate(frame[["algorithm", *keys]].itertuples(index=False, name=None)):
        algorithm = str(row[0])
        pick = chosen.get(algorithm)
        if pick is not None:
            ok = all(str(pick[k]) == str(v) for k, v in zip(keys, row[1:]))
            labels.append(f"{algorithm} (tuned by race: {inner.iat[i]})")
        else:
            ok = tuple(str(v) for v in row) in alive
            labels.append(f"{algorithm} [{inner.iat[i]}]")
        keep.append(ok)
    part = frame.assign(algorithm=labels)[pd.Series(keep, index=frame.index)]
    return Table(part[["algorithm", "task", "run_id", "score"]], seed=None, run_id="run_id", source=table.source)


def race_tables(result: Any) -> dict[str, Any]:
    """The race's tables in a published report (``race``, ``race_alive``, ``race_eliminated``, ``race_launch``):
    the selection, the configurations racing, the eliminated ones and the launch list, each configuration named
    by its ``config`` label (``lr=0.001``) in place of its hyperparameter columns."""
    from ..stats.tuning import config_labels

    keys = list(result.design.keys)

    def named(frame: Any) -> Any:
        out = frame.drop(columns=keys)
        out.insert(1, "config", config_labels(frame, keys).to_numpy() if len(frame) else [])
        return out

    tables = {
        "race": result.selected,
        "race_alive": result.alive,
        "race_eliminated": result.eliminated,
        "race_launch": result.launch,
    }
    return {name: named(frame) for name, frame in tables.items()}


#: The race's own tables in its state folder, each with what it holds (the console names them after a look).
RACE_TABLES: tuple[tuple[str, str], ...] = (
    ("selected.csv", "each selection: its interval valid after selection, regret bound, margin"),
    ("alive.csv", "the configurations racing"),
    ("eliminated.csv", "the eliminated ones, with their intervals"),
)


def format_race(result: Any, state: str, *, rows: int = 20) -> str:
    """The look (k of K), each algorithm's race and the launch list (at most ``rows`` lines of each), every bound
    printed with the same decimals, then the files of the state folder a user opens next."""
    import pandas as pd

    from ..data.counts import fixed, plural
    from ..lines import printable
    from ..stats.tuning import config_labels

    design = result.design
    bounds = [
        *(result.selected[c] for c in ("point", "low", "high", "regret", "margin_low", "margin_high")),
        *(result.eliminated[c] for c in ("low", "high")),
    ]
    digits = interval_digits([v for column in bounds for v in column])

    def num(value: float) -> str:
        return fixed(float(value), digits)

    def interval(low: float, high: float) -> str:
        return f"[{num(low)}, {num(high)}]"

    how = " (the same scores as this recorded look: no look spent)" if result.replayed else ""
    lines = [
        f"look {result.look} of {design.looks}{how}; {design.metric}, delta {design.delta:g}, alpha {design.alpha:g} "
        "over all looks"
    ]
    keys = list(design.keys)

    def config(row: dict[str, Any]) -> str:  # the tuning table's label: values that print alike are quoted apart
        one = pd.DataFrame({k: pd.Series([row[k]], dtype=object) for k in keys})
        return printable(config_labels(one, keys).iat[0])

    selected = {row["algorithm"]: row for row in result.selected.to_dict("records")}
    for algorithm in design.algorithms:
        alive = [r for r in result.alive.to_dict("records") if r["algorithm"] == algorithm]
        gone = [r for r in result.eliminated.to_dict("records") if r["algorithm"] == algorithm]
        name = printable(algorithm)
        pick = selected.get(algorithm)
        if pick is not None:
            bound = f"at most {num(pick['regret'])} below the best"
            sure = {
                "last look": f"the runs ran out: {bound}, not within delta",
                "futility": f"no more runs could change it: {bound}, not within delta",
            }.get(pick["reason"], bound)
            lines.append(
                f"  {name}: selected {config(pick)} ({pick['reason']}, look {pick['look']}): {design.metric} "
                f"{num(pick['point'])} {interval(pick['low'], pick['high'])} (valid after selection); {sure}; "
                f"margin over the runner-up {interval(pick['margin_low'], pick['margin_high'])}"
            )
        else:
            settled = sum(bool(r["settled"]) for r in alive)
            lines.append(
                f"  {name}: {plural(len(alive), 'configuration')} racing ({settled} settled: no runs needed), "
                f"{len(gone)} eliminated"
            )
        for r in gone[:rows]:
            lines.append(
                f"    eliminated at look {r['look']}: {config(r)} ({printable(r['reason'])}; "
                f"difference {interval(r['low'], r['high'])})"
            )
    folder = Path(state)
    tables = "race tables: " + ", ".join(f"{folder / name} ({what})" for name, what in RACE_TABLES)
    if result.stop:
        lines += ["stop: every algorithm's race selected a configuration", tables]
        return "\n".join(lines)
    launch = result.launch
    total = int(launch["add_runs"].sum())
    lines.append(
        f"launch {plural(total, 'run', 'more')} in {plural(len(launch), 'cell')} before look {result.look + 1} "
        f"(listed in {Path(state) / 'launch.csv'}):"
    )
    tasks = len(design.tasks)
    groups = launch.groupby(["algorithm", *keys], sort=True, dropna=False)
    for n, (key, group) in enumerate(groups):
        if n >= rows:
            lines.append(f"  ... {plural(groups.ngroups - rows, 'configuration', 'more')}")
            break
        row = dict(zip(["algorithm", *keys], key if isinstance(key, tuple) else (key,)))
        more = set(group["add_runs"])
        each = (
            f"+{more.pop()} in each of its {plural(tasks, 'task')}"
            if len(group) == tasks and len(more) == 1
            else (f"+{int(group['add_runs'].sum())} in {plural(len(group), 'task')}")
        )
        lines.append(f"  {printable(row['algorithm'])} {config(row)}: {each}")
    written = launch_files_in(folder)
    if written:
        lines.append("launch files: " + ", ".join(f"{path} ({what})" for path, what in written))
    lines.append(tables)
    return "\n".join(lines)
