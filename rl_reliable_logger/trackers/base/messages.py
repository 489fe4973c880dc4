"""How library messages name options: as Python keywords, backticked so the CLI can swap in its flags.

Library code writes ``kw("include_unfinished=True")``, which renders as
```include_unfinished=True```. A Python user reads the keyword to pass; the CLI replaces each
backticked keyword it knows with its flag (``rl_reliable_logger.cli.flags``).

Example:
    >>> kw("include_unfinished=True")
    '`include_unfinished=True`'
"""

from __future__ import annotations

DROP_INVALID = "on_invalid='drop'"


def kw(keyword: str) -> str:
    """A keyword as messages write it (backticked, so :func:`as_flags` can find it)."""
    return f"`{keyword}`"
