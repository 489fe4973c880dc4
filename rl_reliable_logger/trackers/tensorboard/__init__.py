"""TensorBoard event files as a Source (the ``[tensorboard]`` extra): :func:`tensorboard_table`; ``plugin`` makes
it ``rl-reliable tensorboard``.

``tensorboard`` is imported only when event files are read; the names below are loaded on first use, so
importing the plugin (``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .layout import DEFAULT_LAYOUT as DEFAULT_LAYOUT
    from .layout import Layout as Layout
    from .layout import parse_layout as parse_layout
    from .source import TensorBoardSource as TensorBoardSource
    from .source import tensorboard_table as tensorboard_table

__getattr__, __dir__, __all__ = attach(__name__)
