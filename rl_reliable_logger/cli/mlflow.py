"""``rl-reliable mlflow``: analyse the runs of MLflow experiments and publish the report to MLflow.

    rl-reliable mlflow --experiment bandits                       # convention of log_final_score
    rl-reliable mlflow --experiment A --experiment B --filter "tags.sweep = 'a'" \\
        --algorithm-key params.algo --task-key params.env --seed-key params.seed \\
        --score-key metrics.eval_return --reps 50000 --seed 0 --out results/ --publish none

``--publish``: ``new`` (a new analysis run in the first experiment; the default when one
experiment is given), a run id (publish onto that run, e.g. an MLproject parent run; never one
of the runs being analysed), or ``none`` (the default when several experiments are given).
Wiring only: selection, checks and publishing live in ``trackers/``. mlflow is imported only when
the command runs.
"""

from __future__ import annotations

import argparse
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

#: Field references read when no field flag is given: what ``log_final_score`` writes (equal to
#: ``trackers.mlflow.source.DEFAULT_REFS``, checked by a test; spelled here so ``--help`` imports nothing heavy).
DEFAULT_REFS = {
    "algorithm": "tags.rl_reliable_algorithm",
    "task": "tags.rl_reliable_task",
    "seed": "tags.rl_reliable_seed",
    "score": "metrics.rl_reliable_final_score",
}


def add_source(parser: argparse.ArgumentParser, *, curves: bool = True) -> Any:
    """The MLflow source flags (experiments, filter, field references, score rule, retries): the one set
    ``rl-reliable mlflow`` and ``rl-reliable plan mlflow`` share; ``curves=False`` leaves out ``--curve-key``. Returns the field group."""
    src = parser.add_argument_group("MLflow source")
    src.add_argument(
        "--tracking-uri",
        default=None,
        metavar="URI",
        help="tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's default sqlite:///<cwd>/mlflow.db)",
    )
    src.add_argument(
        "--experiment",
        action="append",
        required=True,
        metavar="NAME_OR_ID",
        help="experiment name or id; repeat for several experiments",
    )
    src.add_argument(
        "--filter",
        default="",
        metavar="FILTER",
        help="MLflow search filter, AND only, e.g. \"tags.sweep = 'a' and params.lr = '0.001'\"",
    )
    src.add_argument(
        "--include-unfinished",
        action="store_true",
        help="also use runs that are not FINISHED (running, failed, killed)",
    )
    if curves:
        src.add_argument(
            "--curve-key",
            default=None,
            metavar="METRIC",
            help="metric whose full history (get_metric_history) gives the learning curves; with --curves",
        )
    fields = add_field_options(
        parser,
        DEFAULT_REFS,
        what="field reference",
        metavar="REF",
        refs="tags.X, params.X, metrics.X, run.name, ...",
        run_key=False,
    )
    add_source_options(fields, config_kind="params")
    add_retry_option(src)
    return fields


def read_table(args: argparse.Namespace, options: Any) -> Any:
    """The runs selected by the flags of :func:`add_source` as a ScoreTable (mlflow imported only now).

    ``options`` supplies the analysis choices that shape the table (``curves``, ``only_algorithms``, ...);
    tracker problems are raised as RLReliableError for the caller to word.
    """
    from ..trackers.mlflow.source import MlflowSource

    source = MlflowSource(
        args.experiment, tracking_uri=args.tracking_uri, filter_string=args.filter, retry=retry_policy(args)
    )
    return source.table(**source_kwargs(args, options, default_kind="params"))


def register(subparsers: Any) -> None:
    """Add the ``mlflow`` sub-command to the ``rl-reliable`` parser."""
    parser = subparsers.add_parser(
        "mlflow",
        help="analyse MLflow runs and publish the report to MLflow",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source(parser)
    pub = parser.add_argument_group("publishing to MLflow")
    pub.add_argument(
        "--publish",
        default=None,
        metavar="new|RUN_ID|none",
        help="where to publish the report: `new` analysis run in the first experiment "
        "(default with one experiment), an existing run id (never a run being analysed), or `none` "
        "(default with several)",
    )
    add_force_publish_option(pub)
    add_analysis_options(parser)
    add_output_options(parser)
    parser.set_defaults(func=_handler)


def _publish_target(args: argparse.Namespace) -> tuple[str, str | None]:
    value = args.publish
    if value is None:
        value = "new" if len(args.experiment) == 1 else "none"
    value = str(value).strip()
    if value.lower() in ("new", "none"):
        return value.lower(), None
    if not value:
        raise CliError("--publish needs `new`, `none` or a run id")
    return "run", value


def _handler(args: argparse.Namespace) -> int:
    from ..errors import RLReliableError
    from ..trackers.base.publishing import check_not_source
    from ..trackers.mlflow.sink import MlflowSink

    mode, run_id = _publish_target(args)
    options = analysis_options(args)  # every option checked before MLflow is asked anything
    if options.curves and not args.curve_key:
        raise CliError(
            "--curves needs --curve-key METRIC: the metric logged during training whose history "
            "gives the learning curves (e.g. --curve-key normalized_reward)."
        )
    try:
        check_output(args)
        table = read_table(args, options)
        if "tracker_run_id" in table.frame:  # before any computation: never publish onto a source run
            check_not_source(run_id, table.frame["tracker_run_id"].astype(str))
    except RLReliableError as err:
        raise CliError(cli_message(err)) from None

    report = run_and_report(table, args, source=table.source, options=selected_options(options, table))

    if mode == "none":
        if args.publish is None:
            print(
                "not published to MLflow (several experiments: pass --publish new or --publish RUN_ID)", file=sys.stderr
            )
        return 0
    sink = MlflowSink(
        tracking_uri=args.tracking_uri,
        experiment=table.source["experiments"][0]["id"],
        parent_run_id=run_id,
        figures=not args.no_figures,
        force=args.force_publish,
        retry=retry_policy(args),
    )
    try:
        result = sink.publish(report, bundle=args.out or None)
    except RLReliableError as err:
        raise CliError(f"the analysis ran but publishing to MLflow failed: {cli_message(err)}") from None
    print(result.message(), file=sys.stderr)
    return 0
