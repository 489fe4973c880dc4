"""``race_tune`` called again after an interruption, without Ray: look folders written as Tune writes them (or as a
killed Tune leaves them), and the trials a call would start recorded where they would start Tune. The real Ray
interruptions (SIGTERM, SIGKILL) are ``test_race_tune_interrupted.py``'s."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from rl_reliable_logger.analysis.race_options import RaceOptions
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.raytune import race as driver
from rl_reliable_logger.trackers.raytune import race_tune
from tests.contract.source_corpus import Run, tune_folder

TASKS = ("cartpole", "acrobot")
LRS = (0.001, 0.01)
NOISE = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0]  # both rates alike: undecided at look 1, so runs are listed
DESIGN: dict[str, Any] = {"design": RaceOptions(looks=3, max_runs=9, delta=0.0), "score_key": "score", "reps": 200}


class Started(Exception):
    pass


def _runs(skip: frozenset[tuple[float, str, int]] = frozenset(), state: str = "finished") -> list[Run]:
    return [
        Run("ppo", t, s, NOISE[(i + s + j) % 6], state=state, config=(("lr", lr),))
        for i, lr in enumerate(LRS)
        for j, t in enumerate(TASKS)
        for s in range(3)
        if (lr, t, s) not in skip
    ]


def _call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list[tuple[str, list[dict]]], errs: int = 0, **more: Any
) -> Any:
    """race_tune with Tune's fit replaced: a look's runs are recorded, and the first ``errs`` calls write them as
    an experiment whose trials all errored (the call goes on); any other is an interruption (``Started``)."""

    def record(trainable, runs, storage, name, param_space, run_config, tune_options=None):  # instead of Tune
        started.append((name, [dict(r) for r in runs]))
        if len(started) > errs:
            raise Started
        failed = [Run(r["algorithm"], r["task"], int(r["seed"]), 0.0, "error", (("lr", r["lr"]),)) for r in runs]
        tune_folder(storage / name, failed)

    monkeypatch.setattr(driver, "_run_look", record)
    configs = [{"algorithm": "ppo", "lr": lr} for lr in LRS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return race_tune(
            lambda config: None, configs, TASKS, state=tmp_path / "race", run_config={"storage_path": tmp_path / "tune"},
            **{**DESIGN, **more},
        )  # fmt: skip


def _keys(runs: list[dict]) -> set[tuple[float, str, int]]:
    return {(float(r["lr"]), r["task"], int(r["seed"])) for r in runs}


def test_a_look_cut_off_runs_exactly_its_runs_that_did_not_finish_with_their_seeds(tmp_path, monkeypatch) -> None:
    cut = frozenset({(0.001, "cartpole", 2), (0.01, "acrobot", 1)})
    tune_folder(
        tmp_path / "tune" / "race-look1", [*_runs(cut), Run("ppo", "cartpole", 2, 5.0, "running", (("lr", 0.001),))]
    )
    started: list[tuple[str, list[dict]]] = []
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started)
    ((name, runs),) = started
    assert name == "race-look1.2" and len(runs) == 2 and _keys(runs) == cut  # the same seeds, each once
    assert not (tmp_path / "race").exists()  # no look taken on the partial trials


def test_a_look_folder_without_tunes_state_file_runs_the_whole_look_again(tmp_path, monkeypatch) -> None:
    (tmp_path / "tune" / "race-look1").mkdir(parents=True)  # Tune killed before it wrote its state
    started: list[tuple[str, list[dict]]] = []
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started)
    ((name, runs),) = started
    assert name == "race-look1.2" and _keys(runs) == {(lr, t, s) for lr in LRS for t in TASKS for s in range(3)}


def test_the_attempts_of_a_look_are_one_look_and_a_run_left_out_keeps_its_seed(tmp_path, monkeypatch) -> None:
    """Look 1's first attempt finished all but two runs, a second one finished one of them and the other errored
    again: the next call takes look 1 on what finished (no third attempt of a recorded look) and lists look 2's runs
    with new seeds, never the errored run's."""
    storage = tmp_path / "tune"
    tune_folder(storage / "race-look1", _runs(frozenset({(0.001, "cartpole", 2), (0.01, "acrobot", 1)})))
    tune_folder(
        storage / "race-look1.2",
        [
            Run("ppo", "cartpole", 2, 0.1, config=(("lr", 0.001),)),
            Run("ppo", "acrobot", 1, 9.0, "error", (("lr", 0.01),)),
        ],
    )
    started: list[tuple[str, list[dict]]] = []
    with pytest.raises(Started):  # look 1 still lacks a run: one more attempt (it errors again), then the look
        _call(tmp_path, monkeypatch, started, errs=1)
    (third, retried), (second, runs) = started
    assert (third, _keys(retried)) == ("race-look1.3", {(0.01, "acrobot", 1)}) and second == "race-look2"
    seeds = _keys(runs)
    assert (0.01, "acrobot", 1) not in seeds and all(s >= 3 for _, _, s in seeds), sorted(seeds)
    written = {(float(r.lr), r.task, int(r.seed)) for r in pd.read_csv(tmp_path / "race" / "runs.csv").itertuples()}
    assert seeds == written  # the driver runs what the state folder lists


