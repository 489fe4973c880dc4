"""MLflow as a plugin: what the package needs to know about MLflow, declared here once (see ``trackers/base/plugin.py``):
its roles (reading runs, publishing reports, writing and pushing final scores, the watch's ``mlflow run -P`` lines,
its secrets) and its command-line wiring.

Light on purpose: ``rl-reliable --help`` imports this module; the Source, Sink and client are imported by
the methods that use them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...wording import Keyword, said
from ..base.clients import client_key
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
from .launch import PARAMS, MlflowParams
from .names import DEFAULT_REFS, LABEL, NAME

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable
    from ..base.pending import PendingScore
    from ..base.protocols import Sink, Source
    from ..base.retry import RetryPolicy

_DESCRIPTION = """\
Pull the runs of one or more MLflow experiments (names or ids), group them into algorithm x task x
seed final scores, evaluate them (IQM, optimality gap, stratified-bootstrap CIs, profiles, ...),
print the results, optionally write the same results bundle as `rl-reliable evaluate --out DIR`,
and publish the report to MLflow (a new analysis run, or an existing parent run).

With no field flags the runs must follow the convention written by
rl_reliable_logger.log_final_score(score, algorithm=..., task=..., seed=...):
tags rl_reliable_algorithm / rl_reliable_task / rl_reliable_seed and metric rl_reliable_final_score.
Only FINISHED runs are used unless --include-unfinished. Runs that have none of the fields
(e.g. MLproject parent runs) and earlier analysis runs are skipped and listed in provenance.
MLflow filters join clauses with AND only: to compare several tag values, leave them out of
--filter (grouping happens on the client) or pick them with --only-algorithms / --only-tasks.
"""

_EPILOG = """\
examples:
  rl-reliable mlflow --experiment bandits --seed 0 --out results/ --publish new
  rl-reliable mlflow --experiment A --experiment B --only-algorithms ppo,sac --reps 10000 --publish none
  rl-reliable mlflow --experiment sweep --algorithm-key params.algo --task-key params.env \\
      --seed-key params.seed --score-key metrics.eval_return --hyperparameter-keys params.lr --jordan
  rl-reliable mlflow --experiment bandits --curves --curve-key normalized_reward --out results/
