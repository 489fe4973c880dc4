"""A look's trial folder whose reports a kill cut, beside a state file cut short: Tune writes ``result.json`` and
``progress.csv`` in place, and copies a trial's folder to the storage path in place, so a driver killed then leaves
them ending inside a report, or with fewer reports than they had. Such a trial is passed over with one note naming
its folder (its run is not known whole: the report left out could be the last, the score), the other trials read
as before, and the race runs it again with its seed, counted once: the race comes out as an uninterrupted one.

The folders are a real race's (``race_tune`` on this module's local Ray, run once), cut as a kill leaves them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")

from rl_reliable_logger.analysis.race_options import RaceOptions
from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.raytune import race_tune, raytune_table
from rl_reliable_logger.trackers.raytune.attempts import TrialReading, read_looks
from rl_reliable_logger.trackers.raytune.ended import FOLDER
from rl_reliable_logger.trackers.raytune.experiment import Trial, read_experiment

REPORTS = 3
VICTIM = (0.1, 1)  # the run whose trial folder the kill cut: (lr, seed)


def trainable(config: dict) -> None:
    """Three reports (with a text metric, written as is in progress.csv); the last is the run's score, a pure
    function of its config."""
    from ray import train, tune

    report = getattr(tune, "report", None) or train.report  # Ray 2.40 has train.report only
    value = float(np.random.default_rng([int(config["seed"]), int(config["lr"] * 10)]).normal())
    for step in range(REPORTS):
        report({"score": value + 0.5 * (step + 1 - REPORTS), "stage": "évaluation"})


def _race(root: Path) -> Any:
    return race_tune(
        trainable, [{"lr": 0.1}, {"lr": 0.2}], ["a"], state=root / "race", design=RaceOptions(looks=2, max_runs=4),
        score_key="score", reps=200, seed=0, run_config={"storage_path": root / "tune", "verbose": 0},
    )  # fmt: skip


def _outcome(root: Path) -> tuple[list[tuple[float, int, float]], list[dict]]:
    """The race's scores (lr, seed, score: every look's finished runs) and its looks as recorded."""
    frame, _ = read_looks(root / "tune", "race", 2, ["lr"], TrialReading("score"))
    scores = sorted((float(r.lr), int(r.seed), round(float(r.score), 12)) for r in frame.itertuples())
    return scores, json.loads((root / "race" / "looks.json").read_text())


@pytest.fixture(scope="module")
def race(ray_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A race run uninterrupted: its first look's folder (four trials of three reports, each with its end record)
    and its outcome."""
    root = tmp_path_factory.mktemp("whole")
    result = _race(root)
    assert result.stop and result.look == 2  # look 2 runs the runs look 1 listed
    look1 = root / "tune" / "race-look1"
    assert len(list((look1 / FOLDER).glob("*.ended.json"))) == 4
    return {"look1": look1, "outcome": _outcome(root), "result": (result.stop, result.look)}


