"""The checks every sequential look shares (a watch's, a race's): the analysis options a look
accepts, each compared cell's run count and scores, the hash of the compared scores, and that a look only adds runs.

A look of another kind calls these with its own words (``kind``, its own options) rather than borrowing a watch's
private helpers; every sentence is the one a watch says.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..data.counts import plural
from ..data.scores import ScoreTable
from ..errors import InputError
from ..stats import bootstrap as bs
from ..wording import Message, kw, said
from .declared import declared
from .options import as_options
from .watch_options import OWN_OPTIONS, WatchDesign

#: Design keywords that may reach a look with the analysis options (``watch(**options)``): the design records them.
DESIGN_KEYWORDS = tuple(f.name for f, _ in declared(WatchDesign))


def short(value: Any) -> str:
    """A design value for a sentence: its repr (a tuple as a list), cut to 120 characters."""
    text = repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= 120 else text[:117] + "..."


def look_options(options: dict[str, Any], kind: str = "watch", own: Mapping[str, Message | str] = OWN_OPTIONS) -> Any:
    """The analysis options of a sequential look (a watch's; a race's with its ``kind`` and ``own`` options)."""
    options = {k: v for k, v in options.items() if k not in DESIGN_KEYWORDS}  # the design's, recorded there
    for key, instead in own.items():
        if key in options:
            raise InputError(said(kw(f"{key}="), f" does not apply to a {kind}; use ", instead))
    opts = as_options(**options)
    if not isinstance(opts.seed, (int, np.integer)):
        raise InputError(
            said(f"a {kind} needs a reproducible ", kw("seed="), " (an integer): every look is recorded and replayed")
        )
    return opts


def data_hash(cells: dict[str, bs.Cells], tasks: Sequence[str]) -> str:
    """SHA-256 of the compared scores, cell by cell in sorted order (row order and run ids do not matter)."""
    digest = hashlib.sha256()
    for alg in sorted(cells):
        c = cells[alg]
        digest.update(alg.encode() + b"\0")
        for m, task in enumerate(tasks):
            digest.update(task.encode() + b"\0" + np.sort(c.values[c.task_of == m]).astype("<f8").tobytes())
    return digest.hexdigest()


def cell_counts(final: ScoreTable, algorithms: list[str], tasks: list[str], max_runs: int) -> dict[str, dict[str, int]]:
    """The run count of each compared (algorithm, task) cell; a cell of fewer than 2 runs, or of more than the design's
    ``max_runs``, is refused in one sentence."""
    sizes = final.frame.groupby(["algorithm", "task"]).size()
    out: dict[str, dict[str, int]] = {}
    for a in algorithms:
        out[a] = {}
        for t in tasks:
            n = int(sizes.get((a, t), 0))
            if n < 2:
                raise InputError(
                    f"cell ({a!r}, {t!r}) has {plural(n, 'run')}; every compared cell needs at least 2 runs a look"
                )
            if n > max_runs:
                raise InputError(
                    said(
                        f"cell ({a!r}, {t!r}) has {n} runs, more than the design's ",
                        kw(f"max_runs={max_runs}"),
                        "; leave the extra runs out of the watched scores",
                    )
                )
            out[a][t] = n
    return out


def cell_runs(cells: dict[str, bs.Cells], tasks: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """Each compared cell's scores, ascending (recorded, so that a later look can check it only added runs)."""
    return {a: {t: c.values[c.task_of == m].tolist() for m, t in enumerate(tasks)} for a, c in cells.items()}


def check_growth(
    history: Sequence[dict[str, Any]],
    counts: dict[str, dict[str, int]],
    runs: dict[str, dict[str, list[float]]],
    looks: int,
) -> None:
    """Refuse a look beyond the design's ``looks`` K, and data that drops or replaces any run of the last look."""
    if not history:
        return
    last = history[-1]
    if len(history) >= looks:
        raise InputError(
            f"the watch has taken all {looks} looks of its design; the last one's decisions are final "
            "(start a new state folder for a new design)"
        )
    for a, tasks in last["counts"].items():
        for t, n in tasks.items():
            if counts[a][t] < n:
                raise InputError(
                    f"cell ({a!r}, {t!r}) has {counts[a][t]} runs, fewer than the {n} of look {last['look']}; "
                    "a look may only add runs"
                )
            before = Counter(last["runs"][a][t])
            if before - Counter(runs[a][t]):
                raise InputError(
                    f"cell ({a!r}, {t!r}) no longer holds every run score of look {last['look']}; a look may only "
                    "add runs, never replace or change them"
                )


def missing_runs(
    history: Sequence[dict[str, Any]], counts: dict[str, dict[str, int]], unit_of: Callable[[dict[str, Any]], str]
) -> dict[str, dict[str, int]]:
    """The runs the last look listed that never arrived, per compared unit (an algorithm; a race's configuration,
    ``unit_of`` names a launch row's) and task: the last look's count plus the runs its launch list added, minus
    the count now (cells that hold them all are left out). Empty at the first look."""
    if not history:
        return {}
    last = history[-1]
    out: dict[str, dict[str, int]] = {}
    for row in last["launch"]:
        unit, task = unit_of(row), str(row["task"])
        if task not in counts.get(unit, {}):
            continue
        lacking = int(last["counts"].get(unit, {}).get(task, 0)) + int(row["add_runs"]) - counts[unit][task]
        if lacking > 0:
            out.setdefault(unit, {})[task] = lacking
    return out


def missing_text(missing: dict[str, dict[str, int]], look: int) -> str:
    """``missing`` (:func:`missing_runs`) in words: how many runs look ``look - 1`` listed never arrived, per
    configuration (or algorithm) and task (the first 8 named).

    Example:
        >>> missing_text({"ppo [lr=0.1]": {"a": 2, "b": 1}, "ppo [lr=1]": {"a": 1}}, 2)
        "4 runs look 1 listed are missing at look 2: 'ppo [lr=0.1]' 3 ('a' 2, 'b' 1), 'ppo [lr=1]' 1 ('a' 1)"
    """
    total = sum(n for tasks in missing.values() for n in tasks.values())
    each = [
        f"{unit!r} {sum(tasks.values())} ({', '.join(f'{t!r} {n}' for t, n in tasks.items())})"
        for unit, tasks in missing.items()
    ]
    shown = ", ".join(each[:8]) + (f", and {len(each) - 8} more" if len(each) > 8 else "")
    return (
        f"{plural(total, 'run')} look {look - 1} listed {'are' if total != 1 else 'is'} missing at look {look}: {shown}"
    )


def missing_note(record: dict[str, Any]) -> str | None:
    """The note of a look taken without runs the look before listed (killed, failed, or never launched), from its
    record (None when every listed run arrived)."""
    missing = record.get("missing") or {}
    if not missing:
        return None
    return (
        f"{missing_text(missing, int(record['look']))} (killed, failed or never launched); the look used the runs "
        "that arrived, and its launch list counts from them"
    )
