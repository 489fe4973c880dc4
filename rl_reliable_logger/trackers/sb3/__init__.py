"""Stable-Baselines3 logs as a Source: :func:`sb3_table`; ``plugin`` makes it ``rl-reliable sb3``.

The names below are loaded on first use, so importing the plugin (``rl-reliable --help``) loads no numpy or pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .files import Evaluations, MonitorLog, read_evaluations, read_monitor
    from .source import SB3Source, sb3_table

_LAZY = {
    "Evaluations": "files",
    "MonitorLog": "files",
    "read_evaluations": "files",
    "read_monitor": "files",
    "SB3Source": "source",
    "sb3_table": "source",
}
__all__ = ["Evaluations", "MonitorLog", "SB3Source", "read_evaluations", "read_monitor", "sb3_table"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
