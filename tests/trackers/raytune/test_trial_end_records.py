"""race_tune's end records (``trackers/raytune/ended.py``), read without Ray: beside a state file cut by a kill, a
trial whose end race_tune recorded is a finished run when its last report is the one recorded; a record that is not
one race_tune writes is passed over with a note naming it (the trial then runs again), never taken on trust.

The folders are written as Ray Tune 2.x writes them (``tests/contract/source_corpus.tune_folder``, trial ids
``c0ffe_0000<i>``, three reports each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.raytune import raytune_table
from rl_reliable_logger.trackers.raytune.ended import FOLDER, ended, write_end
from rl_reliable_logger.trackers.raytune.experiment import read_experiment
from tests.contract.source_corpus import Run, tune_folder


def _experiment(tmp_path: Path, *, cut: bool = True) -> Path:
    """Four finished trials (c0ffe_00000..3) and an errored one (c0ffe_00004); the state file cut by a kill."""
    runs = [Run("A", "x", s, 0.1 * s) for s in range(4)] + [Run("A", "x", 9, 9.0, state="error")]
    tune_folder(tmp_path / "exp", runs)
    if cut:
        state = next((tmp_path / "exp").glob("experiment_state-*.json"))
        state.write_text(state.read_text()[:150])
    return tmp_path / "exp"


def _states(folder: Path) -> dict[str, str]:
    return {t.trial_id: t.status for t in read_experiment(folder).trials}


def test_a_recorded_end_makes_a_trial_of_a_cut_state_file_a_finished_run(tmp_path):
    exp = _experiment(tmp_path)
    for i in (0, 2, 4):  # the errored trial's record (it cannot have one: Tune errored it) does not outweigh error.txt
        write_end(exp, f"c0ffe_0000{i}", 3)
    assert _states(exp) == {
        "c0ffe_00000": "TERMINATED",
        "c0ffe_00001": "UNKNOWN",
        "c0ffe_00002": "TERMINATED",
        "c0ffe_00003": "UNKNOWN",
        "c0ffe_00004": "ERROR",
    }
    note = read_experiment(exp).notes[0]
    assert note.endswith(
        f"unless race_tune recorded its end (2 trial(s) ended normally by their end records in {FOLDER!r})"
    )
    table = raytune_table(exp, score_key="score", read=ReadOptions(on_invalid="drop"))
    assert sorted(table.frame["seed"].astype(int)) == [0, 2]
    assert sorted(table.frame["score"].round(6)) == [0.0, 0.2]
    assert sorted(int(r["seed"]) for r in table.source["excluded"]) == [1, 3, 9]


def test_a_record_of_another_report_than_the_last_does_not_finish_a_trial(tmp_path):
    """A record names the report after which the trial ended: a folder whose last report is another one (a report
    lost, or a record from elsewhere) is not known to have ended."""
    exp = _experiment(tmp_path)
    write_end(exp, "c0ffe_00000", 2)
    write_end(exp, "c0ffe_00001", 4)
    assert _states(exp)["c0ffe_00000"] == _states(exp)["c0ffe_00001"] == "UNKNOWN"


def test_records_do_not_outweigh_an_intact_state_file(tmp_path):
    """An intact state file is Tune's word: a RUNNING trial stays running whatever a record says."""
    runs = [Run("A", "x", 0, 0.0), Run("A", "x", 1, 0.1, state="running")]
    tune_folder(tmp_path / "exp", runs)
    write_end(tmp_path / "exp", "c0ffe_00000", 1)
    write_end(tmp_path / "exp", "c0ffe_00001", 3)
    assert _states(tmp_path / "exp") == {"c0ffe_00000": "TERMINATED", "c0ffe_00001": "RUNNING"}


