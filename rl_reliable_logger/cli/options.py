"""The flags every analysing subcommand shares, generated from the option declarations, and their mapping back.

Each analysis option is declared once, as a field of
:class:`~rl_reliable_logger.analysis.options.AnalysisOptions` (:mod:`rl_reliable_logger.analysis.declared`):
its flag, group, metavar, parser, help and default. ``evaluate``, every tracker's command and ``plan`` add
their flags from those declarations (:func:`add_analysis_options`, :func:`add_shared_option`), and
:func:`analysis_options` is the only place flags become options. The field, source and output flags that
are no analysis option (where a run's fields are, ``--out``) are defined here once.

Nothing heavy is imported at module level: ``rl-reliable --help`` loads neither numpy nor pandas.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from ..render.export import DEFAULT_FIGURE_FORMATS
from .flags import PLAN_FLAGS, CliError, as_flags, cli_message

__all__ = [
    "FILE_FIELDS",
    "CliError",
    "add_declared_option",
    "add_analysis_options",
    "add_shared_option",
    "add_field_options",
    "add_force_publish_option",
    "add_name_options",
    "add_output_options",
    "add_retry_option",
    "add_score_rule_option",
    "add_source_options",
    "analysis_options",
    "check_output_flags",
    "given_options",
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


def _joined(values: list[str] | None) -> tuple[str, ...] | None:
    """Values of a repeatable comma-separated flag, in order, duplicates dropped."""
    if not values:
        return None
    return tuple(dict.fromkeys(n for v in values for n in names(v)))


SELECTION = "selection"
OUTPUT = "output"


def _declarations(options_class: Any = None) -> list[tuple[Any, Any]]:
    """The declared options of ``options_class`` (default: AnalysisOptions) that have a flag."""
    from ..analysis.declared import declared
    from ..analysis.options import AnalysisOptions

    return [(f, decl) for f, decl in declared(options_class or AnalysisOptions) if decl.flag]


def _parser(parse: Any) -> Any:
    """The ``type=`` of a flag: the declaration's parser, its ValueError an argparse message."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = getattr(parse, "__name__", "value")  # argparse names it in "invalid <name> value"
    return convert


def _default_text(field: Any, decl: Any) -> str:
    from ..analysis.declared import default_of

    if callable(decl.default_text):
        return decl.default_text()
    if decl.default_text is not None:  # in flag words, as the help itself
        return as_flags(decl.default_text, analysis=True, table=PLAN_FLAGS)
    value = default_of(field)
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def add_declared_option(group: Any, field: Any, decl: Any) -> None:
    """The flag of one declared option: spelling, parser, help (in flag words) and default all from ``decl``.

    A flag not given leaves its option at the library's default (argparse's default is None, False for a
    switch), so a default is declared once, in the dataclass."""
    help_text = as_flags(decl.help, analysis=True, table=PLAN_FLAGS).replace("%", "%%")
    if decl.parse is bool:
        group.add_argument(decl.flag, dest=field.name, action="store_true", help=help_text)
        return
    kwargs: dict[str, Any] = {"metavar": decl.metavar, "type": _parser(decl.parse)}
    if decl.repeatable:
        kwargs["action"] = "append"
        help_text += " (comma-separated, repeatable)"
    if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
        kwargs["required"] = True  # an option without a default (a watch's looks): the flag must be given
    else:
        help_text += f" (default: {_default_text(field, decl)})".replace("%", "%%")
    group.add_argument(decl.flag, dest=field.name, default=None, help=help_text, **kwargs)


def add_shared_option(group: Any, keyword: str, options_class: Any = None) -> None:
    """One declared flag (by its option's keyword), for a command that takes only a few of them."""
    field, decl = next((f, x) for f, x in _declarations(options_class) if f.name == keyword)
    add_declared_option(group, field, decl)


def add_analysis_options(parser: argparse.ArgumentParser, *, skip: Collection[str] = ()) -> None:
    """The flag of every declared analysis option, in its group, plus ``--drop-invalid`` (except ``skip``)."""
    groups: dict[str, Any] = {}
    for field, decl in _declarations():
        if decl.flag in skip:
            continue
        if decl.group not in groups:
            groups[decl.group] = parser.add_argument_group(decl.group)
        add_declared_option(groups[decl.group], field, decl)
    if "--drop-invalid" in skip:
        return
    if SELECTION not in groups:
        groups[SELECTION] = parser.add_argument_group(SELECTION)
    groups[SELECTION].add_argument(
        "--drop-invalid",
        action="store_true",
        help="drop bad rows (non-finite scores, duplicate rows of a score file, incomplete tasks) instead of failing; "
        "each dropped row is listed in provenance.json and counted on the console (a tracker's or log folder's seed "
        "in two runs is --reruns's choice)",
    )


