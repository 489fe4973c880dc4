"""Ray Tune as a Source-only plugin (see ``trackers/base/plugin.py``): ``rl-reliable raytune EXPERIMENT_DIR``.

Each trial is a run; nothing is published back into the experiment: the results go to ``--out`` as with
``evaluate``. Light on purpose: ``rl-reliable --help`` imports this module; the reader is imported when the command runs (the
folder is read from Tune's JSON and CSV files, without Ray).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.plugin import Args, CliWiring, SourceRole, TrackerPlugin
from ..base.roles import Settings
from .keys import DEFAULT_KEYS, DEFAULT_STEP

if TYPE_CHECKING:  # pragma: no cover
    from ..base.protocols import Source
    from ..base.retry import RetryPolicy

_KEYS = {**DEFAULT_KEYS, "step": DEFAULT_STEP}

_DESCRIPTION = """\
Read a Ray Tune experiment folder (what Tuner's RunConfig(storage_path, name) wrote), one run per
trial, its config giving algorithm, task, seed and hyperparameters and its reported metric the score;
evaluate them (IQM, optimality gap, stratified-bootstrap CIs, profiles, ...), print the results and
optionally write the same results bundle as `rl-reliable evaluate --out DIR`. Nothing is written into
the experiment.

Keys are Ray's flattened names: config/algo is the trial config's algo (config/env/name a nested one).
With --hyperparameter-keys config/lr,... the tuning view picks a configuration on a seed aggregate with
intervals and split-half selection; each key is a column named without config/ (lr). Only trials Tune
terminated normally are used: ERROR, RUNNING, PENDING and PAUSED trials are left out and listed unless
--include-unfinished. The folder is read from Tune's JSON and CSV files, never from its pickles. See
docs/raytune.md.
"""

_EPILOG = """\
examples:
  rl-reliable raytune ~/ray_results/bandits --score-key eval/return --algorithm-key config/algo --out results/
  rl-reliable raytune ~/ray_results/bandits --score-key eval/return --algorithm-key config/algo \\
      --hyperparameter-keys config/explore --score-rule mean-last-2
  rl-reliable raytune ~/ray_results/bandits --score-key eval/return --curves --out results/
"""


def _column(key: str) -> str:
    """``config/lr`` -> ``lr``: the column a hyperparameter key gives (``raytune.config_name``, imported lazily)."""
    from .source import config_name

    return config_name(key)


class RayTuneCli(CliWiring):
    """The flags and help of ``rl-reliable raytune``: its own field flags (config keys and a metric)."""

    shared_fields = False
    summary = "analyse the trials of a Ray Tune experiment folder (config keys name the fields)"
    description = _DESCRIPTION
    epilog = _EPILOG
    pilot_help = "the trials of a Ray Tune experiment"
    example = "rl-reliable raytune ~/ray_results/exp --score-key eval/return --out results/"
    plan_examples = ("rl-reliable plan raytune ~/ray_results/exp --score-key eval/return --target-width 0.05",)
    race_examples = (
        "rl-reliable race raytune ~/ray_results/sweep --score-key eval/return --state race/ --looks 5 --max-runs 10 \\",
        "    --hyperparameter-keys config/lr --delta 0.05",
    )
    keyword_flags = {
        "algorithm_key=": "--algorithm-key",
        "task_key=": "--task-key",
        "seed_key=": "--seed-key",
        "step_key=": "--step-key",
        "include_unfinished=True": "--include-unfinished",
    }

    def add_source_flags(self, group: Any, *, curves: bool = True) -> None:
        group.add_argument("experiment", metavar="EXPERIMENT_DIR", help="the Tune experiment's folder")
        group.add_argument("--score-key", required=True, metavar="METRIC", help="the reported metric with the score")
        for name, what in (("algorithm", "the algorithm"), ("task", "the task"), ("seed", "the seed")):
            group.add_argument(
                f"--{name}-key",
                default=_KEYS[name],
                metavar="KEY",
                help=f"the config key with {what} (default: %(default)s)",
            )
        group.add_argument(
            "--step-key",
            default=_KEYS["step"],
            metavar="METRIC",
            help="the reported step counter: the steps of --score-rule at-budget and of --curves (default: %(default)s)",
        )
        group.add_argument(
            "--include-unfinished",
            action="store_true",
            help="also use trials that are not TERMINATED (ERROR, RUNNING, PENDING, PAUSED)",
        )

    def check_command(self, args: Args, options: Any) -> None:
        args.curve_key = args.score_key if options.curves else None  # the score's reports are the curves


class TrialRuns(SourceRole):
    """The trials of the Tune experiment folder ``experiment`` (read as data: JSON and CSV, never a pickle)."""

    def table_options(self, options: Any) -> Any:
        keys = options.hyperparameter_keys
        return options.replace(hyperparameter_keys=tuple(_column(k) for k in keys)) if keys else options

    def inputs(self, settings: Settings) -> list[str]:
        return [settings.experiment]

    def open(self, settings: Settings, retry: RetryPolicy) -> Source:
        from .source import RayTuneSource

        return RayTuneSource(settings.experiment, step_key=settings.step_key)

    def launch_name(self, key: str) -> str:
        """``config/algo`` -> ``algo`` (``config/env/name`` -> ``env.name``): the trials' config key."""
        return _column(key).replace("/", ".")

    def describe(self, source: Mapping[str, Any]) -> str:
        return str(source.get("location"))


PLUGIN = TrackerPlugin("raytune", "Ray Tune", source=TrialRuns(), cli=RayTuneCli())
