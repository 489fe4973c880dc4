"""What a tracker contributes to the package, declared once in its own subpackage (``trackers/<name>/plugin.py``).

A :class:`TrackerPlugin` is the tracker's name and label and the roles it plays, each a small object of
:mod:`.roles` that knows nothing of the command line: its :class:`~.roles.SourceRole` (where its runs are, how they
are read), :class:`~.roles.SinkRole` (where reports go), :class:`~.roles.FinalScoreRole` (``log_final_score``),
:class:`~.roles.PendingRole` (``rl-reliable pending --push``), :class:`~.roles.LaunchFormat` (the files a watch
writes for its launcher) and :class:`~.roles.Redaction` (its secrets, its client's modules); plus one
:class:`~.wiring.CliWiring`, the only part that knows argparse (its flags and their help). A Source-only plugin
(logs read from disk) leaves out the sink, final-score and pending roles.

The registry (``trackers/registry.py``) lists the plugins; the command line builds one subcommand per plugin from
its wiring, ``plan`` and ``watch`` read runs through its source role, ``log_final_score`` and ``rl-reliable pending``
dispatch on its roles, a watch writes every plugin's launch format, and redaction applies its rules. Nothing
outside ``trackers/<name>/`` and the registry names a tracker.

A plugin written the earlier way (a subclass setting ``summary``, ``secret_variables``, ... and overriding
``open_source``, ``add_source_flags``, ... on the plugin itself) still works: its members are wrapped into the
roles above (with a DeprecationWarning naming the new shape).

This module imports nothing heavy (no tracker client, no pandas): ``rl-reliable --help`` loads every plugin.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from .roles import FinalScoreRole, LaunchFormat, PendingRole, Redaction, SinkRole, SourceRole, recorded_fields
from .wiring import Args, CliWiring

if TYPE_CHECKING:  # PEP 692 (``**roles: Unpack[...]``); typing has Unpack from Python 3.11 on
    from typing_extensions import Unpack

__all__ = [
    "Args",
    "CliWiring",
    "FinalScoreRole",
    "LaunchFormat",
    "PendingRole",
    "PluginRoles",
    "Redaction",
    "SinkRole",
    "SourceRole",
    "TrackerPlugin",
    "recorded_fields",
]


class PluginRoles(TypedDict, total=False):
    """The roles ``TrackerPlugin(name, label, **roles)`` takes by keyword; one left out (or None) is the class's."""

    source: SourceRole | None
    cli: CliWiring | None
    sink: SinkRole | None
    final_score: FinalScoreRole | None
    pending: PendingRole | None
    launch: LaunchFormat | None
    redaction: Redaction | None


class TrackerPlugin:
    """One tracker, as the package sees it: its name, its label and the roles it plays.

    Example (a tracker whose runs are read only; docs/architecture.md has it whole)::

        PLUGIN = TrackerPlugin(
            "jsondir", "JSON folder",
            source=JsonDirRuns(),             # a SourceRole: open(settings, retry) -> a Source
            cli=JsonDirCli(),                 # a CliWiring: summary, add_source_flags(group, curves=...)
        )
    """

    #: The tracker's name: its subcommand, ``source["tracker"]`` in provenance, the tracker of a pending file.
    name: str = ""
    #: How messages name it (``PublishResult.message``, warnings, errors).
    label: str = ""
    #: Its parts (see the module docstring); None: a role it does not play.
    source: SourceRole = SourceRole()
    cli: CliWiring = CliWiring()
    sink: SinkRole | None = None
    final_score: FinalScoreRole | None = None
    pending: PendingRole | None = None
    launch: LaunchFormat | None = None
    redaction: Redaction = Redaction()

    def __init__(self, name: str | None = None, label: str | None = None, **roles: Unpack[PluginRoles]) -> None:
        unknown = sorted(set(roles) - set(PluginRoles.__annotations__))
        if unknown:
            raise TypeError(f"TrackerPlugin() got an unexpected keyword argument {unknown[0]!r}")
        given: dict[str, Any] = {"name": name, "label": label, **roles}
        for key, value in given.items():  # what is not given stays the class's (a subclass may declare its parts)
            if value is not None:
                setattr(self, key, value)
        legacy = _legacy_members(type(self))
        if legacy:
            _adopt_legacy(self, legacy)

    @property
    def publishes(self) -> bool:
        """Whether the tracker takes reports (it has a sink): its commands get the publishing flags."""
        return self.sink is not None

    def describe(self, source: Mapping[str, Any]) -> str:
        """Where a table's runs came from, in one phrase (from ``table.source``)."""
        return self.source.describe(source) or f"{self.label} runs in {source.get('location')}"

    def __repr__(self) -> str:
        roles = [r for r in ("sink", "final_score", "pending", "launch") if getattr(self, r) is not None]
        return f"TrackerPlugin({self.name!r}, {self.label!r}, roles=source+{'+'.join(roles) or 'nothing else'})"


