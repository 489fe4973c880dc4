"""``rl-reliable gate {CANDIDATE | <tracker>} --incumbent INCUMBENT --state DIR --name NAME --min-effect E``.

Wiring only, on ``watch``'s: the runs come from files or a tracker with that tracker's source flags
(:func:`.watch.add_sources`); :func:`rl_reliable_logger.gate` takes the look (the stream's ledger in ``--state``,
replay, refusals, launch files for the next seeds); the verdict is printed (``--json``: one JSON object for agents)
and, from a tracker, published as a report (the candidate and the incumbent labelled with the verdict, the stream's
table beside it). Exit status: 0 keep, 4 discard, 3 run more, 2 an error. The design flags are
:class:`~..analysis.gate_options.GateDesign`'s declarations; the launch flags are the watch's.

Where the two sides come from: ``CANDIDATE`` and ``--incumbent`` are two files (each one algorithm's runs); or one
source (a file, a tracker) holds both, the candidate's runs under the algorithm ``--name`` and the incumbent's under
the algorithm ``--incumbent``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.declared import declared
from ..analysis.gate_options import DESIGN, GateDesign
from ..looks import launch_formats
from ..trackers import registry
from .flags import CliError, cli_message
from .options import add_declared_option, given_options
from .plan import FILE
from .watch import add_sources, launch_files_in, launch_flags, launch_names, publish_look, read_runs, show_look

if TYPE_CHECKING:  # pragma: no cover
    from ..data.scores import ScoreTable

#: Exit status of each verdict (an error is 2, as for every command).
EXIT = {"keep": 0, "run_more": 3, "discard": 4}

STATE_FLAG: tuple[str, dict[str, Any]] = (
    "--state",
    {
        "required": True,
        "metavar": "DIR",
        "help": "state folder of the stream: its frozen design and every look of every candidate (new or empty at the "
        "first candidate); stream.csv (every candidate's verdict) and the launch files of the next seeds are written there",
    },
)


def gate_flags() -> dict[str, str]:
    """Keywords of ``gate()`` -> flags, read first when a library message is put in flag words."""
    return {
        "state=": STATE_FLAG[0],
        "name=": "--name",
        **{f"{field.name}=": str(decl.flag) for field, decl in declared(GateDesign)},
        **{f"{keyword}=": flag for keyword, (flag, _) in launch_flags().items()},
        "launch_parameters=": "--launch-names",
    }


_DESCRIPTION = """\
Keep or discard a change of a research loop: compare the candidate with the incumbent on paired seeds (both
run on the same fresh seeds) and keep it only when it is better by more than --min-effect, with the
false-discovery rate over every candidate ever submitted to --state at most --alpha. A candidate not on
course to beat the incumbent by --min-effect is discarded after 3 seeds (the screen), a clear winner kept
early; at most --max-seeds seeds per candidate.
The same --name again with more seeds is that candidate's next look; a new --name is the next candidate. A
kept candidate becomes the incumbent. The design (--min-effect, --alpha, --max-seeds, --metric, the tasks) is
frozen at the first candidate; the same scores again replay the recorded verdict.
Prints the verdict, the interval of candidate - incumbent, the error spent and the seeds to run next (on both
sides), and writes them for the launchers: {files}.
The runs come from files (CANDIDATE and --incumbent) or from one source holding both (the algorithms --name
and --incumbent): a file or a tracker, selected with the same source flags as its command
(rl-reliable gate {trackers} [flags]); a tracker gate publishes each look as a report.
Exit status: 0 keep, 4 discard, 3 run more (the seeds are printed and written), 2 on an error. See docs/gate.md.
"""

_EPILOG = """\
examples:
  rl-reliable gate candidate.csv --incumbent incumbent.csv --state gate/ --name lr-3e-4 --min-effect 0.5
  rl-reliable gate scores.csv --incumbent base --state gate/ --name lr-3e-4 --min-effect 0.5 --json

a research loop (each change gets a new --name; the gate says which seeds to run on both sides):
  while true; do
      rl-reliable gate runs.csv --incumbent "$INCUMBENT" --state gate/ --name "$CHANGE" --min-effect 0.5
      case $? in
          0) INCUMBENT="$CHANGE"; CHANGE=$(next_change) ;;   # keep: the change is the incumbent now
          4) CHANGE=$(next_change) ;;                          # discard: try the next change
          3) ;;                                                # run more: the seeds below, then look again
          *) exit 2 ;;                                         # an error: stop the loop
      esac
      ./train.sh gate/runs.csv >> runs.csv                     # runs.csv: the seeds to run next, on both sides
  done