def test_a_terminated_trial_without_a_record_in_a_watched_experiment_is_cut_off(tmp_path):
    """Tune marks TERMINATED, with no callback, the trials it cuts off when it stops the whole experiment (fail_fast
    after an error, a Stopper's stop_all(), time_budget_s). In an experiment race_tune's recorder watched (it made
    the records' folder), a TERMINATED trial without a record is such a trial: an unfinished run, with a note; its
    partial last report is no score."""
    runs = [Run("A", "x", s, 0.1 * s) for s in range(3)] + [Run("A", "x", 9, 9.0, state="error")]
    tune_folder(tmp_path / "exp", runs)
    exp = tmp_path / "exp"
    write_end(exp, "c0ffe_00000", 3)
    write_end(exp, "c0ffe_00002", 3)
    experiment = read_experiment(exp)
    assert _states(exp) == {
        "c0ffe_00000": "TERMINATED", "c0ffe_00001": "CUT_OFF", "c0ffe_00002": "TERMINATED", "c0ffe_00003": "ERROR"
    }  # fmt: skip
    said = [n for n in experiment.notes if "1 of its 4 trials marked TERMINATED ended with no end record" in n]
    assert len(said) == 1 and "Tune cut them off when it stopped the whole experiment (fail_fast" in said[0]
    table = raytune_table(exp, score_key="score")
    assert sorted(table.frame["seed"].astype(int)) == [0, 2]
    assert sorted((int(r["seed"]), r["state"]) for r in table.source["excluded"]) == [
        (1, "cut off"), (9, "error")
    ]  # fmt: skip
    assert said[0] in table.warnings


def test_a_folder_the_recorder_did_not_watch_is_read_as_tune_says(tmp_path):
    """A look folder of an older version (no records' folder), or any other Tune experiment: its TERMINATED trials
    are finished runs, as before."""
    runs = [Run("A", "x", s, 0.1 * s) for s in range(3)]
    tune_folder(tmp_path / "exp", runs)
    assert set(_states(tmp_path / "exp").values()) == {"TERMINATED"}
    assert len(raytune_table(tmp_path / "exp", score_key="score").frame) == 3


DAMAGED = {
    "empty": "",
    "not_json": "\x00garbage",
    "cut": '{"format": "rl_reliable_logger/raytune-trial-end", "vers',
    "foreign": json.dumps({"trial_id": "c0ffe_00001", "training_iteration": 3}),
    "list": "[1, 2]",
    "newer": json.dumps(
        {
            "format": "rl_reliable_logger/raytune-trial-end",
            "version": 2,
            "trial_id": "c0ffe_00001",
            "training_iteration": 3,
        }
    ),
    "other_trial": json.dumps(
        {
            "format": "rl_reliable_logger/raytune-trial-end",
            "version": 1,
            "trial_id": "c0ffe_00002",
            "training_iteration": 3,
        }
    ),
    "text_iteration": json.dumps(
        {
            "format": "rl_reliable_logger/raytune-trial-end",
            "version": 1,
            "trial_id": "c0ffe_00001",
            "training_iteration": "3",
        }
    ),
    "bool_iteration": json.dumps(
        {
            "format": "rl_reliable_logger/raytune-trial-end",
            "version": 1,
            "trial_id": "c0ffe_00001",
            "training_iteration": True,
        }
    ),
    "key_twice": '{"format": "rl_reliable_logger/raytune-trial-end", "version": 1, "trial_id": "c0ffe_00001", '
    '"training_iteration": 3, "training_iteration": 3}',
}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_a_damaged_record_is_passed_over_with_a_note_naming_it(tmp_path, damage):
    """A record is only ever written whole (the one writer's atomic swap), so one that is not a record race_tune
    writes is damage or someone else's file: it is passed over, its trial unfinished (its run runs again), and
    the note names the file. The other records are read as before."""
    exp = _experiment(tmp_path)
    write_end(exp, "c0ffe_00000", 3)
    bad = exp / FOLDER / "c0ffe_00001.ended.json"
    bad.write_text(DAMAGED[damage])
    experiment = read_experiment(exp)
    assert {t.trial_id: t.status for t in experiment.trials}["c0ffe_00000"] == "TERMINATED"
    assert {t.trial_id: t.status for t in experiment.trials}["c0ffe_00001"] == "UNKNOWN"
    said = [n for n in experiment.notes if str(bad) in n]
    assert len(said) == 1 and said[0].startswith(f"Ray Tune trial end record {str(bad)!r} is passed over ("), said
    assert "\n" not in said[0]
    table = raytune_table(exp, score_key="score", read=ReadOptions(on_invalid="drop"))
    assert sorted(table.frame["seed"].astype(int)) == [0]
    assert said[0] in table.warnings


