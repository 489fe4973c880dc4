"""Running one analysis from the command line: options → ``evaluate()`` → console summary → files.

Every analysing subcommand ends in :func:`run_and_report`; the analysis itself (Jordan tables, tuning
view, curves included) is built by ``evaluate()``, never completed here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .options import CliError, add_analysis_options, add_output_options, analysis_options, cli_message

__all__ = ["EPILOG", "CliError", "add_evaluate_options", "format_summary", "run_and_report"]

EPILOG = """\
examples:
  rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out results/
  rl-reliable evaluate runs.parquet --algorithm-key agent --task-key env --seed-key run --score-key return
  rl-reliable evaluate runs.csv --only-algorithms PPO,SAC --only-tasks Hopper --reps 10000 --ci 99
  rl-reliable evaluate sweep.csv --hyperparameter-keys lr,ent_coef --jordan --out results/
  rl-reliable mlflow --experiment my-sweep --out results/ --publish new
  rl-reliable wandb my-team/my-project --sweep abc123 --wait --publish sweep
  rl-reliable report results/          # rebuild figures and report.html from a results folder

input (long form, one row per run and task): columns algorithm,task,seed,score (others kept).
metrics: mean and median of per-task means, IQM (25% trimmed mean over runs), optimality gap,
with 95% stratified-bootstrap intervals (Agarwal et al., 2021), seed 0 unless --seed; see the README.
"""


def add_evaluate_options(parser: argparse.ArgumentParser) -> None:
    """The shared analysis and output options; flags a subcommand already defines itself are left to it."""
    existing = set(parser._option_string_actions)  # a tracker command may define --only-algorithms itself
    add_analysis_options(parser, skip=existing)
    add_output_options(parser)


def run_and_report(table: Any, args: argparse.Namespace, *, source: dict[str, Any] | None = None) -> Any:
    """Evaluate ``table`` with the options in ``args``, print the summary, write ``args.out``; return the Report."""
    from ..analysis.evaluation import evaluate
    from ..errors import InputError

    quiet = bool(getattr(args, "quiet", False))
    options = analysis_options(args, progress=not quiet and sys.stderr.isatty())
    try:
        report = evaluate(table, options, source=source)
    except InputError as err:
        raise CliError(cli_message(err)) from None
    if not quiet:
        print(format_summary(report))
    else:
        for w in report.warnings:  # what was dropped or clipped is never only in provenance
            print(f"warning: {w}", file=sys.stderr)
    if getattr(args, "out", None):
        from ..render.writer import save_report

        out = Path(args.out)
        save_report(report, out, figures=not getattr(args, "no_figures", False))
        print(f"wrote results to {out}/")
    return report


def format_summary(report: Any) -> str:
    """The headline table: one row per algorithm, one column per metric, ``point [low, high]``."""
    from ..analysis.options import ci_label

    agg = report.aggregates
    if agg.empty:
        return "(no results)"
    cells = agg.assign(
        text=[f"{p:.3f} [{lo:.3f}, {hi:.3f}]" for p, lo, hi in zip(agg["point"], agg["low"], agg["high"])]
    )
    wide = cells.pivot(index="algorithm", columns="metric", values="text")
    wide = wide.reindex(index=report.algorithms, columns=list(dict.fromkeys(agg["metric"])))
    prov = report.provenance
    filters = prov.get("filters") or {}
    header = (
        f"{len(prov.get('algorithms', []))} algorithms × {len(prov.get('tasks', []))} tasks; "
        f"{prov.get('normalization', '')}; {ci_label(prov.get('ci', 0.95))} {prov.get('method', '')} intervals, "
        f"{prov.get('reps', '')} bootstrap replicates, seed {prov.get('seed')}"
        + "".join(f"; {k.replace('_', ' ')}: {', '.join(v)}" for k, v in filters.items())
    )
    lines = [header, wide.to_string()]
    n_dropped = len(prov.get("dropped") or [])
    if n_dropped:
        lines.append(f"dropped {n_dropped} invalid row(s) (--drop-invalid); each is listed in provenance.json")
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