"""


def _description() -> str:
    from .watch import launch_files_text

    return _DESCRIPTION.format(files=launch_files_text(), trackers="|".join(registry.names()))


def register(sub: Any) -> None:
    """Add the ``gate`` subcommand: ``gate CANDIDATE``, and ``gate <tracker> ...`` for every registered tracker."""
    add_sources(
        sub,
        "gate",
        summary="keep or discard a candidate against the incumbent on paired seeds, the false-discovery rate held "
        "over the whole stream: exit 0 keep, 4 discard, 3 run more",
        usage="--incumbent INCUMBENT --state DIR --name NAME --min-effect E [flags]",
        description=_description(),
        epilog=_EPILOG,
        add_own=_add_gate,
        input_help="CANDIDATE: a CSV, TSV, Parquet or JSON file in long form: the candidate's runs (or the "
        "candidate's and the incumbent's, told apart by --name and --incumbent)",
    )


def _add_gate(p: argparse.ArgumentParser) -> None:
    """The stream's flags, the same for every source."""
    design = p.add_argument_group(DESIGN)
    design.add_argument(STATE_FLAG[0], dest="state", **STATE_FLAG[1])
    design.add_argument(
        "--name", required=True, metavar="NAME", help="the candidate's name in the stream (a new name: a new candidate)"
    )
    design.add_argument(
        "--incumbent",
        required=True,
        metavar="INCUMBENT",
        help="the incumbent's runs: a file, or the algorithm that holds them in the runs read (a tracker's, or the "
        "CANDIDATE file's)",
    )
    for field, decl in declared(GateDesign):
        add_declared_option(design, field, decl)
    design.add_argument("--json", action="store_true", help="print the verdict as one JSON object (for agents)")
    launch = p.add_argument_group("launch files (in the state folder)")
    for keyword, (flag, kwargs) in launch_flags().items():
        launch.add_argument(flag, dest=keyword, **kwargs)
    p.set_defaults(func=_cmd_gate)


def _sides(table: ScoreTable, args: argparse.Namespace, plugin: Any) -> tuple[Any, Any]:
    """The candidate's and the incumbent's runs: two files, or the algorithms ``--name`` and ``--incumbent`` of one
    source."""
    from .common import read_scores

    if plugin is None and Path(args.incumbent).is_file():
        if Path(args.incumbent).resolve() == Path(args.input).resolve():
            raise CliError(
                f"--incumbent {args.incumbent} is the candidate's own file: the gate would compare the candidate with "
                "itself; give the incumbent's runs (its file, or its algorithm in one file holding both)"
            )
        return table, read_scores(Path(args.incumbent), args)
    frame = table.final().frame
    algorithms = sorted(map(str, frame["algorithm"].unique()))
    for flag, wanted in (("--name", args.name), ("--incumbent", args.incumbent)):
        if wanted not in algorithms:
            where = "the file" if plugin is None else "the runs read"
            raise CliError(
                f"{flag} {wanted!r} is no algorithm of {where} (it has {', '.join(algorithms[:8])}); "
                + ("--incumbent is a file or one of them" if flag == "--incumbent" else "name the candidate's runs")
            )
    columns = ["algorithm", "task", "seed", "score"]
    pick = frame[columns]
    return pick[pick["algorithm"] == args.name], pick[pick["algorithm"] == args.incumbent]


