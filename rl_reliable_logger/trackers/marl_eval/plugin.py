"""marl-eval's JSON as a Source-only plugin (see ``trackers/base/plugin.py``): ``rl-reliable marl-eval PATH``.

Files are read, nothing is written into them: the results go to ``--out`` as with ``evaluate``.
Light on purpose: ``rl-reliable --help`` imports this module; the reader is imported when the command runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.plugin import Args, CliWiring, SourceRole, TrackerPlugin
from ..base.roles import Settings

if TYPE_CHECKING:  # pragma: no cover
    from ..base.protocols import Source
    from ..base.retry import RetryPolicy

_DESCRIPTION = """\
Read marl-eval JSON (what Mava, Stoix and BenchMARL write with marl-eval's JsonLogger:
environment -> task -> algorithm -> seed -> step_<k> / absolute_metrics -> metric lists), one run per
seed, evaluate them (IQM, optimality gap, stratified-bootstrap CIs, profiles, ...), print the results and
optionally write the same results bundle as `rl-reliable evaluate --out DIR`. PATH is one file or a folder
of them (every *.json under it). Nothing is written into the files.

A run's score is the mean of absolute_metrics.<--metric> (--last-step: of its last step_<k> instead);
--score-rule mean-last-N / at-budget:STEP / max reads the step_<k> means at their step_count, which are
also the curves (--curves). Each run's file is a column (`file`), or with --layout the fields a pattern
over the file's path names (lr_{lr}/metrics.json), for --hyperparameter-keys. Two files with the same
seed of an algorithm and task are a duplicate seed: two configurations (--hyperparameter-keys file) or
two batches of seeds (--seeds-by-file). See docs/marl-eval.md.
"""

_EPILOG = """\
examples:
  rl-reliable marl-eval metrics.json --metric mean_episode_return --out results/
  rl-reliable marl-eval downloaded_json_data/ --metric win_rate --seeds-by-file
  rl-reliable marl-eval sweep/ --layout 'lr_{lr}/metrics.json' --hyperparameter-keys lr
"""


class MarlEvalCli(CliWiring):
    """The flags and help of ``rl-reliable marl-eval``: its own field flags (the metric, a layout, seed batches)."""

    shared_fields = False
    summary = "analyse marl-eval JSON (Mava, Stoix, BenchMARL): one run per seed"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "the runs of marl-eval JSON files"
    example = "rl-reliable marl-eval metrics.json --metric mean_episode_return --out results/"
    plan_examples = ("rl-reliable plan marl-eval metrics.json --score-key return --target-width 0.05",)
    keyword_flags = {
        "metric=": "--metric",
        "layout=": "--layout",
        "last_step=True": "--last-step",
        "seeds_by_file=True": "--seeds-by-file",
    }

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument("path", metavar="PATH", help="a marl-eval JSON file, or a folder of them")
        # `rl-reliable plan marl-eval` and `watch marl-eval` (final scores only: curves=False) have a --metric of
        # their own, the aggregate metric: there the score's metric is --score-key (on the command, either)
        flags = ("--metric", "--score-key") if curves else ("--score-key",)
        group.add_argument(
            *flags,
            dest="score_key",
            required=True,
            metavar="METRIC",
            help="the metric whose values give a run's score (e.g. mean_episode_return, return, win_rate)",
        )
        group.add_argument(
            "--last-step",
            action="store_true",
            help="score a run by its last step_<k> instead of its absolute_metrics",
        )
        group.add_argument(
            "--seeds-by-file",
            action="store_true",
            help="each file's seeds are its own (two files of seeds numbered from 0 give twice the seeds)",
        )
        group.add_argument(
            "--layout",
            default=None,
            metavar="PATTERN",
            help="fields in the JSON files' paths relative to PATH, e.g. 'lr_{lr}/metrics.json' "
            "(default: none; each run's file is its `file` column)",
        )

    def check_source(self, args: Args) -> None:
        if args.layout is not None:
            from ..base.layout import parse_layout

            parse_layout(args.layout, required=())

    def check_command(self, args: Args, options: Any) -> None:
        args.curve_key = args.score_key if options.curves else None  # the step_<k> means are the curves


class MarlEvalRuns(SourceRole):
    """The runs of the marl-eval JSON file or folder ``path`` (one run per seed)."""

    def inputs(self, settings: Settings) -> list[str]:
        return [settings.path]

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import MarlEvalSource

        return MarlEvalSource(
            settings.path, layout=settings.layout, last_step=settings.last_step, seeds_by_file=settings.seeds_by_file
        )

    def describe(self, source: Mapping[str, Any]) -> str:
        return str(source.get("location"))


PLUGIN = TrackerPlugin("marl-eval", "marl-eval", source=MarlEvalRuns(), cli=MarlEvalCli())
