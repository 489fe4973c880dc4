"""Stable-Baselines3 as a Source-only plugin (see ``trackers/base/plugin.py``): ``rl-reliable sb3 LOGDIR``.

Log files are read, nothing is written into them: the results go to ``--out`` as with ``evaluate``.
Light on purpose: ``rl-reliable --help`` imports this module; the reader is imported when the command runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.plugin import Args, CliWiring, SourceRole, TrackerPlugin
from ..base.roles import Settings
from .keys import DEFAULT_LAYOUT, QUANTITIES

if TYPE_CHECKING:  # pragma: no cover
    from ..base.protocols import Source
    from ..base.retry import RetryPolicy


_DESCRIPTION = """\
Read the Stable-Baselines3 logs under LOGDIR, one run per folder holding an evaluations.npz
(EvalCallback(log_path=...)) or a monitor.csv (Monitor), group them into algorithm x task x seed
final scores, evaluate them (IQM, optimality gap, stratified-bootstrap CIs, profiles, ...), print the
results and optionally write the same results bundle as `rl-reliable evaluate --out DIR`. Nothing is
written into the logs; .npz files are read without unpickling anything.

A run's score is the mean return of its last evaluation in evaluations.npz (--score-key success: the
share of successful evaluation episodes, where the environment reports info["is_success"]; length: the
mean episode length); --score-rule mean-last-N / at-budget:STEP / max reads all evaluations. A run
folder without evaluations.npz is scored from its monitor.csv training episodes (the mean of the last
100, SB3's ep_rew_mean window) and the console names it. --layout names the fields in each run folder's
path relative to LOGDIR ({algorithm}, {task}, {seed}; other {name} fields are hyperparameters). Where
runs log successes, the columns successes and episodes hold the counts behind each score (success-rate
intervals: --successes successes --episodes episodes). See docs/sb3.md.
"""

_EPILOG = """\
examples:
  rl-reliable sb3 logs/ --out results/                                   # rl-zoo: logs/ppo/CartPole-v1_1
  rl-reliable sb3 runs/ --layout '{algorithm}_{task}_{seed}' --score-rule mean-last-3
  rl-reliable sb3 logs/ --curves --out results/
"""


class SB3Cli(CliWiring):
    """The flags and help of ``rl-reliable sb3``: its own field flags (a layout pattern and the quantity scored)."""

    shared_fields = False
    summary = "analyse Stable-Baselines3 logs (evaluations.npz, monitor.csv; fields from a layout pattern)"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "the runs of a Stable-Baselines3 log folder"
    example = "rl-reliable sb3 logs/ --layout '{algorithm}/{task}_{seed}' --out results/"
    plan_examples = ("rl-reliable plan sb3 logs/ --target-width 0.05",)
    keyword_flags = {"layout=": "--layout", "score_key=": "--score-key"}

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument("logdir", metavar="LOGDIR", help="the log folder (run folders under it)")
        group.add_argument(
            "--layout",
            default=DEFAULT_LAYOUT,
            metavar="PATTERN",
            help="the run folders' paths relative to LOGDIR, with {algorithm}, {task}, {seed} and any "
            "{hyperparameter} fields (default: %(default)s, rl-baselines3-zoo's)",
        )
        group.add_argument(
            "--score-key",
            default="return",
            choices=QUANTITIES,
            help="what a run's evaluations give its score: the mean episode return, the share of successful "
            "episodes, or the mean episode length (default: %(default)s)",
        )

    def check_source(self, args: Args) -> None:
        from ..base.layout import parse_layout

        parse_layout(args.layout)

    def check_command(self, args: Args, options: Any) -> None:
        args.curve_key = args.score_key if options.curves else None  # the evaluations are the curves


class SB3Runs(SourceRole):
    """The run folders under ``logdir`` whose paths fit ``layout`` (evaluations.npz, else monitor.csv)."""

    def inputs(self, settings: Settings) -> list[str]:
        return [settings.logdir]

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import SB3Source

        return SB3Source(settings.logdir, layout=settings.layout)

    def describe(self, source: Mapping[str, Any]) -> str:
        return str(source.get("location"))


PLUGIN = TrackerPlugin("sb3", "Stable-Baselines3", source=SB3Runs(), cli=SB3Cli())