def _cmd_gate(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..looks.gate import gate, notes
    from .common import hold_lock

    plugin = None if args.gate_source == FILE else registry.get(args.gate_source)
    table, sink = read_runs(args, plugin)
    try:
        candidate, incumbent = _sides(table, args, plugin)
        launch = launch_names(args, plugin)
        hold_lock(args.state, args)  # from here to the end: a second look at this folder waits, then refuses
        settings = {key: getattr(args, key) for key in launch_formats.settings()}
        result = gate(
            candidate,
            incumbent,
            state=args.state,
            name=args.name,
            **given_options(args, GateDesign),
            launch_parameters=launch,
            **settings,
        )
    except RLReliableError as err:
        raise CliError(cli_message(err, table=gate_flags())) from None

    def publish() -> None:
        assert sink is not None and plugin is not None  # show_look publishes only then
        _publish(sink, plugin, candidate, incumbent, result)

    text = json.dumps(as_json(result, args.state), sort_keys=True) if args.json else format_gate(result, args.state)
    show_look(table, plugin, sink, args, text, publish, notes(table))
    return EXIT[result.verdict]


def as_json(result: Any, state: str) -> dict[str, Any]:
    """The verdict for agents: every field of the result a loop needs, JSON-safe (an unbounded end is null)."""

    def number(v: float | None) -> float | None:
        return None if v is None or not math.isfinite(v) else float(v)

    return {
        "name": result.name,
        "verdict": result.verdict,
        "exit_status": EXIT[result.verdict],
        "reason": result.reason,
        "next_seeds": list(result.next_seeds),
        "interval": [number(result.interval[0]), number(result.interval[1])],
        "estimate": number(result.estimate),
        "mean": number(result.mean),
        "seeds": result.seeds,
        "level": number(result.level),
        "alpha_spent": number(result.alpha_spent),
        "wealth": number(result.wealth),
        "incumbent": result.incumbent,
        "candidate": result.candidate,
        "look": result.look,
        "replayed": result.replayed,
        "min_effect": result.design.min_effect,
        "alpha": result.design.alpha,
        "launch_files": [str(path) for path, _ in launch_files_in(Path(state))],
    }


def format_gate(result: Any, state: str) -> str:
    """The verdict, its reason, the interval and the error spent, and the seeds to run next with their files."""
    from ..data.counts import fixed
    from ..lines import printable
    from .watch import interval_digits

    low, high = result.interval
    digits = interval_digits([low, high, result.estimate])
    shown = [fixed(v, digits) if math.isfinite(v) else ("-inf" if v < 0 else "inf") for v in (low, high)]
    how = (
        " (the same scores as a recorded look: nothing spent)"
        if result.replayed and result.outcome != "too_few"
        else ""
    )
    level = "not a test yet" if result.level is None else f"level {result.level:.3g}"
    lines = [
        f"{result.verdict}: {printable(result.name)} against {printable(result.incumbent)}{how}",
        f"  {printable(result.reason)}",
        f"  candidate - incumbent: mean {fixed(result.mean, digits)} over {result.seeds} paired seeds, estimate "
        f"{fixed(result.estimate, digits)}, interval [{shown[0]}, {shown[1]}] at this look",
        f"  {level}; the stream has charged {result.alpha_spent:.3g} of its error, wealth {result.wealth:.3g} "
        f"(false-discovery rate <= {result.design.alpha:g} over every candidate)",
    ]
    if result.next_seeds:
        whose = (
            "this candidate and the incumbent"
            if result.verdict == "run_more"
            else "the next candidate and the incumbent"
        )
        lines.append(f"next seeds ({whose}): {', '.join(map(str, result.next_seeds))}")
        written = launch_files_in(Path(state))
        if written:
            lines.append("launch files: " + ", ".join(f"{path} ({what})" for path, what in written))
    return "\n".join(lines)


def _publish(sink: Any, plugin: Any, candidate: Any, incumbent: Any, result: Any) -> None:
    """Publish the look as a report: the two sides' runs, labelled ``<verdict> · <candidate>`` and
    ``incumbent · <name>`` (the run's name and description show them), and the stream's table (``gate``: every
    candidate's verdict and interval) in the bundle and the tracker's table views."""
    import pandas as pd

    from ..analysis.options import AnalysisOptions, look_design
    from ..data.scores import ScoreTable

    frames = [  # the verdict first: a runs list cuts names after about 20 characters
        _labelled(candidate, f"{result.verdict} · {result.name}"),
        _labelled(incumbent, f"incumbent · {result.incumbent}"),
    ]
    table = ScoreTable(pd.concat(frames, ignore_index=True), source={"kind": "gate", "name": result.name})
    design = look_design("gate", result.design.to_json())
    options = AnalysisOptions(seed=0, metrics=(result.design.metric,))
    publish_look(sink, plugin, table, options, {"gate": result.stream}, design)


def _labelled(frame: Any, label: str) -> Any:
    out = frame if not hasattr(frame, "frame") else frame.frame
    return out[["task", "seed", "score"]].assign(algorithm=label)


__all__ = ["EXIT", "as_json", "format_gate", "register"]
