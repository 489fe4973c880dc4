"""Ray Tune experiments as a Source (the ``[raytune]`` extra): :func:`raytune_table`; ``plugin`` makes it
``rl-reliable raytune``.

An experiment folder is read as data, from Tune's JSON and CSV files (``experiment``), without Ray and never by
unpickling; a ``ResultGrid`` is read as it is. The names below are loaded on first use, so importing the plugin
(``rl-reliable --help``) loads no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .keys import DEFAULT_STEP as DEFAULT_STEP
    from .listed import ListedRuns as ListedRuns
    from .race import race_tune as race_tune
    from .source import RayTuneSource as RayTuneSource
    from .source import config_name as config_name
    from .source import raytune_table as raytune_table
    from .source import trial_records as trial_records

__getattr__, __dir__, __all__ = attach(__name__)
