"""Ray Tune experiments as a Source: each trial one run, its config naming algorithm, task, seed and
hyperparameters, its last reported metric the score (or its history the curve).

An experiment folder is read as data (:mod:`.experiment`: Tune's JSON and CSV files, never a pickle, never
Ray); a ``ResultGrid`` (what ``Tuner.fit()`` returns, already in the caller's memory) through its public API.
Keys are Ray's flattened names: ``config/algo`` is the trial config's ``algo`` (``config/env/name`` a nested
one), and a metric is named as reported (``eval/return``). The runs then go through the one intake every
Source shares (:func:`~rl_reliable_logger.trackers.base.intake.read_table`): a trial is a finished run only when
Tune terminated it; ERROR, RUNNING, PENDING and PAUSED trials are left out and listed unless
``include_unfinished``. A ResultGrid whose experiment folder is on this machine and holds race_tune's end records
(:mod:`.ended`) is read as that folder is: a trial without an error and without an end record was cut off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...data.scores import ScoreTable
from ...errors import InputError
from ...wording import kw, said
from ..base.intake import SourceRuns, read_table
from ..base.messages import DROP_INVALID, Hints
from ..base.reading import SEPARATE_KEYWORDS, ReadOptions, read_options, request_of
from ..base.records import FINISHED, RunRecord
from ..base.request import SourceRequest
from ..base.reruns import start_seconds
from ..base.scoring import parse_score_rule
from .ended import ended, recording
from .experiment import (
    CUT_OFF,
    STATES,
    cut_off_note,
    cut_reports_note,
    finished_reports,
    flat,
    history,
    read_experiment,
    reports,
)
from .keys import DEFAULT_KEYS, DEFAULT_STEP

_PREFIX = "config/"

#: How the intake's messages name this source's options (its command has the key flags, no filter or run key).
HINTS = Hints(
    fields=said(
        "Name the trials' config keys with ",
        kw("algorithm_key="),
        ", ",
        kw("task_key="),
        " and ",
        kw("seed_key="),
        " (Ray's flattened names, e.g. config/algo) and the reported metric with ",
        kw("score_key="),
    ),
    keywords=frozenset({"include_unfinished=True", DROP_INVALID}),
    configuration="hyperparameter_keys=",
)


def config_name(key: str) -> str:
    """``config/algo`` -> ``algo`` (a key without the prefix is a config key too).

    Example:
        >>> config_name("config/optim/lr"), config_name("seed")
        ('optim/lr', 'seed')
    """
    text = str(key).strip()
    name = text[len(_PREFIX) :] if text.startswith(_PREFIX) else text
    if not name:
        raise InputError(f"config key {key!r} is empty: name a key of the trials' config, e.g. config/seed.")
    return name


def started(result: Mapping[str, Any]) -> float | None:
    """When a trial started: the time of its last report (Tune's ``timestamp``) less the time it ran
    (``time_total_s``); None when its results lack either."""
    stamp, ran = start_seconds(result.get("timestamp")), start_seconds(result.get("time_total_s"))
    return None if stamp is None or ran is None else stamp - ran


def _trial_id(result: Any) -> str:
    metrics = result.metrics or {}
    if metrics.get("trial_id"):
        return str(metrics["trial_id"])
    return os.path.basename(str(result.path))


def _grid_history(result: Any, key: str, step_key: str) -> list[tuple[float, float]]:
    """(step, value) of every reported result that has ``key``; steps are ``step_key`` (or the report's rank)."""
    frame = result.metrics_dataframe
    if frame is None or key not in frame.columns:
        return []
    steps = frame[step_key] if step_key in frame.columns else range(1, len(frame) + 1)
    return [(float(s), v) for s, v in zip(steps, frame[key]) if v is not None and v == v]


def _grid_ends(grid: Any) -> tuple[dict[str, int] | None, list[str]]:
    """The end records race_tune wrote beside the grid's experiment (:mod:`.ended`), when its recorder watched it
    and the experiment's folder is on this machine (None otherwise: the grid is read as Tune says), and the notes
    on records passed over."""
    where = getattr(grid, "experiment_path", None)
    if not isinstance(where, (str, os.PathLike)) or "://" in os.fspath(where) or not recording(Path(where)):
        return None, []
    return ended(Path(where))


def _grid_records(grid: Any, history_keys: Sequence[str], step_key: str) -> tuple[list[RunRecord], list[str]]:
    """The trials of a ResultGrid (indexed, with a length: it defines no ``__iter__``), in trial order, and the
    notes. A trial without an error is finished, unless race_tune's recorder watched the experiment and it has no
    end record: Tune cut it off when it stopped the whole experiment (:data:`.experiment.CUT_OFF`)."""
    ends, notes = _grid_ends(grid)
    records = []
    cut = 0
    for result in sorted((grid[i] for i in range(len(grid))), key=_trial_id):
        metrics = dict(result.metrics or {})
        config = metrics.pop("config", None) or result.config or {}
        state = FINISHED if result.error is None else "error"
        if state == FINISHED and ends is not None and _trial_id(result) not in ends:
            state, cut = STATES[CUT_OFF], cut + 1
        records.append(
            RunRecord(
                run_id=_trial_id(result),
                name=os.path.basename(str(result.path)) if result.path else None,
                state=state,
                config=flat(config),
                summary=flat(metrics),
                history={key: _grid_history(result, key, step_key) for key in history_keys},
                attrs={"path": str(result.path)} if result.path else {},
                source="raytune",
                started=started(metrics),
            )
        )
    if cut:
        notes.append(cut_off_note(str(getattr(grid, "experiment_path", "")), cut, len(records), "without an error"))
    return records, notes


def _is_grid(experiment: Any) -> bool:
    if isinstance(experiment, (str, os.PathLike)):
        return False
    if not (hasattr(experiment, "__len__") and hasattr(experiment, "__getitem__")):
        raise InputError(
            f"{type(experiment).__name__} is no Ray Tune experiment: pass a ResultGrid (what Tuner.fit() "
            "returns) or the experiment's folder."
        )
    return True


class RayTuneSource:
    """The trials of a Ray Tune experiment (its folder, read as data, or a ResultGrid) as a :class:`Source`.

    Example:
        >>> source = RayTuneSource("~/ray_results/bandits")                                   # doctest: +SKIP
        >>> table = source.table(score="eval/return", algorithm="config/algo")                # doctest: +SKIP
    """

    tracker = "raytune"

    def __init__(self, experiment: str | os.PathLike | Any, *, step_key: str = DEFAULT_STEP) -> None:
        self.experiment = experiment
        self.grid = _is_grid(experiment)
        self.step_key = step_key
        if not self.grid and not os.path.isdir(os.path.expanduser(os.fspath(experiment))):
            raise InputError(
                f"Ray Tune experiment folder {str(os.fspath(experiment))!r} does not exist or is not a folder."
            )

    def _read_request(self, request: SourceRequest) -> tuple[SourceRequest, str]:
        """The request in record references (``config/algo`` -> ``config.algo``, the metric -> ``summary.<metric>``)."""
        scores = [request.score] if isinstance(request.score, str) else list(request.score or ())
        if len(scores) != 1 or not str(scores[0]).strip():
            raise InputError(
                said(kw("score_key="), f" names one reported metric, got {', '.join(map(repr, scores)) or 'none'}.")
            )
        metric = str(scores[0]).strip()
        keys = {name: getattr(request, name) or DEFAULT_KEYS[name] for name in ("algorithm", "task", "seed")}
        refs = {name: f"config.{config_name(key)}" for name, key in keys.items()}
        read = replace(request, algorithm=refs["algorithm"], task=refs["task"], seed=refs["seed"])
        return replace(read, score=f"summary.{metric}"), metric

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """Every trial as a record (all states), with its reported history when the score rule or curves need it."""
        read, metric = self._read_request(request)
        try:
            rule = parse_score_rule(request.score_rule)
        except ValueError as err:
            raise InputError(str(err)) from None
        wanted = [metric] if rule.needs_history or request.curve_key else []
        info: dict[str, Any] = {"tracker": "raytune", "step_key": self.step_key}
        if self.grid:
            where = str(getattr(self.experiment, "experiment_path", "a Ray Tune ResultGrid"))
            info.update(experiment=where, location=f"Ray Tune experiment {where!r}")
            grid, notes = _grid_records(self.experiment, wanted, self.step_key)
            return SourceRuns(grid, "Ray Tune", info, request=read, notes=notes, hints=HINTS)
        experiment = read_experiment(self.experiment)
        where = str(experiment.folder)
        info.update(experiment=where, location=f"Ray Tune experiment {where!r}", state_file=str(experiment.state_file))
        records: list[RunRecord] = []
        unreadable: list[dict[str, Any]] = []
        cut: dict[str, str] = {}  # trial folder name -> its report file a kill cut
        for trial in experiment.trials:
            state = STATES.get(trial.status, trial.status.lower())
            record = RunRecord(
                run_id=trial.trial_id,
                name=trial.name,
                state=state,
                config=trial.config,
                summary=trial.last_result,
                history={},
                attrs={"path": str(trial.folder)} if trial.folder else {},
                source="raytune",
                started=trial.started if trial.started is not None else started(trial.last_result),
            )
            if wanted and (state == FINISHED or request.include_unfinished):
                try:
                    rows, file = (
                        finished_reports(trial) if state == FINISHED else (reports(trial, complete=False), None)
                    )
                except InputError as err:
                    unreadable.append({"run_id": trial.trial_id, "reason": str(err)})
                    continue
                if file is not None and trial.folder is not None:  # passed over: its run is not known whole
                    cut[trial.folder.name] = file
                    continue
                record.history = {key: history(rows, key, self.step_key) for key in wanted}
            records.append(record)
        notes = [*experiment.notes, cut_reports_note(experiment.folder, cut)] if cut else experiment.notes
        return SourceRuns(records, "Ray Tune", info, request=read, unreadable=unreadable, notes=notes, hints=HINTS)

    def table(
        self, request: SourceRequest | None = None, /, *, read: ReadOptions | None = None, **keywords: Any
    ) -> ScoreTable:
        """The trials as a ScoreTable (a :class:`SourceRequest`, or its field keywords and ``read``), through the
        one intake."""
        where = "RayTuneSource.table()"
        return read_table(self, request_of(request, read, keywords, where=where, column=_column, defaults={}))


def _column(key: str) -> tuple[str, str]:
    """A hyperparameter key's column and reference: ``config/lr`` -> ``lr``, ``config.lr``."""
    name = config_name(key)
    return name, f"config.{name}"


def trial_records(experiment: str | os.PathLike | Any, *, step_key: str = DEFAULT_STEP) -> list[RunRecord]:
    """Every trial of ``experiment`` (a ResultGrid or its folder) as a tracker-neutral record (no history)."""
    source = RayTuneSource(experiment, step_key=step_key)
    return list(source.runs(SourceRequest(score="training_iteration")).records)


def raytune_table(
    experiment: str | os.PathLike | Any,
    *,
    score_key: str,
    algorithm_key: str = DEFAULT_KEYS["algorithm"],
    task_key: str = DEFAULT_KEYS["task"],
    seed_key: str = DEFAULT_KEYS["seed"],
    step_key: str = DEFAULT_STEP,
    read: ReadOptions | None = None,
    **legacy: Any,
) -> ScoreTable:
    """A ScoreTable from a Ray Tune experiment: a ``ResultGrid`` or the experiment's folder.

    Each trial is one run: ``algorithm_key``, ``task_key`` and ``seed_key`` name keys of its config
    (``config/algo``). ``score_key`` is a reported metric: by default the trial's last reported value. ``read``
    (:class:`ReadOptions`) says how the trials are read: its ``hyperparameter_keys`` name more config keys, each a
    column named after the key without ``config/`` (``config/lr`` -> ``lr``), for
    ``evaluate(table, hyperparameter_keys=["lr"])``: the tuning view then picks the configuration on a seed
    aggregate with intervals and split-half selection; its ``score_rule`` (``mean-last-N``, ``at-budget:STEP``,
    ``max``) reads the metric's history, whose steps are ``step_key`` (``training_iteration``); ``curves=True``
    adds every report of ``score_key`` as learning-curve rows. Only trials Tune terminated normally are used:
    ERROR, RUNNING, PENDING and PAUSED trials are left out (listed in ``table.source["excluded"]``) unless
    ``include_unfinished``. A folder is read from its JSON and CSV files only (never a pickle; see docs/raytune.md).

    Example:
        >>> grid = tuner.fit()                                                        # doctest: +SKIP
        >>> table = raytune_table(grid, score_key="eval/return", algorithm_key="config/algo",
        ...                       read=ReadOptions(hyperparameter_keys=["config/lr"]))  # doctest: +SKIP
        >>> evaluate(table, hyperparameter_keys=["lr"], seed=0).tuning               # doctest: +SKIP
    """
    if not score_key or not str(score_key).strip():
        raise InputError(
            said(kw("score_key="), " is empty: name the reported metric with the score (e.g. eval/return).")
        )
    options = read_options(read, legacy, where="raytune_table()", accepted=(*SEPARATE_KEYWORDS, "include_unfinished"))
    request = table_request(options, score_key, algorithm_key=algorithm_key, task_key=task_key, seed_key=seed_key)
    return read_table(RayTuneSource(experiment, step_key=step_key), request)


def table_request(
    read: ReadOptions,
    score_key: str,
    *,
    algorithm_key: str = DEFAULT_KEYS["algorithm"],
    task_key: str = DEFAULT_KEYS["task"],
    seed_key: str = DEFAULT_KEYS["seed"],
) -> SourceRequest:
    """The request :func:`raytune_table` reads a Ray Tune experiment with (``read``, the keys)."""
    return read.fixed_curves("Ray Tune").request(
        score=score_key, column=_column, algorithm=algorithm_key, task=task_key, seed=seed_key
    )
