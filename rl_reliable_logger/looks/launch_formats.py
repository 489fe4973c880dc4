"""The launch file formats of a watch or a race: what each launcher runs next, one format per tracker that has a launcher.

A :class:`LaunchFormat` turns a look's new runs into the files of its launcher (a sweep grid, a list of command
lines): it returns their **content** (text or a DataFrame), and the one writer (:mod:`rl_reliable_logger.store`)
encodes and writes it with the rest of the state folder. A tracker contributes its format in its plugin
(``trackers/<name>/launch.py``, ``TrackerPlugin(launch=...)``); the tracker registry adds every plugin's format
here when it is loaded (as it adds each tracker's secrets to :mod:`..redaction`), so :mod:`.launch` writes
the files of every registered tracker without naming one.

This module imports nothing heavy: the tracker registry (loaded by ``rl-reliable --help``) registers into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: A setting of a launch format that the watch command exposes as a flag: keyword -> (flag, argparse keywords).
Setting = tuple[str, dict[str, Any]]


class LaunchFormat:
    """The files one launcher reads to start a look's new runs. Subclasses set the words and override :meth:`files`.

    ``files(runs, names, settings)`` gets the new runs (one row per run, the launch fields in file order:
    ``algorithm``, a race's hyperparameter columns, ``task``, ``seed``; :func:`.launch.fields_of`), the
    parameter name of each field (checked plain words) and the launch settings (``program``, ...), and returns ``{file name: text or DataFrame}``; an empty dict
    when the format cannot be made here (e.g. its encoder is not installed).
    """

    #: The (first) file it writes, and what it is in a phrase, for ``rl-reliable watch --help``.
    name: str = ""
    what: str = ""
    #: What a launch parameter name becomes in these files, for the message refusing a bad name.
    parameter_use: str = ""
    #: The launch settings the format reads (the watch command's flags for them).
    settings: Mapping[str, Setting] = {}
    #: Lines of ``rl-reliable watch --help``'s examples: a launcher reading these files.
    examples: tuple[str, ...] = ()

    def files(self, runs: pd.DataFrame, names: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
        """The content of each file this format writes for ``runs``."""
        raise NotImplementedError


#: Every launch format, in the order of the tracker registry (the files are listed in this order).
FORMATS: list[tuple[str, LaunchFormat]] = []


def add_format(tracker: str, fmt: LaunchFormat) -> None:
    """Add ``tracker``'s launch format (replacing the one it had)."""
    remove_format(tracker)
    FORMATS.append((tracker, fmt))


def remove_format(tracker: str) -> None:
    """Forget ``tracker``'s launch format (a tracker unregistered)."""
    FORMATS[:] = [(name, fmt) for name, fmt in FORMATS if name != tracker]


def formats() -> tuple[LaunchFormat, ...]:
    """The registered launch formats, in order."""
    return tuple(fmt for _, fmt in FORMATS)


def settings() -> dict[str, Setting]:
    """Every format's launch settings (keyword -> flag), for the watch command."""
    return {key: setting for fmt in formats() for key, setting in fmt.settings.items()}
