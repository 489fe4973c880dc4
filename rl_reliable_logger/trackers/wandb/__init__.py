"""W&B: ``plugin`` (what the package knows of W&B), ``client``, ``source`` (online runs), ``offline``
(offline-run reader), ``sweep`` (waiting), ``sink`` (publish a report), ``final_score``.

``wandb`` itself is imported only inside the functions that talk to it; the names below are loaded on first
use, so importing the plugin (``rl-reliable --help``) loads neither pandas nor the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import attach

if TYPE_CHECKING:  # pragma: no cover  (the names loaded on first use: rl_reliable_logger.lazy reads this block)
    from .final_score import write_final_score as write_final_score
    from .offline import OfflineProblem as OfflineProblem
    from .offline import OfflineRuns as OfflineRuns
    from .offline import read_offline_run as read_offline_run
    from .offline import read_offline_runs as read_offline_runs
    from .sink import WandbSink as WandbSink
    from .sink import publish_wandb as publish_wandb
    from .sink import sink_for as sink_for
    from .source import DEFAULT_REFS as DEFAULT_REFS
    from .source import WandbSource as WandbSource
    from .source import load_wandb_runs as load_wandb_runs
    from .source import wandb_table as wandb_table
    from .sweep import sweep_status as sweep_status
    from .sweep import wait_for_sweep as wait_for_sweep

__getattr__, __dir__, __all__ = attach(__name__)
