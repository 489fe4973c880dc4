"""Race a sweep's configurations with Ray Tune: each look's launch list runs as Tune trials (the ``[raytune]`` extra).

:func:`race_tune` is the loop a user would write around ``rl-reliable race``: look 1 runs every configuration on
every task with the first look's seeds; each later look runs exactly the runs the last look listed (those of
``runs.csv`` in the state folder), through a :class:`~.listed.ListedRuns` searcher; after each look's trials it
reads every look's experiments, takes the race's next look (:func:`rl_reliable_logger.race`, the same state
folder, replay and refusals as the command) and stops when the race does.

Each look is its own Tune experiment, ``<storage_path>/<name>-look<k>`` (:mod:`.attempts`). Called again after an
interruption (SIGTERM, SIGKILL, a crash: in any look), it goes on where it stopped: a look already recorded in
the state folder runs nothing; the look that was cut off runs exactly its listed runs that no attempt finished
(the same seeds, none twice), as another experiment ``<name>-look<k>.<n>``, and then takes the look. While a look
runs, Tune saves its experiment state at every step (``TUNE_GLOBAL_CHECKPOINT_S=0``, Tune's own setting), so a
trial Tune saw finish is never run again.

Each trial's config holds ``algorithm``, the hyperparameters, ``task`` and ``seed`` (and the fixed values of
``param_space``); the trainable reports ``score_key``.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...analysis.inputs import FIELD_KEYWORDS
from ...analysis.race_options import FEW_FIRST_RUNS
from ...errors import InputError
from ...looks.launch import new_runs, seeds_taken
from ...looks.ledger import read_state
from ...looks.race import RACE, race
from .attempts import next_attempt, race_table, read_looks, unfinished
from .listed import tune_config as listed_config

#: Keywords of ``raytune_table`` a race reads its trials with (as ``rl-reliable raytune`` takes them).
READING = ("on_invalid", "names", "reruns", "step_key")
#: ``race()``'s field keywords that say how to read the trials: each as the reading keyword it is.
FIELDS_AS_READING = {"drop_invalid": ("on_invalid", "drop"), "normalize_names": ("names", "normalize")}
#: TuneConfig keywords the race sets itself: each look runs exactly its listed runs.
OWN_TUNE = ("search_alg", "num_samples")


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
    tune_config: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    """Race ``configurations`` (dicts of hyperparameter values, with ``algorithm`` when several algorithms race)
    on ``tasks`` with Ray Tune, until a configuration of each algorithm is selected within ``delta`` of its best
    (with probability at least ``1 - alpha``) or the last look; returns the last look's
    :class:`~rl_reliable_logger.analysis.race.RaceResult`. Called again after an interruption, it finishes the
    look that was cut off (its listed runs that did not finish, the same seeds, none twice) and goes on.

    ``options`` are ``race()``'s (``reps``, ``seed``, ``first_runs``, ``stop_on_missing``, ...), and how the
    trials are read: ``on_invalid='drop'`` (or ``drop_invalid=True``), ``names=``, ``reruns=``, ``step_key=``
    (``raytune_table``'s). ``run_config``: more keywords of Tune's ``RunConfig`` (its ``storage_path`` and ``name``
    are the look's); ``tune_config``: more keywords of Tune's ``TuneConfig`` (``scheduler``,
    ``max_concurrent_trials``, ...; its ``search_alg`` and ``num_samples`` are the race's) and ``resources``, each
    trial's resources (``tune.with_resources``).

    Example:
        >>> result = race_tune(train, [{"lr": 1e-3}, {"lr": 1e-2}], ["CartPole-v1"], state="race",  # doctest: +SKIP
        ...                    storage_path="/tmp/tune", looks=4, max_runs=8, score_key="return", delta=10.0,
        ...                    tune_config={"max_concurrent_trials": 4, "resources": {"cpu": 1}})
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
    reading, options = _reading(options, score_key, score_rule)
    tune = _tune_options(tune_config)
    storage = Path(storage_path).resolve()
    first = max(math.ceil(int(max_runs) / int(looks)), int(options.get("first_runs", FEW_FIRST_RUNS)))
    runs = [
        {"algorithm": c.get("algorithm", "algorithm"), **{k: c.get(k) for k in keys}, "task": t, "seed": s}
        for c in configs
        for t in tasks
        for s in range(first)
    ]
    design: dict[str, Any] = {"looks": looks, "max_runs": max_runs, "delta": delta, "alpha": alpha, "metric": metric}
    result = None
    for look in range(1, int(looks) + 1):
        if look > _recorded(state):  # a recorded look's runs are what they were: only a look to take runs trials
            finished, _ = read_looks(storage, name, look, keys, reading)
            missing = unfinished(runs, finished, keys)
            if missing:
                _run_look(trainable, missing, storage, next_attempt(storage, name, look), param_space, run_config, tune)
        table = race_table(*read_looks(storage, name, look, keys, reading), keys)
        result = race(table, state, hyperparameter_keys=keys, **design, **options)
        if result.stop:
            return result
        # = the state's runs.csv: a trial left out (errored, or cut off by an interruption) keeps its seed
        listed = new_runs(seeds_taken(table, keys), result.launch)
        runs = [{str(k): v for k, v in r.items()} for r in listed.to_dict("records")]
    return result


def _reading(
    options: Mapping[str, Any], score_key: str, score_rule: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """How the trials are read (``raytune_table``'s keywords) and the rest of ``options``, ``race()``'s."""
    reading: dict[str, Any] = {"score_key": score_key, "score_rule": score_rule}
    rest: dict[str, Any] = {}
    for key, value in options.items():
        if key in READING:
            reading[key] = value
        elif key in FIELDS_AS_READING:
            word, meant = FIELDS_AS_READING[key]
            if value:
                reading[word] = meant
        elif key in FIELD_KEYWORDS:
            raise InputError(
                f"`{key}=` does not apply to race_tune(): the race names each trial's config keys itself "
                "(algorithm, the hyperparameters, task, seed) and reads `score_key=`"
            )
        else:
            rest[key] = value
    return reading, rest


def _tune_options(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``tune_config=`` bundle checked: TuneConfig keywords but the race's own, and ``resources``."""
    bundle = dict(given or {})
    own = sorted(set(bundle) & set(OWN_TUNE))
    if own:
        raise InputError(
            f"`tune_config={{{own[0]!r}: ...}}` is the race's: each look runs exactly its listed runs (a ListedRuns "
            "searcher, one sample per run); pass the scheduler, max_concurrent_trials, resources, ..."
        )
    return bundle


def _recorded(state: str | os.PathLike) -> int:
    """How many looks the race's state folder records (0 for a new one)."""
    stored = read_state(state, ledger=RACE)
    return 0 if stored is None else len(stored[1])


@contextlib.contextmanager
def _state_saved_each_step() -> Iterator[None]:
    """Tune saves its experiment state at every step while a look runs (Tune's ``TUNE_GLOBAL_CHECKPOINT_S``; its
    default saves every 10 s or more, and a trial that finished since would run again after a kill)."""
    before = os.environ.get("TUNE_GLOBAL_CHECKPOINT_S")
    os.environ["TUNE_GLOBAL_CHECKPOINT_S"] = "0" if before is None else before
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TUNE_GLOBAL_CHECKPOINT_S", None)


def _run_look(
    trainable: Callable[..., Any],
    runs: Sequence[Mapping[str, Any]],
    storage: Path,
    name: str,
    param_space: Mapping[str, Any] | None,
    run_config: Mapping[str, Any] | None,
    tune_options: Mapping[str, Any] | None = None,
) -> None:
    """Exactly ``runs`` as the trials of one Tune experiment ``name``."""
    from ray import train, tune

    settings = dict(tune_options or {})
    resources = settings.pop("resources", None)
    config_class: Any = getattr(tune, "RunConfig", None) or train.RunConfig  # Ray 2.40 has train.RunConfig only
    tuner = tune.Tuner(
        trainable if resources is None else tune.with_resources(trainable, resources),
        param_space=dict(param_space or {}),
        tune_config=listed_config([_plain(r) for r in runs], **settings),
        run_config=config_class(storage_path=str(storage), name=name, **dict(run_config or {})),
    )
    with _state_saved_each_step():
        tuner.fit()


def _plain(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run's config with plain Python values (numpy and pandas scalars from ``runs.csv`` made plain)."""
    return {str(k): (v.item() if hasattr(v, "item") else v) for k, v in run.items()}
