"""TensorBoard event files as a Source (the ``[tensorboard]`` extra): :func:`tensorboard_table`.

``tensorboard`` is imported only when event files are read.
"""

from .layout import DEFAULT_LAYOUT, Layout, parse_layout
from .source import TensorBoardSource, tensorboard_table

__all__ = ["DEFAULT_LAYOUT", "Layout", "TensorBoardSource", "parse_layout", "tensorboard_table"]
