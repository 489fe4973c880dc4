"""Ray Tune experiments as a Source (the ``[raytune]`` extra): :func:`raytune_table`; ``plugin`` makes it
``rl-reliable raytune``.

An experiment folder is read as data, from Tune's JSON and CSV files (``experiment``), without Ray and never by
unpickling; a ``ResultGrid`` is read as it is. The names below are loaded on first use, so importing the plugin
(``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .keys import DEFAULT_STEP
    from .listed import ListedRuns
    from .race import race_tune
    from .source import RayTuneSource, config_name, raytune_table, trial_records

_LAZY = {
    "DEFAULT_STEP": "keys",
    "ListedRuns": "listed",
    "race_tune": "race",
    "RayTuneSource": "source",
    "config_name": "source",
    "raytune_table": "source",
    "trial_records": "source",
}
__all__ = ["DEFAULT_STEP", "ListedRuns", "RayTuneSource", "config_name", "race_tune", "raytune_table", "trial_records"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
