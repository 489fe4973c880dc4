"""How many runs, cells, tasks, algorithms and seeds some scores hold, and the one way to say it (and numbers).

A *run* is one (algorithm, task, run id) of the final scores: in a file read by seed, seed 0 of PPO on
Pong and seed 0 of SAC on Hopper are two runs (counting distinct run ids would say one). A *cell* is an
(algorithm, task) pair with at least one run. Every place that prints or publishes a count (console,
report.html, provenance, methods.md, both trackers, ``plan``) takes it from :func:`count_runs`
and words it with :meth:`Counts.text` / :func:`plural` / :func:`span`, so the numbers and the words
are the same everywhere.

Example:
    >>> import pandas as pd

from .names import seed_key
    >>> frame = pd.DataFrame({"algorithm": ["A", "A", "B", "B"], "task": ["x", "y", "x", "y"],
    ...                       "run_id": ["0", "0", "0", "0"], "seed": [0, 0, 0, 0]})
    >>> count_runs(frame).text()
    '4 runs (2 algorithms × 2 tasks, 1 run per cell, 1 seed)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .names import seed_key

if TYPE_CHECKING:  # the words are used by the CLI before pandas is loaded
    import pandas as pd

#: The plural of every counted word (one list: "run(s)" is never written).
_PLURALS = {
    "run": "runs",
    "algorithm": "algorithms",
    "task": "tasks",
    "cell": "cells",
    "seed": "seeds",
    "configuration": "configurations",
    "row": "rows",
    "step": "steps",
    "warning": "warnings",
    "folder": "folders",
    "file": "files",
    "problem": "problems",
    "pair": "pairs",
}


def plural(n: int, word: str, qualifier: str = "") -> str:
    """``1 run``, ``1,430 runs`` (thousands separated), for the words of the one list; ``qualifier`` goes
    between the number and the word (``2 unfinished offline runs``).

    Example:
        >>> plural(1, "algorithm"), plural(1430, "run"), plural(2, "run", "offline")
        ('1 algorithm', '1,430 runs', '2 offline runs')
    """
    return f"{n:,} {qualifier + ' ' if qualifier else ''}{word if n == 1 else _PLURALS[word]}"


#: The verbs that follow a count, plural form -> singular form (``1 run stops``, ``2 runs stop``).
_VERBS = {"have": "has", "stop": "stops", "lose": "loses", "were": "was", "lack": "lacks", "are": "is"}


def agree(n: int, verb: str) -> str:
    """The form of ``verb`` (given in the plural, from the one list) that agrees with a count of ``n``.

    Example:
        >>> f"{plural(1, 'run')} {agree(1, 'stop')}", f"{plural(3, 'cell')} {agree(3, 'have')}"
        ('1 run stops', '3 cells have')
    """
    return _VERBS[verb] if n == 1 else verb


def span(low: int, high: int) -> str:
    """A range of counts: ``4`` or ``4–5`` (en dash)."""
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def fixed(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, never ``-0.000`` (a tiny negative number rounds to ``0.000``).

    Example:
        >>> fixed(-0.0001), fixed(-0.25, 1), fixed(2.0)
        ('0.000', '-0.2', '2.000')
    """
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


@dataclass(frozen=True)
class Counts:
    """The counts of some final scores (see the module docstring for what a run and a cell are)."""

    runs: int
    algorithms: int
    tasks: int
    cells: int
    seeds: int | None  # distinct seeds; None when the runs have no seeds
    fewest_per_cell: int
    most_per_cell: int

    def text(self) -> str:
        """``1,430 runs (65 algorithms × 11 tasks, 2 runs per cell, 10 seeds)``: the one wording."""
        per_cell = span(self.fewest_per_cell, self.most_per_cell)
        runs = "run" if self.most_per_cell == 1 else "runs"
        parts = [f"{plural(self.algorithms, 'algorithm')} × {plural(self.tasks, 'task')}"]
        if self.cells != self.algorithms * self.tasks:
            parts[0] += f" ({plural(self.cells, 'cell')} with runs)"
        parts.append(f"{per_cell} {runs} per cell")
        if self.seeds is not None:
            parts.append(plural(self.seeds, "seed"))
        return f"{plural(self.runs, 'run')} ({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Counts:
        return cls(**{k: values.get(k) for k in cls.__dataclass_fields__})  # type: ignore[arg-type]


def count_runs(frame: pd.DataFrame) -> Counts:
    """The counts of a frame of final scores (columns ``algorithm``, ``task``, ``run_id``, optionally ``seed``).

    A frame with one row per run and step (learning curves) counts each run once.
    """
    keys = [c for c in ("algorithm", "task", "run_id") if c in frame.columns]
    runs = frame.drop_duplicates(keys) if "run_id" in keys else frame
    if runs.empty:
        return Counts(0, 0, 0, 0, None, 0, 0)
    per_cell = runs.groupby([runs["algorithm"].astype(str), runs["task"].astype(str)]).size()
    seeds = None
    if "seed" in runs.columns and runs["seed"].notna().any():
        seeds = len({seed_key(s) for s in runs["seed"].dropna()})
    return Counts(
        runs=len(runs),
        algorithms=int(runs["algorithm"].astype(str).nunique()),
        tasks=int(runs["task"].astype(str).nunique()),
        cells=len(per_cell),
        seeds=seeds,
        fewest_per_cell=int(per_cell.min()),
        most_per_cell=int(per_cell.max()),
    )
