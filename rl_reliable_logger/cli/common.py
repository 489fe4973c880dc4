"""Running one analysis from the command line: options → ``evaluate()`` → console summary → files.

Every analysing subcommand ends in :func:`run_and_report`; the analysis itself (Jordan tables, tuning
view, curves included) is built by ``evaluate()``, never completed here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..trackers import registry
from ..trackers.base.request import KINDS
from .flags import CliError, as_flags, cli_message
from .options import analysis_options, name_mode

__all__ = ["EPILOG", "CliError", "format_comparisons", "format_summary", "run_and_report", "tracker_fields"]


EPILOG = """\
examples:
  rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out results/
  rl-reliable evaluate runs.parquet --algorithm-key agent --task-key env --seed-key run --score-key return
  rl-reliable evaluate runs.csv --only-algorithms PPO,SAC --only-tasks Hopper --reps 10000 --ci 99
  rl-reliable evaluate sweep.csv --hyperparameter-keys lr,ent_coef --jordan --out results/
{trackers}
  rl-reliable report results/          # rebuild figures and report.html from a results folder

input (long form, one row per run and task): columns algorithm,task,seed,score (others kept).
metrics: mean and median of per-task means, IQM (25% trimmed mean over runs), optimality gap,
with 95% stratified-bootstrap intervals (Agarwal et al., 2021), seed 0 unless --seed; see the README.
""".format(trackers="\n".join(f"  {p.example}" for p in registry.plugins()))


def tracker_fields(keys: Sequence[str]) -> dict[str, str] | None:
    """``--hyperparameter-keys params.lr,config.clip`` names field references: fetch them as columns of those names."""
    refs = {k: k for k in keys if "." in k and k.split(".", 1)[0] in KINDS}
    return refs or None


def check_output(args: argparse.Namespace, *, inputs: Sequence[Any] = (), kind: str = "report") -> None:
    """Before any computation: ``--out`` may be written (never over an input or files the tool did not write)
    and ``--figure-formats`` names known formats; a problem is a one-line CliError naming the flag.

    Every writing command (``evaluate``, each tracker's command with ``--out``, ``plan``) calls this one guard."""
    if not getattr(args, "out", None):
        return
    from ..errors import InputError
    from ..render.bundle import check_output_folder
    from ..render.export import check_formats

    try:
        check_output_folder(args.out, inputs=inputs, force=getattr(args, "force", False), kind=kind)
        if not getattr(args, "no_figures", False) and hasattr(args, "figure_formats"):
            check_formats(args.figure_formats)
    except InputError as err:
        raise CliError(cli_message(err)) from None


def read_scores(path: Path, args: argparse.Namespace) -> Any:
    """The ScoreTable of a user's file, with the shared field flags; every problem one line naming the file."""
    from ..analysis.inputs import FieldOptions
    from ..errors import InputError

    if not path.exists():
        raise CliError(f"input file {path} does not exist")
    fields = FieldOptions(  # the reader of evaluate(DataFrame or path, field keywords) too
        algorithm_key=args.algorithm_key,
        task_key=args.task_key,
        seed_key=args.seed_key,
        score_key=args.score_key,
        run_key=args.run_key,
        step_key=args.step_key,
        drop_invalid=bool(args.drop_invalid),
        normalize_names=name_mode(args) == "normalize",
        hyperparameter_keys=tuple(getattr(args, "hyperparameter_keys", None) or ()),
    )
    try:
        return fields.read(path, source={"kind": "file", "path": str(path), "score_column": args.score_key})
    except InputError as err:
        message = cli_message(err)
        raise CliError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read {path}: {err}") from None


def evaluate(table: Any, options: Any, *, source: dict[str, Any] | None = None) -> Any:
    """``analysis.evaluate``, imported on first use so that ``rl-reliable --help`` loads no numpy."""
    from ..analysis.evaluation import evaluate as run_analysis

    return run_analysis(table, options, source=source)


def run_and_report(
    table: Any, args: argparse.Namespace, *, source: dict[str, Any] | None = None, options: Any = None
) -> Any:
    """Evaluate ``table`` with the options of ``args`` (or ``options``), print the summary, write ``args.out``.

    Wiring only: the Report that is printed, written and published is the library's (``evaluate()`` applies
    :func:`~rl_reliable_logger.analysis.redacted.redact_report` itself), so ``rl-reliable evaluate --out A`` and
    ``save_report(evaluate(...), B)`` write the same bundle; only what is printed is put in flag words."""
    from ..errors import InputError

    quiet = bool(getattr(args, "quiet", False))
    progress = not quiet and sys.stderr.isatty()
    options = analysis_options(args, progress=progress) if options is None else options.replace(progress=progress)
    try:
        report, warned = _evaluate_capturing(table, options, source)
    except InputError as err:
        raise CliError(cli_message(err)) from None
    if not quiet:
        print(format_summary(report, warned))  # results first, then the warnings, each once
    else:
        for w in warned:  # what was dropped or left out is never only in provenance
            print(warning_line(as_flags(w)), file=sys.stderr)
    if getattr(args, "out", None):
        from ..render.writer import save_report

        out = Path(args.out)
        try:
            save_report(
                report,
                out,
                figures=not getattr(args, "no_figures", False),
                force=getattr(args, "force", False),
                figure_formats=getattr(args, "figure_formats", "png,svg"),
            )
        except InputError as err:
            raise CliError(cli_message(err)) from None
        if not getattr(args, "no_figures", False):
            from ..render.writer import figure_note

            note = figure_note(report)
            if note:
                print(f"note: {note}", file=sys.stderr)
        full = " (every warning in full: methods.md)" if len(warned) < len(set(report.warnings)) else ""
        print(f"wrote results to {out}/{full}")
    return report


def _evaluate_capturing(table: Any, options: Any, source: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """The Report and the lines of the :class:`~rl_reliable_logger.ReliabilityWarning` s ``evaluate()`` emitted,
    caught so that the console prints them once, after the results (any other warning is passed on)."""
    import warnings

    from ..errors import ReliabilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReliabilityWarning)
        report = evaluate(table, options, source=source)
    for w in caught:
        if not issubclass(w.category, ReliabilityWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return report, [str(w.message) for w in caught if issubclass(w.category, ReliabilityWarning)]


def warning_line(warning: str) -> str:
    """A warning as the console prints it: ``warning: ...``, a protocol finding as it reads already
    (``protocol warning: ...``, never ``warning: protocol warning: ...``)."""
    return warning if warning.startswith("protocol ") else f"warning: {warning}"


def format_comparisons(report: Any) -> str:
    """The letter display of the all-pairs comparisons (``--compare-all``), or "" without them."""
    from ..analysis.comparisons import format_letters, report_letters

    display = report_letters(report)
    metric = (report.provenance or {}).get("comparisons_metric")
    return "" if display is None else as_flags(format_letters(display, metric=metric))


def format_summary(report: Any, warned: Sequence[str] | None = None) -> str:
    """Results first: the headline table (one row per algorithm, one column per metric, ``point [low, high]``),
    the letter display of ``--compare-all``, then the warnings, grouped one line per algorithm (``warned``: the
    lines ``evaluate()`` emitted; by default :func:`~rl_reliable_logger.analysis.notices.grouped`)."""
    from ..analysis.notices import grouped
    from ..data.counts import fixed, plural
    from ..render.intervals import summary_header

    agg = report.aggregates
    if agg.empty:
        return "(no results)"
    cells = agg.assign(
        text=[f"{fixed(p)} [{fixed(lo)}, {fixed(hi)}]" for p, lo, hi in zip(agg["point"], agg["low"], agg["high"])]
    )
    wide = cells.pivot(index="algorithm", columns="metric", values="text")
    wide = wide.reindex(index=report.algorithms, columns=list(dict.fromkeys(agg["metric"])))
    lines = [summary_header(report, as_flags), wide.to_string()]
    letters = format_comparisons(report)
    if letters:
        lines.append(letters)
    n_dropped = len(report.provenance.get("dropped") or [])
    if n_dropped:
        lines.append(
            f"dropped {plural(n_dropped, 'row', 'invalid')} (--drop-invalid); each is listed in provenance.json"
        )
    lines += [warning_line(as_flags(w)) for w in (grouped(report) if warned is None else warned)]
    return "\n".join(lines)
