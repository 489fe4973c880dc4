"""``race_tune`` when Ray Tune stops a look's experiment itself, on a real local Ray: ``FailureConfig(fail_fast=True)``
after a trial errors, or a ``Stopper`` whose ``stop_all()`` is True. Tune then marks TERMINATED the trials it cut
off, with their partial reports and no callback (``TuneController._stop_experiment_if_needed``): they are no
finished runs. The look is not taken (the call stops with one sentence naming the experiment and the cause), and
the next call runs exactly the runs that did not finish, with their seeds: the race comes out as an uninterrupted
one, and no seed runs to its end twice.

Each trial reports ``REPORTS`` times, a score that grows with each report: a run cut off has a lower last report
than its final score, so scoring it would change the race."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")

from ray import train, tune

from rl_reliable_logger.analysis.race_options import RaceOptions
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.raytune import race_tune
from rl_reliable_logger.trackers.raytune.attempts import TrialReading, read_looks
from rl_reliable_logger.trackers.raytune.experiment import read_experiment

#: Tune's FailureConfig (Ray 2.60 has it in ``ray.tune``; Ray 2.40, the floor, only in ``ray.train``).
FailureConfig = getattr(tune, "FailureConfig", None) or train.FailureConfig

REPORTS = 4
#: The run that errors once (its first start), in look 1: the first listed, so the others are running or pending.
FAILS = "0.1 a 0"


def final(config: dict) -> float:
    """A run's final score: a pure function of its configuration and seed."""
    value = float(np.random.default_rng([int(config["seed"])]).normal())
    return value + 0.01 * float(np.random.default_rng([int(config["seed"]), int(config["lr"] * 10)]).normal())


def trainable(config: dict) -> None:
    from ray import train, tune

    report = getattr(tune, "report", None) or train.report  # Ray 2.40 has train.report only
    run = f"{config['lr']} {config['task']} {config['seed']}"
    flag = Path(config["flag"])
    if run == FAILS and config["fail_once"] and not flag.exists():
        flag.write_text("failed")
        raise RuntimeError("diverged (once)")
    for step in range(1, REPORTS + 1):
        report({"score": final(config) - (REPORTS - step)})  # the last report is the final score
        time.sleep(0.3)
    with open(config["log"], "a") as log:
        log.write(f"{config['call']}|{run}\n")  # one write: the run ended


class StopAllAfter(tune.Stopper):
    """Stops the whole experiment after ``results`` reports (of any trial): a Stopper's ``stop_all()``."""

    def __init__(self, results: int) -> None:
        self.results, self.seen = results, 0

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        self.seen += 1
        return False

    def stop_all(self) -> bool:
        return self.seen >= self.results


def _race(folder: Path, call: int, *, fail_once: bool = False, run: dict[str, Any] | None = None) -> Any:
    space = {"flag": str(folder / "failed"), "log": str(folder / "ended.log"), "call": call, "fail_once": fail_once}
    return race_tune(
        trainable, [{"lr": 0.1}, {"lr": 0.2}], ["a"], state=folder / "race", design=RaceOptions(looks=2, max_runs=4),
        score_key="score", reps=200, seed=0, param_space=space,
        run_config={"storage_path": folder / "tune", "verbose": 0, **(run or {})},
        tune_config={"max_concurrent_trials": 2},
    )  # fmt: skip


def _ended(folder: Path) -> list[tuple[int, str]]:
    lines = (folder / "ended.log").read_text().splitlines() if (folder / "ended.log").exists() else []
    return [(int(call), run) for call, run in (line.split("|") for line in lines)]


def _outcome(folder: Path) -> tuple[list[tuple[float, int, float]], list[dict]]:
    """The race's scores (lr, seed, score: every look's finished runs) and its looks as recorded."""
    frame, _ = read_looks(folder / "tune", "race", 2, ["lr"], TrialReading("score"))
    scores = sorted((float(r.lr), int(r.seed), round(float(r.score), 12)) for r in frame.itertuples())
    return scores, json.loads((folder / "race" / "looks.json").read_text())