"""


class MlflowCli(CliWiring):
    """The flags and help of ``rl-reliable mlflow`` (and of ``plan`` / ``watch mlflow`` and ``pending``)."""

    refs_help = "tags.X, params.X, metrics.X, run.name, ..."
    #: the client option a source takes in ``client_kwargs=`` is this command's ``--tracking-uri``
    keyword_flags = {client_key("tracking_uri").token: "--tracking-uri"}
    summary = "analyse MLflow runs and publish the report to MLflow"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "the runs of MLflow experiments"
    example = "rl-reliable mlflow --experiment my-sweep --out results/ --publish new"
    pending_note = "  rl-reliable pending DIR --push --tracking-uri http://mlflow.internal:5000\n"
    plan_examples = ("rl-reliable plan mlflow --experiment pilot --target-width 0.05 --out plan/",)
    watch_examples = ("rl-reliable watch mlflow --experiment bandits --state watch/ --looks 3 --max-runs 12 --seed 0",)
    race_examples = (
        "rl-reliable race mlflow --experiment bandits --state race/ --looks 4 --max-runs 8 \\",
        "    --hyperparameter-keys params.epsilon --delta 0.05 --seed 0",
        "until rl-reliable race mlflow --experiment bandits --state race/ --looks 4 --max-runs 8 \\",
        "        --hyperparameter-keys params.epsilon --delta 0.05; do",
        "    [ $? -eq 3 ] || exit 2",
        '    while IFS= read -r params; do eval "mlflow run . -e train --env-manager local $params"; done \\',
        f"        < race/{PARAMS}",
        "done",
    )

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument(
            "--tracking-uri",
            default=None,
            metavar="URI",
            help="tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's default sqlite:///<cwd>/mlflow.db)",
        )
        group.add_argument(
            "--experiment",
            action="append",
            required=True,
            metavar="NAME_OR_ID",
            help="experiment name or id; repeat for several experiments",
        )
        group.add_argument(
            "--filter",
            default="",
            metavar="FILTER",
            help="MLflow search filter, AND only, e.g. \"tags.sweep = 'a' and params.lr = '0.001'\"",
        )
        group.add_argument(
            "--include-unfinished",
            action="store_true",
            help="also use runs that are not FINISHED (running, failed, killed)",
        )
        if curves:
            group.add_argument(
                "--curve-key",
                default=None,
                metavar="METRIC",
                help="metric whose full history (get_metric_history) gives the learning curves; with --curves",
            )

    def add_publish_flags(self, group: Any) -> None:
        group.add_argument(
            "--publish",
            default=None,
            metavar="new|RUN_ID|none",
            help="where to publish the report: `new` analysis run in the first experiment "
            "(default with one experiment), an existing run id (never a run being analysed), or `none` "
            "(default with several)",
        )

    def add_pending_flags(self, group: Any) -> None:
        group.add_argument(
            "--tracking-uri",
            default=None,
            metavar="URI",
            help="MLflow tracking URI to push to instead of the one recorded in the files (needed when it held a secret)",
        )

    def check_command(self, args: Args, options: Any) -> None:
        publish_target(args)
        if options.curves and not args.curve_key:
            raise InputError(
                said(
                    Keyword("curves", "True"),
                    " needs ",
                    Keyword("curve_key", "METRIC"),
                    ": the metric logged during training whose history gives the learning curves (e.g. ",
                    Keyword("curve_key", "normalized_reward"),
                    ").",
                )
            )


class MlflowRuns(SourceRole):
    """The runs of MLflow experiments (``experiment``, ``tracking_uri``, ``filter``)."""

    default_refs = DEFAULT_REFS
    config_kind = "params"

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import MlflowSource

        client = {"tracking_uri": settings.tracking_uri}
        return MlflowSource(settings.experiment, filter_string=settings.filter, retry=retry, client_kwargs=client)

    def prepare(self, settings: Settings, source: Source, say: Any) -> None:
        """Before any run is read: a ``--publish RUN_ID`` run must exist, so a wrong id costs no reading or
        computing (whether it is one of the runs analysed is checked once they are read, still before computing)."""
        from .sink import parent_run

        if getattr(settings, "publish", None) is None:
            return
        mode, run_id = publish_target(settings)
        client = getattr(source, "client", None)
        if mode == "run" and run_id and client is not None:
            parent_run(client, run_id)

    def describe(self, source: Mapping[str, Any]) -> str:
        names = ", ".join(str(e.get("name")) for e in source.get("experiments") or [])
        return f"MLflow experiment(s) {names} ({source.get('tracking_uri')})"


class MlflowReports(SinkRole):
    """A new analysis run in the first experiment, or an existing parent run (``publish``); never a source run."""

    def open(self, settings: Settings, source: Source, table: ScoreTable, retry: RetryPolicy) -> Sink | None:
        from ..base.publishing import PublishOptions, check_not_source
        from .sink import MlflowSink

        mode, run_id = publish_target(settings)
        if "tracker_run_id" in table.frame:  # before any computation: never publish onto a source run
            check_not_source(run_id, table.frame["tracker_run_id"].astype(str))
        if mode == "none":
            return None
        return MlflowSink(
            tracking_uri=settings.tracking_uri,
            experiment=table.source["experiments"][0]["id"],
            parent_run_id=run_id,
            publishing=PublishOptions(force=settings.force_publish, figures=not settings.no_figures, retry=retry),
        )

    def unpublished(self, settings: Settings) -> str | None:
        if settings.publish is None:
            return "not published to MLflow (several experiments: pass --publish new or --publish RUN_ID)"
        return None


class MlflowFinalScore(FinalScoreRole):
    """``log_final_score`` on the active MLflow run, or a run given by its id."""

    detect_order = 1  # a run that is no other tracker's is an MLflow run id
    start_hint = "`mlflow.start_run()`"
    run_hint = "mlflow run id"

    def owns_run(self, run: Any) -> bool:
        return True  # an MLflow run is named by its id

    def has_active_run(self) -> bool:
        mlflow = sys.modules.get("mlflow")
        if mlflow is not None and mlflow.active_run() is not None:
            return True
        return bool(os.environ.get("MLFLOW_RUN_ID"))  # an `mlflow run` entry point that has not started its run

    def write(self, score: Any, algorithm: Any, task: Any, seed: Any, **kwargs: Any) -> None:
        from .final_score import write_final_score

        write_final_score(score, algorithm, task, seed, **kwargs)


class MlflowPending(PendingRole):
    """A pending score sent to its run, on the recorded server or ``tracking_uri``."""

    def push(self, item: PendingScore, settings: Settings, retry: RetryPolicy) -> str:
        from .final_score import push_pending

        return push_pending(item, tracking_uri=settings.tracking_uri, retry=retry)

    def location(self, run: Mapping[str, Any]) -> str:
        return str(run.get("tracking_uri"))


def publish_target(settings: Settings) -> tuple[str, str | None]:
    """``--publish`` as (``new`` | ``none`` | ``run``, run id): ``new`` with one experiment, ``none`` with several."""
    value = settings.publish
    if value is None:
        value = "new" if len(settings.experiment) == 1 else "none"
    value = str(value).strip()
    if value.lower() in ("new", "none"):
        return value.lower(), None
    if not value:
        raise InputError("--publish needs `new`, `none` or a run id")
    return "run", value


PLUGIN = TrackerPlugin(
    NAME,
    LABEL,
    source=MlflowRuns(),
    sink=MlflowReports(),
    final_score=MlflowFinalScore(),
    pending=MlflowPending(),
    launch=MlflowParams(),
    redaction=Redaction(
        secret_variables=("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN", "MLFLOW_TRACKING_CLIENT_CERT_PATH"),
        client_modules=("mlflow",),
    ),
    cli=MlflowCli(),
)
