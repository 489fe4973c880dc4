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

from ..errors import RLReliableError
from ..render.bundle import check_output_folder
from ..trackers.wandb.sink import sink_for
from ..trackers.wandb.source import DEFAULT_PER_PAGE, DEFAULT_REFS, WandbSource
from ..trackers.wandb.sweep import wait_for_sweep
from .common import CliError, add_evaluate_options, run_and_report
from .flags import as_flags

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


def register(subparsers: Any) -> None:
    """Add the ``wandb`` sub-command to the ``rl-reliable`` parser."""
    defaults = DEFAULT_REFS
    parser = subparsers.add_parser(
        "wandb",
        help="analyse W&B runs (a project, a sweep, or offline runs) and publish the report to W&B",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    for name in ("algorithm", "task", "seed", "score"):
        src.add_argument(
            f"--{name}-key",
            default=defaults[name],
            metavar="REF",
            help=f"field reference of the {name} (config.X, summary.X, tags.PREFIX, run.group, ...; "
            f"default {defaults[name]})",
        )
    src.add_argument(
        "--include-unfinished",
        action="store_true",
        help="also use runs that are not finished (running, crashed, failed, killed)",
    )
    src.add_argument(
        "--only-algorithms",
        action="append",
        metavar="A,B",
        help="keep only these algorithm values (client-side)",
    )
    src.add_argument("--only-tasks", action="append", metavar="T1,T2", help="keep only these task values")
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
        help="runs per listing request (default: 200; 1000 runs = 5 requests)",
    )
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
    wait.add_argument("--poll", type=float, default=30.0, metavar="SECONDS", help="seconds between polls (default: 30)")
    pub = parser.add_argument_group("publishing to W&B")
    pub.add_argument(
        "--publish",
        choices=["sweep", "group", "none"],
        default=None,
        help="publish a run attached to the sweep, a run in --group, or nothing "
        "(default: sweep when a sweep is known, else none)",
    )
    pub.add_argument("--group", default="rl-reliable", help="group of the analysis run with --publish group")
    pub.add_argument(
        "--project",
        dest="publish_project",
        metavar="[ENTITY/]PROJECT",
        help="publish into this project (default: the source project)",
    )
    pub.add_argument(
        "--force-publish", action="store_true", help="publish even if the same report content was published before"
    )
    add_evaluate_options(parser)
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


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    out = [part.strip() for value in values for part in value.split(",") if part.strip()]
    return out or None


def _handler(args: argparse.Namespace) -> int:
    if bool(args.path) == bool(args.offline_dir):
        raise CliError("give either ENTITY/PROJECT (online) or --offline-dir DIR (offline runs), not both / neither")
    filters = _parse_filter(args.filter)
    if args.curves and not args.curve_key:
        raise CliError("--curves needs --curve-key KEY: the history key logged during training (e.g. eval/return)")
    if args.wait and args.offline_dir:
        raise CliError("--wait needs the W&B server (ENTITY/PROJECT --sweep ID); offline runs are already final")
    if args.wait and not args.sweep:
        raise CliError("--wait needs --sweep ID")
    try:
        if args.out:
            check_output_folder(args.out, inputs=[args.offline_dir] if args.offline_dir else (), force=args.force)
        source = WandbSource(
            path=args.path, offline_dir=args.offline_dir, sweep=args.sweep, filters=filters, per_page=args.per_page
        )
        if args.wait:
            wait_for_sweep(
                args.path,
                args.sweep,
                timeout=args.wait_timeout,
                poll=args.poll,
                progress=lambda line: print(line, file=sys.stderr, flush=True),
            )
        table = source.table(
            algorithm=args.algorithm_key,
            task=args.task_key,
            seed=args.seed_key,
            score=args.score_key,
            include_unfinished=args.include_unfinished,
            on_invalid="drop" if args.drop_invalid else "raise",
            curve_key=args.curve_key if args.curves else None,
            algorithms=_split(args.only_algorithms),
            tasks=_split(args.only_tasks),
        )
        sink = sink_for(
            source,
            target=args.publish,
            group=args.group,
            project=args.publish_project,
            force=args.force_publish,
            figures=not args.no_figures,
        )
    except RLReliableError as err:
        raise CliError(as_flags(str(err))) from None
    for problem in source.problems:
        print(f"warning: skipped offline run {problem}", file=sys.stderr)
    if args.quiet:
        for warning in table.warnings:
            print(f"warning: {as_flags(warning)}", file=sys.stderr)

    report = run_and_report(table, args, source=table.source)
    if sink is None:
        if args.publish is None:
            print(
                "not published to W&B (no sweep: pass --publish group, or --publish sweep with --sweep ID)",
                file=sys.stderr,
            )
        return 0
    try:
        result = sink.publish(report, bundle=args.out or None)
    except RLReliableError as err:
        raise CliError(f"the analysis ran but publishing to W&B failed: {as_flags(str(err))}") from None
    print(result.message(), file=sys.stderr)
    return 0
