"""Stable-Baselines3 logs as a Source: :func:`sb3_table`; ``plugin`` makes it ``rl-reliable sb3``.

The names below are loaded on first use, so importing the plugin (``rl-reliable --help``) loads no numpy or pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .callback import FinalScoreCallback as FinalScoreCallback
    from .files import Evaluations as Evaluations
    from .files import MonitorLog as MonitorLog
    from .files import read_evaluations as read_evaluations
    from .files import read_monitor as read_monitor
    from .source import SB3Source as SB3Source
    from .source import sb3_table as sb3_table

__getattr__, __dir__, __all__ = attach(__name__)