# ------------------------------------------------------------------------------------ plugins of the earlier shape
#: Each member a plugin of the earlier shape declared on itself -> (the part it belongs to, its name there).
_LEGACY: dict[str, tuple[str, str]] = {
    **{
        n: ("cli", n)
        for n in (
            "summary",
            "description",
            "epilog",
            "example",
            "pilot_help",
            "plan_examples",
            "watch_examples",
            "race_examples",
            "pending_note",
            "refs_help",
            "keyword_flags",
            "add_source_flags",
            "add_command_flags",
            "add_publish_flags",
            "add_pending_flags",
            "check_source",
            "check_command",
        )
    },
    "default_refs": ("source", "default_refs"),
    "config_kind": ("source", "config_kind"),
    "open_source": ("source", "open"),
    "prepare": ("source", "prepare"),
    "source_warnings": ("source", "warnings"),
    "inputs": ("source", "inputs"),
    "table_options": ("source", "table_options"),
    "launch_name": ("source", "launch_name"),
    "describe_source": ("source", "describe"),
    "open_sink": ("sink", "open"),
    "unpublished": ("sink", "unpublished"),
    "detect_order": ("final_score", "detect_order"),
    "start_hint": ("final_score", "start_hint"),
    "run_hint": ("final_score", "run_hint"),
    "owns_run": ("final_score", "owns_run"),
    "has_active_run": ("final_score", "has_active_run"),
    "write_final_score": ("final_score", "write"),
    "push_pending": ("pending", "push"),
    "pending_location": ("pending", "location"),
    "secret_variables": ("redaction", "secret_variables"),
    "secret_patterns": ("redaction", "secret_patterns"),
    "client_modules": ("redaction", "client_modules"),
}
_PARTS = {
    "cli": CliWiring,
    "source": SourceRole,
    "sink": SinkRole,
    "final_score": FinalScoreRole,
    "pending": PendingRole,
}


def _legacy_members(cls: type) -> dict[str, Any]:
    """The members of the earlier shape that ``cls`` (a subclass of TrackerPlugin) declares, ``publishes`` too."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is not TrackerPlugin and issubclass(klass, TrackerPlugin):
            found.update({k: v for k, v in vars(klass).items() if k in _LEGACY or k == "publishes"})
    return found


def _no_sink(*_: Any) -> None:
    return None


def _adopt_legacy(plugin: TrackerPlugin, members: Mapping[str, Any]) -> None:
    """Wrap the members a plugin of the earlier shape declares on itself into its roles and wiring."""
    cls = type(plugin)
    warnings.warn(
        f"tracker plugin {cls.__name__} ({plugin.name!r}) declares its hooks on the plugin, the earlier shape: it "
        "still works, but declare its roles instead, TrackerPlugin(name, label, source=SourceRole subclass, "
        "cli=CliWiring subclass, sink=..., ...) (see docs/architecture.md, 'Adding a tracker')",
        DeprecationWarning,
        stacklevel=3,
    )
    publishes = bool(members.get("publishes", True))
    parts: dict[str, Any] = {part: role() for part, role in _PARTS.items()}
    redaction: dict[str, Any] = {}
    for old, (part, new) in _LEGACY.items():
        if old not in members:
            continue
        value = getattr(plugin, old)  # a bound method, or the class attribute's value
        if part == "redaction":
            redaction[new] = tuple(value)
        else:
            setattr(parts[part], new, value)
    parts["cli"].shared_fields = publishes
    if "open_sink" not in members:
        parts["sink"].open = _no_sink  # the earlier shape's default: a publishing plugin that publishes nothing
    plugin.cli, plugin.source = parts["cli"], parts["source"]
    if publishes:
        plugin.sink, plugin.final_score, plugin.pending = parts["sink"], parts["final_score"], parts["pending"]
    plugin.redaction = Redaction(**redaction)  # a class value of ``publishes`` hides the property: it agrees
