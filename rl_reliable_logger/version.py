"""The package version: the single source read by ``pyproject.toml`` and every module."""

__version__ = "0.2.0.dev0"
