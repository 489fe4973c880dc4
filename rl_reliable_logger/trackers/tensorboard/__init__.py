"""TensorBoard event files as a Source (the ``[tensorboard]`` extra): :func:`tensorboard_table`; ``plugin`` makes
it ``rl-reliable tensorboard``.

``tensorboard`` is imported only when event files are read; the names below are loaded on first use, so
importing the plugin (``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .layout import DEFAULT_LAYOUT, Layout, parse_layout
    from .source import TensorBoardSource, tensorboard_table

_LAZY = {
    "DEFAULT_LAYOUT": "layout",
    "Layout": "layout",
    "TensorBoardSource": "source",
    "parse_layout": "layout",
    "tensorboard_table": "source",
}
__all__ = ["DEFAULT_LAYOUT", "Layout", "TensorBoardSource", "parse_layout", "tensorboard_table"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
