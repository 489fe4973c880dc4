"""Moved: the launch-format registry is :mod:`rl_reliable_logger.looks.launch_formats`. The old names here warn and
forward for one release."""

from __future__ import annotations

from ..moved import moved

__getattr__ = moved(
    __name__,
    dict.fromkeys(
        ("LaunchFormat", "Setting", "FORMATS", "add_format", "remove_format", "formats", "settings"),
        "rl_reliable_logger.looks.launch_formats",
    ),
)
