"""Moved: ``race()`` is :mod:`rl_reliable_logger.looks.race`. The old names here warn and forward for one release."""

from __future__ import annotations

from ..moved import moved

__getattr__ = moved(__name__, dict.fromkeys(("race", "RACE"), "rl_reliable_logger.looks.race"))
