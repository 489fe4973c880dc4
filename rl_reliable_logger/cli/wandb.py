"""``rl-reliable wandb``: analyse W&B runs (online or offline) and publish the report to W&B.

    rl-reliable wandb my-team/bandits --sweep abc123 --wait --seed 0 --out results/
    rl-reliable wandb my-team/bandits --filter '{"tags": {"$in": ["baseline"]}}' --publish group
    rl-reliable wandb --offline-dir ./wandb --publish none --out results/

wandb is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ScoreTableError, TrackerError
from ..trackers.base.records import DEFAULT_KEYS, records_to_table
from ..trackers.wandb import adapter as wb
from .common import CliError, add_evaluate_options, run_and_report

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
    defaults = {
        "algorithm": f"config.{DEFAULT_KEYS['algorithm']}",
        "task": f"config.{DEFAULT_KEYS['task']}",
        "seed": f"config.{DEFAULT_KEYS['seed']}",
        "score": f"summary.{DEFAULT_KEYS['score']}",
    }
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
        "--curve-key",
        metavar="KEY",
        help="history key whose exact history gives the learning curves (with --curves), e.g. eval/return",
    )
    src.add_argument(
        "--per-page",
        type=int,
        default=200,
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


def _common(values: list[Any]) -> Any:
    """The value every run shares (None when they differ or some run has none)."""
    distinct = {v or None for v in values}
    return distinct.pop() if len(distinct) == 1 else None


def _handler(args: argparse.Namespace) -> int:
    if bool(args.path) == bool(args.offline_dir):
        raise CliError("give either ENTITY/PROJECT (online) or --offline-dir DIR (offline runs), not both / neither")
    filters = _parse_filter(args.filter)
    if args.curves and not args.curve_key:
        raise CliError("--curves needs --curve-key KEY: the history key logged during training (e.g. eval/return)")
    if args.per_page < 1:
        raise CliError("--per-page must be at least 1")
    history_keys = [args.curve_key] if args.curves else None
    source: dict[str, Any] = {}
    try:
        if args.offline_dir:
            if args.wait:
                raise CliError(
                    "--wait needs the W&B server (ENTITY/PROJECT --sweep ID); offline runs are already final"
                )
            if filters:
                raise CliError(
                    "--filter is a server-side W&B filter; with --offline-dir select runs with "
                    "--sweep or the field flags instead"
                )
            records = wb.read_offline_runs(args.offline_dir, history_keys=history_keys)
            problems = [str(p) for p in records.problems]
            for p in problems:
                print(f"warning: skipped offline run {p}", file=sys.stderr)
            records = list(records)
            if args.sweep:
                records = [r for r in records if r.attrs.get("sweep") == args.sweep]
            source = {
                "kind": "wandb-offline",
                "location": str(Path(args.offline_dir).absolute()),
                "sweep": args.sweep,
                "offline_problems": problems,
            }
        else:
            if args.wait:
                if not args.sweep:
                    raise CliError("--wait needs --sweep ID")
                wb.wait_for_sweep(
                    args.path,
                    args.sweep,
                    timeout=args.wait_timeout,
                    poll=args.poll,
                    progress=lambda line: print(line, file=sys.stderr, flush=True),
                )
            records = wb.load_wandb_runs(
                args.path, sweep=args.sweep, filters=filters, per_page=args.per_page, history_keys=history_keys
            )
            source = {
                "kind": "wandb",
                "location": args.path,
                "sweep": args.sweep,
                "filters": filters,
                "per_page": args.per_page,
            }
    except TrackerError as err:
        raise CliError(str(err)) from None

    analysis = [r.run_id for r in records if r.attrs.get("job_type") == wb.ANALYSIS_JOB_TYPE]
    records = [r for r in records if r.attrs.get("job_type") != wb.ANALYSIS_JOB_TYPE]
    source["skipped_analysis_runs"] = analysis
    try:
        table = records_to_table(
            records,
            algorithm=args.algorithm_key,
            task=args.task_key,
            seed=args.seed_key,
            score=args.score_key,
            include_unfinished=args.include_unfinished,
            on_invalid="drop" if args.drop_invalid else "raise",
            history_key=args.curve_key if args.curves else None,
            source=source,
        )
    except ScoreTableError as err:
        raise CliError(str(err)) from None
    excluded = table.source.get("excluded_summary")
    if excluded:
        print(
            "left out unfinished runs: "
            + ", ".join(f"{n} {s}" for s, n in excluded.items())
            + " (listed in provenance; --include-unfinished to use them)",
            file=sys.stderr,
        )

    report = run_and_report(table, args, source=table.source)
    _publish(report, args, records)
    return 0


def _publish(report: Any, args: argparse.Namespace, records: list[Any]) -> None:
    sweep = args.sweep or _common([r.attrs.get("sweep") for r in records])
    target = args.publish or ("sweep" if sweep else "none")
    if target == "none":
        if args.publish is None:
            print(
                "not published to W&B (no sweep: pass --publish group, or --publish sweep with --sweep ID)",
                file=sys.stderr,
            )
        return
    if target == "sweep" and not sweep:
        raise CliError("--publish sweep needs --sweep ID (the runs do not share one sweep); or use --publish group")
    if args.publish_project:
        entity, project = wb.split_path(args.publish_project)
    elif args.offline_dir:
        entity = _common([r.attrs.get("entity") for r in records])
        project = _common([r.attrs.get("project") for r in records])
        if not project:
            raise CliError(
                "the offline runs come from several projects (or none is recorded); "
                "say where to publish with --project PROJECT"
            )
    else:
        entity, project = wb.split_path(args.path)
    kwargs: dict[str, Any] = {
        "project": project,
        "entity": entity,
        "force": args.force_publish,
        "figures": not args.no_figures,
        "files_dir": args.out,
    }
    if target == "sweep":
        kwargs["sweep"] = sweep
    else:
        kwargs["group"] = args.group
    if args.offline_dir:
        # the analysis run goes next to the source runs, to be uploaded with them by `wandb sync`
        root = Path(args.offline_dir).absolute()
        if root.is_file():
            root = root.parent
        if root.name.startswith(("offline-run-", "run-")):
            root = root.parent
        kwargs.update(mode="offline", dir=str(root.parent if root.name in ("wandb", ".wandb") else root))
    try:
        where = wb.publish_wandb(report, **kwargs)
    except TrackerError as err:
        raise CliError(f"the analysis ran but publishing to W&B failed: {err}") from None
    if getattr(where, "skipped", False):
        print(f"already published to W&B with the same content, nothing new logged: {where}", file=sys.stderr)
    else:
        print(f"published to W&B: {where}", file=sys.stderr)
