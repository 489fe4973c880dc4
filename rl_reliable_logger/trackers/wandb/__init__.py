"""W&B: ``client``, ``source`` (online runs), ``offline`` (offline-run reader), ``sweep`` (waiting),
``sink`` (publish a report), ``final_score``.

``wandb`` itself is imported only inside the functions that talk to it.
"""

from .final_score import write_final_score
from .offline import OfflineProblem, OfflineRuns, read_offline_run, read_offline_runs
from .sink import WandbSink, publish_wandb, sink_for
from .source import DEFAULT_REFS, WandbSource, load_wandb_runs, wandb_table
from .sweep import sweep_status, wait_for_sweep

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
