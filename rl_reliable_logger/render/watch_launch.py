"""Moved: the launch files of a look are :mod:`rl_reliable_logger.looks.launch`. The old names here warn and forward
for one release."""

from __future__ import annotations

from ..moved import moved

__getattr__ = moved(
    __name__,
    dict.fromkeys(
        (
            "DEFAULT_PARAMETERS",
            "RUNS",
            "BYTES_PER_RUN",
            "fields_of",
            "parameters",
            "check_size",
            "new_runs",
            "grids",
            "launch_files",
        ),
        "rl_reliable_logger.looks.launch",
    ),
)
