"""The ledger of a sequential look: its state folder (the frozen design and every look, as a verified bundle of the
look's kind) and the one way a look is taken against it (:func:`next_look`).

Every kind of look (a watch's, a race's, a gate's) is one :class:`Ledger`: read, checked and written by
the same functions. The folder goes through the one writer (:mod:`rl_reliable_logger.store`): it is written whole
and swapped in atomically, refused when it holds anything the tool did not write, and read only through its
manifest, so a look edited, removed or added by hand is refused instead of trusted. The looks themselves are
computed in ``analysis/`` (:mod:`..analysis.watch`, :mod:`..analysis.race`); this module only reads and writes them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis.look_checks import missing_note
from ..errors import InputError
from ..store.bundle import read_bundle, recover_swap, write_bundle
from ..store.kinds import BundleError
from ..store.lock import folder_lock
from ..store.manifest import MANIFEST
from ..wording import kw, said

DESIGN, LOOKS = "design.json", "looks.json"


@dataclass(frozen=True)
class Ledger:
    """One kind of sequential state folder (a watch's, a race's): the bundle ``kind``, the ``design`` class
    (``from_json``/``to_json``), the ``result_from(record, design)`` of a recorded look, the ``tables`` of a result
    that the folder keeps as CSV beside the looks, and what every recorded look holds (``look_fields``: each field's
    type; ``item_problem(look, i)``: a problem with the look's per-pair or per-race records, or None; ``cells``: for
    a kind whose looks count runs per cell, the design's compared units (algorithms, a race's configuration labels)
    and tasks and its ``max_runs``, against which every look's ``counts``, ``runs``, ``launch`` and ``missing`` are
    checked). Every kind is read, checked and written by the same functions below: one ledger."""

    kind: str
    design: Any
    result_from: Callable[..., Any]
    tables: Callable[[Any], dict[str, pd.DataFrame]]
    look_fields: dict[str, type | tuple[type, ...]]
    item_problem: Callable[[dict[str, Any], int], str | None]
    cells: Callable[[Any], tuple[Sequence[str], Sequence[str], int]] | None = None


def read_state(folder: str | os.PathLike, *, ledger: Ledger) -> tuple[Any, list[dict[str, Any]]] | None:
    """The design and looks recorded in ``folder`` (None for a missing or empty folder).

    A swap that a killed writer left half done is completed first (the folder would look missing: its history is
    aside, never lost). Every look is checked before it is used: a hand-edited ``looks.json`` whose manifest was
    rewritten to match is refused in one sentence naming the file and the look.
    """
    root, kind = Path(folder), ledger.kind
    recover_swap(root)
    if not root.is_symlink() and (not root.exists() or (root.is_dir() and not any(root.iterdir()))):
        return None
    if root.is_dir() and not (root / MANIFEST).exists():
        raise BundleError(
            said(f"{root}: holds files that are not a {kind} state; pass a new or empty folder as ", kw("state="))
        )
    bundle = read_bundle(root)
    if bundle.kind != kind or {DESIGN, LOOKS} - set(bundle.contents):
        raise BundleError(
            said(f"{root}: is not a {kind} state folder (it holds a {bundle.kind}); pick another ", kw("state="))
        )
    try:
        data = json.loads(bundle.contents[DESIGN])
        looks = json.loads(bundle.contents[LOOKS])
    except (ValueError, RecursionError) as err:
        raise BundleError(f"{root}: the {kind} state is unreadable ({str(err)[:200] or 'nested too deeply'})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{root / DESIGN}: the {kind} design is not a JSON object; start a new state folder")
    try:
        design = ledger.design.from_json(data)
    except InputError as err:
        raise BundleError(f"{root / DESIGN}: {err}") from None
    return design, _checked_looks(looks, design, root / LOOKS, ledger)


def _checked_looks(looks: Any, design: Any, path: Path, ledger: Ledger) -> list[dict[str, Any]]:
    """The recorded looks, each checked for the fields a look reads (one sentence naming the file and look)."""
    if not isinstance(looks, list):
        raise BundleError(
            f"{path}: the looks are not a JSON list; the {ledger.kind} state was edited, start a new state folder"
        )
    if not looks:  # a state is written with its first look: a design without looks lost its history
        raise BundleError(f"{path}: holds no look; the {ledger.kind} state was edited, start a new state folder")
    for i, look in enumerate(looks, 1):
        problem = _look_problem(look, i, ledger)
        if problem is None and ledger.cells is not None:
            problem = cells_problem(look, i, *ledger.cells(design))
        if problem is None:
            try:
                ledger.result_from(look, design)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
                problem = f"look {i} cannot be read back ({type(err).__name__}: {str(err)[:80]})"
        if problem is not None:
            raise BundleError(f"{path}: {problem}; the {ledger.kind} state was edited, start a new state folder")
    return list(looks)


def _look_problem(look: Any, i: int, ledger: Ledger) -> str | None:
    if not isinstance(look, dict):
        return f"look {i} is not a JSON object"
    for key, kind in ledger.look_fields.items():
        if key not in look:
            return f"look {i} has no {key!r}"
        if not isinstance(look[key], kind) or isinstance(look[key], bool):
            return f"look {i}'s {key!r} is a {type(look[key]).__name__}"
    if look["look"] != i:
        return f"look {i} says it is look {look['look']}"
    return ledger.item_problem(look, i)


def _is_count(value: Any, low: int, high: float) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_score(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def cells_problem(
    look: dict[str, Any], i: int, units: Sequence[str], tasks: Sequence[str], max_runs: int
) -> str | None:
    """What a look that counts runs per cell must hold: each of the design's (unit, task) cells in ``counts`` (2 to
    ``max_runs`` runs) and in ``runs`` (that many finite scores), launch rows that add runs to one of its tasks, and
    ``missing`` (when present) as counts of runs per cell (None: all there). A state whose ``looks.json`` was edited
    and its manifest rewritten is refused by this, never read as a history that no longer says what ran."""
    counts, runs = look["counts"], look["runs"]
    for field, held in (("counts", counts), ("runs", runs)):
        extra = sorted(set(held) - set(units))
        if extra:
            return f"look {i}'s {field} hold {extra[0]!r}, which the design does not compare"
    for unit in units:
        for task in tasks:
            for field, held in (("counts", counts), ("runs", runs)):
                if not isinstance(held.get(unit), dict) or task not in held[unit]:
                    return f"look {i}'s {field} do not hold the cell ({unit!r}, {task!r})"
            n = counts[unit][task]
            if not _is_count(n, 2, max_runs):
                return f"look {i}'s count of the cell ({unit!r}, {task!r}) is {n!r}, not a number of runs from 2 to {max_runs}"
            scores = runs[unit][task]
            if not isinstance(scores, list) or len(scores) != n or not all(map(_is_score, scores)):
                return f"look {i}'s runs of the cell ({unit!r}, {task!r}) are not its {n} run scores"
    for row in look["launch"]:
        if not isinstance(row, dict) or row.get("task") not in tasks or not _is_count(row.get("add_runs"), 1, max_runs):
            return f"look {i}'s launch list has a row that adds no runs to one of the design's tasks"
    missing = look.get("missing", {})
    if not isinstance(missing, dict) or not all(
        unit in units and isinstance(by, dict) and all(t in tasks and _is_count(k, 1, max_runs) for t, k in by.items())
        for unit, by in missing.items()
    ):
        return f"look {i}'s missing runs are not counts of runs per cell of the design"
    return None


def write_state(
    folder: str | os.PathLike,
    design: Any,
    looks: Sequence[dict[str, Any]],
    files: Mapping[str, Any] | None = None,
    *,
    wait: float | None = None,
    ledger: Ledger,
) -> None:
    """Write the design and looks (the last look's tables as CSV, for a watch its decisions and launch list, and
    ``files``: what each launcher runs next, :mod:`.launch`) through the one writer: escaped, swapped in
    whole, under the lock."""
    design_bytes = (json.dumps(design.to_json(), indent=1, sort_keys=True) + "\n").encode()
    looks_bytes = (json.dumps(list(looks), indent=1, sort_keys=True) + "\n").encode()
    last = ledger.result_from(looks[-1], design)
    contents = {DESIGN: design_bytes, LOOKS: looks_bytes, **ledger.tables(last), **(files or {})}
    digest = hashlib.sha256(design_bytes + b"\0" + looks_bytes).hexdigest()
    write_bundle(folder, contents, digest=digest, kind=ledger.kind, wait=wait)


def next_look(
    folder: Path,
    ledger: Ledger,
    asked: Any,
    look: Callable[[Any, list[dict[str, Any]]], Any],
    files: Callable[[Any, Any], Mapping[str, Any]],
    *,
    wait: float | None = None,
) -> Any:
    """Take the next look recorded in ``folder``: under the folder's lock from reading the state to writing it back
    (two looks never interleave; a second one waits up to ``wait`` seconds), the design recorded at the first look
    (else ``asked``) must be the one ``asked`` for; ``look(design, history)`` takes the look, and unless it replayed
    a recorded one (``result.replayed``) its ``result.record`` is written back with ``files(design, result)``, what
    each launcher runs next. Returns the look's result."""
    with folder_lock(folder, wait=wait):
        stored = read_state(folder, ledger=ledger)
        design, history = stored if stored is not None else (asked, [])
        change = design.changed(asked)
        if change is not None:
            raise InputError(
                said(
                    f"the {ledger.kind} design in {folder} cannot change: ",
                    change,
                    "; start a new state folder for a new design",
                )
            )
        result = look(design, history)
        if not result.replayed:
            write_state(folder, design, [*history, result.record], files(design, result), wait=wait, ledger=ledger)
    return result


def look_notes(warnings: Sequence[str], record: Mapping[str, Any]) -> list[str]:
    """What a watch or race says after its look: the intake's warnings, then the look's own notes from its record
    (runs the look before listed that never arrived), so a replayed look says them again."""
    note = missing_note(dict(record))
    return [*warnings, *([note] if note else [])]
