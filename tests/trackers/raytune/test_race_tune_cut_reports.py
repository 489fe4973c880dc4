"""A look's trial folder whose reports a kill cut, beside a state file cut short: Tune writes ``result.json`` and
``progress.csv`` in place, and copies a trial's folder to the storage path in place, so a driver killed then leaves
them ending inside a report, or with fewer reports than they had. Such a trial is passed over with one note naming
its folder (its run is not known whole: the report left out could be the last, the score), the other trials read
as before, and the race runs it again with its seed, counted once: the race comes out as an uninterrupted one.

The folders are a real race's (``race_tune`` on this module's local Ray, run once), cut as a kill leaves them."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
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


def _race(root: Path, read: ReadOptions | None = None) -> Any:
    return race_tune(
        trainable, [{"lr": 0.1}, {"lr": 0.2}], ["a"], state=root / "race", design=RaceOptions(looks=2, max_runs=4),
        score_key="score", reps=200, seed=0, run_config={"storage_path": root / "tune", "verbose": 0}, read=read,
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


def _look1(race: dict[str, Any], root: Path, *, cut_state: bool = True) -> tuple[Path, Path]:
    """A copy of the race's first look as a kill after its trials ended leaves it (the state file cut short, unless
    not ``cut_state``), and the folder of the victim's trial."""
    folder = root / "tune" / "race-look1"
    shutil.copytree(race["look1"], folder)
    state = next(folder.glob("experiment_state-*.json"))
    text = state.read_text()
    if cut_state:
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
    elif at == "last line":  # every report but the last, whole lines: nothing in the file tells of a cut
        keep = data[: data.rindex(b"\n", 0, len(data) - 1) + 1]
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


# ---------------------------------------------------------------------------- beside an intact state file
MEAN2 = ReadOptions(hyperparameter_keys=["config/lr"], score_rule="mean-last-2")

INTACT_CUTS = [
    ("result.json", "last line"),  # was read as whole: the score averaged the two reports before the last
    ("result.json", 0.999),  # inside the last report: stopped the whole read ("1 run cannot be read")
    ("result.json", -2),  # the last report without its closing brace
    ("result.json", 0.0),  # emptied: no reports at all
    ("both", "last line"),  # result.json and progress.csv cut alike: only the state file's last result tells
    ("progress.csv", "last line"),
    ("progress.csv", -3),  # inside the last row's last field: read as a whole row
    ("progress.csv", "character"),
]


def _scores(table: Any) -> dict[tuple[float, int], float]:
    frame = table.final().frame if table.has_steps else table.frame
    return {(float(r.lr), int(r.seed)): float(r.score) for r in frame.itertuples()}


@pytest.mark.parametrize("curves", [False, True])
@pytest.mark.parametrize(("file", "at"), INTACT_CUTS)
def test_beside_an_intact_state_file_a_terminated_trial_whose_reports_a_kill_cut_is_passed_over(
    race, tmp_path, file, at, curves
):
    """The state file is whole and says the victim TERMINATED after its third report, but a kill cut its reports
    (Tune copies a trial's folder in place): a score rule reading the history (or the curves) passes the trial
    over with one note naming its folder and file, as the folder read does, and scores the others as before."""
    folder, victim = _look1(race, tmp_path, cut_state=False)
    read = replace(MEAN2, curves=curves)
    whole = raytune_table(folder, score_key="score", read=read)
    assert len(_scores(whole)) == 4 and not any(victim.name in w for w in whole.warnings)
    if file == "both":
        progress = (victim / "progress.csv").read_bytes()
        _cut(victim, "result.json", at)
        (victim / "progress.csv").write_bytes(progress[: progress.rindex(b"\n", 0, len(progress) - 1) + 1])
    else:
        _cut(victim, file, at)

    table = raytune_table(folder, score_key="score", read=read)
    scores = _scores(table)
    assert VICTIM not in scores and scores == {k: v for k, v in _scores(whole).items() if k != VICTIM}
    if curves:
        assert VICTIM not in {(float(r.lr), int(r.seed)) for r in table.frame.itertuples()}
    named = "result.json" if file == "both" else file
    said = [w for w in table.warnings if victim.name in w]
    assert len(said) == 1 and said[0].count(victim.name) == 1, table.warnings
    assert f"1 trial folder(s) ({victim.name!r} ({named})) are not read: their reports are cut short" in said[0]
    assert said[0].startswith(f"Ray Tune experiment {str(folder)!r}: ") and not table.source.get("damaged")
    assert all(t.status == "TERMINATED" for t in read_experiment(folder).trials)  # the last score is the state's
    assert len(raytune_table(folder, score_key="score", read=ReadOptions(hyperparameter_keys=["config/lr"])).frame) == 4


def test_beside_an_intact_state_file_reports_in_any_order_are_not_cut(race, tmp_path):
    """The cut is told by the reports reaching the state file's last one, not by the order of the lines: a whole
    result.json written in another order is read as before, and one cut is passed over in any order."""
    folder, victim = _look1(race, tmp_path, cut_state=False)
    whole = _scores(raytune_table(folder, score_key="score", read=MEAN2))
    result = victim / "result.json"
    lines = result.read_bytes().splitlines(keepends=True)
    result.write_bytes(b"".join(reversed(lines)))
    table = raytune_table(folder, score_key="score", read=MEAN2)
    assert _scores(table) == whole and not any(victim.name in w for w in table.warnings)

    result.write_bytes(b"".join(reversed(lines[:-1])))  # the last report left out, the first line now its last
    table = raytune_table(folder, score_key="score", read=MEAN2)
    assert VICTIM not in _scores(table) and sum(victim.name in w for w in table.warnings) == 1


@pytest.mark.slow
def test_a_race_reading_the_history_runs_a_trial_whose_reports_were_cut_again_once(race, tmp_path):
    """The look's state file is whole, one trial's result.json cut at a line end: a race scoring ``mean-last-2``
    passes it over, runs its run again with its seed as the look's next attempt, and counts every run once, with
    the score an uncut look gives."""
    rule = ReadOptions(score_rule="mean-last-2")
    whole = _scores(
        raytune_table(race["look1"], score_key="score", read=replace(rule, hyperparameter_keys=["config/lr"]))
    )
    folder, victim = _look1(race, tmp_path, cut_state=False)
    _cut(victim, "result.json", "last line")

    result = _race(tmp_path, rule)
    again = read_experiment(tmp_path / "tune" / "race-look1.2").trials
    assert [(t.config["lr"], t.config["seed"], t.status) for t in again] == [(*VICTIM, "TERMINATED")]
    frame, _ = read_looks(tmp_path / "tune", "race", result.look, ["lr"], TrialReading("score", read=rule))
    runs = [(float(r.lr), int(r.seed)) for r in frame.itertuples()]
    assert len(runs) == len(set(runs)) and set(whole) <= set(runs)
    assert {k: float(s) for k, s in zip(runs, frame["score"]) if k in whole} == pytest.approx(whole)