def _look1(race: dict[str, Any], root: Path) -> tuple[Path, Path]:
    """A copy of the race's first look as a kill after its trials ended leaves it (the state file cut short), and
    the folder of the victim's trial."""
    folder = root / "tune" / "race-look1"
    shutil.copytree(race["look1"], folder)
    state = next(folder.glob("experiment_state-*.json"))
    text = state.read_text()
    state.write_text(text[: len(text) // 2])
    for trial in sorted(folder.iterdir()):
        params = trial / "params.json"
        config = json.loads(params.read_text()) if params.exists() else {}
        if (config.get("lr"), config.get("seed")) == VICTIM:
            return folder, trial
    raise AssertionError("no trial of the victim's run")


def _cut(trial: Path, file: str, at: float | int | str) -> None:
    """Cut the trial's ``file`` as a kill leaves it: at a fraction of its bytes, a number of bytes before its end,
    at the end of its first report (whole lines, fewer than it had), or inside a character of its last report."""
    if file == "progress.csv":
        (trial / "result.json").unlink()  # read when there is no result.json (other Ray versions, a logger off)
    path = trial / file
    data = path.read_bytes()
    if at == "line":
        keep = data[: data.index(b"\n") + 1]
    elif at == "character":
        keep = data[: data.rindex("é".encode()) + 1]  # the first of its two bytes
    elif isinstance(at, int):
        keep = data[:at]
    else:
        keep = data[: int(len(data) * float(at))]
    path.write_bytes(keep)


def _seen(trial: Trial) -> tuple[Any, ...]:
    return trial.trial_id, trial.name, trial.status, trial.config, trial.last_result


CUTS = [
    ("result.json", 0.0),  # emptied (seen after a kill): progress.csv beside it holds three reports
    ("result.json", 0.3),
    ("result.json", 0.5),
    ("result.json", 0.999),
    ("result.json", "line"),  # a whole first report only: fewer than progress.csv
    ("progress.csv", 0.5),
    ("progress.csv", -2),  # the last row without its line end: whole, or cut inside its last field, who can tell
    ("progress.csv", -3),  # inside the last row's last field: a row of all its fields, the last one cut
    ("progress.csv", "character"),  # inside a character of the last row: not UTF-8 as cut
]


@pytest.mark.parametrize(("file", "at"), CUTS)
def test_a_trial_whose_reports_a_kill_cut_is_passed_over_with_one_note(race, tmp_path, file, at):
    folder, victim = _look1(race, tmp_path)
    before = read_experiment(folder)
    assert [t.status for t in before.trials] == ["TERMINATED"] * 4  # by their end records
    _cut(victim, file, at)

    cut = read_experiment(folder)
    assert [_seen(t) for t in cut.trials] == [_seen(t) for t in before.trials if t.folder != victim]
    said = [n for n in cut.notes if victim.name in n]
    assert len(said) == 1 and said[0].count(victim.name) == 1, cut.notes
    assert f"1 trial folder(s) ({victim.name!r} (" in said[0] and "their reports are cut short" in said[0]
    assert "its 3 trials were read from their folders" in said[0] and "(3 trial(s) ended normally" in said[0]

    table = raytune_table(folder, score_key="score", read=ReadOptions(hyperparameter_keys=["config/lr"]))
    assert sorted((float(r.lr), int(r.seed)) for r in table.frame.itertuples()) == sorted(
        {(float(t.config["lr"]), int(t.config["seed"])) for t in before.trials} - {VICTIM}
    )
    assert table.warnings[0] == said[0]


@pytest.mark.parametrize("trial_id", ["12345678", "1234e567"])
def test_a_trial_id_of_digits_in_progress_csv_is_read_as_text(race, tmp_path, trial_id):
    """Tune's trial ids are eight hex digits: ``12345678`` or ``1234e567`` is one, not a number; read from
    ``progress.csv`` it names its end record, so the trial that ended is a finished run."""
    folder, victim = _look1(race, tmp_path)
    before = read_experiment(folder)
    old = next(t.trial_id for t in before.trials if t.folder == victim)
    for trial in before.trials:
        assert trial.folder is not None
        (trial.folder / "result.json").unlink()
    progress = victim / "progress.csv"
    progress.write_text(progress.read_text().replace(f",{old},", f",{trial_id},"))
    record = folder / FOLDER / f"{old}.ended.json"
    (folder / FOLDER / f"{trial_id}.ended.json").write_text(record.read_text().replace(old, trial_id))
    record.unlink()

    read = {t.folder: t for t in read_experiment(folder).trials}
    assert read[victim].trial_id == trial_id and read[victim].status == "TERMINATED"
    assert [t.status for t in read.values()] == ["TERMINATED"] * 4


@pytest.mark.slow
@pytest.mark.parametrize(("file", "at"), [("result.json", 0.5), ("result.json", "line"), ("progress.csv", "character")])
def test_the_race_runs_a_trial_whose_reports_were_cut_again_and_comes_out_as_an_uninterrupted_one(
    race, tmp_path, file, at
):
    """The look was cut off by a kill after its four trials ended (each with its end record), its state file and
    one trial's reports cut: the next call reads the three others as finished, runs the victim's run again with its
    seed (counted once) as the look's next attempt, and the race comes out as the uninterrupted one."""
    folder, victim = _look1(race, tmp_path)
    _cut(victim, file, at)
    assert victim not in {t.folder for t in read_experiment(folder).trials}

    result = _race(tmp_path)
    assert (result.stop, result.look) == race["result"]
    again = read_experiment(tmp_path / "tune" / "race-look1.2").trials
    assert [(t.config["lr"], t.config["seed"], t.status) for t in again] == [(*VICTIM, "TERMINATED")]
    assert _outcome(tmp_path) == race["outcome"]
