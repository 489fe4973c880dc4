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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis import watch as wt
from ..analysis.watch_options import FUTILITY, WatchDesign
from ..data.scores import ScoreTable
from ..errors import InputError
from .bundle import MANIFEST, BundleError, read_bundle, write_bundle
from .watch_launch import launch_files
from .watch_launch import parameters as launch_parameters_of

DESIGN, LOOKS = "design.json", "looks.json"


def read_state(folder: str | os.PathLike) -> tuple[wt.Design, list[dict[str, Any]]] | None:
    """The design and looks recorded in ``folder`` (None for a missing or empty folder)."""
    root = Path(folder)
    if not root.is_symlink() and (not root.exists() or (root.is_dir() and not any(root.iterdir()))):
        return None
    if root.is_dir() and not (root / MANIFEST).exists():
        raise BundleError(f"{root}: holds files that are not a watch state; pass a new or empty folder as `state=`")
    bundle = read_bundle(root)
    if bundle.kind != "watch" or {DESIGN, LOOKS} - set(bundle.contents):
        raise BundleError(f"{root}: is not a watch state folder (it holds a {bundle.kind}); pick another `state=`")
    try:
        design = wt.Design.from_json(json.loads(bundle.contents[DESIGN]))
        looks = json.loads(bundle.contents[LOOKS])
    except ValueError as err:
        raise BundleError(f"{root}: the watch state is unreadable ({str(err)[:200]})") from None
    return design, list(looks)


def write_state(
    folder: str | os.PathLike,
    design: wt.Design,
    looks: Sequence[dict[str, Any]],
    files: Mapping[str, bytes] | None = None,
) -> None:
    """Write the design and looks (the last look's decisions and launch list as CSV, and ``files``: what each
    launcher runs next, :mod:`.watch_launch`) atomically."""
    design_bytes = (json.dumps(design.to_json(), indent=1, sort_keys=True) + "\n").encode()
    looks_bytes = (json.dumps(list(looks), indent=1, sort_keys=True) + "\n").encode()
    last = wt.result_from(looks[-1], design)

    def fill(tmp: Path) -> None:
        (tmp / DESIGN).write_bytes(design_bytes)
        (tmp / LOOKS).write_bytes(looks_bytes)
        last.decisions.to_csv(tmp / "decisions.csv", index=False)
        last.launch.to_csv(tmp / "launch.csv", index=False)
        for name, data in (files or {}).items():
            (tmp / name).write_bytes(data)

    digest = hashlib.sha256(design_bytes + b"\0" + looks_bytes).hexdigest()
    write_bundle(folder, fill, digest=digest, kind="watch")


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
    (:func:`.watch_launch.launch_files`: ``runs.csv``, ``sweep.yaml`` for ``wandb sweep`` with ``program``,
    ``mlflow-params.txt`` for ``mlflow run -P``), under the parameter names ``launch_parameters`` gives for
    ``algorithm``, ``task`` and ``seed`` (default: those words).

    Example:
        >>> result = watch(table, state="watch-state", looks=3, max_runs=10, reps=2000)   # doctest: +SKIP
        >>> result.stop, result.launch.head()                                               # doctest: +SKIP
    """
    folder = Path(state)
    stored = read_state(folder)
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
    design, history = stored if stored is not None else (asked, [])
    change = design.changed(asked)
    if change is not None:
        raise InputError(
            f"the watch design in {folder} cannot change: {change}; start a new state folder for a new design"
        )
    chosen = launch_parameters_of(launch_parameters)  # a bad name is refused before a look is spent
    result = wt.take_look(table, design, history, **options)
    if not result.replayed:
        frame = table.frame[["algorithm", "task", "seed"]]
        files = launch_files(frame, result.launch, chosen, program=program)
        write_state(folder, design, [*history, result.record], files)
    return result
