"""``gate()``: keep or discard a candidate against the incumbent, the next look of a stream recorded in a state folder
(``kind == "gate"``).

The state folder is the :data:`GATE` ledger (:mod:`.ledger`: the frozen design and every look, read, checked and
written by the same functions as a watch's and a race's; the one writer, its lock and kill recovery); the launch
files are :mod:`.launch`'s (the seeds to run next, on both sides). The look itself is :mod:`..analysis.gate`'s, the
statistics :mod:`..stats.gate`'s. ``docs/gate.md`` says what the stream guarantees.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import gate as ga
from ..analysis.gate_options import GateDesign
from ..analysis.inputs import FieldOptions, as_score_table, split_field_options
from ..data.scores import ScoreTable
from ..errors import InputError, ReliabilityWarning, caller_stacklevel
from ..stats.gate import online
from ..wording import kw, said
from .launch import parameters as launch_parameters_of
from .launch import run_files
from .ledger import Ledger, next_look

#: What every recorded look holds, each field's type.
LOOK_FIELDS: dict[str, type | tuple[type, ...]] = {
    "look": int,
    "hash": str,
    "name": str,
    "candidate": int,
    "incumbent": str,
    "seeds": list,
    "scores": list,
    "incumbent_scores": list,
    "outcome": str,
    "z": (int, float, str),
    "mean": (int, float),
    "estimate": (int, float),
    "next_seeds": list,
    "charged": (int, float),
    "budget": (int, float),
    "reason": str,
}


def _look_problem(look: dict[str, Any], i: int) -> str | None:
    """What a look must hold beyond its fields' types: a known outcome, one score per seed on each side, and the
    hash of its scores (a score edited without its hash is refused)."""
    if look["outcome"] not in ga.VERDICTS or look["outcome"] == "too_few":
        return f"look {i}'s outcome {look['outcome']!r} is not one a gate records"
    if not len(look["seeds"]) == len(look["scores"]) == len(look["incumbent_scores"]) > 0:
        return f"look {i} does not hold one score per seed on each side"
    if not isinstance(look.get("candidacy"), bool):
        return f"look {i} does not say whether it is a SAFFRON candidate"
    try:
        seeds = [str(s) for s in look["seeds"]]
        digest = ga.record_hash(look["name"], seeds, look["scores"], look["incumbent_scores"])
    except (TypeError, ValueError):
        return f"look {i}'s scores are not numbers"
    return None if digest == look["hash"] else f"look {i}'s scores do not match its hash"


def notes(*tables: ScoreTable) -> list[str]:
    """The intake's warnings that apply to a gate, each said once: all but its notes on runs per cell, which are
    about bootstrap intervals (a gate's test is exact for a few seeds)."""
    skipped = {line for t in tables for line in t.interval_notes}
    return [line for line in dict.fromkeys(w for t in tables for w in t.warnings) if line not in skipped]


#: A gate's state folder: its design and every look (the stream's table, ``stream.csv``, and the launch files of
#: the next seeds are written beside them by :func:`gate`, whose look knows the whole stream).
GATE = Ledger("gate", ga.Design, ga.result_from, lambda result: {}, LOOK_FIELDS, _look_problem)


def _audit(design: ga.Design, history: list[dict[str, Any]], folder: Path) -> None:
    """Every recorded level is the one the online rule gives after the looks before it (a ledger whose levels were
    edited, even with its manifest rewritten, is refused)."""
    rule = design.online_rule
    stream = ga.Stream()
    for record in history:
        stream.abandon(record)
        if record["level"] is not None:
            expected = online.level(rule, stream.tests.candidate, stream.tests.rejected)
            if not math.isclose(float(record["level"]), expected, rel_tol=1e-9, abs_tol=1e-15):
                raise InputError(
                    f"{folder / 'looks.json'}: look {record['look']}'s level {record['level']} is not the one the "
                    f"stream gives ({expected:.6g}); the gate state was edited, start a new state folder"
                )
        stream.add(record)


def gate(
    candidate: ScoreTable | pd.DataFrame | str | os.PathLike,
    incumbent: ScoreTable | pd.DataFrame | str | os.PathLike,
    *,
    state: str | os.PathLike,
    name: str,
    min_effect: float,
    alpha: float = 0.05,
    max_seeds: int = 10,
    metric: str = "mean",
    launch_parameters: Mapping[str, str] | None = None,
    program: str = "train.py",
    wait: float | None = None,
    **options: Any,
) -> ga.GateResult:
    """Keep or discard the candidate ``name`` against the incumbent: the next look of the stream recorded in the folder
    ``state``, with the false-discovery rate over every candidate of the stream at most ``alpha``.

    ``candidate`` and ``incumbent``: each one algorithm's runs (a ScoreTable, a long DataFrame or a score file, read
    with ``evaluate()``'s field keywords, ``algorithm_key=``, ...) on the same seeds (common random numbers) and
    tasks; a seed's score is the registered ``metric`` over its runs on the tasks. A seed on one side only is an error
    naming it. The first call freezes the stream's design: ``min_effect`` (the smallest improvement worth keeping, in
    the metric's units), ``alpha``, ``max_seeds`` (paired seeds per candidate at most), ``metric`` and the tasks; a
    later call asking for another is refused in one sentence.

    The same ``name`` again, with more seeds, is that candidate's next look; a new ``name`` is the next candidate
    (one still open is then discarded: abandoned). Every candidate runs on fresh seeds: ``next_seeds`` says which
    (on both sides). A kept candidate becomes the incumbent, on its measured seeds. The same scores as a recorded look
    return it without a new look (``replayed``).

    Returns a :class:`~rl_reliable_logger.analysis.gate.GateResult`: ``.verdict`` (``keep``, ``discard``,
    ``run_more``), ``.next_seeds``, ``.interval`` (of candidate - incumbent at this look), ``.level``,
    ``.alpha_spent``, ``.wealth``, ``.estimate``, ``.reason`` and ``.stream`` (one row per candidate). The folder
    also gets ``runs.csv`` and each tracker's launch files for the next seeds (``launch_parameters``: the parameter
    names of ``algorithm``, ``task`` and ``seed``; ``program``: the script of a sweep grid). It is locked from
    reading the state to writing it back (a second gate of it waits up to ``wait`` seconds). See ``docs/gate.md``.

    Example (a change that helps by about 2 on each seed, against ``min_effect=0.2``; each look runs the seeds the
    last one asked for, until the verdict is final):
        >>> import pandas as pd
        >>> def runs(name, shift, seeds):
        ...     return pd.DataFrame({"algorithm": name, "task": "cartpole", "seed": list(seeds),
        ...                          "score": [10 + shift + 0.2 * ((7 * s + len(name)) % 5) for s in seeds]})
        >>> seeds = [0, 1, 2]
        >>> while True:
        ...     result = gate(runs("lr-3e-4", 2.0, seeds), runs("base", 0.0, seeds), state="gate-state",
        ...                   name="lr-3e-4", min_effect=0.2)
        ...     if result.verdict != "run_more":
        ...         break
        ...     seeds += result.next_seeds
        >>> result.verdict, result.seeds, result.next_seeds  # kept: the next candidate runs on fresh seeds
        ('keep', 8, (8, 9, 10))
    """
    folder = Path(state)
    fields, rest = split_field_options(options)
    if rest:
        raise InputError(
            said(
                kw(f"{next(iter(rest))}="),
                " does not apply to a gate; it takes the field keywords of evaluate() (algorithm_key=, ...), "
                "launch_parameters=, program= and wait=",
            )
        )
    if not isinstance(name, str) or not name.strip():
        raise InputError(said(kw("name="), f" must be the candidate's name (a non-empty text), got {name!r}"))
    reading = FieldOptions(**fields)
    cand, inc = as_score_table(candidate, reading), as_score_table(incumbent, reading)
    asked = ga.make_design(cand, GateDesign(min_effect=min_effect, alpha=alpha, max_seeds=max_seeds, metric=metric))
    chosen = launch_parameters_of(launch_parameters)  # a bad name is refused before a look is spent

    def look(design: ga.Design, history: list[dict[str, Any]]) -> ga.GateResult:
        _audit(design, history, folder)
        return ga.take_look(cand, inc, name, design, history)

    result = next_look(folder, GATE, asked, look, lambda design, r: _files(r, chosen, program), wait=wait)
    for line in notes(cand, inc):  # at the caller's line, once a look was taken
        warnings.warn(line, ReliabilityWarning, stacklevel=caller_stacklevel())
    return result


def _files(result: ga.GateResult, names: Mapping[str, str], program: str) -> dict[str, Any]:
    """The stream's table and what each launcher runs next: the next seeds on both sides (after a final verdict,
    the incumbent's runs on the next candidate's seeds: the candidate is not known yet)."""
    sides = {"run_more": [result.name, result.incumbent], "keep": [result.name], "discard": [result.incumbent]}[
        result.verdict
    ]  # after a keep the candidate is the incumbent
    tasks = result.design.tasks
    runs = pd.DataFrame(
        [{"algorithm": a, "task": t, "seed": s} for a in sides for t in tasks for s in result.next_seeds],
        columns=["algorithm", "task", "seed"],
    )
    stream = result.stream if result.stream is not None else pd.DataFrame(columns=ga.STREAM_COLUMNS)
    return {"stream.csv": stream, **run_files(runs, names, program=program)}
