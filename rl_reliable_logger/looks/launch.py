"""What each launcher runs next after a watch's or race's look: one row per new run, and each tracker's launch files.

The look's launch list says how many runs each (algorithm, task) cell still needs; this module turns it into
runs a launcher can start: each cell's new seeds are the smallest whole numbers ``0, 1, 2, ...`` it has not
used yet (so cells that ran seeds 0..k-1 all get k, k+1, ...; a label is the number it is written as, ``007`` is
seed 7, a text label uses the one number it carries, ``s3`` and ``seed_3`` use 3: a script that names seed k
``s<k>`` never runs it again; a label of no number or several uses none), and the runs are written

* ``runs.csv``: one row per new run, with the launcher's parameter names as columns;
* the files of each registered tracker's launch format (:mod:`.launch_formats`: a tracker's plugin contributes
  its format, e.g. a sweep grid or a list of command lines; :func:`grids` gives a grid launcher rectangular
  grids that together hold exactly the new runs).

Names are the user's text and every file is encoded by the one writer (:mod:`rl_reliable_logger.store`):
``runs.csv`` escapes formula-like names as every CSV we write does (a leading ``'``, :mod:`..data.csvcells`), a
format's YAML goes through :func:`..store.encode.yaml_bytes` (every name quoted: ``1e3`` and ``007`` stay text) and
its command lines through :func:`..store.encode.shell_line`. A parameter name is checked once here (it becomes a YAML key and a command-line word).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..data.names import label_number, seed_number
from ..errors import InputError
from ..wording import kw, said
from .launch_formats import formats

if TYPE_CHECKING:  # pragma: no cover
    from ..data.scores import ScoreTable

#: The launch parameters, in file order: the watch's field -> the parameter name the examples' scripts take.
DEFAULT_PARAMETERS = {"algorithm": "algorithm", "task": "task", "seed": "seed"}
RUNS = "runs.csv"
#: Peak bytes per new run while the launch files are made (measured: about 450 for 100,000 runs of one cell).
BYTES_PER_RUN = 512
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


def fields_of(keys: Sequence[str] = ()) -> dict[str, str]:
    """The launch fields in file order, each with its default parameter name: the algorithm, a race's
    hyperparameter columns ``keys`` (named as their columns), the task and the seed."""
    return {"algorithm": "algorithm", **{str(k): str(k) for k in keys}, "task": "task", "seed": "seed"}


def parameters(names: Mapping[str, str] | None = None, keys: Sequence[str] = ()) -> dict[str, str]:
    """The parameter name of each launch field (``names`` overrides some), each checked to be a plain word;
    ``keys``: a race's hyperparameter columns, launch fields too."""
    fields = fields_of(keys)
    chosen = {**fields, **dict(names or {})}
    unknown = sorted(set(chosen) - set(fields))
    if unknown:
        raise InputError(f"launch parameters name the fields {', '.join(fields)}, not {unknown[0]!r}")
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
            said(
                kw(f"max_runs={max_runs}"),
                f" would list up to {plural(max_runs * cells, 'run')} in the launch files "
                f"({plural(cells, 'cell')}), about {format_bytes(need)} of memory, but about {format_bytes(avail)} "
                "is available; ",
                kw("max_runs="),
                " is the most runs one (algorithm, task) cell may get",
            )
        )


def seeds_taken(table: ScoreTable, keys: Sequence[str] = ()) -> pd.DataFrame:
    """(algorithm, a race's configuration ``keys``, task, seed) of every run a launch must not repeat: the runs
    analysed and the unfinished runs the source left out (``table.source["excluded"]``), which may still finish."""
    cells = ["algorithm", *keys, "task", "seed"]
    frame = table.frame[cells]
    unfinished = [e for e in table.source.get("excluded") or () if all(e.get(k) is not None for k in cells)]
    if not unfinished:
        return frame
    return pd.concat([frame.astype(object), pd.DataFrame(unfinished, columns=cells)], ignore_index=True)


