"""marl-eval JSON as a Source: :func:`marl_eval_table`; ``plugin`` makes it ``rl-reliable marl-eval``.

The names below are loaded on first use, so importing the plugin (``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .files import MarlRun, read_marl_eval
    from .source import MarlEvalSource, marl_eval_table

_LAZY = {
    "MarlRun": "files",
    "read_marl_eval": "files",
    "MarlEvalSource": "source",
    "marl_eval_table": "source",
}
__all__ = ["MarlEvalSource", "MarlRun", "marl_eval_table", "read_marl_eval"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
