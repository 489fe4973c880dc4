"""Ray Tune experiments as a Source (the ``[raytune]`` extra): :func:`raytune_table`.

``ray.tune`` is imported only when an experiment folder is opened (a ``ResultGrid`` is read as it is).
"""

from .source import DEFAULT_STEP, config_name, raytune_table

__all__ = ["DEFAULT_STEP", "config_name", "raytune_table"]