def test_a_recorded_look_runs_nothing_again(tmp_path, monkeypatch) -> None:
    tune_folder(tmp_path / "tune" / "race-look1", _runs())
    started: list[tuple[str, list[dict]]] = []
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started)
    assert [n for n, _ in started] == ["race-look2"]
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started)
    assert [n for n, _ in started] == ["race-look2", "race-look2"]


def test_race_tune_takes_what_race_takes_and_reads_with_on_invalid(tmp_path, monkeypatch) -> None:
    tune_folder(tmp_path / "tune" / "race-look1", _runs())
    started: list[tuple[str, list[dict]]] = []
    design = RaceOptions(looks=3, max_runs=9, delta=0.0, first_runs=3)
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started, read=ReadOptions(on_invalid="drop"), design=design, stop_on_missing=False)
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started, drop_invalid=True, design=design)
    with pytest.raises(Started):  # the keywords before the bundles: the same race, warned
        _call(tmp_path, monkeypatch, started, on_invalid="drop", design=None, looks=3, max_runs=9, first_runs=3)
    with pytest.raises(InputError, match="`algorithm_key=` does not apply to race_tune"):
        _call(tmp_path, monkeypatch, started, algorithm_key="config/algo")


def test_tune_config_is_one_bundle_and_the_race_keeps_its_searcher(tmp_path, monkeypatch) -> None:
    seen: list[dict] = []

    def record(trainable, runs, storage, name, param_space, run_config, tune_options=None):
        seen.append(dict(tune_options or {}))
        raise Started

    monkeypatch.setattr(driver, "_run_look", record)
    bundle = {"max_concurrent_trials": 1, "resources": {"cpu": 1}}
    with pytest.raises(Started):
        race_tune(lambda c: None, [{"lr": 0.1}, {"lr": 0.2}], TASKS, state=tmp_path / "r", run_config={"storage_path": tmp_path / "t"},
                  tune_config=bundle, **DESIGN)  # fmt: skip
    assert seen == [bundle]
    with pytest.raises(InputError, match="is the race's"):
        race_tune(lambda c: None, [{"lr": 0.1}, {"lr": 0.2}], TASKS, state=tmp_path / "r", run_config={"storage_path": tmp_path / "t"},
                  tune_config={"num_samples": 3}, **DESIGN)  # fmt: skip


def test_each_look_reads_the_experiments_once_when_it_runs_nothing(tmp_path, monkeypatch) -> None:
    """A look reads its experiments (every attempt of every look so far) once, and again only after it ran the
    runs it lacked: here look 1 is whole (read once, taken), look 2 reads look 1 once more and runs its runs."""
    from rl_reliable_logger.trackers.raytune import source

    reads: list[str] = []
    read = source.read_experiment

    def counted(folder):
        reads.append(Path(folder).name)
        return read(folder)

    monkeypatch.setattr(source, "read_experiment", counted)
    tune_folder(tmp_path / "tune" / "race-look1", _runs())
    started: list[tuple[str, list[dict]]] = []
    with pytest.raises(Started):
        _call(tmp_path, monkeypatch, started)
    assert [n for n, _ in started] == ["race-look2"]
    assert reads == ["race-look1", "race-look1"]