def given_options(args: argparse.Namespace, options_class: Any = None) -> dict[str, Any]:
    """The declared options the flags in ``args`` set (a flag not given is left out: the library's default)."""
    values: dict[str, Any] = {}
    for field, decl in _declarations(options_class):
        value = getattr(args, field.name, None)
        if value is None or value is False:
            continue
        values[field.name] = [n for part in value for n in part] if decl.repeatable else value
        if decl.repeatable:
            values[field.name] = tuple(dict.fromkeys(values[field.name]))
    return values


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
            # a tracker's seed default is filled by its Source (SourceRequest.with_defaults), so that a {seed}
            # placeholder in --score-key can tell an explicit --seed-key (an error) from none
            default=None if refs and name == "seed" else defaults[name],
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


#: The output flags of every writing command: flag -> argparse definition (``--out``'s help is the command's).
OUTPUT_FLAGS: dict[str, dict[str, Any]] = {
    "--out": {"metavar": "DIR", "help": "write tables (CSV), provenance.json, figures and report.html here"},
    "--no-figures": {"action": "store_true", "help": "with --out, write tables only (no PNG/SVG, no HTML)"},
    "--figure-formats": {
        "default": None,  # None: not given (DEFAULT_FIGURE_FORMATS), so a list given with --no-figures is refused
        "metavar": "LIST",
        "help": f"with --out, the figure files to write: png, svg or png,svg (default: {','.join(DEFAULT_FIGURE_FORMATS)}"
        "; report.html shows the PNG; `rl-reliable report DIR --figure-formats png,svg` adds SVG copies later)",
    },
    "--force": {
        "action": "store_true",
        "help": "with --out, replace an earlier results bundle even if its files were edited since "
        "(files the tool did not write are never replaced)",
    },
    "--quiet": {"action": "store_true", "help": "no progress bar, no table on stdout"},
}
#: The output flags that act only on the folder ``--out`` writes (their help begins "with --out"): given without
#: ``--out`` they would be ignored, so they are refused (:func:`check_output_flags`). ``--no-figures`` is not among
#: them: a tracker's command publishes without ``--out`` and leaves the figures out of the run too.
WITH_OUT = ("--figure-formats", "--force")


def check_output_flags(args: argparse.Namespace) -> None:
    """Refuse output flags that cannot act: one of :data:`WITH_OUT` without ``--out``, and ``--figure-formats``
    with ``--no-figures`` (they contradict each other); a :class:`CliError` naming the flags and what to do."""
    given = [f for f in WITH_OUT if getattr(args, f[2:].replace("-", "_"), None) not in (None, False)]
    if given and not getattr(args, "out", None):
        flags = " and ".join(given)
        verb = "act" if len(given) > 1 else "acts"
        raise CliError(f"{flags} {verb} only on the folder --out writes: add --out DIR, or leave {flags} out")
    if getattr(args, "no_figures", False) and getattr(args, "figure_formats", None) is not None:
        raise CliError("--figure-formats asks for figures and --no-figures for none: give one of them")


def add_output_options(
    parser: argparse.ArgumentParser, *, out_help: str | None = None, only: Collection[str] | None = None
) -> None:
    """The output flags (:data:`OUTPUT_FLAGS`, or those of ``only``); ``out_help`` says what ``--out`` writes."""
    group = parser.add_argument_group(OUTPUT)
    for flag, kwargs in OUTPUT_FLAGS.items():
        if only is None or flag in only:
            group.add_argument(flag, **{**kwargs, **({"help": out_help} if flag == "--out" and out_help else {})})


def analysis_options(args: argparse.Namespace, *, progress: bool = False) -> Any:
    """The AnalysisOptions of parsed ``args``: the one mapping from flags to the library's options."""
    from ..analysis.declared import check_given
    from ..analysis.options import AnalysisOptions, OptionError

    given = given_options(args)
    try:
        options = AnalysisOptions(progress=progress, **given)
        check_given(options, given)  # a flag that cannot act (--curve-reps without --curves) is refused
        return options
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
    add_score_rule_option(group)
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


