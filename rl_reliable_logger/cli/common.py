"""What every ``rl-reliable`` subcommand shares: the error type, the analysis options, running and printing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..analysis import jordan as jordan_bridge
from ..analysis.evaluation import evaluate
from ..errors import ScoreTableError
from ..render.writer import save_report

EPILOG = """\
examples:
  rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out results/
  rl-reliable evaluate runs.parquet --algorithm-key agent --task-key env --seed-key run --score-key return
  rl-reliable mlflow --experiment my-sweep --out results/ --publish new
  rl-reliable wandb my-team/my-project --sweep abc123 --wait --publish sweep
  rl-reliable report results/          # rebuild figures and report.html from a results folder

input (long form, one row per run and task): columns algorithm,task,seed,score (others kept).
metrics: mean and median of per-task means, IQM (25% trimmed mean over runs), optimality gap,
with 95% stratified-bootstrap intervals (Agarwal et al., 2021); see the README for the rest.
"""


class CliError(Exception):
    """A user-facing error: printed as ``error: <message>`` with exit status 2, no traceback."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _level(text: str) -> float:
    value = float(text)
    if value > 1:  # accept 95 for 95%
        value /= 100.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a confidence level such as 0.95, got {text}")
    return value


def add_evaluate_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command that evaluates (file and tracker sources)."""
    g = parser.add_argument_group("statistics")
    g.add_argument(
        "--normalize",
        metavar="NAME|PATH",
        help="normalise scores per task: atari, atari100k, atari-record, procgen, dmc, percentiles "
        "(Jordan et al.), or a CSV with columns task,low,high (default: raw scores)",
    )
    g.add_argument(
        "--metrics",
        default="mean,median,iqm,optimality_gap",
        help="comma-separated aggregate metrics: mean, median, iqm, optimality_gap, dp25, "
        "trimmed_mean_<p>, p_above_<t> (default: %(default)s)",
    )
    g.add_argument("--gamma", type=float, default=1.0, help="threshold of the optimality gap (default: 1)")
    g.add_argument(
        "--reps",
        type=_positive_int,
        default=50_000,
        help="bootstrap replicates for aggregate metrics (default: 50000, as in the paper)",
    )
    g.add_argument(
        "--profile-reps",
        type=_positive_int,
        default=2_000,
        help="replicates for performance profiles, ranks and per-task intervals (default: 2000)",
    )
    g.add_argument(
        "--improvement-reps",
        type=_positive_int,
        default=2_000,
        help="replicates for probability of improvement (default: 2000)",
    )
    g.add_argument("--seed", type=int, default=None, help="random seed: same input + seed = identical numbers")
    g.add_argument("--ci", type=_level, default=0.95, help="confidence level (default: 0.95)")
    g.add_argument(
        "--method",
        choices=["percentile", "basic", "bc", "bca"],
        default="percentile",
        help="interval method (default: percentile)",
    )
    g.add_argument("--task-bootstrap", action="store_true", help="also resample tasks, not only runs")
    g.add_argument(
        "--curves",
        action="store_true",
        help="also compute sample-efficiency curves (input needs a step column, see --step-key)",
    )
    g.add_argument("--curve-points", type=_positive_int, default=25, help="steps on the curve grid (default: 25)")
    g.add_argument(
        "--drop-invalid",
        action="store_true",
        help="drop bad rows (non-finite scores, duplicates, incomplete tasks) instead of failing; "
        "each dropped row is listed in provenance.json",
    )
    j = parser.add_argument_group("Jordan et al. (2020)")
    j.add_argument(
        "--jordan",
        action="store_true",
        help="add the equilibrium aggregate with confidence intervals (writes jordan.csv)",
    )
    j.add_argument("--delta", type=float, default=0.05, help="1 - confidence of the Jordan intervals (default: 0.05)")
    j.add_argument(
        "--jordan-ci",
        choices=["pbp", "pbp-t", "bootstrap"],
        default="pbp",
        help="interval method for the Jordan aggregate (default: pbp)",
    )
    j.add_argument("--score-range", metavar="LOW,HIGH", help="known score range for PBP (default: observed range)")
    j.add_argument(
        "--hyperparameter-keys",
        metavar="K1,K2",
        help="columns holding hyperparameters: adds the tuning-aware sweep view (writes tuning.csv)",
    )
    o = parser.add_argument_group("output")
    o.add_argument("--out", metavar="DIR", help="write tables (CSV), provenance.json, figures and report.html here")
    o.add_argument("--no-figures", action="store_true", help="with --out, write tables only")
    o.add_argument(
        "--force",
        action="store_true",
        help="with --out, replace an earlier results bundle even if its files were edited (never deletes other files)",
    )
    o.add_argument("--quiet", action="store_true", help="no progress bar, no table on stdout")


def _metrics(args: argparse.Namespace) -> list[str]:
    return [m.strip() for m in str(args.metrics).split(",") if m.strip()]


def run_and_report(table: Any, args: argparse.Namespace, *, source: dict[str, Any] | None = None) -> Any:
    """Evaluate ``table`` with the options in ``args``, print the headline table, write ``args.out``."""
    show_progress = not getattr(args, "quiet", False) and sys.stderr.isatty()
    try:
        report = evaluate(
            table,
            normalize=args.normalize,
            metrics=_metrics(args),
            gamma=args.gamma,
            reps=args.reps,
            profile_reps=args.profile_reps,
            improvement_reps=args.improvement_reps,
            ci=args.ci,
            method=args.method,
            task_bootstrap=args.task_bootstrap,
            seed=args.seed,
            curves=args.curves,
            curve_points=args.curve_points,
            progress=show_progress,
            source=source,
        )
    except (ScoreTableError, ValueError) as err:
        raise CliError(str(err)) from None
    if getattr(args, "jordan", False) or getattr(args, "hyperparameter_keys", None):
        _add_jordan(report, table, args)
    if not getattr(args, "quiet", False):
        print(format_summary(report))
    if args.out:
        out = Path(args.out)
        save_report(report, out, figures=not args.no_figures, force=getattr(args, "force", False))
        print(f"wrote results to {out}/")
    return report


def _add_jordan(report: Any, table: Any, args: argparse.Namespace) -> None:
    bridge = jordan_bridge
    score_range = None
    if args.score_range:
        try:
            low, high = (float(x) for x in args.score_range.split(","))
        except ValueError:
            raise CliError(f"--score-range needs LOW,HIGH (e.g. 0,500), got {args.score_range!r}") from None
        score_range = (low, high)
    try:
        if args.jordan:
            tables, warnings = bridge.jordan_tables(
                table.final(),
                delta=args.delta,
                method=args.jordan_ci,
                score_range=score_range,
                seed=args.seed,
                progress=not getattr(args, "quiet", False) and sys.stderr.isatty(),
            )
            report.extra.update(tables)
            report.warnings.extend(warnings)
            report.provenance["jordan"] = {"delta": args.delta, "method": args.jordan_ci, "score_range": score_range}
        if args.hyperparameter_keys:
            keys = [k.strip() for k in args.hyperparameter_keys.split(",") if k.strip()]
            metrics = _metrics(args)
            tuning, warnings = bridge.tuning_table(
                table.final(),
                keys,
                seed=args.seed,
                reps=min(args.reps, 5000),
                normalize=args.normalize,
                metric="iqm" if "iqm" in metrics else metrics[0],
                ci=args.ci,
            )
            report.extra["tuning"] = tuning
            report.warnings.extend(warnings)
    except ValueError as err:
        raise CliError(str(err)) from None


def format_summary(report: Any) -> str:
    """The headline table: one row per algorithm, one column per metric, ``point [low, high]``."""
    agg = report.aggregates
    if agg.empty:
        return "(no results)"
    cells = agg.assign(
        text=[f"{p:.3f} [{lo:.3f}, {hi:.3f}]" for p, lo, hi in zip(agg["point"], agg["low"], agg["high"])]
    )
    wide = cells.pivot(index="algorithm", columns="metric", values="text")
    wide = wide.reindex(index=report.algorithms, columns=list(dict.fromkeys(agg["metric"])))
    prov = report.provenance
    header = (
        f"{len(prov.get('algorithms', []))} algorithms × {len(prov.get('tasks', []))} tasks; "
        f"{prov.get('normalization', '')}; {int(prov.get('ci', 0.95) * 100)}% {prov.get('method', '')} intervals, "
        f"{prov.get('reps', '')} bootstrap replicates, seed {prov.get('seed')}"
    )
    lines = [header, wide.to_string()]
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
