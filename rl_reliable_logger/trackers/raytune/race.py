"""Race a sweep's configurations with Ray Tune: each look's launch list runs as Tune trials (the ``[raytune]`` extra).

:func:`race_tune` is the loop a user would write around ``rl-reliable race``: look 1 runs every configuration on
every task with the first look's seeds; each later look runs exactly the runs the last look listed (those of
``runs.csv`` in the state folder), through a :class:`~.listed.ListedRuns` searcher; after each look's trials it
reads every look's experiment, takes the race's next look (:func:`rl_reliable_logger.race`, the same state folder,
replay and refusals as the command) and stops when the race does. Each look is its own Tune experiment,
``<storage_path>/<name>-look<k>``; a look whose experiment folder exists is not run again, so an interrupted loop
called again goes on where it stopped.

Each trial's config holds ``algorithm``, the hyperparameters, ``task`` and ``seed`` (and the fixed values of
``param_space``); the trainable reports ``score_key``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...data.scores import ScoreTable
from ...errors import InputError
from ...looks.launch import new_runs, seeds_taken
from ...looks.race import race
from .listed import tune_config
from .source import raytune_table


def race_tune(
    trainable: Callable[..., Any],
    configurations: Sequence[Mapping[str, Any]],
    tasks: Sequence[str],
    *,
    state: str | os.PathLike,
    storage_path: str | os.PathLike,
    looks: int,
    max_runs: int,
    score_key: str,
    delta: float = 0.0,
    alpha: float = 0.05,
    metric: str = "iqm",
    name: str = "race",
    param_space: Mapping[str, Any] | None = None,
    score_rule: str | None = None,
    run_config: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    """Race ``configurations`` (dicts of hyperparameter values, with ``algorithm`` when several algorithms race)
    on ``tasks`` with Ray Tune, until a configuration of each algorithm is selected within ``delta`` of its best
    (with probability at least ``1 - alpha``) or the last look; returns the last look's
    :class:`~rl_reliable_logger.analysis.race.RaceResult`.

    ``options`` are ``race()``'s (``reps``, ``seed``, ``normalize``, ...); ``run_config`` more keywords of Tune's
    ``RunConfig`` (its ``storage_path`` and ``name`` are the look's).

    Example:
        >>> result = race_tune(train, [{"lr": 1e-3}, {"lr": 1e-2}], ["CartPole-v1"], state="race",  # doctest: +SKIP
        ...                    storage_path="/tmp/tune", looks=4, max_runs=8, score_key="return", delta=10.0)
        >>> result.best  # doctest: +SKIP
        {'algorithm': 'ppo', 'lr': 0.001}
    """
    configs = [dict(c) for c in configurations]
    if not configs or not tasks:
        raise InputError("race_tune() needs configurations and tasks to race")
    keys = sorted({k for c in configs for k in c} - {"algorithm"})
    if not keys:
        raise InputError("each configuration needs a hyperparameter value (a key other than `algorithm`)")
    if {"task", "seed"} & set(keys):
        raise InputError("`task` and `seed` are set by the race; name the hyperparameters otherwise")
    storage = Path(storage_path).resolve()
    first = math.ceil(int(max_runs) / int(looks))
    runs = [
        {"algorithm": c.get("algorithm", "algorithm"), **{k: c.get(k) for k in keys}, "task": t, "seed": s}
        for c in configs
        for t in tasks
        for s in range(first)
    ]
    result = None
    for look in range(1, int(looks) + 1):
        folder = storage / f"{name}-look{look}"
        if not folder.exists():
            _run_look(trainable, runs, storage, folder.name, param_space, run_config)
        table = _read(storage, name, look, score_key, keys, score_rule)
        result = race(
            table,
            state,
            looks=looks,
            max_runs=max_runs,
            hyperparameter_keys=keys,
            delta=delta,
            alpha=alpha,
            metric=metric,
            **options,
        )
        if result.stop:
            return result
        # = the state's runs.csv: a trial left out (errored, or cut off by an interruption) keeps its seed
        listed = new_runs(seeds_taken(table, keys), result.launch)
        runs = [{str(k): v for k, v in r.items()} for r in listed.to_dict("records")]
    return result


def _run_look(
    trainable: Callable[..., Any],
    runs: Sequence[Mapping[str, Any]],
    storage: Path,
    name: str,
    param_space: Mapping[str, Any] | None,
    run_config: Mapping[str, Any] | None,
) -> None:
    """Exactly ``runs`` as the trials of one Tune experiment."""
    from ray import train, tune

    config_class: Any = getattr(tune, "RunConfig", None) or train.RunConfig  # Ray 2.40 has train.RunConfig only
    tuner = tune.Tuner(
        trainable,
        param_space=dict(param_space or {}),
        tune_config=tune_config([_plain(r) for r in runs]),
        run_config=config_class(storage_path=str(storage), name=name, **dict(run_config or {})),
    )
    tuner.fit()


def _plain(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run's config with plain Python values (numpy and pandas scalars from ``runs.csv`` made plain)."""
    return {str(k): (v.item() if hasattr(v, "item") else v) for k, v in run.items()}


def _read(
    storage: Path, name: str, looks: int, score_key: str, keys: Sequence[str], score_rule: str | None
) -> ScoreTable:
    """Every look's trials so far as one table (a configuration's run is its config and seed), with every look's
    trials left out (unfinished or errored) in ``source["excluded"]``, so no later look launches their seeds."""
    frames: list[pd.DataFrame] = []
    excluded: list[dict[str, Any]] = []
    for k in range(1, looks + 1):
        table = raytune_table(
            storage / f"{name}-look{k}",
            score_key=score_key,
            hyperparameter_keys=[f"config/{key}" for key in keys],
            score_rule=score_rule,
        )
        frames.append(table.frame[["algorithm", *keys, "task", "seed", "score"]])
        excluded += table.source.get("excluded") or []
    frame = pd.concat(frames, ignore_index=True)
    return ScoreTable(frame, hyperparameter_keys=list(keys), source={"excluded": excluded} if excluded else None)
