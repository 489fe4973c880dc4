"""One subcommand per tracker, built from its plugin (``trackers/<name>/plugin.py``, listed in ``trackers/registry.py``).

``rl-reliable <tracker>`` reads the runs the source flags select, evaluates them, prints the results, optionally
writes the results bundle (``--out``) and publishes the report to the tracker (when it has a sink). The plugin's
wiring (``plugin.cli``) declares its own source, command and publishing flags, and its roles open its Source
(``plugin.source``) and Sink (``plugin.sink``) from the parsed flags; the shared field,
score-rule, retry, analysis and output flags come from ``cli/options.py``. Wiring only: no tracker is named here, and each tracker's client is
imported only when its command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..trackers import registry
from .common import check_output, load_clients, run_and_report, say_warning
from .flags import CliError, cli_message
from .options import (
    add_analysis_options,
    add_field_options,
    add_force_publish_option,
    add_name_options,
    add_output_options,
    add_reruns_option,
    add_retry_option,
    add_score_rule_option,
    add_source_options,
    analysis_options,
    retry_policy,
    selected_options,
    source_kwargs,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..data.scores import ScoreTable
    from ..trackers.base.plugin import TrackerPlugin
    from ..trackers.base.protocols import Source
    from ..trackers.base.request import SourceRequest


def register(subparsers: Any) -> None:
    """Add one subcommand per registered tracker to the ``rl-reliable`` parser."""
    for plugin in registry.plugins():
        parser = subparsers.add_parser(
            plugin.name,
            help=plugin.cli.summary,
            description=plugin.cli.description,
            epilog=plugin.cli.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_source(parser, plugin)
        plugin.cli.add_command_flags(parser)
        if plugin.publishes:
            pub = parser.add_argument_group(f"publishing to {plugin.label}")
            plugin.cli.add_publish_flags(pub)
            add_force_publish_option(pub)
        add_analysis_options(parser)
        add_output_options(parser)
        parser.set_defaults(func=lambda args, plugin=plugin: handle(plugin, args))


def add_source(parser: argparse.ArgumentParser, plugin: TrackerPlugin, *, curves: bool = True) -> Any:
    """A tracker's source flags (its own, then the fields, the score rule and retries): the one set its command
    and ``rl-reliable plan <tracker>`` share; ``curves=False`` leaves out ``--curve-key``. Returns the field group
    (a plugin declaring its own field flags: its source group)."""
    src = parser.add_argument_group(f"{plugin.label} source")
    plugin.cli.add_source_flags(src, curves=curves)
    add_reruns_option(src)
    if not plugin.cli.shared_fields:  # e.g. logs read from disk: the plugin declares its own field flags
        add_score_rule_option(src)
        add_name_options(src)
        return src
    fields = add_field_options(
        parser,
        plugin.source.default_refs,
        what="field reference",
        metavar="REF",
        refs=plugin.cli.refs_help,
        run_key=False,
    )
    add_source_options(fields, config_kind=plugin.source.config_kind)
    add_retry_option(src)
    return fields


def source_request(args: argparse.Namespace, options: Any, plugin: TrackerPlugin) -> SourceRequest:
    """The SourceRequest of the parsed source flags (``options`` shapes it: curves, selection, sweep columns)."""
    from ..trackers.base.request import SourceRequest

    return SourceRequest(**source_kwargs(args, options, default_kind=plugin.source.config_kind))


def read_source_table(source: Source, request: SourceRequest) -> ScoreTable:
    """The one intake (``trackers.base.intake.read_table``): every command reads a Source's runs through it."""
    from ..trackers.base.intake import read_table as intake

    return intake(source, request)


def read_table(plugin: TrackerPlugin, args: argparse.Namespace, options: Any) -> ScoreTable:
    """The runs the source flags of :func:`add_source` select, as a ScoreTable (the tracker's warnings printed);
    tracker problems are raised as RLReliableError for the caller to word."""

    plugin.cli.check_source(args)
    load_clients(plugin)
    source = plugin.source.open(args, retry_policy(args))
    table = read_source_table(source, source_request(args, options, plugin))
    for warning in plugin.source.warnings(source):
        say_warning("skipped " + warning)  # redacted, --redact-run-names too
    return table


def handle(plugin: TrackerPlugin, args: argparse.Namespace) -> int:
    """``rl-reliable <tracker>``: check every flag, read the runs, evaluate, print, write, publish."""
    from ..errors import RLReliableError
    from ..redaction import redact

    try:
        plugin.cli.check_source(args)
        options = plugin.source.table_options(analysis_options(args))  # every option checked before the tracker
        plugin.cli.check_command(args, options)
        check_output(args, inputs=plugin.source.inputs(args))
        retry = retry_policy(args)
        load_clients(plugin)
        source = plugin.source.open(args, retry)
        plugin.source.prepare(args, source, lambda line: print(redact(line), file=sys.stderr, flush=True))
        table = read_source_table(source, source_request(args, options, plugin))
        # before any computation: a bad target is said now
        sink = plugin.sink.open(args, source, table, retry) if plugin.sink is not None else None
    except RLReliableError as err:
        raise CliError(cli_message(err)) from None
    unread = plugin.source.warnings(source)
    if unread and options.strict:  # a damaged log is a dropped run: --strict refuses to go on without it
        raise CliError(f"--strict: {redact(unread[0])}; repair or remove it, or drop --strict")
    for warning in unread:
        say_warning("skipped " + warning)  # redacted, --redact-run-names too

    report = run_and_report(table, args, source=table.source, options=selected_options(options, table))
    if sink is None:
        note = plugin.sink.unpublished(args) if plugin.sink is not None else None
        if note:
            print(note, file=sys.stderr)
        return 0
    try:
        result = sink.publish(report, bundle=args.out or None)
    except RLReliableError as err:
        raise CliError(f"the analysis ran but publishing to {plugin.label} failed: {cli_message(err)}") from None
    print(result.message(), file=sys.stderr)
    return 0