def test_what_a_killed_writer_leaves_is_no_record(tmp_path):
    """The writer's temporary sibling (``.<name>.<pid>.tmp``, what a kill mid-write leaves) and its lock are not
    records; nor is a file that is not named as one."""
    exp = _experiment(tmp_path)
    (exp / FOLDER).mkdir()
    (exp / FOLDER / ".c0ffe_00001.ended.json.4242.tmp").write_text('{"format": "rl_reliable_logger/raytune-tri')
    (exp / FOLDER / "notes.txt").write_text("mine")
    assert ended(exp) == ({}, [])
    assert set(_states(exp).values()) == {"UNKNOWN", "ERROR"}


def test_a_record_folder_that_is_a_link_is_not_followed(tmp_path):
    exp = _experiment(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    write_end(elsewhere, "c0ffe_00000", 3)
    (exp / FOLDER).symlink_to(elsewhere / FOLDER)
    records, notes = ended(exp)
    assert records == {} and len(notes) == 1 and "is not a folder" in notes[0]
    assert _states(exp)["c0ffe_00000"] == "UNKNOWN"


def test_a_trial_id_that_is_no_plain_file_name_gets_no_record(tmp_path):
    for trial_id in ("../x", ".hidden", "a/b", ""):
        assert write_end(tmp_path, trial_id, 3) is None
    assert not (tmp_path / FOLDER).exists()


class _Trial:
    def __init__(self, trial_id: str, status: str, last_result: dict) -> None:
        self.trial_id, self.status, self.last_result = trial_id, status, last_result


def test_the_callback_records_each_trial_tune_stops_through_stop_trial(tmp_path):
    """Tune calls ``on_trial_complete`` from ``stop_trial`` before marking the trial TERMINATED: RUNNING is a trial
    whose trainable returned (or a stop criterion or scheduler ended it; one that never reported is recorded after
    report 0), PAUSED one a scheduler stopped (HyperBand stops its paused trials through ``stop_trial``). A PENDING
    trial stopped never ran: no record; an error goes to ``on_trial_error``, which records nothing. The records'
    folder is made when the look starts (``setup``): the experiment is one the recorder watched."""
    pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")
    from rl_reliable_logger.trackers.raytune.ended import end_recorder, recording

    recorder = end_recorder(tmp_path)
    assert not recording(tmp_path)
    recorder.setup(stop=None, num_samples=5, total_num_samples=5)
    assert recording(tmp_path) and ended(tmp_path) == ({}, [])
    trials = [
        _Trial("t_00000", "RUNNING", {"training_iteration": 5, "done": True}),
        _Trial("t_00001", "PENDING", {}),
        _Trial("t_00002", "PAUSED", {"training_iteration": 2}),
        _Trial("t_00003", "RUNNING", {}),
        _Trial("t_00005", "PAUSED", {}),
    ]
    for trial in trials:
        recorder.on_trial_complete(iteration=1, trials=trials, trial=trial)
    recorder.on_trial_error(iteration=1, trials=trials, trial=_Trial("t_00004", "RUNNING", {"training_iteration": 1}))
    assert ended(tmp_path) == ({"t_00000": 5, "t_00002": 2, "t_00003": 0}, [])


def test_a_record_that_cannot_be_written_is_a_warning_not_an_error_of_the_trial(tmp_path):
    pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")
    from rl_reliable_logger.trackers.raytune.ended import end_recorder

    (tmp_path / FOLDER).write_text("a file where the folder goes")
    trial = _Trial("t_00000", "RUNNING", {"training_iteration": 5})
    with pytest.warns(RuntimeWarning, match="could not record the end of trial t_00000"):
        end_recorder(tmp_path).on_trial_complete(iteration=1, trials=[trial], trial=trial)
