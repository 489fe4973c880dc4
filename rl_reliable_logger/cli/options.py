"""The one definition of the options every analysing subcommand shares, and their mapping to AnalysisOptions.

``evaluate`` and every tracker's command add the same groups from here (:func:`add_field_options`,
:func:`add_analysis_options`, :func:`add_output_options`), so a flag has the same name, default and
meaning everywhere; :func:`analysis_options` is the only place flags become
:class:`~rl_reliable_logger.analysis.options.AnalysisOptions`. Flag names and the rewording of library
messages (```reps=``` -> ``--reps``) come from the one keyword-to-flag table in ``cli/flags.py``.

Nothing heavy is imported at module level: ``rl-reliable --help`` loads neither numpy nor pandas.
Defaults shown here equal the library's (a test checks every one).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .flags import CliError, cli_message, flag_for

__all__ = [
    "ANALYSIS_OPTIONS",
    "FILE_FIELDS",
    "CliError",
    "Option",
    "add_analysis_options",
    "add_shared_option",
    "add_field_options",
    "add_force_publish_option",
    "add_name_options",
    "add_output_options",
    "add_retry_option",
    "add_source_options",
    "analysis_options",
    "name_mode",
    "names",
    "retry_policy",
    "selected_options",
    "run_name_redactor",
    "source_kwargs",
]


# ---------------------------------------------------------------------------- value parsers
def names(value: str) -> list[str]:
    """``A,B`` → ``["A", "B"]`` (surrounding spaces dropped)."""
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _score_range(text: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs LOW,HIGH (e.g. 0,500), got {text!r}") from None
    return low, high


def _joined(values: list[str] | None) -> tuple[str, ...] | None:
    """Values of a repeatable comma-separated flag, in order, duplicates dropped."""
    if not values:
        return None
    return tuple(dict.fromkeys(n for v in values for n in names(v)))


@dataclass(frozen=True)
class Option:
    """One shared flag: the AnalysisOptions keyword it sets, its group and argparse definition.

    The flag's name comes from the one keyword-to-flag table, :data:`.flags.ANALYSIS_FLAGS`.
    """

    keyword: str
    group: str
    kwargs: Mapping[str, Any]
    convert: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        return flag_for(self.keyword)


STATISTICS = "statistics"
SELECTION = "selection"
JORDAN = "Jordan et al. (2020) and hyperparameter sweeps"
CHECKS = "protocol checks and many-way comparisons"
OUTPUT = "output"

#: The shared analysis flags, in help order. ``keyword`` maps each to AnalysisOptions.
ANALYSIS_OPTIONS: tuple[Option, ...] = (
    Option(
        "normalize",
        STATISTICS,
        dict(
            metavar="NAME|PATH",
            help="normalise scores per task: atari, atari100k, atari-record, procgen, dmc, already-normalized "
            "(scores the training code normalised: kept as logged), percentiles "
            "(Jordan et al.), or a CSV with columns task,low,high (default: raw scores)",
        ),
    ),
    Option(
        "metrics",
        STATISTICS,
        dict(
            metavar="M1,M2",
            default="mean,median,iqm,optimality_gap",
            help="comma-separated aggregate metrics: mean, median, iqm, optimality_gap, dp25, "
            "trimmed_mean_<p>, p_above_<t> (default: %(default)s)",
        ),
        lambda v: tuple(names(v)),
    ),
    Option(
        "gamma",
        STATISTICS,
        dict(metavar="GAMMA", type=float, default=1.0, help="threshold of the optimality gap (default: 1)"),
    ),
    Option(
        "reps",
        STATISTICS,
        dict(
            metavar="N",
            type=int,
            default=50_000,
            help="bootstrap replicates for aggregate metrics (default: 50000, as in the paper)",
        ),
    ),
    Option(
        "profile_reps",
        STATISTICS,
        dict(
            metavar="N",
            type=int,
            default=2_000,
            help="replicates for performance profiles, ranks and per-task intervals (default: 2000)",
        ),
    ),
    Option(
        "improvement_reps",
        STATISTICS,
        dict(metavar="N", type=int, default=2_000, help="replicates for probability of improvement (default: 2000)"),
    ),
    Option(
        "seed",
        STATISTICS,
        dict(
            metavar="N",
            type=int,
            default=0,
            help="random seed (default: 0, recorded in provenance.json): the same runs and options give the same numbers",
        ),
    ),
    Option(
        "ci",
        STATISTICS,
        dict(
            metavar="LEVEL",
            type=float,
            default=0.95,
            help="confidence level: a fraction such as 0.95 or a percentage such as 95 or 99.5; at least 50%% "
            "(default: 0.95)",
        ),
    ),
    Option(
        "method",
        STATISTICS,
        dict(
            choices=["percentile", "basic", "bc", "bca", "expanded", "bootstrap-t"],
            default="percentile",
            help=(
                "interval method for every table (default: percentile; with 10 or fewer runs per task "
                "bootstrap-t, which reaches nominal coverage for the IQM, its differences and P(X>Y))"
            ),
        ),
    ),
    Option(
        "task_bootstrap",
        STATISTICS,
        dict(action="store_true", help="also resample tasks, not only runs"),
    ),
    Option(
        "rank_by",
        STATISTICS,
        dict(
            choices=["runs", "task-means"],
            default="runs",
            help="rank distributions of single runs per task (default, as in the paper) or of bootstrapped task means",
        ),
    ),
    Option(
        "curves",
        STATISTICS,
        dict(action="store_true", help="also compute sample-efficiency curves (needs per-step scores)"),
    ),
    Option(
        "curve_points",
        STATISTICS,
        dict(metavar="N", type=int, default=25, help="steps on the curve grid (default: 25)"),
    ),
    Option(
        "curve_reps",
        STATISTICS,
        dict(metavar="N", type=int, default=2_000, help="replicates for sample-efficiency curves (default: 2000)"),
    ),
    Option(
        "budget",
        STATISTICS,
        dict(
            metavar="STEP",
            type=float,
            default=None,
            help="common training budget (needs per-step scores): final scores are taken at it and the curves "
            "end there (default: each run's last step; runs stopping short are named in a warning)",
        ),
    ),
    Option(
        "only_algorithms",
        SELECTION,
        dict(
            action="append",
            metavar="A,B",
            help="analyse only these algorithms (comma-separated, repeatable); an unknown name is an error listing the "
            "known. With --variant-key (tracker commands), a base name (PPO) keeps every configuration and a full label "
            "in quotes ('PPO lr=0.001') keeps that one",
        ),
        _joined,
    ),
    Option(
        "only_tasks",
        SELECTION,
        dict(action="append", metavar="T1,T2", help="analyse only these tasks (comma-separated, repeatable)"),
        _joined,
    ),
    Option(
        "jordan",
        JORDAN,
        dict(action="store_true", help="add the equilibrium aggregate with simultaneous intervals (writes jordan.csv)"),
    ),
    Option(
        "jordan_delta",
        JORDAN,
        dict(
            metavar="DELTA",
            type=float,
            default=0.05,
            help="1 - confidence of the Jordan intervals, for all algorithms at once (default: 0.05)",
        ),
    ),
    Option(
        "jordan_method",
        JORDAN,
        dict(
            choices=["pbp", "pbp-t", "bootstrap"],
            default="pbp",
            help="interval method of the Jordan aggregate (default: pbp)",
        ),
    ),
    Option(
        "jordan_reps",
        JORDAN,
        dict(
            metavar="N",
            type=int,
            default=10_000,
            help="replicates of --jordan-ci bootstrap (default: 10000, as in the paper)",
        ),
    ),
    Option(
        "score_range",
        JORDAN,
        dict(type=_score_range, metavar="LOW,HIGH", help="known score range for PBP (default: observed range, warned)"),
    ),
    Option(
        "hyperparameter_keys",
        JORDAN,
        dict(
            metavar="K1,K2",
            help="fields holding hyperparameters: adds the tuning-aware sweep view (writes tuning.csv)",
        ),
        lambda v: tuple(names(v)) if v else (),
    ),
    Option(
        "executor",
        STATISTICS,
        dict(
            metavar="NAME",
            default=None,
            help="where independent units of work run: serial (default, this process) or ray (Ray tasks on the "
            "cluster of RAY_ADDRESS, or a local Ray; needs pip install 'rl_reliable_logger[ray]'); the numbers "
            "are the same",
        ),
    ),
    Option(
        "strict",
        CHECKS,
        dict(
            action="store_true",
            help="protocol checks that warn (unequal runs or budgets, evaluation settings that differ, "
            "max-over-training scores, reused tuning seeds) are an error instead: exit status 2 (for CI)",
        ),
    ),
    Option(
        "comparisons",
        CHECKS,
        dict(
            action="store_true",
            help="compare all pairs of algorithms with family-wise error control (max-T simultaneous "
            "intervals, Holm p-values) and print which can be told apart (writes comparisons.csv)",
        ),
    ),
)


#: The columns a user's file is read with when no field flag is given: ScoreTable's defaults (a test checks
#: them), ``step`` used when the file has that column.
FILE_FIELDS = {"algorithm": "algorithm", "task": "task", "seed": "seed", "score": "score", "step": "step"}


def add_field_options(
    parser: argparse.ArgumentParser,
    defaults: Mapping[str, str],
    *,
    what: str = "column",
    metavar: str = "COL",
    refs: str = "",
    run_key: bool = True,
) -> Any:
    """``--algorithm-key/--task-key/--seed-key/--score-key`` (and ``--run-key``): where each field of a run is.

    ``defaults`` maps algorithm/task/seed/score to the source's default; ``refs`` lists the forms a
    field reference takes (trackers). Returns the argument group, for a source's own field flags.
    """
    g = parser.add_argument_group("fields" + (f" ({what}s: {refs})" if refs else ""))
    for name, meaning in (
        ("algorithm", "the algorithm"),
        ("task", "the task / environment"),
        ("seed", "the seed"),
        ("score", "the final score (trackers: a comma-separated fallback list, first one a run has)"),
    ):
        g.add_argument(
            f"--{name}-key",
            default=defaults[name],
            metavar=metavar,
            help=f"{what} with {meaning} (default: {defaults[name]})",
        )
    if "step" in defaults:
        g.add_argument(
            "--step-key",
            default=defaults["step"],
            metavar=metavar,
            help=f"{what} with the training step, for --curves and --budget; the last step gives the final score "
            f"(default: {defaults['step']}, when the input has it)",
        )
    if run_key:
        g.add_argument(
            "--run-key",
            default=None,
            metavar=metavar,
            help=f"{what} with a unique run id, when a seed number is not unique (e.g. two batches of seeds)",
        )
    add_name_options(g)
    return g


# ---------------------------------------------------------------------------- names (docs/untrusted-input.md)
def add_name_options(group: Any) -> None:
    """``--normalize-names`` and ``--redact-run-names``: on every command that reads names (via the field group)."""
    group.add_argument(
        "--normalize-names",
        action="store_true",
        help="strip surrounding whitespace from names and put them in Unicode NFC instead of refusing them; "
        "every name changed is printed and listed in provenance.json (name_rewrites)",
    )
    group.add_argument(
        "--redact-run-names",
        default=None,
        metavar="REGEX",
        help="for run names that carry secrets: replace every match of REGEX (Python syntax, e.g. 'tok_\\w+'; "
        "'.+' for whole names) by redacted-<8 hex digits of its SHA-256> in every message, table, figure, "
        "provenance entry and published field; the numbers do not change",
    )


def name_mode(args: argparse.Namespace) -> str:
    """The ``names=`` of ScoreTable and the tracker sources for ``--normalize-names``."""
    return "normalize" if getattr(args, "normalize_names", False) else "strict"


def run_name_redactor(args: argparse.Namespace) -> Any:
    """The RunNameRedactor of ``--redact-run-names`` (None without it); a bad REGEX is a CliError naming the flag."""
    pattern = getattr(args, "redact_run_names", None)
    if pattern is None:
        return None
    from ..redaction import RunNameRedactor

    try:
        return RunNameRedactor(pattern)
    except ValueError as err:
        raise CliError(f"--redact-run-names {pattern!r}: {err}") from None


def add_shared_option(group: Any, keyword: str) -> None:
    """One flag of the shared set (by its analysis keyword), for a command that takes only a few of them."""
    opt = next(o for o in ANALYSIS_OPTIONS if o.keyword == keyword)
    group.add_argument(opt.flag, dest=opt.keyword, **opt.kwargs)


def add_analysis_options(parser: argparse.ArgumentParser, *, skip: Collection[str] = ()) -> None:
    """Every shared statistics, selection, Jordan and tuning flag, plus ``--drop-invalid`` (except ``skip``)."""
    groups: dict[str, Any] = {}
    for opt in ANALYSIS_OPTIONS:
        if opt.flag in skip:
            continue
        if opt.group not in groups:
            groups[opt.group] = parser.add_argument_group(opt.group)
        groups[opt.group].add_argument(opt.flag, dest=opt.keyword, **opt.kwargs)
    if "--drop-invalid" in skip:
        return
    if SELECTION not in groups:
        groups[SELECTION] = parser.add_argument_group(SELECTION)
    groups[SELECTION].add_argument(
        "--drop-invalid",
        action="store_true",
        help="drop bad rows (non-finite scores, duplicates, incomplete tasks) instead of failing; "
        "each dropped row is listed in provenance.json and counted on the console",
    )


def add_output_options(parser: argparse.ArgumentParser, *, out_help: str | None = None) -> None:
    """``--out``, ``--no-figures``, ``--figure-formats``, ``--force``, ``--quiet``."""
    o = parser.add_argument_group(OUTPUT)
    o.add_argument(
        "--out", metavar="DIR", help=out_help or "write tables (CSV), provenance.json, figures and report.html here"
    )
    o.add_argument("--no-figures", action="store_true", help="with --out, write tables only (no PNG/SVG, no HTML)")
    o.add_argument(
        "--figure-formats",
        default="png,svg",
        metavar="LIST",
        help="with --out, the figure files to write: png, svg or png,svg (default: %(default)s)",
    )
    o.add_argument(
        "--force",
        action="store_true",
        help="with --out, replace an earlier results bundle even if its files were edited since "
        "(files the tool did not write are never replaced)",
    )
    o.add_argument("--quiet", action="store_true", help="no progress bar, no table on stdout")


def analysis_options(args: argparse.Namespace, *, progress: bool = False) -> Any:
    """The AnalysisOptions of parsed ``args``: the one mapping from flags to the library's options."""
    from ..analysis.options import AnalysisOptions, OptionError

    values: dict[str, Any] = {}
    for opt in ANALYSIS_OPTIONS:
        if not hasattr(args, opt.keyword):
            continue
        value = getattr(args, opt.keyword)
        values[opt.keyword] = opt.convert(value) if opt.convert else value
    try:
        return AnalysisOptions(progress=progress, **values)
    except OptionError as err:
        raise CliError(cli_message(err)) from None


