"""``rl-reliable wandb``: analyse W&B runs (online or offline) and publish the report to W&B.

    rl-reliable wandb my-team/bandits --sweep abc123 --wait --seed 0 --out results/
    rl-reliable wandb my-team/bandits --filter '{"tags": {"$in": ["baseline"]}}' --publish group
    rl-reliable wandb --offline-dir ./wandb --publish none --out results/

Wiring only: run selection, sweep waiting and publishing live in ``trackers/wandb``; wandb is
imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import check_output, run_and_report
from .flags import CliError, cli_message
from .options import (
    add_analysis_options,
    add_field_options,
    add_force_publish_option,
    add_output_options,
    add_retry_option,
    add_source_options,
    analysis_options,
    retry_policy,
    selected_options,
    source_kwargs,
)

_DESCRIPTION = """\
Pull the runs of a W&B project (optionally one sweep and a W&B filter), or read offline runs
(wandb/offline-run-* written with WANDB_MODE=offline), group them into algorithm x task x seed
final scores, evaluate them, print the results, optionally write the same files as
`rl-reliable evaluate --out DIR`, and publish the report to W&B as a run of job type
rl-reliable-analysis attached to the sweep (or to a group) with an rl-reliable-report artifact.

With no field flags the runs must follow the convention written by
rl_reliable_logger.log_final_score(score, algorithm=..., task=..., seed=...): config
rl_reliable_algorithm / rl_reliable_task / rl_reliable_seed and summary rl_reliable_final_score.
Only finished runs are used unless --include-unfinished; the others are counted and listed in
provenance.json. Earlier rl-reliable-analysis runs are always skipped.
The API key comes from WANDB_API_KEY or `wandb login`; WANDB_BASE_URL selects a self-hosted server.

sweep post-hook (one agent):  wandb agent --count N ENTITY/PROJECT/ID && rl-reliable wandb ENTITY/PROJECT --sweep ID --wait
"""

_EPILOG = """\
examples:
  rl-reliable wandb my-team/bandits --sweep abc123 --wait --seed 0 --out results/
  rl-reliable wandb my-team/bandits --filter '{"tags": {"$in": ["baseline"]}}' --publish group
  rl-reliable wandb --offline-dir ./wandb --only-tasks Hopper-v4 --reps 10000 --publish none --out results/
  rl-reliable wandb my-team/sweeps --sweep abc123 --hyperparameter-keys config.lr --jordan --publish sweep