def add_score_rule_option(group: Any) -> None:
    """``--score-rule``: how every tracker command reads a final score from ``--score-key``."""
    group.add_argument(
        "--score-rule",
        default="last",
        metavar="RULE",
        help="how the final score is read from --score-key: last (default: its stored value), mean-last-N "
        "(mean of its last N logged values), at-budget:STEP (its value at or before STEP; runs short of it "
        "are named), max (best logged value; biased upwards, warned)",
    )


def add_force_publish_option(group: Any) -> None:
    """``--force-publish``: the same flag, meaning and default on every tracker command."""
    group.add_argument(
        "--force-publish",
        action="store_true",
        help="publish a new analysis run even if the same report content was published before "
        "(default: reuse the earlier one)",
    )


def add_reruns_option(group: Any) -> None:
    """``--reruns {refuse,latest,first}``: one seed trained more than once (declared in ``trackers/base/reruns.py``)."""
    from ..trackers.base.reruns import DEFAULT_RERUNS, RERUN_CHOICES, RERUNS_FLAG, RERUNS_HELP

    group.add_argument(RERUNS_FLAG, choices=tuple(RERUN_CHOICES), default=DEFAULT_RERUNS, help=RERUNS_HELP)


def add_retry_option(group: Any) -> None:
    """``--retry-for SECONDS``: how long a tracker command rides out an outage before it gives up."""
    group.add_argument(
        "--retry-for",
        type=float,
        default=None,
        metavar="SECONDS",
        help="retry tracker requests that failed for a transient cause (timeout, 5xx, 429 honouring "
        "Retry-After, connection) with exponential backoff and jitter for up to this long (default: 300; 0: never). "
        "Without it, a server that refuses the very first connection is reported at once (a wrong port or host); "
        "with it, a server that is still starting is waited for",
    )


def retry_policy(args: argparse.Namespace) -> Any:
    """The tracker retry policy of ``--retry-for``."""
    from ..trackers.base.retry import DEFAULT_RETRY_FOR, RetryPolicy

    given = getattr(args, "retry_for", None)
    seconds = DEFAULT_RETRY_FOR if given is None else float(given)
    if seconds < 0:
        raise CliError(f"--retry-for must be 0 or more seconds, got {seconds:g}")
    return RetryPolicy(total=seconds, wait_for_start=given is not None or bool(getattr(args, "wait", False)))


def source_kwargs(args: argparse.Namespace, options: Any, *, default_kind: str) -> dict[str, Any]:
    """Keyword arguments of ``Source.table()`` from parsed flags: the one mapping of the source flags.

    ``--hyperparameter-keys lr`` (no kind) reads ``<default_kind>.lr`` (the tracker plugin's ``config_kind``)
    into a column named ``lr``; ``config.lr`` reads that reference into a column of that name.
    """
    from ..trackers.base.reading import kind_column
    from ..trackers.base.reruns import DEFAULT_RERUNS

    extra = dict(map(kind_column(default_kind), map(str, getattr(options, "hyperparameter_keys", ()) or ())))
    curves = bool(getattr(options, "curves", False))
    flag = vars(args).get  # a Source-only plugin's command has only some of the source flags
    return {
        "algorithm": flag("algorithm_key"),
        "task": flag("task_key"),
        "seed": flag("seed_key"),
        "score": names(args.score_key),
        "include_unfinished": bool(flag("include_unfinished")),
        "on_invalid": "drop" if args.drop_invalid else "raise",
        "curve_key": flag("curve_key") if curves else None,
        "algorithms": options.only_algorithms,
        "tasks": options.only_tasks,
        "extra_fields": extra or None,
        "run_key": flag("run_key"),
        "variant": list(_joined(flag("variant_key")) or ()),
        "score_rule": args.score_rule,
        "names": name_mode(args),
        "reruns": flag("reruns") or DEFAULT_RERUNS,
    }


def selected_options(options: Any, table: Any) -> Any:
    """``options`` for a tracker table: a source that already applied ``--only-algorithms``, matching base
    names (``PPO``: every configuration) or full sweep labels (``PPO lr=0.001``), so the analysis keeps
    exactly the labels the table holds (a base name would otherwise be an unknown label)."""
    wanted = getattr(options, "only_algorithms", None)
    if not wanted or "algorithms_selected" not in table.source:  # a source that did not select: the analysis does
        return options
    have = [str(a) for a in table.algorithms]
    labels = [a for name in wanted for a in have if a == name or a.startswith(f"{name} ")]  # the user's order
    return options.replace(only_algorithms=tuple(dict.fromkeys(labels + have)))