# ---------------------------------------------------------------------------- tracker sources
def add_source_options(group: Any, *, config_kind: str) -> None:
    """The source flags every tracker subcommand shares: ``--score-rule``, ``--variant-key``, ``--run-key``.

    ``group`` is the field group returned by :func:`add_field_options` (called with ``run_key=False``);
    ``config_kind`` is where the tracker keeps hyperparameters (its plugin's ``config_kind``), for the examples
    of the help.
    """
    example = f"{config_kind}.lr"
    group.add_argument(
        "--score-rule",
        default="last",
        metavar="RULE",
        help="how the final score is read from --score-key: last (default: its stored value), mean-last-N "
        "(mean of its last N logged values), at-budget:STEP (its value at or before STEP; runs short of it "
        "are named), max (best logged value; biased upwards, warned)",
    )
    group.add_argument(
        "--variant-key",
        action="append",
        metavar="REF",
        help="append this field to the algorithm label, one label per sweep configuration "
        f"(e.g. --variant-key {example} gives 'PPO lr=0.001'); comma-separated, repeatable",
    )
    group.add_argument(
        "--run-key",
        default=None,
        metavar="REF",
        help="field with a run's identity (default: the tracker's run id, so seeds reused across "
        "configurations are fine; two runs with one configuration and seed are reported as duplicates)",
    )