def new_runs(scores: pd.DataFrame, launch: pd.DataFrame) -> pd.DataFrame:
    """One row per run to start (the launch list's cell columns, then the seed): each cell's ``add_runs`` smallest
    unused whole seeds. A cell is every launch column but ``add_runs`` (algorithm and task; a race's configuration
    columns too), and ``scores`` has those columns and the seed."""
    cell = [c for c in launch.columns if c != "add_runs"]
    used: dict[tuple[str, ...], set[int]] = {}
    for key, seeds in scores.groupby(cell, sort=False, dropna=False)["seed"]:
        # 007 is seed 7 to a launcher; s3 (a label carrying 3) is seed 3 to a script that names seed k s<k>
        # a cell written two ways (0.01 and "0.01") is one cell: its seeds are pooled, never replaced
        used.setdefault(_cell_key(key if isinstance(key, tuple) else (key,)), set()).update(
            n for n in map(_number_of, seeds) if n is not None
        )
    rows = []
    for row in launch[[*cell, "add_runs"]].itertuples(index=False, name=None):
        values = tuple(row[:-1])
        taken = used.get(_cell_key(values), set())
        seed = 0
        for _ in range(int(str(row[-1]))):
            while seed in taken:
                seed += 1
            rows.append({**dict(zip(cell, values)), "seed": seed})
            seed += 1
    return pd.DataFrame(rows, columns=[*cell, "seed"]).astype({"seed": int})


def _number_of(label: Any) -> int | None:
    """The whole number a seed label stands for (``7``, ``007``) or carries beside its text (``s7``, ``seed_7``)."""
    number = seed_number(label)
    return number if number is not None else label_number(label)


def _cell_key(values: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(v) for v in values)


def grids(runs: pd.DataFrame) -> list[dict[str, list[Any]]]:
    """The new runs as rectangular grids (a product of each field's values) that together hold exactly these runs:
    runs of the same seeds and tasks are one group, whose units (algorithm, and a race's configuration values)
    are factored into products (:func:`_factor`)."""
    unit = [c for c in runs.columns if c not in ("task", "seed")]
    seeds_of: dict[tuple[Any, ...], list[int]] = {}
    for row in runs.itertuples(index=False, name=None):
        value = dict(zip(runs.columns, row))
        key = (*(value[c] for c in unit), value["task"])
        seeds_of.setdefault(key, []).append(int(str(value["seed"])))
    by_seeds: dict[tuple[int, ...], dict[tuple[Any, ...], list[Any]]] = {}
    for key, cell_seeds in sorted(seeds_of.items(), key=lambda kv: tuple(map(str, kv[0]))):
        by_seeds.setdefault(tuple(sorted(cell_seeds)), {}).setdefault(key[:-1], []).append(key[-1])
    out: list[dict[str, list[Any]]] = []
    for seeds, tasks_of in by_seeds.items():
        by_tasks: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        for head, cell_tasks in tasks_of.items():
            by_tasks.setdefault(tuple(cell_tasks), []).append(head)
        for tasks, heads in by_tasks.items():
            for values in _factor(heads):
                out.append({**dict(zip(unit, values)), "task": list(tasks), "seed": list(seeds)})
    return out


def _factor(units: list[tuple[Any, ...]]) -> list[list[list[Any]]]:
    """Rectangular products (one value list per field) whose union is exactly ``units`` (tuples of equal length):
    units sharing all but the last field's values are one product over their last values, recursively."""
    if len(units[0]) == 1:
        return [[[u[0] for u in units]]]
    lasts: dict[tuple[Any, ...], list[Any]] = {}
    for u in units:
        lasts.setdefault(u[:-1], []).append(u[-1])
    heads: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for head, values in lasts.items():
        heads.setdefault(tuple(values), []).append(head)
    return [[*sub, list(values)] for values, group in heads.items() for sub in _factor(group)]


def launch_files(
    scores: pd.DataFrame,
    launch: pd.DataFrame,
    names: Mapping[str, str] | None = None,
    *,
    program: str = "train.py",
    keys: Sequence[str] = (),
) -> dict[str, Any]:
    """The files of a look's launch list: ``runs.csv`` (a table, escaped by the writer) and the files of every
    registered launch format (:mod:`.launch_formats`), given the launch setting ``program``. ``keys``: a race's
    hyperparameter columns (launch fields between the algorithm and the task)."""
    return run_files(new_runs(scores, launch), names, program=program, keys=keys)


def run_files(
    runs: pd.DataFrame, names: Mapping[str, str] | None = None, *, program: str = "train.py", keys: Sequence[str] = ()
) -> dict[str, Any]:
    """The files of the ``runs`` to start (one row each: algorithm, a race's ``keys``, task, seed): ``runs.csv`` and
    every registered launch format's files. A gate names its runs' seeds itself (fresh ones for the stream)."""
    chosen = parameters(names, keys)
    files: dict[str, Any] = {RUNS: runs.rename(columns=chosen)}
    for fmt in formats():
        files.update(fmt.files(runs, chosen, {"program": program}))
    return files
