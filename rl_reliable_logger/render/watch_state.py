"""The state folder of a watch: its frozen design and every look, as a verified bundle (``kind == "watch"``).

The folder goes through the results-folder guard (:mod:`.bundle`): it is written whole and swapped in
atomically, refused when it holds anything the tool did not write, and read only through its manifest, so
a look edited, removed or added by hand is refused instead of trusted. The looks themselves are computed by
:mod:`..analysis.watch`; this module only reads and writes them (render owns the bundle writer, and ``analysis``
never imports ``render``).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import watch as wt
from ..analysis.watch_options import FUTILITY, WatchDesign
from ..data.scores import ScoreTable
from ..errors import InputError, ReliabilityWarning, caller_stacklevel
from ..store.bundle import read_bundle, recover_swap, write_bundle
from ..store.kinds import BundleError
from ..store.lock import folder_lock
from ..store.manifest import MANIFEST
from .watch_launch import check_size, launch_files
from .watch_launch import parameters as launch_parameters_of

DESIGN, LOOKS = "design.json", "looks.json"


@dataclass(frozen=True)
class Ledger:
    """One kind of sequential state folder (a watch's, a race's): the bundle ``kind``, the ``design`` class
    (``from_json``/``to_json``), the ``result_from(record, design)`` of a recorded look, the ``tables`` of a result
    that the folder keeps as CSV beside the looks, and what every recorded look holds (``look_fields``: each field's
    type; ``item_problem(look, i)``: a problem with the look's per-pair or per-race records, or None). Every kind is
    read, checked and written by the same functions below: one ledger."""

    kind: str
    design: Any
    result_from: Callable[..., Any]
    tables: Callable[[Any], dict[str, pd.DataFrame]]
    look_fields: dict[str, type | tuple[type, ...]]
    item_problem: Callable[[dict[str, Any], int], str | None]


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
)


def read_state(folder: str | os.PathLike, *, ledger: Ledger = WATCH) -> tuple[Any, list[dict[str, Any]]] | None:
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
        raise BundleError(f"{root}: holds files that are not a {kind} state; pass a new or empty folder as `state=`")
    bundle = read_bundle(root)
    if bundle.kind != kind or {DESIGN, LOOKS} - set(bundle.contents):
        raise BundleError(f"{root}: is not a {kind} state folder (it holds a {bundle.kind}); pick another `state=`")
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


def seeds_taken(table: ScoreTable, keys: Sequence[str] = ()) -> pd.DataFrame:
    """(algorithm, a race's configuration ``keys``, task, seed) of every run a launch must not repeat: the runs
    analysed and the unfinished runs the source left out (``table.source["excluded"]``), which may still finish."""
    cells = ["algorithm", *keys, "task", "seed"]
    frame = table.frame[cells]
    unfinished = [e for e in table.source.get("excluded") or () if all(e.get(k) is not None for k in cells)]
    if not unfinished:
        return frame
    return pd.concat([frame.astype(object), pd.DataFrame(unfinished, columns=cells)], ignore_index=True)


def write_state(
    folder: str | os.PathLike,
    design: Any,
    looks: Sequence[dict[str, Any]],
    files: Mapping[str, Any] | None = None,
    *,
    wait: float | None = None,
    ledger: Ledger = WATCH,
) -> None:
    """Write the design and looks (the last look's tables as CSV, for a watch its decisions and launch list, and
    ``files``: what each launcher runs next, :mod:`.watch_launch`) through the one writer: escaped, swapped in
    whole, under the lock."""
    design_bytes = (json.dumps(design.to_json(), indent=1, sort_keys=True) + "\n").encode()
    looks_bytes = (json.dumps(list(looks), indent=1, sort_keys=True) + "\n").encode()
    last = ledger.result_from(looks[-1], design)
    contents = {DESIGN: design_bytes, LOOKS: looks_bytes, **ledger.tables(last), **(files or {})}
    digest = hashlib.sha256(design_bytes + b"\0" + looks_bytes).hexdigest()
    write_bundle(folder, contents, digest=digest, kind=ledger.kind, wait=wait)


def watch(
    table: ScoreTable,
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

    The first call freezes the design (``looks`` K, ``max_runs`` per (algorithm, task) cell, ``alpha``, the
    registered ``metric``, the ``compare``d algorithms (default: all, every pair among them), the error
    ``spending`` function ``obf`` or ``pocock``, ``futility=`` (default 0.1: from half the maximum runs on, a pair
    whose conditional power is below it stops as ``futile``; non-binding; 0: never), the tasks and the options
    that change the numbers: ``reps``, ``seed``, ``normalize``, ...). Every later call must ask for the same design; the same scores as a recorded
    look return that look without spending one. Returns ``.stop``, ``.decisions`` and ``.launch``
    (see ``docs/watch.md``). Beside ``launch.csv`` the folder gets what a launcher runs next
    (:func:`.watch_launch.launch_files`: ``runs.csv`` and each tracker's launch files, e.g. a sweep grid of
    ``program``), under the parameter names ``launch_parameters`` gives for
    ``algorithm``, ``task`` and ``seed`` (default: those words). The folder is locked from reading the state to
    writing it back: a second watch of the same folder waits up to ``wait`` seconds (then takes its own look, or
    replays this one for the same scores), else refuses in one sentence; no look is lost.

    Example:
        >>> result = watch(table, state="watch-state", looks=3, max_runs=10, reps=2000)   # doctest: +SKIP
        >>> result.stop, result.launch.head()                                               # doctest: +SKIP
    """
    folder = Path(state)
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
    asked = wt.make_design(table, design_options, **options)
    chosen = launch_parameters_of(launch_parameters)  # a bad name is refused before a look is spent
    check_size(asked.max_runs, len({a for pair in asked.pairs for a in pair}) * len(asked.tasks))
    with folder_lock(folder, wait=wait):  # from reading the state to writing it back: two looks never interleave
        stored = read_state(folder)
        design, history = stored if stored is not None else (asked, [])
        change = design.changed(asked)
        if change is not None:
            raise InputError(
                f"the watch design in {folder} cannot change: {change}; start a new state folder for a new design"
            )
        result = wt.take_look(table, design, history, **options)
        if not result.replayed:
            files = launch_files(seeds_taken(table), result.launch, chosen, program=program)
            write_state(folder, design, [*history, result.record], files, wait=wait)
    for line in table.warnings:  # at the caller's line, once a look was taken (else the error alone)
        warnings.warn(line, ReliabilityWarning, stacklevel=caller_stacklevel())
    return result
