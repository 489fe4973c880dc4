"""Which engine the environment asks for: ``RL_RELIABLE_ENGINE`` (and the older ``RL_RELIABLE_NO_NUMBA``).

Its own module because both :mod:`.engine` and :mod:`.quantiles` read it, and :mod:`.engine` imports
:mod:`.bootstrap`, which uses :mod:`.quantiles`.

Example:
    >>> choice() in ENGINES  # "auto" unless the environment says otherwise
    True
"""

from __future__ import annotations

import os

from ..errors import InputError

ENGINES = ("auto", "numba", "numpy")


def choice() -> str:
    """The engine asked for by ``RL_RELIABLE_ENGINE`` (``auto``, ``numba`` or ``numpy``; see the module doc)."""
    if os.environ.get("RL_RELIABLE_NO_NUMBA"):
        return "numpy"
    asked = os.environ.get("RL_RELIABLE_ENGINE", "auto").strip().lower() or "auto"
    if asked not in ENGINES:
        raise InputError(f"RL_RELIABLE_ENGINE must be one of {', '.join(ENGINES)} (unset means auto), got {asked!r}")
    return asked
