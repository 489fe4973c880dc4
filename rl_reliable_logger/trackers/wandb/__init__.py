"""W&B: ``plugin`` (what the package knows of W&B), ``client``, ``source`` (online runs), ``offline``
(offline-run reader), ``sweep`` (waiting), ``sink`` (publish a report), ``final_score``.

``wandb`` itself is imported only inside the functions that talk to it; the names below are loaded on first
use, so importing the plugin (``rl-reliable --help``) loads neither pandas nor the client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .final_score import write_final_score
    from .offline import OfflineProblem, OfflineRuns, read_offline_run, read_offline_runs
    from .sink import WandbSink, publish_wandb, sink_for
    from .source import DEFAULT_REFS, WandbSource, load_wandb_runs, wandb_table
    from .sweep import sweep_status, wait_for_sweep

_LAZY = {
    "DEFAULT_REFS": "source",
    "OfflineProblem": "offline",
    "OfflineRuns": "offline",
    "WandbSink": "sink",
    "WandbSource": "source",
    "load_wandb_runs": "source",
    "publish_wandb": "sink",
    "read_offline_run": "offline",
    "read_offline_runs": "offline",
    "sink_for": "sink",
    "sweep_status": "sweep",
    "wait_for_sweep": "sweep",
    "wandb_table": "source",
    "write_final_score": "final_score",
}
__all__ = [
    "DEFAULT_REFS",
    "OfflineProblem",
    "OfflineRuns",
    "WandbSink",
    "WandbSource",
    "load_wandb_runs",
    "publish_wandb",
    "read_offline_run",
    "read_offline_runs",
    "sink_for",
    "sweep_status",
    "wait_for_sweep",
    "wandb_table",
    "write_final_score",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
