"""Ray Tune experiments as a Source: each trial one run, its config naming algorithm, task, seed and
hyperparameters, its last reported metric the score (or its history the curve).

A Tune experiment is read through Ray's public API only: a ``ResultGrid`` (what ``Tuner.fit()`` returns)
or an experiment folder opened with ``ray.tune.ExperimentAnalysis`` and wrapped in a ``ResultGrid``. Keys
are Ray's flattened names: ``config/algo`` is the trial config's ``algo`` (``config/env/name`` a nested
one), and a metric is named as reported (``eval/return``). The runs then go through the grouping and
score rules every tracker shares (:func:`~rl_reliable_logger.trackers.base.records.records_to_table`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...data.scores import ScoreTable
from ...errors import InputError, TrackerError
from ..base.messages import kw
from ..base.records import FINISHED, RunRecord, records_to_table
from ..base.scoring import parse_score_rule
from .keys import DEFAULT_KEYS, DEFAULT_STEP

_PREFIX = "config/"


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


def _flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as Ray flattens them: ``{"env": {"name": "x"}}`` -> ``{"env/name": "x"}``."""
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, name + "/"))
        else:
            out[name] = value
    return out


def _trial_id(result: Any) -> str:
    metrics = result.metrics or {}
    if metrics.get("trial_id"):
        return str(metrics["trial_id"])
    return os.path.basename(str(result.path))


def _history(result: Any, key: str, step_key: str) -> list[tuple[float, float]]:
    """(step, value) of every reported result that has ``key``; steps are ``step_key`` (or the report's rank)."""
    frame = result.metrics_dataframe
    if frame is None or key not in frame.columns:
        return []
    steps = frame[step_key] if step_key in frame.columns else range(1, len(frame) + 1)
    return [(float(s), v) for s, v in zip(steps, frame[key]) if v is not None and v == v]


def _records(results: Iterable[Any], history_keys: Sequence[str], step_key: str) -> list[RunRecord]:
    records = []
    for result in results:
        metrics = dict(result.metrics or {})
        config = metrics.pop("config", None) or result.config or {}
        history = {key: _history(result, key, step_key) for key in history_keys}
        records.append(
            RunRecord(
                run_id=_trial_id(result),
                name=os.path.basename(str(result.path)) if result.path else None,
                state=FINISHED if result.error is None else "error",
                config=_flat(config),
                summary=_flat(metrics),
                history=history,
                attrs={"path": str(result.path)} if result.path else {},
                source="raytune",
            )
        )
    return records


def _results(grid: Any) -> list[Any]:
    """The trials' ``Result`` objects of a ResultGrid (indexed, with a length: it defines no ``__iter__``), in trial
    order (trial ids count up as Tune creates trials), so the report's algorithm order does not depend on which
    trial finished first or on how the experiment was opened."""
    return sorted((grid[i] for i in range(len(grid))), key=_trial_id)


def _result_grid(experiment: Any) -> tuple[list[Any], str]:
    """(the trials' Results, where they came from): a ResultGrid as is, a folder through ``ExperimentAnalysis``."""
    if not isinstance(experiment, (str, os.PathLike)):
        if not (hasattr(experiment, "__len__") and hasattr(experiment, "__getitem__")):
            raise InputError(
                f"{type(experiment).__name__} is no Ray Tune experiment: pass a ResultGrid (what Tuner.fit() "
                "returns) or the experiment's folder."
            )
        return _results(experiment), str(getattr(experiment, "experiment_path", "a Ray Tune ResultGrid"))
    path = os.fspath(experiment)
    if not os.path.isdir(path):
        raise InputError(f"Ray Tune experiment folder {str(path)!r} does not exist or is not a folder.")
    try:
        from ray.tune import ExperimentAnalysis, ResultGrid
    except ImportError as err:
        raise TrackerError(
            f"reading a Ray Tune experiment needs Ray Tune ({err}): pip install 'rl_reliable_logger[raytune]'."
        ) from None
    try:
        analysis = ExperimentAnalysis(path)
    except (ValueError, FileNotFoundError, OSError) as err:
        detail = " ".join(str(err).split())[:200]
        raise InputError(
            f"{str(path)!r} is not a Ray Tune experiment folder (the folder Tuner's RunConfig(storage_path, name) "
            f"wrote, with an experiment_state-*.json): {detail}"
        ) from None
    return _results(ResultGrid(analysis)), path


def trial_records(experiment: str | os.PathLike | Any, *, step_key: str = DEFAULT_STEP) -> list[RunRecord]:
    """Every trial of ``experiment`` (a ResultGrid or its folder) as a tracker-neutral record (no history)."""
    return _records(_result_grid(experiment)[0], (), step_key)


def raytune_table(
    experiment: str | os.PathLike | Any,
    *,
    score_key: str,
    algorithm_key: str = DEFAULT_KEYS["algorithm"],
    task_key: str = DEFAULT_KEYS["task"],
    seed_key: str = DEFAULT_KEYS["seed"],
    hyperparameter_keys: Sequence[str] = (),
    score_rule: str | None = None,
    curves: bool = False,
    step_key: str = DEFAULT_STEP,
    include_unfinished: bool = False,
    on_invalid: str = "raise",
    names: str = "strict",
) -> ScoreTable:
    """A ScoreTable from a Ray Tune experiment: a ``ResultGrid`` or the experiment's folder.

    Each trial is one run: ``algorithm_key``, ``task_key`` and ``seed_key`` name keys of its config
    (``config/algo``), ``hyperparameter_keys`` more of them, each a column named after the key without
    ``config/`` (``config/lr`` -> ``lr``), for ``evaluate(table, hyperparameter_keys=["lr"])``: the tuning
    view then picks the configuration on a seed aggregate with intervals and split-half selection.
    ``score_key`` is a reported metric: by default the trial's last reported value; ``score_rule``
    (``mean-last-N``, ``at-budget:STEP``, ``max``) reads its history, whose steps are ``step_key``
    (``training_iteration``). ``curves=True`` adds every report of ``score_key`` as learning-curve rows.
    Trials that ended in an error are left out (listed in ``table.source["excluded"]``) unless
    ``include_unfinished``.

    Example:
        >>> grid = tuner.fit()                                                        # doctest: +SKIP
        >>> table = raytune_table(grid, score_key="eval/return", algorithm_key="config/algo",
        ...                       hyperparameter_keys=["config/lr"])                  # doctest: +SKIP
        >>> evaluate(table, hyperparameter_keys=["lr"], seed=0).tuning               # doctest: +SKIP
    """
    if not score_key or not str(score_key).strip():
        raise InputError(f"{kw('score_key=')} is empty: name the reported metric with the score (e.g. eval/return).")
    try:
        rule = parse_score_rule(score_rule)
    except ValueError as err:
        raise InputError(str(err)) from None
    results, where = _result_grid(experiment)
    wanted = [score_key] if (rule.needs_history or curves) else []
    records = _records(results, wanted, step_key)
    extra = {config_name(key): f"config.{config_name(key)}" for key in hyperparameter_keys}
    info = {
        "tracker": "raytune",
        "experiment": where,
        "location": f"Ray Tune experiment {where!r}",
        "step_key": step_key,
    }
    return records_to_table(
        records,
        algorithm=f"config.{config_name(algorithm_key)}",
        task=f"config.{config_name(task_key)}",
        seed=f"config.{config_name(seed_key)}",
        score=f"summary.{score_key}",
        include_unfinished=include_unfinished,
        on_invalid=on_invalid,
        history_key=score_key if curves else None,
        source=info,
        extra_fields=extra,
        score_rule=rule,
        names=names,
    )
