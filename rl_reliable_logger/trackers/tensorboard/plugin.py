"""TensorBoard as a Source-only plugin (see ``trackers/base/plugin.py``): ``rl-reliable tensorboard LOGDIR``.

Its roles: a source only (no sink, final-score writer, pending push or launch format); its wiring declares its own
field flags.

Event files are read, nothing is published back into them: the results go to ``--out`` as with ``evaluate``.
Light on purpose: ``rl-reliable --help`` imports this module; the reader is imported when the command runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.plugin import Args, CliWiring, SourceRole, TrackerPlugin
from ..base.roles import Settings
from .layout import DEFAULT_LAYOUT

if TYPE_CHECKING:  # pragma: no cover
    from ..base.protocols import Source
    from ..base.retry import RetryPolicy

_DESCRIPTION = """\
Read the TensorBoard event files under LOGDIR (written by tensorboardX, torch.utils.tensorboard,
TensorFlow, Stable-Baselines3, CleanRL, RLlib, ...), one run per folder holding event files, group them
into algorithm x task x seed final scores, evaluate them (IQM, optimality gap, stratified-bootstrap CIs,
profiles, ...), print the results and optionally write the same results bundle as
`rl-reliable evaluate --out DIR`. Nothing is written into the logs.

--layout names the fields in each run folder's path relative to LOGDIR: {algorithm}, {task} and
{seed}; any other {name} is part of a run's configuration: name it with --hyperparameter-keys to
analyse its values apart (two folders of one algorithm, task and seed are otherwise an error); '*' is
any text within a folder name, read as nothing (skip Stable-Baselines3's PPO_1 run counter with
'{algorithm}/{task}/seed_{seed}/*', CleanRL's time stamp with '{task}__{algorithm}__{seed}__*'). Folders
with event files that do not fit the layout are skipped and listed; a damaged or truncated event file
is named (--drop-invalid leaves its run out). Scores are the values as TensorBoard stores them
(usually 32-bit floats). See docs/tensorboard.md.
"""

_EPILOG = """\
examples:
  rl-reliable tensorboard runs/ --score-key eval/return --out results/
  rl-reliable tensorboard runs/ --layout '{algorithm}/{task}/lr_{lr}/seed_{seed}' \\
      --score-key eval/return --score-rule mean-last-5 --hyperparameter-keys lr
  rl-reliable tensorboard runs/ --score-key eval/return --curves --curve-key eval/return --out results/
  rl-reliable tensorboard logs/ --layout '{algorithm}/{task}/seed_{seed}/*' --score-key rollout/ep_rew_mean
                                                 # Stable-Baselines3 (tensorboard_log=f"logs/{algo}/{env}/seed_{seed}")
  rl-reliable tensorboard runs/ --layout '{task}__{algorithm}__{seed}__*' --score-key charts/episodic_return
                                                 # CleanRL (runs/{env_id}__{exp_name}__{seed}__{time})
"""


class TensorBoardCli(CliWiring):
    """The flags and help of ``rl-reliable tensorboard``: its own field flags (a layout pattern and a tag)."""

    shared_fields = False
    summary = "analyse TensorBoard event files (one run per folder, fields from a layout pattern)"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "the runs of a TensorBoard log folder"
    example = "rl-reliable tensorboard runs/ --score-key eval/return --out results/"
    plan_examples = ("rl-reliable plan tensorboard runs/ --score-key eval/return --target-width 0.05",)
    keyword_flags = {"layout=": "--layout", "score_key=": "--score-key"}

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument("logdir", metavar="LOGDIR", help="the log folder (run folders with event files under it)")
        group.add_argument(
            "--layout",
            default=DEFAULT_LAYOUT,
            metavar="PATTERN",
            help="the run folders' paths relative to LOGDIR, with {algorithm}, {task}, {seed} and any "
            "{hyperparameter} fields; '*' skips text within a folder name (default: %(default)s)",
        )
        group.add_argument("--score-key", required=True, metavar="TAG", help="the scalar tag with the score")
        if curves:
            group.add_argument(
                "--curve-key",
                default=None,
                metavar="TAG",
                help="the scalar tag whose logged points are the learning curves, with --curves "
                "(default: the --score-key tag)",
            )

    def check_source(self, args: Args) -> None:
        from .layout import parse_layout

        parse_layout(args.layout)

    def check_command(self, args: Args, options: Any) -> None:
        if options.curves and not args.curve_key:
            args.curve_key = args.score_key  # the score tag's points are the curves


class TensorBoardRuns(SourceRole):
    """The run folders under ``logdir`` whose paths fit ``layout``."""

    def inputs(self, settings: Settings) -> list[str]:
        return [settings.logdir]

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import TensorBoardSource

        return TensorBoardSource(settings.logdir, layout=settings.layout)

    def describe(self, source: Mapping[str, Any]) -> str:
        return str(source.get("location"))


PLUGIN = TrackerPlugin("tensorboard", "TensorBoard", source=TensorBoardRuns(), cli=TensorBoardCli())