@pytest.fixture(scope="module")
def uninterrupted(ray_cluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """The race run without a stop: its result and outcome."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    result = _race(folder, 1)
    return (result.stop, result.look, result.best), _outcome(folder)


def _kept(folder: Path) -> set[str]:
    """The runs of look 1 the race reads as finished (TERMINATED with their end record: not cut off)."""
    trials = read_experiment(folder / "tune" / "race-look1").trials
    return {f"{t.config['lr']} {t.config['task']} {t.config['seed']}" for t in trials if t.status == "TERMINATED"}


def _check_resumed(folder: Path, uninterrupted: tuple[Any, Any]) -> None:
    """The next call (no stop) finishes the look that was cut off and the race: as an uninterrupted one, the first
    call's finished runs not run again, and every other run once.

    A trainable that returns just as Tune stops the experiment (its last report in, Tune's callback not yet called:
    a matter of timing, more likely on a loaded machine) has no end record, so it is cut off and runs again, with
    its seed: the same score, counted once. Only such a run may end in both calls."""
    first = {run for call, run in _ended(folder) if call == 1}
    kept = _kept(folder)
    assert kept <= first
    result = _race(folder, 2)
    assert ((result.stop, result.look, result.best), _outcome(folder)) == uninterrupted
    second = [run for call, run in _ended(folder) if call == 2]
    assert not kept & set(second)  # what the race took as finished in the first call is kept
    assert all(n == 1 for n in Counter(second).values())  # the second call runs each run once
    assert set(second) & first <= first - kept  # ended twice: only a run Tune stopped as its trainable returned
    assert (folder / "tune" / "race-look1.2").is_dir()


@pytest.mark.slow
def test_runs_fail_fast_cut_off_are_not_scored_and_the_next_call_runs_them(
    ray_cluster, tmp_path: Path, uninterrupted: tuple[Any, Any]
) -> None:
    with pytest.raises(InputError) as stopped:
        _race(tmp_path, 1, fail_once=True, run={"failure_config": FailureConfig(fail_fast=True)})
    said = str(stopped.value)
    assert said.startswith("Ray Tune stopped the experiment 'race-look1' itself (fail_fast, after trial "), said
    assert "errored) and cut off " in said and "1 errored); the look is not taken: call race_tune again" in said
    assert not (tmp_path / "race" / "looks.json").exists()  # look 1 is not taken
    assert len(_ended(tmp_path)) < 3  # some of the other three runs were cut off
    _check_resumed(tmp_path, uninterrupted)


@pytest.mark.slow
def test_runs_a_stoppers_stop_all_cut_off_are_not_scored_and_the_next_call_runs_them(
    ray_cluster, tmp_path: Path, uninterrupted: tuple[Any, Any]
) -> None:
    with pytest.raises(InputError) as stopped:
        _race(tmp_path, 1, run={"stop": StopAllAfter(REPORTS + 1)})
    said = str(stopped.value)
    assert said.startswith("Ray Tune stopped the experiment 'race-look1' itself (the stop_all() of run_config's "), said
    assert not (tmp_path / "race" / "looks.json").exists()
    assert len(_ended(tmp_path)) < 4
    _check_resumed(tmp_path, uninterrupted)


@pytest.mark.slow
def test_a_result_grid_of_an_experiment_race_tune_watched_leaves_out_the_trials_tune_cut_off(
    ray_cluster, tmp_path: Path
) -> None:
    """``raytune_table(grid)`` on the ResultGrid of an experiment race_tune's end recorder watched, whose folder is
    on this machine: a trial without an error but without an end record was cut off by Tune when it stopped the
    whole experiment (here a Stopper's stop_all() after six reports, trials one at a time: the first ends after its
    four, the second is cut off), so it is no finished run, as when the experiment's folder is read."""
    from rl_reliable_logger.trackers import ReadOptions
    from rl_reliable_logger.trackers.raytune import raytune_table
    from rl_reliable_logger.trackers.raytune.ended import end_recorder, ended

    space = {"lr": tune.grid_search([0.1, 0.2]), "seed": tune.grid_search([0, 1]), "task": "a", "algorithm": "x",
             "flag": str(tmp_path / "failed"), "log": str(tmp_path / "ended.log"), "call": 1, "fail_once": False}  # fmt: skip
    config_class: Any = getattr(tune, "RunConfig", None) or train.RunConfig  # Ray 2.40 has train.RunConfig only
    experiment = tmp_path / "tune" / "look"
    run = config_class(
        storage_path=str(tmp_path / "tune"), name="look", callbacks=[end_recorder(experiment)],
        stop=StopAllAfter(REPORTS + 2), verbose=0,
    )  # fmt: skip
    grid = tune.Tuner(
        trainable, param_space=space, tune_config=tune.TuneConfig(max_concurrent_trials=1), run_config=run
    ).fit()
    records, _ = ended(experiment)
    assert 0 < len(records) < len(grid) and all(grid[i].error is None for i in range(len(grid)))

    read = ReadOptions(hyperparameter_keys=["config/lr"])
    table = raytune_table(grid, score_key="score", read=read)
    assert sorted(table.frame["run_id"]) == sorted(records)
    assert {e["state"] for e in table.source["excluded"]} == {"cut off"}
    assert any("ended with no end record from race_tune" in w for w in table.warnings), table.warnings
    folder = raytune_table(experiment, score_key="score", read=read)
    assert sorted(folder.frame["run_id"]) == sorted(records)
