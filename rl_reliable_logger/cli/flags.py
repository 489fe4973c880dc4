"""Library messages name Python keywords (backticked, see ``trackers/base/messages.py``); the CLI names flags.

:func:`as_flags` turns one into the other with one table, so both audiences stay in step.

Example:
    >>> as_flags("pass `include_unfinished=True` to use them")
    'pass --include-unfinished to use them'
"""

from __future__ import annotations

import re

from ..trackers.base.messages import DROP_INVALID

#: Python keyword (as written in messages) -> the flag that sets it on the command line.
FLAG_FOR = {
    "algorithm=": "--algorithm-key",
    "task=": "--task-key",
    "seed=": "--seed-key",
    "score=": "--score-key",
    "run_key=": "--run-key",
    "include_unfinished=True": "--include-unfinished",
    DROP_INVALID: "--drop-invalid",
    "experiments=": "--experiment",
    "filter_string=": "--filter",
    "filters=": "--filter",
    "tracking_uri=": "--tracking-uri",
    "curve_key=": "--curve-key",
    "algorithms=": "--only-algorithms",
    "tasks=": "--only-tasks",
    "sweep=": "--sweep",
    "per_page=": "--per-page",
    "parent_run_id=": "--publish RUN_ID",
    "experiment=": "--experiment",
    "project=": "--project",
    "force=True": "--force",
    "out=": "--out",
    "timeout=": "--wait-timeout",
    "path=": "ENTITY/PROJECT",
    "offline_dir=": "--offline-dir",
    "bundle=": "--out",
}


_TOKEN = re.compile(r"`([^`]+)`")


def as_flags(text: str) -> str:
    """``text`` with every known backticked keyword replaced by its CLI flag (others left as they are)."""
    return _TOKEN.sub(lambda m: FLAG_FOR.get(m.group(1), m.group(0)), text)
