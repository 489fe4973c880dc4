"""What :func:`~rl_reliable_logger.evaluate` accepts as its scores, checked like the command line checks a file.

A :class:`~rl_reliable_logger.data.scores.ScoreTable` is used as it is; a pandas DataFrame in the documented long
form (``algorithm, task, seed, score``, optionally ``step``) and the path of a score file go through the same
readers as ``rl-reliable evaluate`` (so a bad name or score is the same one-sentence ``InputError``); anything
else is an ``InputError`` that says what to pass, never an ``AttributeError`` from deep inside the analysis.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from ..data.scores import ScoreTable
from ..errors import InputError

__all__ = ["as_score_table"]


def as_score_table(table: Any) -> ScoreTable:
    """``table`` as a ScoreTable: a ScoreTable, a long-form DataFrame or a file path; else an InputError.

    Example:
        >>> df = pd.DataFrame({"algorithm": ["A", "A"], "task": ["t", "t"], "seed": [0, 1], "score": [1.0, 2.0]})
        >>> as_score_table(df).algorithms
        ['A']
    """
    if isinstance(table, ScoreTable):
        return table
    if isinstance(table, pd.DataFrame):
        return ScoreTable(table)
    if isinstance(table, (str, os.PathLike)):
        return ScoreTable.from_file(table)
    hint = (
        "; for {algorithm: {task: [score per run]}} use ScoreTable.from_nested(...), for rliable's "
        "{algorithm: array[runs, tasks]} ScoreTable.from_rliable(...)"
        if isinstance(table, dict)
        else ""
    )
    raise InputError(
        f"evaluate() needs the scores as a ScoreTable, a pandas DataFrame in long form (columns algorithm, task, "
        f"seed, score and optionally step) or the path of a score file, not {type(table).__name__}{hint}"
    )
