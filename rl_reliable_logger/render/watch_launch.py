"""What each launcher runs next after a watch's look: one row per new run, and each tracker's launch files.

The look's launch list says how many runs each (algorithm, task) cell still needs; this module turns it into
runs a launcher can start: each cell's new seeds are the smallest whole numbers ``0, 1, 2, ...`` it has not
used yet (so cells that ran seeds 0..k-1 all get k, k+1, ...; a label is the number it is written as, ``007`` is
seed 7, and a text label uses no number), and the runs are written

* ``runs.csv``: one row per new run, with the launcher's parameter names as columns;
* the files of each registered tracker's launch format (:mod:`.launch_formats`: a tracker's plugin contributes
  its format, e.g. a sweep grid or a list of command lines; :func:`grids` gives a grid launcher rectangular
  grids that together hold exactly the new runs).

Names are the user's text and every file is encoded by the one writer (:mod:`.bundle`): ``runs.csv`` escapes
formula-like names as every CSV we write does (a leading ``'``, :mod:`..data.csvcells`), a format's YAML goes
through :func:`.bundle.yaml_bytes` (every name quoted: ``1e3`` and ``007`` stay text) and its command lines through
:func:`.bundle.shell_line`. A parameter name is checked once here (it becomes a YAML key and a command-line word).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..data.names import seed_number
from ..errors import InputError
from .launch_formats import formats

#: The launch parameters, in file order: the watch's field -> the parameter name the examples' scripts take.
DEFAULT_PARAMETERS = {"algorithm": "algorithm", "task": "task", "seed": "seed"}
RUNS = "runs.csv"
#: Peak bytes per new run while the launch files are made (measured: about 450 for 100,000 runs of one cell).
BYTES_PER_RUN = 512
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


def parameters(names: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parameter name of each launch field (``names`` overrides some), each checked to be a plain word."""
    chosen = {**DEFAULT_PARAMETERS, **dict(names or {})}
    unknown = sorted(set(chosen) - set(DEFAULT_PARAMETERS))
    if unknown:
        raise InputError(f"launch parameters name the fields {', '.join(DEFAULT_PARAMETERS)}, not {unknown[0]!r}")
    for field, name in chosen.items():
        if not isinstance(name, str) or not _PARAMETER.fullmatch(name):
            raise InputError(
                f"launch parameter name {name!r} (for the {field}) must be a plain word: letters, digits, _ . - "
                f"(it becomes {_uses()})"
            )
    if len(set(chosen.values())) < len(chosen):
        raise InputError(f"the launch parameters {chosen} give two fields the same name; name each differently")
    return chosen


def _uses() -> str:
    """What a launch parameter name becomes: a column of runs.csv and each format's use of it."""
    uses = ["a column of runs.csv", *(fmt.parameter_use for fmt in formats() if fmt.parameter_use)]
    return ", ".join(uses[:-1]) + " and " + uses[-1] if len(uses) > 1 else uses[0]


def check_size(max_runs: int, cells: int) -> None:
    """Refuse, before any look, a design whose launch files could not be made: up to ``max_runs`` runs in each of
    ``cells`` cells are listed one per row (:data:`BYTES_PER_RUN`), checked against the memory this process can use
    (:func:`~rl_reliable_logger.memory.available_memory`)."""
    from ..data.counts import plural
    from ..memory import available_memory, format_bytes

    need = float(max_runs) * cells * BYTES_PER_RUN
    avail = available_memory()
    if avail is not None and need > avail:
        raise InputError(
            f"`max_runs={max_runs}` would list up to {plural(max_runs * cells, 'run')} in the launch files "
            f"({plural(cells, 'cell')}), about {format_bytes(need)} of memory, but about {format_bytes(avail)} is "
            "available; `max_runs=` is the most runs one (algorithm, task) cell may get"
        )


def new_runs(scores: pd.DataFrame, launch: pd.DataFrame) -> pd.DataFrame:
    """One row (algorithm, task, seed) per run to start: each cell's ``add_runs`` smallest unused whole seeds."""
    used: dict[tuple[str, str], set[int]] = {}
    for (a, t), seeds in scores.groupby(["algorithm", "task"], sort=False)["seed"]:
        used[(str(a), str(t))] = {n for n in map(seed_number, seeds) if n is not None}  # 007 is seed 7 to a launcher
    rows = []
    for cell in launch.itertuples(index=False):
        taken = used.get((str(cell.algorithm), str(cell.task)), set())
        seed = 0
        for _ in range(int(str(cell.add_runs))):
            while seed in taken:
                seed += 1
            rows.append({"algorithm": str(cell.algorithm), "task": str(cell.task), "seed": seed})
            seed += 1
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed"]).astype({"seed": int})


def grids(runs: pd.DataFrame) -> list[dict[str, list[Any]]]:
    """The new runs as rectangular grids (algorithms x tasks x seeds) that together hold exactly these runs."""
    seeds_of: dict[tuple[str, str], list[int]] = {}
    for row in runs.itertuples(index=False):
        seeds_of.setdefault((str(row.algorithm), str(row.task)), []).append(int(str(row.seed)))
    by_seeds: dict[tuple[int, ...], dict[str, list[str]]] = {}
    for (algorithm, task), cell_seeds in sorted(seeds_of.items()):
        by_seeds.setdefault(tuple(sorted(cell_seeds)), {}).setdefault(algorithm, []).append(task)
    out: list[dict[str, list[Any]]] = []
    for seeds, tasks_of in by_seeds.items():
        by_tasks: dict[tuple[str, ...], list[str]] = {}
        for algorithm, tasks in tasks_of.items():
            by_tasks.setdefault(tuple(tasks), []).append(algorithm)
        out += [{"algorithm": algs, "task": list(tasks), "seed": list(seeds)} for tasks, algs in by_tasks.items()]
    return out


def launch_files(
    scores: pd.DataFrame, launch: pd.DataFrame, names: Mapping[str, str] | None = None, *, program: str = "train.py"
) -> dict[str, Any]:
    """The files of a look's launch list: ``runs.csv`` (a table, escaped by the writer) and the files of every
    registered launch format (:mod:`.launch_formats`), given the launch setting ``program``."""
    chosen = parameters(names)
    runs = new_runs(scores, launch)
    files: dict[str, Any] = {RUNS: runs.rename(columns=chosen)}
    for fmt in formats():
        files.update(fmt.files(runs, chosen, {"program": program}))
    return files
