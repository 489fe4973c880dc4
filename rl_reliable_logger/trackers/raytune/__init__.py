"""Ray Tune experiments as a Source (the ``[raytune]`` extra): :func:`raytune_table`.

``ray.tune`` is imported only when an experiment folder is opened (a ``ResultGrid`` is read as it is).
"""

from .keys import DEFAULT_STEP
from .source import config_name, raytune_table, trial_records

__all__ = ["DEFAULT_STEP", "config_name", "raytune_table", "trial_records"]
