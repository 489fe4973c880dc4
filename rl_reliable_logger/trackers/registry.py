"""The trackers the package knows: one line per tracker, its plugin (``trackers/<name>/plugin.py``).

Everything else asks this registry: the command line builds one subcommand per plugin (``cli/trackers.py``),
``plan`` reads a pilot through it, ``log_final_score`` and ``rl-reliable pending`` dispatch on it, a watch writes
each tracker's launch format (``looks/launch_formats.py``, filled from here) and the redaction of every message
gets each tracker's secrets from it. Adding a tracker is a subpackage with a
``plugin.py`` and one line in :data:`PLUGINS` (or :func:`register` for a plugin outside the package); see
docs/architecture.md.
"""

from __future__ import annotations

from ..looks.launch_formats import add_format, remove_format
from ..redaction import add_secret_rules
from .base.plugin import TrackerPlugin
from .marl_eval.plugin import PLUGIN as MARL_EVAL
from .mlflow.plugin import PLUGIN as MLFLOW
from .raytune.plugin import PLUGIN as RAYTUNE
from .sb3.plugin import PLUGIN as SB3
from .tensorboard.plugin import PLUGIN as TENSORBOARD
from .wandb.plugin import PLUGIN as WANDB

#: Every tracker, in the order of ``rl-reliable --help``.
PLUGINS: list[TrackerPlugin] = [MLFLOW, WANDB, TENSORBOARD, RAYTUNE, SB3, MARL_EVAL]


def register(plugin: TrackerPlugin) -> TrackerPlugin:
    """Add ``plugin`` (or replace the one of the same name); its secrets are redacted from now on."""
    if not plugin.name or not plugin.name.replace("-", "_").isidentifier() or plugin.name.startswith("-"):
        raise ValueError(f"a tracker plugin needs a name of letters, digits, _ and -, got {plugin.name!r}")
    PLUGINS[:] = [p for p in PLUGINS if p.name != plugin.name] + [plugin]
    _adopt(plugin)
    return plugin


def _adopt(plugin: TrackerPlugin) -> None:
    """What a plugin contributes beyond its entry: its secrets to redaction, its launch format to watch."""
    add_secret_rules(plugin.redaction.secret_variables, plugin.redaction.secret_patterns)
    if plugin.launch is not None:
        add_format(plugin.name, plugin.launch)
    else:
        remove_format(plugin.name)


def unregister(name: str) -> None:
    """Remove the plugin called ``name`` (for tests that register one of their own)."""
    PLUGINS[:] = [p for p in PLUGINS if p.name != name]
    remove_format(name)


def plugins() -> tuple[TrackerPlugin, ...]:
    """Every registered tracker, in help order."""
    return tuple(PLUGINS)


def publishing() -> tuple[TrackerPlugin, ...]:
    """The trackers that take reports (a sink; not the Source-only ones), in help order."""
    return tuple(p for p in PLUGINS if p.publishes)


def final_score_writers() -> tuple[TrackerPlugin, ...]:
    """The trackers ``log_final_score`` writes to (a final-score role), in help order."""
    return tuple(p for p in PLUGINS if p.final_score is not None)


def pending_pushers() -> tuple[TrackerPlugin, ...]:
    """The trackers whose pending scores ``rl-reliable pending --push`` sends (a pending role), in help order."""
    return tuple(p for p in PLUGINS if p.pending is not None)


def get(name: str) -> TrackerPlugin:
    """The plugin called ``name``; a KeyError names the known ones."""
    for plugin in PLUGINS:
        if plugin.name == name:
            return plugin
    raise KeyError(f"no tracker {name!r}; known: {', '.join(p.name for p in PLUGINS)}")


def names() -> tuple[str, ...]:
    """The names of the registered trackers."""
    return tuple(p.name for p in PLUGINS)


def client_modules() -> tuple[str, ...]:
    """Top-level modules whose exceptions are a tracker failing (not a bug of ours)."""
    return tuple(m for p in PLUGINS for m in p.redaction.client_modules)


def keyword_flags() -> dict[str, str]:
    """Keyword-to-flag words of the trackers' own options, for messages."""
    return {k: v for p in PLUGINS for k, v in p.cli.keyword_flags.items()}


for _plugin in PLUGINS:
    _adopt(_plugin)
