"""The Tune experiments of a race's looks, read as one table: each look is one experiment or more (a look that was
interrupted is finished by another, its *attempt*), and the runs of a look that finished are the trials Tune
terminated normally in any of them (beside a state file a kill cut short: those race_tune's end records say ended,
:mod:`.ended`).

A look's first attempt is ``<storage>/<name>-look<k>``, a later one ``<name>-look<k>.<n>`` (n = 2, 3, ...). An
attempt folder without Tune's state file (Tune killed before it wrote one) holds no finished run; a trial left
out (still running or pending when its look was cut off, or errored) is listed in ``source["excluded"]``, so no
later look launches its seed for another run. A run is known by its algorithm, hyperparameter values (compared as
values, :func:`...data.names.value_key`), task and seed (:func:`...data.names.seed_key`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ...data.names import seed_key, value_key
from ...data.scores import ScoreTable
from ..base.intake import SourceRuns, read_table
from ..base.reading import ReadOptions
from ..base.records import FINISHED
from ..base.request import SourceRequest
from .experiment import has_state
from .keys import DEFAULT_STEP
from .source import RayTuneSource, table_request


def attempts(storage: Path, name: str, look: int) -> Iterator[Path]:
    """The existing attempt folders of ``look``, in the order they were made."""
    first = storage / f"{name}-look{look}"
    if not first.exists():
        return
    yield first
    n = 2
    while (storage / f"{name}-look{look}.{n}").exists():
        yield storage / f"{name}-look{look}.{n}"
        n += 1


def next_attempt(storage: Path, name: str, look: int) -> str:
    """The name of the experiment that runs ``look``'s runs next (its first attempt, or the one after the last)."""
    made = len(list(attempts(storage, name, look)))
    return f"{name}-look{look}" if made == 0 else f"{name}-look{look}.{made + 1}"


def run_key(run: Mapping[str, Any], keys: Sequence[str]) -> tuple[Any, ...]:
    """A run as a key: its algorithm, hyperparameter values (as values), task and seed."""
    return (str(run["algorithm"]), *(value_key(run.get(k)) for k in keys), str(run["task"]), seed_key(run["seed"]))


@dataclass(frozen=True)
class TrialReading:
    """How a race reads its trials: the reported metric, the step counter and the reading options."""

    score_key: str
    step_key: str = DEFAULT_STEP
    read: ReadOptions = field(default_factory=ReadOptions)


def _attempt(folder: Path, keys: Sequence[str], reading: TrialReading) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One attempt's finished runs (algorithm, keys, task, seed, score) and the runs it left out."""
    columns = ["algorithm", *keys, "task", "seed", "score"]
    if not has_state(folder):
        return pd.DataFrame(columns=columns), []
    read = replace(reading.read, hyperparameter_keys=[f"config/{key}" for key in keys])
    request = table_request(read, reading.score_key)
    runs = RayTuneSource(folder, step_key=reading.step_key).runs(request)  # the experiment read once
    if not any(r.state == FINISHED for r in runs.records):  # nothing finished: every trial is left out
        cells = ["algorithm", *keys, "task", "seed"]
        return pd.DataFrame(columns=columns), [{k: r.config.get(k) for k in cells} for r in runs.records]
    table = read_table(_Read(runs), request)
    return table.frame[columns], list(table.source.get("excluded") or [])


class _Read:
    """An experiment's runs already read, as the Source the one intake takes them from."""

    tracker = "raytune"

    def __init__(self, read: SourceRuns) -> None:
        self.read = read

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        return self.read


def read_looks(
    storage: Path, name: str, looks: int, keys: Sequence[str], reading: TrialReading
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Every finished run of looks 1..``looks`` (every attempt) and the runs they left out."""
    frames: list[pd.DataFrame] = []
    excluded: list[dict[str, Any]] = []
    for k in range(1, looks + 1):
        for folder in attempts(storage, name, k):
            frame, left = _attempt(folder, keys, reading)
            frames.append(frame)
            excluded += left
    filled = [f for f in frames if len(f)]
    empty = pd.DataFrame(columns=["algorithm", *keys, "task", "seed", "score"])
    return (pd.concat(filled, ignore_index=True) if filled else empty), excluded


def race_table(frame: pd.DataFrame, excluded: list[dict[str, Any]], keys: Sequence[str]) -> ScoreTable:
    """The finished runs as the race reads them, the runs left out beside them (no later look relaunches a seed)."""
    return ScoreTable(frame, hyperparameter_keys=list(keys), source={"excluded": excluded} if excluded else None)


def unfinished(
    listed: Sequence[Mapping[str, Any]], finished: pd.DataFrame, keys: Sequence[str]
) -> list[dict[str, Any]]:
    """The listed runs no attempt finished, in listed order (each once)."""
    done = {run_key({str(k): v for k, v in r.items()}, keys) for r in finished.to_dict("records")}
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for run in listed:
        key = run_key(run, keys)
        if key not in done:
            out.setdefault(key, dict(run))
    return list(out.values())
