"""``watch()``: the next look of a group-sequential watch of a running sweep, recorded in a state folder
(``kind == "watch"``).

The state folder is the :data:`WATCH` ledger (:mod:`.ledger`: the frozen design and every look, read, checked and
written by the same functions as every kind of look); the launch files are :mod:`.launch`'s. The look itself is
:mod:`..analysis.watch`'s.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import watch as wt
from ..analysis.inputs import FieldOptions, as_score_table, split_field_options
from ..analysis.watch_options import FUTILITY, WatchDesign
from ..data.scores import ScoreTable
from ..errors import ReliabilityWarning, caller_stacklevel
from .launch import check_size, launch_files, seeds_taken
from .launch import parameters as launch_parameters_of
from .ledger import Ledger, look_notes, next_look

_PAIR_FIELDS = ("algorithm_x", "algorithm_y", "decision", "low", "high", "look", "times", "final")


def _pair_problem(look: dict[str, Any], i: int) -> str | None:
    for pair in look["pairs"]:
        missing = [k for k in _PAIR_FIELDS if not isinstance(pair, dict) or k not in pair]
        if missing:
            return f"a pair of look {i} has no {missing[0]!r}"
    return None


#: A watch's state folder.
WATCH = Ledger(
    "watch",
    wt.Design,
    wt.result_from,
    lambda r: {"decisions.csv": r.decisions, "launch.csv": r.launch},
    {"look": int, "hash": str, "counts": dict, "runs": dict, "pairs": list, "launch": list},
    _pair_problem,
    lambda design: (sorted({a for pair in design.pairs for a in pair}), design.tasks, design.max_runs),
)


def watch(
    table: ScoreTable | pd.DataFrame | str | os.PathLike,
    state: str | os.PathLike,
    looks: int,
    max_runs: int,
    alpha: float = 0.05,
    metric: str = "iqm",
    compare: Sequence[str] | None = None,
    *,
    spending: str = "obf",
    launch_parameters: Mapping[str, str] | None = None,
    program: str = "train.py",
    wait: float | None = None,
    **options: Any,
) -> wt.WatchResult:
    """Take the next look of a group-sequential watch of ``table``, recorded in the folder ``state``.

    ``table``: a ScoreTable, a long DataFrame or a score file (read with ``evaluate()``'s field keywords,
    ``algorithm_key=``, ...), as ``race()`` and ``evaluate()`` take it. The first call freezes the design (``looks``
    K, ``max_runs`` per (algorithm, task) cell, ``alpha``, the registered ``metric``, the ``compare``d algorithms
    (default: all, every pair among them), the error ``spending`` function ``obf`` or ``pocock``, ``futility=``
    (default 0: never; p > 0: from half the maximum runs on, a pair whose conditional power is below p stops as
    ``futile``, non-binding), the tasks and the options that change the numbers: ``reps``, ``seed``, ``normalize``,
    ...). Every later call must ask for the same design; the same scores as a recorded
    look return that look without spending one. Returns ``.stop``, ``.decisions`` and ``.launch``
    (see ``docs/watch.md``). Beside ``launch.csv`` the folder gets what a launcher runs next
    (:func:`.launch.launch_files`: ``runs.csv`` and each tracker's launch files, e.g. a sweep grid of
    ``program``), under the parameter names ``launch_parameters`` gives for
    ``algorithm``, ``task`` and ``seed`` (default: those words). The folder is locked from reading the state to
    writing it back: a second watch of the same folder waits up to ``wait`` seconds (then takes its own look, or
    replays this one for the same scores), else refuses in one sentence; no look is lost.

    Example:
        >>> result = watch(table, state="watch-state", looks=3, max_runs=10, reps=2000)   # doctest: +SKIP
        >>> result.stop, result.launch.head()                                               # doctest: +SKIP
    """
    folder = Path(state)
    fields, options = split_field_options(options)
    scores = as_score_table(table, FieldOptions(**fields))
    futility = options.pop("futility", FUTILITY)
    design_options = WatchDesign(
        looks=looks,
        max_runs=max_runs,
        compare=None if compare is None else tuple([compare] if isinstance(compare, str) else compare),
        alpha=alpha,
        metric=metric,
        spending=spending,
        futility=futility,
    )
    asked = wt.make_design(scores, design_options, **options)
    chosen = launch_parameters_of(launch_parameters)  # a bad name is refused before a look is spent
    check_size(asked.max_runs, len({a for pair in asked.pairs for a in pair}) * len(asked.tasks))
    result = next_look(
        folder,
        WATCH,
        asked,
        lambda design, history: wt.take_look(scores, design, history, **options),
        lambda design, look: launch_files(seeds_taken(scores), look.launch, chosen, program=program),
        wait=wait,
    )
    for line in look_notes(scores.warnings, result.record):  # at the caller's line, once a look was taken
        warnings.warn(line, ReliabilityWarning, stacklevel=caller_stacklevel())
    return result
