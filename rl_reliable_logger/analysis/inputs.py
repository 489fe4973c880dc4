"""What :func:`~rl_reliable_logger.evaluate` accepts as its scores, read the one way the command line reads a file.

A :class:`~rl_reliable_logger.data.scores.ScoreTable` is used as it is; a pandas DataFrame in long form and the path
of a score file are read by :meth:`FieldOptions.read`, the reader of ``rl-reliable evaluate`` too: the same field
options (``algorithm_key=``, ..., ``run_key=``, ``drop_invalid=``, ``normalize_names=``, and the sweep's
``hyperparameter_keys=``, which tell a configuration's runs apart) give the same table and the same one-sentence
``InputError``; anything else is an ``InputError`` that says what to pass, never an ``AttributeError`` from deep
inside the analysis.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import pandas as pd

from ..data.scores import DEFAULT_STEP, ScoreTable
from ..errors import InputError
from ..wording import kw, said
from .declared import OptionError

__all__ = ["FieldKeywords", "FieldOptions", "as_score_table", "split_field_options"]


@dataclass(frozen=True)
class FieldOptions:
    """Where each field of a run is in a user's table, and how bad rows and names are treated: the keywords of
    ``evaluate()`` for the command line's field flags (``--algorithm-key`` is ``algorithm_key=``, ``--run-key``
    ``run_key=``, ``--drop-invalid`` ``drop_invalid=True``, ``--normalize-names`` ``normalize_names=True``).
    ``hyperparameter_keys``: the sweep's configuration columns (the analysis option of that name): runs of
    different configurations may share a seed."""

    algorithm_key: str = "algorithm"
    task_key: str = "task"
    seed_key: str | None = "seed"
    score_key: str = "score"
    run_key: str | None = None
    step_key: str | None = DEFAULT_STEP
    drop_invalid: bool = False
    normalize_names: bool = False
    hyperparameter_keys: tuple[str, ...] = ()
    #: the success-count columns (the analysis options ``successes=``, ``episodes=``): a file of counts without a
    #: score column is scored by the rate
    success_counts: tuple[str, str] | None = None

    @property
    def sweep_keys(self) -> tuple[str, ...] | None:
        """The configuration columns, None without a sweep (as the protocol checks take them)."""
        return self.hyperparameter_keys or None

    def read(self, table: pd.DataFrame | str | os.PathLike[str], source: Mapping[str, Any] | None = None) -> ScoreTable:
        """The ScoreTable of a long DataFrame or a score file (CSV, TSV, Parquet, JSON) by these options."""
        keywords: dict[str, Any] = {
            "algorithm": self.algorithm_key,
            "task": self.task_key,
            "seed": self.seed_key,
            "score": self.score_key,
            "run_id": self.run_key,
            "step": self.step_key,
            "on_invalid": "drop" if self.drop_invalid else "raise",
            "names": "normalize" if self.normalize_names else "strict",
            "hyperparameter_keys": list(self.hyperparameter_keys),
            "rate_of": self.success_counts,
        }
        if source is not None:
            keywords["source"] = source
        if isinstance(table, pd.DataFrame):
            return ScoreTable(table, **keywords)
        return ScoreTable.from_file(table, **keywords)


class FieldKeywords(TypedDict, total=False):
    """The field keywords of ``evaluate()`` (:class:`FieldOptions`, but ``hyperparameter_keys``, an analysis
    option)."""

    algorithm_key: str
    task_key: str
    seed_key: str | None
    score_key: str
    run_key: str | None
    step_key: str | None
    drop_invalid: bool
    normalize_names: bool


#: The keywords of :class:`FieldOptions` that are no analysis option.
FIELD_KEYWORDS = tuple(
    f.name for f in dataclasses.fields(FieldOptions) if f.name not in ("hyperparameter_keys", "success_counts")
)


def split_field_options(keywords: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``evaluate()``'s keywords split into the field options (the keywords of :class:`FieldOptions`) and the
    analysis options."""
    fields = {k: v for k, v in keywords.items() if k in FIELD_KEYWORDS}
    rest = {k: v for k, v in keywords.items() if k not in FIELD_KEYWORDS}
    return fields, rest


def as_score_table(table: Any, fields: FieldOptions = FieldOptions()) -> ScoreTable:
    """``table`` as a ScoreTable: a ScoreTable, a long-form DataFrame or a file path (read by ``fields``); else an
    InputError.

    Example:
        >>> df = pd.DataFrame({"algorithm": ["A", "A"], "task": ["t", "t"], "seed": [0, 1], "score": [1.0, 2.0]})
        >>> as_score_table(df).algorithms
        ['A']
        >>> sweep = pd.DataFrame({"algorithm": ["A"] * 2, "task": ["t"] * 2, "seed": [0, 0], "lr": [0.1, 0.01],
        ...                       "score": [1.0, 2.0]})
        >>> len(as_score_table(sweep, FieldOptions(hyperparameter_keys=("lr",))).frame)
        2
    """
    if isinstance(table, ScoreTable):
        given = [k for k in FIELD_KEYWORDS if getattr(fields, k) != getattr(FieldOptions(), k)]
        if given:
            raise OptionError(
                given[0],
                said(
                    kw(f"{given[0]}="),
                    " says how to read a DataFrame or a file; the scores are a ScoreTable already read (give its "
                    "fields to ScoreTable(...), or pass the DataFrame)",
                ),
            )
        return table
    if isinstance(table, (pd.DataFrame, str, os.PathLike)):
        return fields.read(table)
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
