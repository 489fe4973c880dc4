"""rliable 1.2's public API as a drop-in on rl_reliable_logger's engine.

Change one import line of a rliable script::

    from rl_reliable_logger.rliable import library as rly, metrics, plot_utils

and it computes the same point estimates (to the last bit), intervals within Monte-Carlo error of rliable 1.2's,
vectorised where ``func`` is built from :mod:`.metrics`; :func:`to_report` turns the same scores into a
:class:`~rl_reliable_logger.Report` that ``save_report`` and the tracker sinks publish. See docs/rliable.md.

``plot_utils`` loads matplotlib; ``library`` and ``metrics`` do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import to_report

__all__ = ["library", "metrics", "plot_utils", "to_report"]


def __getattr__(name: str) -> Any:
    """Load submodules (and :func:`to_report`) on first use, so that importing the package loads no matplotlib."""
    import importlib

    if name in ("library", "metrics", "plot_utils", "symbolic", "intervals", "report"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "to_report":
        return importlib.import_module(f"{__name__}.report").to_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