def add_force_publish_option(group: Any) -> None:
    """``--force-publish``: the same flag, meaning and default on every tracker command."""
    group.add_argument(
        "--force-publish",
        action="store_true",
        help="publish a new analysis run even if the same report content was published before "
        "(default: reuse the earlier one)",
    )


def add_retry_option(group: Any) -> None:
    """``--retry-for SECONDS``: how long a tracker command rides out an outage before it gives up."""
    group.add_argument(
        "--retry-for",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="retry tracker requests that failed for a transient cause (timeout, 5xx, 429 honouring "
        "Retry-After, connection) with exponential backoff and jitter for up to this long (default: 300; 0: never)",
    )


def retry_policy(args: argparse.Namespace) -> Any:
    """The tracker retry policy of ``--retry-for``."""
    from ..trackers.base.retry import RetryPolicy

    seconds = float(getattr(args, "retry_for", 0.0) or 0.0)
    if seconds < 0:
        raise CliError(f"--retry-for must be 0 or more seconds, got {seconds:g}")
    return RetryPolicy(total=seconds)


def source_kwargs(args: argparse.Namespace, options: Any, *, default_kind: str) -> dict[str, Any]:
    """Keyword arguments of ``Source.table()`` from parsed flags: the one mapping of the source flags.

    ``--hyperparameter-keys lr`` (no kind) reads ``<default_kind>.lr`` (the tracker plugin's ``config_kind``)
    into a column named ``lr``; ``config.lr`` reads that reference into a column of that name.
    """
    extra = {}
    for key in getattr(options, "hyperparameter_keys", ()) or ():
        kind = str(key).split(".", 1)[0]
        extra[str(key)] = str(key) if "." in str(key) and kind in _REF_KINDS else f"{default_kind}.{key}"
    curves = bool(getattr(options, "curves", False))
    return {
        "algorithm": args.algorithm_key,
        "task": args.task_key,
        "seed": args.seed_key,
        "score": names(args.score_key),
        "include_unfinished": args.include_unfinished,
        "on_invalid": "drop" if args.drop_invalid else "raise",
        "curve_key": args.curve_key if curves else None,
        "algorithms": options.only_algorithms,
        "tasks": options.only_tasks,
        "extra_fields": extra or None,
        "run_key": args.run_key,
        "variant": list(_joined(args.variant_key) or ()),
        "score_rule": args.score_rule,
        "names": name_mode(args),
    }


def selected_options(options: Any, table: Any) -> Any:
    """``options`` for a tracker table: the source already applied ``--only-algorithms``, matching base
    names (``PPO``: every configuration) or full sweep labels (``PPO lr=0.001``), so the analysis keeps
    exactly the labels the table holds (a base name would otherwise be an unknown label)."""
    wanted = getattr(options, "only_algorithms", None)
    if not wanted:
        return options
    have = [str(a) for a in table.algorithms]
    labels = [a for name in wanted for a in have if a == name or a.startswith(f"{name} ")]  # the user's order
    return options.replace(only_algorithms=tuple(dict.fromkeys(labels + have)))


#: Kinds of tracker field references (``trackers.base.records.KINDS``, checked by a test).
_REF_KINDS = ("config", "summary", "params", "metrics", "tags", "run")
