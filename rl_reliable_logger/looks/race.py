"""``race()``: the next look of a race of a sweep's configurations, recorded in a state folder (``kind == "race"``).

The state folder is a watch's (:mod:`.ledger`: the same bundle, guard, replay and refusals, read and written by the
same functions with the race's :data:`RACE` ledger), and so are the launch files (:mod:`.launch`, with the
hyperparameter columns as launch fields). The look itself is :mod:`..analysis.race`'s.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import race as ra
from ..analysis.inputs import FieldOptions, as_score_table, split_field_options
from ..analysis.race_options import FEW_FIRST_RUNS, RaceLookOptions, RaceOptions
from ..data.scores import ScoreTable
from ..errors import ReliabilityWarning, caller_stacklevel
from .launch import check_size, launch_files, seeds_taken
from .launch import parameters as launch_parameters_of
from .ledger import Ledger, look_notes, next_look


def _race_problem(look: dict[str, Any], i: int) -> str | None:
    bad = [a for a, r in look["races"].items() if not isinstance(r, dict)]
    return f"the race of {bad[0]!r} in look {i} is not a JSON object" if bad else None


#: A race's state folder: its design, every look, and the last look's tables as CSV.
RACE = Ledger(
    "race",
    ra.Design,
    ra.result_from,
    lambda r: {
        "launch.csv": r.launch,
        "selected.csv": r.selected,
        "alive.csv": r.alive,
        "eliminated.csv": r.eliminated,
    },
    {"look": int, "hash": str, "counts": dict, "runs": dict, "races": dict, "launch": list},
    _race_problem,
    lambda design: (design.labels(), design.tasks, design.max_runs),
)


def race(
    table: ScoreTable | pd.DataFrame | str | os.PathLike,
    state: str | os.PathLike,
    looks: int,
    max_runs: int,
    hyperparameter_keys: Sequence[str],
    delta: float = 0.0,
    alpha: float = 0.05,
    metric: str = "iqm",
    *,
    spending: str = "pocock",
    launch_parameters: Mapping[str, str] | None = None,
    program: str = "train.py",
    wait: float | None = None,
    first_runs: int = FEW_FIRST_RUNS,
    stop_on_missing: bool = False,
    **options: Any,
) -> ra.RaceResult:
    """Take the next look of a race of each algorithm's configurations in ``table``, recorded in the folder ``state``.

    ``table``: a ScoreTable, a long DataFrame or a score file (read with ``evaluate()``'s field keywords,
    ``algorithm_key=``, ...). A configuration is one set of values of the ``hyperparameter_keys`` columns; each algorithm's configurations
    race among themselves. The first call freezes the design: ``looks`` K, ``max_runs`` N per (configuration,
    task) cell, ``delta`` (the indifference zone, in the metric's units; 0: no zone, a race ends when one
    configuration is left, when no runs could change its selection, or at the last look), ``alpha``, the registered ``metric``, the error ``spending``
    (``pocock``, or ``obf``), the configurations, the tasks and the analysis options that change the numbers
    (``reps``, ``seed``, ``normalize``, ...). With probability at least ``1 - alpha`` the configuration it selects
    is within its stated regret bound of the best one, and so within ``delta`` when it stopped by its rule
    (``docs/race.md``). Later calls must ask for the same design; the same
    scores as a recorded look return that look without spending one.

    Returns ``.stop``, ``.best`` (the selected configuration: a dict, or one per algorithm; None until every race
    stopped), ``.selected`` (its metric's interval, the regret bound and the margin over the runner-up, valid after
    selection), ``.alive``, ``.eliminated`` and ``.launch`` (algorithm, hyperparameter columns, task, add_runs).
    Beside ``launch.csv`` the folder gets what a launcher runs next (``runs.csv`` and each registered tracker's
    launch files, e.g. a sweep grid of ``program``), under the parameter names ``launch_parameters`` gives for ``algorithm``, ``task``,
    ``seed`` and each hyperparameter column (default: those words and the column names). The folder is locked from
    reading the state to writing it back (a second race of it waits up to ``wait`` seconds, as a watch's does).

    ``first_runs`` (frozen with the design): the fewest runs per (configuration, task) cell the first look takes
    (a first look with fewer is refused); a first look with cells of 2 runs warns (on bimodal scores it dropped the
    true best configuration in 7% of small races, issue 54): run 3 or more seeds first and say so with it.

    A look that lacks runs the look before listed (a run killed, failed or never launched) says how many, per
    configuration and task, and is refused when it would stop a race on the runs that arrived, unless
    ``stop_on_missing=True`` (said anew at each look; not part of the design).

    Example (two learning rates, one clearly better: it is the only one left after the first look):
        >>> import pandas as pd
        >>> rows = [{"algorithm": "ppo", "lr": lr, "task": t, "seed": s, "score": m + (lr == 0.01) + 0.1 * s}
        ...         for lr in (0.1, 0.01) for m, t in enumerate("abc") for s in range(3)]
        >>> result = race(pd.DataFrame(rows), "race-state", looks=3, max_runs=9, hyperparameter_keys=["lr"],
        ...               delta=0.1, reps=200)
        >>> result.stop, result.best, result.selected["reason"].iat[0], result.eliminated["lr"].tolist()
        (True, {'algorithm': 'ppo', 'lr': 0.01}, 'one left', [0.1])
    """
    folder = Path(state)
    fields, options = split_field_options(options)
    keys = [hyperparameter_keys] if isinstance(hyperparameter_keys, str) else list(hyperparameter_keys or ())
    scores = as_score_table(table, FieldOptions(**fields, hyperparameter_keys=tuple(map(str, keys))))
    design_options = RaceOptions(
        looks=looks,
        max_runs=max_runs,
        delta=delta,
        alpha=alpha,
        metric=metric,
        spending=spending,
        first_runs=first_runs,
    )
    asked = ra.make_design(scores, design_options, keys, **options)
    chosen = launch_parameters_of(launch_parameters, asked.keys)  # a bad name is refused before a look is spent
    check_size(asked.max_runs, len(asked.configs) * len(asked.tasks))
    choices = RaceLookOptions(stop_on_missing=stop_on_missing)
    result = next_look(
        folder,
        RACE,
        asked,
        lambda design, history: ra.take_look(scores, design, history, choices, **options),
        # an unfinished run's seed is never launched again
        lambda design, look: launch_files(
            seeds_taken(scores, design.keys), look.launch, chosen, program=program, keys=design.keys
        ),
        wait=wait,
    )
    first = ra.first_look_note(result.record)
    for line in look_notes([*scores.warnings, *([first] if first else [])], result.record):  # once a look was taken
        warnings.warn(line, ReliabilityWarning, stacklevel=caller_stacklevel())
    return result
