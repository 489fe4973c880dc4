"""The race's Ray Tune driver on a real local Ray: each look's launch list runs as exactly those Tune trials (the
``ListedRuns`` searcher), the race reads every look's experiment folder, and stops with a selection on fewer
trials than running every configuration to ``max_runs``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")

from ray import tune

from rl_reliable_logger.analysis.race_options import RaceOptions
from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.raytune import race_tune, raytune_table

SHIFT = {0.001: 0.0, 0.003: -0.08, 0.03: -1.0}  # 0.03 diverges
TASKS = ("cartpole", "acrobot")


def score(config: dict) -> float:
    """A pure function of the trial's config: the task's level, the rate's effect and the seed's noise."""
    rng = np.random.default_rng([TASKS.index(config["task"]), int(config["seed"]), int(config["lr"] * 1e4)])
    return float(1.0 + 0.5 * TASKS.index(config["task"]) + SHIFT[config["lr"]] + 0.2 * rng.standard_normal())


def trainable(config: dict) -> None:
    from ray import train, tune

    report = getattr(tune, "report", None) or train.report  # Ray 2.40 has train.report only
    report({"eval/return": score(config)})


@pytest.mark.slow
def test_each_look_runs_exactly_its_launch_list_as_tune_trials(ray_cluster, tmp_path: Path) -> None:
    state, storage = tmp_path / "race", tmp_path / "tune"
    configs = [{"algorithm": "ppo", "lr": lr} for lr in SHIFT]
    result = race_tune(
        trainable,
        configs,
        TASKS,
        state=state,
        score_key="eval/return",
        design=RaceOptions(looks=3, max_runs=6, delta=0.25),
        reps=500,
        run_config={"storage_path": storage, "verbose": 0},
    )
    assert result.stop and result.best == {"algorithm": "ppo", "lr": 0.001}
    looks = json.loads((state / "looks.json").read_text())
    assert len(looks) == result.look >= 1
    trials = 0
    for k in range(1, result.look + 1):
        read = ReadOptions(hyperparameter_keys=["config/lr"])
        table = raytune_table(storage / f"race-look{k}", score_key="eval/return", read=read)
        got = sorted((float(r.lr), r.task, int(r.seed)) for r in table.frame.itertuples())
        if k == 1:  # every configuration on every task, the first look's seeds 0, 1
            want = sorted((lr, t, s) for lr in SHIFT for t in TASKS for s in range(2))
        else:  # exactly what the previous look listed
            want = sorted((float(r["lr"]), r["task"], int(r["seed"])) for r in _listed(looks[k - 2]))
        assert got == want
        assert all(
            abs(r.score - score({"lr": r.lr, "task": r.task, "seed": r.seed})) < 1e-12 for r in table.frame.itertuples()
        )
        trials += len(got)
    assert trials < len(SHIFT) * len(TASKS) * 6  # fewer than the fixed design's runs
    # called again, in the keywords before the bundles (deprecated, the same race): the recorded looks replay
    with pytest.warns(
        DeprecationWarning, match=r"race_tune\(looks=\.\.\., max_runs=\.\.\., delta=\.\.\.\) is deprecated"
    ):
        again = race_tune(
            trainable, configs, TASKS, state=state, storage_path=storage, looks=3, max_runs=6, score_key="eval/return",
            delta=0.25, reps=500,
        )  # fmt: skip
    assert again.replayed and again.best == result.best


def _listed(look: dict) -> list[dict]:
    """The runs a recorded look listed: each cell's add_runs new seeds after those it had."""
    rows = []
    for cell in look["launch"]:
        label = f"{cell['algorithm']} [lr={cell['lr']:.6g}]"
        have = look["counts"][label][cell["task"]]
        rows += [{"lr": cell["lr"], "task": cell["task"], "seed": have + i} for i in range(cell["add_runs"])]
    return rows


def reporting(config: dict) -> None:
    """Reports ``config["reports"]`` times; ``lr`` 0.03 diverges (raises) after its first report."""
    from ray import train, tune

    report = getattr(tune, "report", None) or train.report
    for step in range(int(config["reports"])):
        if step == 1 and config["lr"] == 0.03:
            raise RuntimeError("diverged")
        report({"eval/return": score(config)})


class Completions(tune.Callback):
    """A user's callback (``run_config={"callbacks": [...]}``): the trials Tune completed, seen in the driver."""

    seen: list[str] = []

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        Completions.seen.append(str(trial.config["lr"]))


@pytest.mark.slow
def test_each_trial_tune_ends_normally_gets_an_end_record_and_the_users_callbacks_still_run(
    ray_cluster, tmp_path: Path
) -> None:
    """A look's trials as one Tune experiment: each trial whose trainable returned gets an end record naming its last
    report; the one that raised gets none; the callbacks the user passed in ``run_config`` run as well."""
    from rl_reliable_logger.trackers.raytune.ended import ended
    from rl_reliable_logger.trackers.raytune.experiment import read_experiment
    from rl_reliable_logger.trackers.raytune.race import _run_look

    runs = [{"algorithm": "ppo", "lr": lr, "task": "cartpole", "seed": 0} for lr in SHIFT]
    Completions.seen = []
    settings = {"callbacks": [Completions()], "verbose": 0}
    _run_look(reporting, runs, tmp_path, "look", {"reports": 3}, settings, {"max_concurrent_trials": 1})
    trials = {t.trial_id: t for t in read_experiment(tmp_path / "look").trials}
    records, notes = ended(tmp_path / "look")
    assert notes == [] and sorted(Completions.seen) == ["0.001", "0.003"]
    assert {trials[i].config["lr"]: n for i, n in records.items()} == {0.001: 3, 0.003: 3}
    assert sorted((t.config["lr"], t.status) for t in trials.values()) == [
        (0.001, "TERMINATED"), (0.003, "TERMINATED"), (0.03, "ERROR")
    ]  # fmt: skip
