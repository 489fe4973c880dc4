"""marl-eval JSON as a Source: :func:`marl_eval_table`; ``plugin`` makes it ``rl-reliable marl-eval``.

The names below are loaded on first use, so importing the plugin (``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .files import MarlRun as MarlRun
    from .files import read_marl_eval as read_marl_eval
    from .source import MarlEvalSource as MarlEvalSource
    from .source import marl_eval_table as marl_eval_table

__getattr__, __dir__, __all__ = attach(__name__)
