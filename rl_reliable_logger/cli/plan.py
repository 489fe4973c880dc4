"""``rl-reliable plan``: how many runs per task before the intervals are narrow enough.

Wiring only: read the pilot scores, call :func:`~rl_reliable_logger.analysis.planning.plan`, print
the widths (and the pair's separation probability), write ``plan.csv``, ``launch.csv`` and the
figure. Scores pulled from a tracker can be planned from the ``scores.csv`` that
``rl-reliable mlflow|wandb --out DIR`` writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import read_scores
from .flags import PLAN_FLAGS, CliError, as_flags
from .options import add_field_options

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.planning import Plan

EPILOG = """\
examples:
  rl-reliable plan pilot.csv --normalize atari100k --target-width 0.05 --out plan/
  rl-reliable plan pilot.csv --compare SPR,DrQ --max-runs 30 --out plan/
  rl-reliable plan results/scores.csv --metric mean     # scores written by evaluate/mlflow/wandb --out

Each (algorithm, task) cell's pilot runs are resampled to N runs (variance-corrected), and each
synthetic experiment gets the same stratified-bootstrap interval an evaluation would compute
(with --sim-reps replicates). Widths are averaged over --trials synthetic experiments.
"""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _level(text: str) -> float:
    value = float(text)
    value = value / 100.0 if value > 1 else value
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a level such as 0.95, got {text}")
    return value


def register(sub: Any) -> None:
    """Add the ``plan`` subcommand."""
    p = sub.add_parser(
        "plan",
        help="predict interval widths / power for N runs per task from pilot runs",
        description="Plan how many runs per task an evaluation needs: from pilot runs, predict by simulation the "
        "width of each algorithm's interval (and, with --compare, the chance that a pair separates) for N runs "
        "per task, the smallest N meeting the target, and how many more runs to launch in each cell.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="CSV, Parquet or JSON file of pilot scores in long form")
    k = add_field_options(p, {"algorithm": "algorithm", "task": "task", "seed": "seed", "score": "score"})
    k.add_argument(
        "--step-key", default=None, metavar="COL", help="column with the training step (the last step is used)"
    )
    k.add_argument("--drop-invalid", action="store_true", help="drop bad rows instead of failing")
    g = p.add_argument_group("planning")
    g.add_argument("--metric", default="iqm", help="aggregate metric to plan for (default: iqm)")
    g.add_argument("--normalize", metavar="NAME|PATH", help="normalise scores per task, as for evaluate")
    g.add_argument("--target-width", type=float, metavar="W", help="interval width wanted (in score units)")
    g.add_argument("--compare", metavar="A,B", help="two algorithms: predict the chance their intervals separate")
    g.add_argument("--power", type=_level, default=0.8, help="separation probability wanted with --compare (0.8)")
    g.add_argument("--max-runs", type=_positive_int, metavar="N", help="largest N (default: max(20, 2x the pilot))")
    g.add_argument("--runs", metavar="N1,N2", help="exact list of N to simulate (instead of a grid)")
    g.add_argument("--trials", type=_positive_int, default=200, help="synthetic experiments per N (default: 200)")
    g.add_argument(
        "--sim-reps", type=_positive_int, default=500, help="bootstrap replicates per experiment (default: 500)"
    )
    g.add_argument("--ci", type=_level, default=0.95, help="confidence level being planned for (default: 0.95)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="DIR", help="write plan.csv, launch.csv (with a target) and plan.png here")
    o.add_argument("--no-figures", action="store_true", help="with --out, write tables only")
    o.add_argument("--quiet", action="store_true", help="no progress bar, no table on stdout")
    o.add_argument(
        "--strict", action="store_true", help="protocol warnings (unequal runs, budgets, ...) are errors (for CI)"
    )
    p.set_defaults(func=_cmd_plan)


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

    path = Path(args.input)
    table = read_scores(path, args)
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
            power=args.power,
            max_runs=args.max_runs,
            runs=_runs(args.runs),
            trials=args.trials,
            sim_reps=args.sim_reps,
            ci=args.ci,
            seed=args.seed,
            progress=not args.quiet and sys.stderr.isatty(),
        )
    except (InputError, ScoreTableError, ValueError) as err:
        raise CliError(as_flags(str(err), table=PLAN_FLAGS)) from None
    if result.findings:  # protocol problems first, before any number
        print(format_findings(result.findings), file=sys.stderr)
    for w in table.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for w in result.warnings:
        print(f"warning: {as_flags(w, table=PLAN_FLAGS)}", file=sys.stderr)
    if not args.quiet:
        print(format_plan(result))
    if args.out:
        written = result.save(args.out)
        if not args.no_figures:
            from ..render.plan_figures import plot_plan

            fig = plot_plan(
                result.table,
                target_width=args.target_width,
                power=args.power if args.compare else None,
                ci=args.ci,
            )
            written.append(Path(args.out) / "plan.png")
            fig.savefig(written[-1], dpi=150)
        for w in written:
            print(f"wrote {w}")
    return 0


def format_plan(result: Plan) -> str:
    """Widths as an N × algorithm table, then the pair, the runs needed and the launch summary."""
    t = result.table
    prov = result.provenance
    lines = [
        f"predicted width of the {prov['ci']:.0%} {prov['metric']} interval by runs per task "
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
        lines.append("")
        for alg, n in result.needed.items():
            if n is None:
                lines.append(f"{alg}: target not reached within {prov['grid'][-1]} runs per task")
                continue
            more = result.launch[result.launch["algorithm"] == alg]["more_runs"]
            lines.append(f"{alg}: {n} runs per task needed; launch {int(more.sum())} more run(s)")
    return "\n".join(lines)
