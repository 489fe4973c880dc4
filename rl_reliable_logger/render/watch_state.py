"""Moved: ``watch()`` is :mod:`rl_reliable_logger.looks.watch`, the state folder of every look
:mod:`rl_reliable_logger.looks.ledger`. The old names here warn and forward for one release."""

from __future__ import annotations

from ..moved import moved

_LOOKS = "rl_reliable_logger.looks"
__getattr__ = moved(
    __name__,
    {
        "watch": f"{_LOOKS}.watch",
        "WATCH": f"{_LOOKS}.watch",
        **dict.fromkeys(("Ledger", "read_state", "write_state", "DESIGN", "LOOKS"), f"{_LOOKS}.ledger"),
        "seeds_taken": f"{_LOOKS}.launch",
    },
)
