"""W&B as a plugin: what the package needs to know about W&B, declared here once (see ``trackers/base/plugin.py``):
its roles (reading runs, publishing reports, writing and pushing final scores, the watch's sweep grid, its secrets)
and its command-line wiring.

Light on purpose: ``rl-reliable --help`` imports this module; the Source, Sink, sweep waiting and client are
imported by the methods that use them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ..base.plugin import (
    Args,
    CliWiring,
    FinalScoreRole,
    PendingRole,
    Redaction,
    SinkRole,
    SourceRole,
    TrackerPlugin,
)
from ..base.roles import Settings
from .launch import SweepGrid
from .names import API_KEY_PATTERN, DEFAULT_PER_PAGE, DEFAULT_REFS, LABEL, NAME

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from ...data.scores import ScoreTable
    from ..base.pending import PendingScore
    from ..base.protocols import Sink, Source
    from ..base.retry import RetryPolicy

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

_PENDING_NOTE = """\
W&B files are sent with the W&B key of the environment (WANDB_API_KEY / wandb login), only when
WANDB_BASE_URL names the server recorded in the file.
"""


class WandbCli(CliWiring):
    """The flags and help of ``rl-reliable wandb`` (and of ``plan`` / ``watch wandb`` and ``pending``)."""

    refs_help = "config.X, summary.X, tags.PREFIX, run.group, ..."
    summary = "analyse W&B runs (a project, a sweep, or offline runs) and publish the report to W&B"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "W&B runs: a project, a sweep, or offline runs"
    keyword_flags = {"wandb_report=True": "--wandb-report"}
    example = "rl-reliable wandb my-team/my-project --sweep abc123 --wait --publish sweep"
    plan_examples = (
        "rl-reliable plan wandb my-team/pilot --sweep abc123 --compare PPO,SAC --out plan/",
        "rl-reliable plan wandb --offline-dir ./wandb --metric mean --target-width 0.5",
    )
    watch_examples = (
        "rl-reliable watch wandb ENTITY/PROJECT --sweep SWEEP_ID --wait --state watch/ --looks 3 --max-runs 12",
    )
    pending_note = _PENDING_NOTE

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument("path", nargs="?", metavar="ENTITY/PROJECT", help="W&B project to read (online)")
        group.add_argument(
            "--offline-dir",
            metavar="DIR",
            help="read offline runs under DIR (a folder holding wandb/offline-run-*) instead of the server",
        )
        group.add_argument("--sweep", metavar="ID", help="only runs of this sweep (the analysis is attached to it)")
        group.add_argument(
            "--filter",
            metavar="JSON",
            help='W&B run filter (MongoDB style), e.g. \'{"tags": {"$in": ["baseline"]}}\' or '
            '\'{"config.env_id": "Hopper"}\' (online only)',
        )
        group.add_argument(
            "--include-unfinished",
            action="store_true",
            help="also use runs that are not finished (running, crashed, failed, killed)",
        )
        group.add_argument(
            "--stale-after",
            type=float,
            default=600.0,
            metavar="SECONDS",
            help="a run that says running but sent no heartbeat for this long is treated as crashed: not waited "
            "for (--wait), named on the console, left out like other crashed runs unless --include-unfinished (default: 600; 0: never)",
        )
        if curves:
            group.add_argument(
                "--curve-key",
                metavar="KEY",
                help="history key whose exact history gives the learning curves (with --curves), e.g. eval/return",
            )
        group.add_argument(
            "--per-page",
            type=int,
            default=DEFAULT_PER_PAGE,
            metavar="N",
            help=f"runs per listing request (default: {DEFAULT_PER_PAGE}; 1000 runs = 5 requests)",
        )

    def add_command_flags(self, parser: argparse.ArgumentParser) -> None:
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
        wait.add_argument(
            "--poll", type=float, default=30.0, metavar="SECONDS", help="seconds between polls (default: 30)"
        )

    def add_publish_flags(self, group: Any) -> None:
        group.add_argument(
            "--publish",
            choices=["sweep", "group", "none"],
            default=None,
            help="publish a new analysis run attached to the sweep, a new analysis run in --group, or nothing "
            "(default: sweep when the runs share a sweep, else group)",
        )
        group.add_argument("--group", default="rl-reliable", help="group of the analysis run with --publish group")
        group.add_argument(
            "--project",
            dest="publish_project",
            metavar="[ENTITY/]PROJECT",
            help="publish into this project (default: the source project)",
        )
        group.add_argument(
            "--wandb-report",
            action="store_true",
            help="with --publish, also save a W&B Report (headline table, interval charts, methods, links to the "
            "source runs); online only, needs `pip install 'rl_reliable_logger[wandb-report]'`",
        )

    def check_source(self, args: Args) -> None:
        if bool(args.path) == bool(args.offline_dir):
            raise InputError(
                "give either ENTITY/PROJECT (online) or --offline-dir DIR (offline runs), not both / neither"
            )
        _parse_filter(args.filter)

    def check_command(self, args: Args, options: Any) -> None:
        if options.curves and not args.curve_key:
            raise InputError(
                "--curves needs --curve-key KEY: the history key logged during training (e.g. eval/return)"
            )
        if args.wait and args.offline_dir:
            raise InputError("--wait needs the W&B server (ENTITY/PROJECT --sweep ID); offline runs are already final")
        if args.wait and not args.sweep:
            raise InputError("--wait needs --sweep ID")


class WandbRuns(SourceRole):
    """The runs of a W&B project or sweep (``path``, ``sweep``, ``filter``), or offline runs (``offline_dir``)."""

    default_refs = DEFAULT_REFS
    config_kind = "config"

    def inputs(self, settings: Settings) -> list[str]:
        return [settings.offline_dir] if settings.offline_dir else []

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import WandbSource

        return WandbSource(
            path=settings.path,
            offline_dir=settings.offline_dir,
            sweep=settings.sweep,
            filters=_parse_filter(settings.filter),
            retry=retry,
            stale_after=_stale_after(settings),
            client_kwargs={"per_page": settings.per_page},
        )

    def prepare(self, settings: Settings, source: Source, say: Callable[[str], None]) -> None:
        if not getattr(settings, "wait", False):
            return
        from .sweep import wait_for_sweep

        wait_for_sweep(
            settings.path,
            settings.sweep,
            timeout=settings.wait_timeout,
            poll=settings.poll,
            expect_runs=settings.expect_runs,
            progress=say,
            stale_after=_stale_after(settings),
        )

    def warnings(self, source: Source) -> list[str]:
        return [f"offline run {problem}" for problem in getattr(source, "problems", ())]

    def describe(self, source: Mapping[str, Any]) -> str:
        offline = source.get("kind") == "wandb-offline"
        sweep = f", sweep {source['sweep']}" if source.get("sweep") else ""
        return f"W&B {'offline runs in ' if offline else 'project '}{source.get('location')}{sweep}"


class WandbReports(SinkRole):
    """A new analysis run attached to the sweep or a group (``publish``, ``group``, ``project``, ``wandb_report``)."""

    def open(self, settings: Settings, source: Source, table: ScoreTable, retry: RetryPolicy) -> Sink | None:
        from .sink import sink_for
        from .source import WandbSource

        assert isinstance(source, WandbSource)
        return sink_for(
            source,
            target=settings.publish,
            group=settings.group,
            project=settings.publish_project,
            force=settings.force_publish,
            figures=not settings.no_figures,
            wandb_report=settings.wandb_report,
            retry=retry,
        )


class WandbFinalScore(FinalScoreRole):
    """``log_final_score`` on the active W&B run, or a run object given."""

    detect_order = 0
    start_hint = "`wandb.init(...)`"
    run_hint = "wandb run"

    def owns_run(self, run: Any) -> bool:
        return type(run).__module__.startswith("wandb")

    def has_active_run(self) -> bool:
        wandb = sys.modules.get("wandb")
        return wandb is not None and getattr(wandb, "run", None) is not None

    def write(self, score: Any, algorithm: Any, task: Any, seed: Any, **kwargs: Any) -> None:
        from .final_score import write_final_score

        write_final_score(score, algorithm, task, seed, **kwargs)


class WandbPending(PendingRole):
    """A pending score sent to its run with the environment's W&B key, on the recorded server only."""

    def push(self, item: PendingScore, settings: Settings, retry: RetryPolicy) -> str:
        from .final_score import push_pending

        return push_pending(item, retry=retry)

    def location(self, run: Mapping[str, Any]) -> str:
        return f"{run.get('entity')}/{run.get('project')} ({run.get('base_url')})"


def _parse_filter(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError as err:
        raise InputError(
            f'--filter is not valid JSON ({err}); example: --filter \'{{"tags": {{"$in": ["baseline"]}}}}\''
        ) from None
    if not isinstance(value, dict):
        raise InputError('--filter must be a JSON object such as {"config.env_id": "Hopper"}')
    return value


def _stale_after(settings: Settings) -> float | None:
    if settings.stale_after < 0:
        raise InputError(f"--stale-after must be 0 (never) or more seconds, got {settings.stale_after:g}")
    return settings.stale_after or None


PLUGIN = TrackerPlugin(
    NAME,
    LABEL,
    source=WandbRuns(),
    sink=WandbReports(),
    final_score=WandbFinalScore(),
    pending=WandbPending(),
    launch=SweepGrid(),
    redaction=Redaction(
        secret_variables=("WANDB_API_KEY",), secret_patterns=(API_KEY_PATTERN,), client_modules=("wandb",)
    ),
    cli=WandbCli(),
)