"""

#: Field references read when no field flag is given: what ``log_final_score`` writes (equal to
#: ``trackers.wandb.source.DEFAULT_REFS``, checked by a test; spelled here so ``--help`` imports nothing heavy).
DEFAULT_REFS = {
    "algorithm": "config.rl_reliable_algorithm",
    "task": "config.rl_reliable_task",
    "seed": "config.rl_reliable_seed",
    "score": "summary.rl_reliable_final_score",
}
#: Runs per listing request (``trackers.wandb.source.DEFAULT_PER_PAGE``, checked by a test).
DEFAULT_PER_PAGE = 200


def add_source(parser: argparse.ArgumentParser, *, curves: bool = True) -> Any:
    """The W&B source flags (project or offline folder, sweep, filter, field references, score rule, retries):
    the one set ``rl-reliable wandb`` and ``rl-reliable plan wandb`` share; ``curves=False`` leaves out
    ``--curve-key``. Returns the field group."""
    src = parser.add_argument_group("W&B source")
    src.add_argument("path", nargs="?", metavar="ENTITY/PROJECT", help="W&B project to read (online)")
    src.add_argument(
        "--offline-dir",
        metavar="DIR",
        help="read offline runs under DIR (a folder holding wandb/offline-run-*) instead of the server",
    )
    src.add_argument("--sweep", metavar="ID", help="only runs of this sweep (the analysis is attached to it)")
    src.add_argument(
        "--filter",
        metavar="JSON",
        help='W&B run filter (MongoDB style), e.g. \'{"tags": {"$in": ["baseline"]}}\' or '
        '\'{"config.env_id": "Hopper"}\' (online only)',
    )
    src.add_argument(
        "--include-unfinished",
        action="store_true",
        help="also use runs that are not finished (running, crashed, failed, killed)",
    )
    src.add_argument(
        "--stale-after",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="a run that says running but sent no heartbeat for this long is treated as crashed: not waited "
        "for (--wait), named on the console, left out like other crashed runs unless --include-unfinished (default: 600; 0: never)",
    )
    if curves:
        src.add_argument(
            "--curve-key",
            metavar="KEY",
            help="history key whose exact history gives the learning curves (with --curves), e.g. eval/return",
        )
    src.add_argument(
        "--per-page",
        type=int,
        default=DEFAULT_PER_PAGE,
        metavar="N",
        help=f"runs per listing request (default: {DEFAULT_PER_PAGE}; 1000 runs = 5 requests)",
    )
    fields = add_field_options(
        parser,
        DEFAULT_REFS,
        what="field reference",
        metavar="REF",
        refs="config.X, summary.X, tags.PREFIX, run.group, ...",
        run_key=False,
    )
    add_source_options(fields, config_kind="config")
    add_retry_option(src)
    return fields


def check_source(args: argparse.Namespace) -> dict[str, Any] | None:
    """The source flags checked before anything runs (one of ENTITY/PROJECT and --offline-dir; a JSON
    ``--filter``); returns the parsed filter."""
    if bool(args.path) == bool(args.offline_dir):
        raise CliError("give either ENTITY/PROJECT (online) or --offline-dir DIR (offline runs), not both / neither")
    return _parse_filter(args.filter)


def open_source(args: argparse.Namespace, filters: dict[str, Any] | None) -> Any:
    """The WandbSource of the flags of :func:`add_source` (wandb imported only now); tracker problems are
    RLReliableError for the caller to word."""
    from ..trackers.wandb.source import WandbSource

    policy = retry_policy(args)
    return WandbSource(
        path=args.path,
        offline_dir=args.offline_dir,
        sweep=args.sweep,
        filters=filters,
        per_page=args.per_page,
        retry=policy,
        stale_after=_stale_after(args),
    )


def register(subparsers: Any) -> None:
    """Add the ``wandb`` sub-command to the ``rl-reliable`` parser."""
    parser = subparsers.add_parser(
        "wandb",
        help="analyse W&B runs (a project, a sweep, or offline runs) and publish the report to W&B",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source(parser)
    wait = parser.add_argument_group("sweep post-hook")
    wait.add_argument(
        "--wait",
        action="store_true",
        help="first wait until the sweep is finished and none of its runs is running or pending",
    )
    wait.add_argument(
        "--wait-timeout",
        type=float,
        default=6 * 3600,
        metavar="SECONDS",
        help="give up waiting after this long (default: 21600 = 6 h)",
    )
    wait.add_argument(
        "--expect-runs",
        type=int,
        default=None,
        metavar="N",
        help="also wait until the sweep has N runs (default: the expected run count of a grid sweep). "
        "An outage during the wait is ridden out; a FAILED, CRASHED or CANCELED sweep ends it",
    )
    wait.add_argument("--poll", type=float, default=30.0, metavar="SECONDS", help="seconds between polls (default: 30)")
    pub = parser.add_argument_group("publishing to W&B")
    pub.add_argument(
        "--publish",
        choices=["sweep", "group", "none"],
        default=None,
        help="publish a new analysis run attached to the sweep, a new analysis run in --group, or nothing "
        "(default: sweep when the runs share a sweep, else group; as `rl-reliable mlflow` publishes a new run)",
    )
    pub.add_argument("--group", default="rl-reliable", help="group of the analysis run with --publish group")
    pub.add_argument(
        "--project",
        dest="publish_project",
        metavar="[ENTITY/]PROJECT",
        help="publish into this project (default: the source project)",
    )
    add_force_publish_option(pub)
    pub.add_argument(
        "--wandb-report",
        action="store_true",
        help="with --publish, also save a W&B Report (headline table, interval charts, methods, links to the "
        "source runs); online only, needs `pip install 'rl_reliable_logger[wandb-report]'`",
    )
    add_analysis_options(parser)
    add_output_options(parser)
    parser.set_defaults(func=_handler)


def _parse_filter(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError as err:
        raise CliError(
            f'--filter is not valid JSON ({err}); example: --filter \'{{"tags": {{"$in": ["baseline"]}}}}\''
        ) from None
    if not isinstance(value, dict):
        raise CliError('--filter must be a JSON object such as {"config.env_id": "Hopper"}')
    return value


def _stale_after(args: argparse.Namespace) -> float | None:
    if args.stale_after < 0:
        raise CliError(f"--stale-after must be 0 (never) or more seconds, got {args.stale_after:g}")
    return args.stale_after or None


def _handler(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..redaction import redact
    from ..trackers.wandb.sink import sink_for
    from ..trackers.wandb.sweep import wait_for_sweep

    filters = check_source(args)
    options = analysis_options(args)  # every option checked before W&B is asked anything
    if options.curves and not args.curve_key:
        raise CliError("--curves needs --curve-key KEY: the history key logged during training (e.g. eval/return)")
    if args.wait and args.offline_dir:
        raise CliError("--wait needs the W&B server (ENTITY/PROJECT --sweep ID); offline runs are already final")
    if args.wait and not args.sweep:
        raise CliError("--wait needs --sweep ID")
    try:
        check_output(args, inputs=[args.offline_dir] if args.offline_dir else ())
        source = open_source(args, filters)
        if args.wait:
            wait_for_sweep(
                args.path,
                args.sweep,
                timeout=args.wait_timeout,
                poll=args.poll,
                expect_runs=args.expect_runs,
                progress=lambda line: print(redact(line), file=sys.stderr, flush=True),
                stale_after=_stale_after(args),
            )
        table = source.table(**source_kwargs(args, options, default_kind="config"))
        sink = sink_for(
            source,
            target=args.publish,
            group=args.group,
            project=args.publish_project,
            force=args.force_publish,
            figures=not args.no_figures,
            wandb_report=args.wandb_report,
            retry=retry_policy(args),
        )
    except RLReliableError as err:
        raise CliError(cli_message(err)) from None
    if source.problems and options.strict:  # a damaged log is a dropped run: --strict refuses to go on without it
        raise CliError(f"--strict: offline run {redact(source.problems[0])}; repair or remove it, or drop --strict")
    for problem in source.problems:
        print(f"warning: skipped offline run {redact(problem)}", file=sys.stderr)  # --redact-run-names too

    report = run_and_report(table, args, source=table.source, options=selected_options(options, table))
    if sink is None:
        return 0
    try:
        result = sink.publish(report, bundle=args.out or None)
    except RLReliableError as err:
        raise CliError(f"the analysis ran but publishing to W&B failed: {cli_message(err)}") from None
    print(result.message(), file=sys.stderr)
    return 0
