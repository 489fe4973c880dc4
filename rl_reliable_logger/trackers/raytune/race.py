"""Race a sweep's configurations with Ray Tune: each look's launch list runs as Tune trials (the ``[raytune]`` extra).

:func:`race_tune` is the loop a user would write around ``rl-reliable race``: look 1 runs every configuration on
every task with the first look's seeds; each later look runs exactly the runs the last look listed (those of
``runs.csv`` in the state folder), through a :class:`~.listed.ListedRuns` searcher; after each look's trials it
reads every look's experiments, takes the race's next look (:func:`rl_reliable_logger.race`, the same state
folder, replay and refusals as the command) and stops when the race does.

Each look is its own Tune experiment, ``<storage_path>/<name>-look<k>`` (both of ``run_config``) (:mod:`.attempts`). Called again after an
interruption (SIGTERM, SIGKILL, Ctrl-C, a crash: in any look), it goes on where it stopped (Tune returns from
``fit()`` on Ctrl-C as if done: a look whose trials did not all end is not taken, and the call raises
``KeyboardInterrupt``): a look already recorded in
the state folder runs nothing; the look that was cut off runs exactly its listed runs that no attempt finished
(the same seeds, none twice), as another experiment ``<name>-look<k>.<n>``, and then takes the look. While a look
runs, Tune saves its experiment state at every step (``TUNE_GLOBAL_CHECKPOINT_S=0``, Tune's own setting), and
each trial Tune ends normally gets an end record a kill cannot cut (:mod:`.ended`; Tune writes its state file in
place, and a kill mid-write cuts it), so a trial Tune saw finish is never run again.

Tune also stops a whole experiment itself (``FailureConfig(fail_fast=True)`` after a trial errors, a ``Stopper``
whose ``stop_all()`` is True, ``TuneConfig(time_budget_s=...)``), and marks TERMINATED the trials it cuts off then,
with their partial reports and no callback: those get no end record, so they are no finished runs (CUT_OFF,
:mod:`.experiment`). Such a look is not taken, as after an interrupt: the call stops with an InputError naming the
experiment, how many runs were cut off and why, and the next call runs exactly those runs (their seeds, counted
once). A trial a scheduler stops early (ASHA, HyperBand, a per-trial stop criterion) goes through Tune's
``stop_trial`` and gets its end record: a finished run, scored on its last report.

Each trial's config holds ``algorithm``, the hyperparameters, ``task`` and ``seed`` (and the fixed values of
``param_space``); the trainable reports ``score_key``. The race's design is one
:class:`~rl_reliable_logger.analysis.race_options.RaceOptions` (``design=``), how its trials are read one
:class:`~rl_reliable_logger.trackers.ReadOptions` (``read=``), where Tune writes them Tune's own ``run_config``.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ...analysis.inputs import FIELD_KEYWORDS
from ...analysis.race_options import RaceOptions
from ...errors import InputError
from ...looks.launch import new_runs, seeds_taken
from ...looks.ledger import read_state
from ...looks.race import RACE, race
from ...wording import kw, said
from ..base.deprecation import moved_keywords
from ..base.reading import ReadOptions
from .attempts import TrialReading, next_attempt, race_table, read_looks, unfinished
from .ended import end_recorder
from .experiment import CUT_OFF, read_experiment
from .keys import DEFAULT_STEP
from .listed import tune_config as listed_config

#: The reading options :func:`race_tune` took as separate keywords (now ``read=``; for one release).
OLD_READING = ("score_rule", "on_invalid", "names", "reruns")
#: Tune's ``RunConfig`` keywords the race's experiments are named by (``<storage_path>/<name>-look<k>``).
OWN_RUN = ("storage_path", "name")
#: TuneConfig keywords the race sets itself: each look runs exactly its listed runs.
OWN_TUNE = ("search_alg", "num_samples")


def race_tune(
    trainable: Callable[..., Any],
    configurations: Sequence[Mapping[str, Any]],
    tasks: Sequence[str],
    *,
    state: str | os.PathLike,
    score_key: str,
    design: RaceOptions | None = None,
    read: ReadOptions | None = None,
    param_space: Mapping[str, Any] | None = None,
    run_config: Mapping[str, Any] | None = None,
    tune_config: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    """Race ``configurations`` (dicts of hyperparameter values, with ``algorithm`` when several algorithms race)
    on ``tasks`` with Ray Tune, until a configuration of each algorithm is selected within ``delta`` of its best
    (with probability at least ``1 - alpha``) or the last look; returns the last look's
    :class:`~rl_reliable_logger.analysis.race.RaceResult`. Called again after an interruption, it finishes the
    look that was cut off (its listed runs that did not finish, the same seeds, none twice) and goes on.

    ``design`` is the race's :class:`~rl_reliable_logger.analysis.race_options.RaceOptions` (``looks``,
    ``max_runs``, ``delta``, ``alpha``, ``metric``, ``spending``, ``first_runs``); the trainable reports
    ``score_key``; ``read`` (:class:`~rl_reliable_logger.trackers.ReadOptions`) says how the trials are read
    (``score_rule``, ``on_invalid``, ``names``, ``reruns``). ``options`` are ``race()``'s other keywords
    (``reps``, ``seed``, ``stop_on_missing``, ``drop_invalid=True``, ...) and ``step_key=`` (``raytune_table``'s).
    ``run_config``: keywords of Tune's ``RunConfig``, with ``storage_path`` (required) and ``name`` (default
    ``race``) naming each look's experiment ``<storage_path>/<name>-look<k>``; ``tune_config``: more keywords of
    Tune's ``TuneConfig`` (``scheduler``, ``max_concurrent_trials``, ...; its ``search_alg`` and ``num_samples``
    are the race's) and ``resources``, each trial's resources (``tune.with_resources``). The keywords before
    these bundles (``looks=``, ``storage_path=``, ``score_rule=``, ...) still work for one release (deprecated).

    Example:
        >>> result = race_tune(train, [{"lr": 1e-3}, {"lr": 1e-2}], ["CartPole-v1"], state="race",  # doctest: +SKIP
        ...                    score_key="return", design=RaceOptions(looks=4, max_runs=8, delta=10.0),
        ...                    run_config={"storage_path": "/tmp/tune"},
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
    rest = dict(options)
    plan = _design(design, rest)
    reading = TrialReading(score_key, rest.pop("step_key", DEFAULT_STEP), _read(read, rest))
    storage, name, run = _run_options(run_config, rest)
    _check_race_options(rest)
    tune = _tune_options(tune_config)
    first = max(math.ceil(plan.max_runs / plan.looks), plan.first_runs)
    runs = [
        {"algorithm": c.get("algorithm", "algorithm"), **{k: c.get(k) for k in keys}, "task": t, "seed": s}
        for c in configs
        for t in tasks
        for s in range(first)
    ]
    result = None
    for look in range(1, plan.looks + 1):
        looked = read_looks(storage, name, look, keys, reading)  # read again only after running the look's rest
        if look > _recorded(state):  # a recorded look's runs are what they were: only a look to take runs trials
            missing = unfinished(runs, looked[0], keys)
            if missing:
                _run_look(trainable, missing, storage, next_attempt(storage, name, look), param_space, run, tune)
                looked = read_looks(storage, name, look, keys, reading)
        table = race_table(*looked, keys)
        result = race(table, state, hyperparameter_keys=keys, **_as_keywords(plan), **rest)
        if result.stop:
            return result
        # = the state's runs.csv: a trial left out (errored, or cut off by an interruption) keeps its seed
        listed = new_runs(seeds_taken(table, keys), result.launch)
        runs = [{str(k): v for k, v in r.items()} for r in listed.to_dict("records")]
    return result


def _as_keywords(plan: RaceOptions) -> dict[str, Any]:
    return {f.name: getattr(plan, f.name) for f in fields(plan)}


def _design(design: RaceOptions | None, rest: dict[str, Any]) -> RaceOptions:
    """``design``, or the one of the old separate keywords (taken out of ``rest``, with a DeprecationWarning)."""
    old = {f.name: rest.pop(f.name) for f in fields(RaceOptions) if f.name in rest}
    moved = moved_keywords(design, old, where="race_tune()", keyword="design", bundle="RaceOptions")
    if moved is not None:
        return RaceOptions(**moved)
    if design is None:
        raise InputError("race_tune() needs its design: design=RaceOptions(looks=K, max_runs=N, delta=D)")
    return design


def _read(read: ReadOptions | None, rest: dict[str, Any]) -> ReadOptions:
    """How the trials are read: ``read`` or the old keywords (taken out of ``rest``), with ``race()``'s
    ``drop_invalid=True`` / ``normalize_names=True`` as the reading options they are."""
    old = {key: rest.pop(key) for key in OLD_READING if key in rest}
    moved = moved_keywords(read, old, where="race_tune()", keyword="read", bundle="ReadOptions")
    chosen = ReadOptions(**moved) if moved is not None else read or ReadOptions()
    if chosen.hyperparameter_keys or chosen.curves:
        raise InputError(
            said(
                "race_tune() names each trial's config keys itself (algorithm, the hyperparameters, task, seed) "
                "and reads no curves: leave ",
                kw("hyperparameter_keys="),
                " and ",
                kw("curves="),
                " out of ",
                kw("read="),
            )
        )
    if rest.pop("drop_invalid", False):
        chosen = replace(chosen, on_invalid="drop")
    if rest.pop("normalize_names", False):
        chosen = replace(chosen, names="normalize")
    return chosen


def _run_options(run_config: Mapping[str, Any] | None, rest: dict[str, Any]) -> tuple[Path, str, dict[str, Any]]:
    """(storage, the experiments' name, the rest of Tune's RunConfig keywords) from ``run_config`` and the old
    ``storage_path=`` / ``name=`` keywords (taken out of ``rest``, with a DeprecationWarning)."""
    run = dict(run_config or {})
    old = {key: rest.pop(key) for key in OWN_RUN if key in rest}
    both = sorted(set(old) & set(run))
    if both:
        raise InputError(f"race_tune() got {both[0]}= and run_config={{{both[0]!r}: ...}}: give it once, in run_config")
    run.update(moved_keywords(None, old, where="race_tune()", keyword="run_config", bundle="dict") or {})
    if not run.get("storage_path"):
        raise InputError(
            said(
                "race_tune() needs ",
                kw("run_config={'storage_path': ...}"),
                ": the folder Tune writes each look's experiment in",
            )
        )
    return Path(run.pop("storage_path")).resolve(), str(run.pop("name", "race")), run


def _check_race_options(rest: Mapping[str, Any]) -> None:
    """The keywords left for ``race()``: a field keyword of ``evaluate()`` is refused (the race names them)."""
    for key in rest:
        if key in FIELD_KEYWORDS:
            raise InputError(
                said(
                    kw(f"{key}="),
                    " does not apply to race_tune(): the race names each trial's config keys itself (algorithm, "
                    "the hyperparameters, task, seed) and reads ",
                    kw("score_key="),
                )
            )


def _tune_options(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``tune_config=`` bundle checked: TuneConfig keywords but the race's own, and ``resources``."""
    bundle = dict(given or {})
    own = sorted(set(bundle) & set(OWN_TUNE))
    if own:
        raise InputError(
            said(
                kw(f"tune_config={{{own[0]!r}: ...}}"),
                " is the race's: each look runs exactly its listed runs (a ListedRuns searcher, one sample per "
                "run); pass the scheduler, max_concurrent_trials, resources, ...",
            )
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
    """Exactly ``runs`` as the trials of one Tune experiment ``name``; each trial Tune ends normally gets an end
    record (:mod:`.ended`, a callback after the user's ``run_config`` callbacks), which a kill cannot cut."""
    from ray import train, tune

    settings = dict(tune_options or {})
    resources = settings.pop("resources", None)
    config_class: Any = getattr(tune, "RunConfig", None) or train.RunConfig  # Ray 2.40 has train.RunConfig only
    run = dict(run_config or {})
    callbacks = [*(run.pop("callbacks", None) or []), end_recorder(storage / name)]  # the user's run first
    tuner = tune.Tuner(
        trainable if resources is None else tune.with_resources(trainable, resources),
        param_space=dict(param_space or {}),
        tune_config=listed_config([_plain(r) for r in runs], **settings),
        run_config=config_class(storage_path=str(storage), name=name, callbacks=callbacks, **run),
    )
    with _state_saved_each_step():
        tuner.fit()
    _check_all_ended(storage / name, len(runs), _stops(run, settings))


#: A trial's statuses once its run is over, one way or another (a CUT_OFF trial is over but not finished).
OVER = ("TERMINATED", "ERROR", CUT_OFF)


def _check_all_ended(folder: Path, listed: int, stops: Sequence[str] = ()) -> None:
    """Tune ends an experiment on an interrupt (Ctrl-C, SIGUSR1) by returning from ``fit()`` as it does when the
    experiment is done: a look with a trial still running, pending or paused was interrupted. It is not taken (a
    look taken then would lack those runs for good); the interrupt goes on, and the next call runs the look's runs
    that had not ended. A look Tune stopped itself (``stops``: what may have stopped it) has trials it cut off
    (CUT_OFF), or runs it never started: it is not taken either, and the call stops with one sentence saying so."""
    trials = read_experiment(folder).trials
    if any(t.status not in OVER for t in trials):
        ended = sum(t.status in ("TERMINATED", "ERROR") for t in trials)
        raise KeyboardInterrupt(
            f"Ray Tune stopped the experiment {folder.name!r} on an interrupt with {ended} of its {listed} trials "
            "ended; the look is not taken: call race_tune again to run the rest (the runs that ended are kept)"
        )
    cut = sum(t.status == CUT_OFF for t in trials) + max(0, listed - len(trials))
    if cut:
        finished = sum(t.status == "TERMINATED" for t in trials)
        errored = [t.trial_id for t in trials if t.status == "ERROR"]
        why = " or ".join(stops) if stops else "fail_fast, a Stopper's stop_all() or time_budget_s"
        after = f", after trial {errored[0]} errored" if errored and "fail_fast" in stops else ""
        raise InputError(
            f"Ray Tune stopped the experiment {folder.name!r} itself ({why}{after}) and cut off {cut} of its "
            f"{listed} listed runs before they finished ({finished} finished, {len(errored)} errored); the look is "
            f"not taken: call race_tune again to run the {cut + len(errored)} that did not finish with their own "
            f"seeds (the finished ones are kept), and leave out {why} should it stop the look again"
        )


def _stops(run: Mapping[str, Any], tune_options: Mapping[str, Any]) -> list[str]:
    """What in the look's settings lets Tune stop the whole experiment: ``fail_fast``, a ``stop_all()``,
    ``time_budget_s`` (as the message names them)."""
    out = []
    if getattr(run.get("failure_config"), "fail_fast", False):
        out.append("fail_fast")
    if callable(getattr(run.get("stop"), "stop_all", None)):
        out.append("the stop_all() of run_config's stop")
    if tune_options.get("time_budget_s") is not None:
        out.append("time_budget_s")
    return out


def _plain(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run's config with plain Python values (numpy and pandas scalars from ``runs.csv`` made plain)."""
    return {str(k): (v.item() if hasattr(v, "item") else v) for k, v in run.items()}
