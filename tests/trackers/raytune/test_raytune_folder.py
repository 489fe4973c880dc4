"""A Ray Tune experiment folder is read as data (issue 41): its JSON and CSV files, never a pickle, never Ray.

The folders here are written in the files and format Ray Tune 2.x writes (``tests/contract/source_corpus.tune_folder``;
``test_raytune_source.py`` reads a real Tune run the same way), so these tests need no Ray.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pandas as pd
import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.raytune import raytune_table
from tests.contract.source_corpus import Run, payload, tune_folder
from tests.support.paths import REPO

FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures", "--quiet"]


def _runs(**states: str) -> list[Run]:
    runs = [
        Run(a, t, s, round(0.1 * i + 0.01 * s, 6)) for i, a in enumerate("AB") for t in ("x", "y") for s in range(3)
    ]
    return runs + [Run("A", "x", 10 + i, 9.0, state=state) for i, state in enumerate(states.values())]


def test_only_terminated_trials_are_runs_the_others_are_listed(tmp_path):
    tune_folder(tmp_path / "exp", _runs(a="running", b="pending", c="error", d="paused"))
    table = raytune_table(tmp_path / "exp", score_key="score")
    assert len(table.frame) == 12 and 9.0 not in set(table.frame["score"])
    assert {e["state"] for e in table.source["excluded"]} == {"running", "pending", "error", "paused"}
    assert "left out 4 unfinished Ray Tune runs (1 error, 1 paused, 1 pending, 1 running)" in table.warnings[-1]
    every = raytune_table(tmp_path / "exp", score_key="score", read=ReadOptions(include_unfinished=True))
    assert len(every.frame) == 16 and sorted(every.frame[every.frame["score"] == 9.0]["seed"]) == [10, 11, 12, 13]


def test_reading_a_folder_imports_no_ray_and_prints_nothing_of_it(tmp_path):
    tune_folder(tmp_path / "exp", _runs())
    code = (
        "import sys; from rl_reliable_logger.trackers import ReadOptions; "
        "from rl_reliable_logger.trackers.raytune import raytune_table; "
        f"t = raytune_table({str(tmp_path / 'exp')!r}, score_key='score', read=ReadOptions(score_rule='mean-last-2')); "
        "print(len(t.frame), 'ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert done.stdout.split() == ["12", "False"] and done.stderr == "", done.stderr


def test_a_relative_path_is_read_like_an_absolute_one(tmp_path, monkeypatch, capsys):
    tune_folder(tmp_path / "exp", _runs())
    absolute = raytune_table(tmp_path / "exp", score_key="score")
    monkeypatch.chdir(tmp_path)
    relative = raytune_table("exp", score_key="score")
    pd.testing.assert_frame_equal(relative.frame, absolute.frame)
    assert main(["raytune", "exp", "--score-key", "score", *FAST]) == 0
    assert "URI" not in capsys.readouterr().err


def test_a_value_tune_could_only_pickle_is_named_and_left_out(tmp_path):
    marker = tmp_path / "EXECUTED"
    tune_folder(tmp_path / "exp", _runs(), pickled={"config": payload(marker), "storage": payload(marker)})
    table = raytune_table(tmp_path / "exp", score_key="score", hyperparameter_keys=[])
    assert not marker.exists()
    pickles = [w for w in table.warnings if "only as a pickle" in w]
    assert len(pickles) == 1, pickles  # one line for the key, not one per trial
    assert table.warnings[0].startswith(
        "Ray Tune config key 'pickled_config' is stored only as a pickle in 12 trials (c0ffe_00000, c0ffe_00001, "
    )
    assert "pickled_config" not in table.frame.columns


def test_a_trial_folder_out_of_the_experiment_is_not_followed(tmp_path):
    tune_folder(tmp_path / "exp", _runs())
    state = next((tmp_path / "exp").glob("experiment_state-*.json"))
    data = json.loads(state.read_text())
    trial = json.loads(data["trial_data"][0][0])
    trial["relative_logdir"] = "../../etc"
    data["trial_data"][0][0] = json.dumps(trial)
    state.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"its folder name '\.\./\.\./etc' is not one plain folder name"):
        raytune_table(tmp_path / "exp", score_key="score", score_rule="mean-last-2")
    assert len(raytune_table(tmp_path / "exp", score_key="score").frame) == 12  # the last result is in the state


@pytest.mark.parametrize("damage", ["not_json", "no_trials", "foreign", "bad_middle", "fifo"])
def test_a_damaged_state_file_is_one_sentence_naming_it(tmp_path, damage, capsys):
    import os

    tune_folder(tmp_path / "exp", _runs())
    state = next((tmp_path / "exp").glob("experiment_state-*.json"))
    text = state.read_text()
    if damage == "fifo":
        state.unlink()
        os.mkfifo(state)
    else:
        damaged = {"not_json": "\x00garbage", "no_trials": "{}", "foreign": '{"trial_data": [1]}'}
        damaged["bad_middle"] = text[: len(text) // 2] + "\x01" + text[len(text) // 2 :]  # wrong, not cut short
        state.write_text(damaged[damage])
    assert main(["raytune", str(tmp_path / "exp"), "--score-key", "score", *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and state.name in err and "Traceback" not in err, err
    says = {"no_trials": "has no trial_data list", "foreign": "a trial_data entry is not a pair of JSON texts"}
    assert says.get(damage, "") in err and "read from their folders" not in err, err


@pytest.mark.parametrize("keep", [0.0, 0.5, 0.999])
def test_a_state_file_cut_short_is_read_from_the_trial_folders(tmp_path, keep):
    """A driver killed while Tune wrote its state file (Tune writes it in place) leaves it empty or cut short:
    the trials are read from their own folders, the same ids, configs and last results, and the note says so."""
    from rl_reliable_logger.trackers.raytune.experiment import read_experiment

    tune_folder(tmp_path / "exp", _runs(c="error"))
    intact = read_experiment(tmp_path / "exp")
    every = raytune_table(tmp_path / "exp", score_key="score", read=ReadOptions(include_unfinished=True))
    state = next((tmp_path / "exp").glob("experiment_state-*.json"))
    text = state.read_text()
    state.write_text(text[: int(len(text) * keep)])
    cut = read_experiment(tmp_path / "exp")
    assert [(t.trial_id, t.name, t.folder, t.config, t.last_result) for t in cut.trials] == [
        (t.trial_id, t.name, t.folder, t.config, t.last_result) for t in intact.trials
    ]
    # the folders say ERROR (error.txt); a trial whose last report is not marked done is of unknown state
    assert [t.status for t in cut.trials] == ["UNKNOWN"] * 12 + ["ERROR"]
    how = "empty" if keep == 0 else "cut short"
    assert cut.notes[0].startswith(f"Ray Tune experiment state {str(state)!r} is {how} ")
    assert "its 13 trials were read from their folders" in cut.notes[0]
    read = raytune_table(tmp_path / "exp", score_key="score", read=ReadOptions(include_unfinished=True))
    pd.testing.assert_frame_equal(read.frame.drop(columns="state"), every.frame.drop(columns="state"))
    assert list(read.frame["state"]) == ["unknown"] * 12 + ["error"]
    assert read.warnings[0] == cut.notes[0]
    with pytest.raises(InputError):  # none is known to have ended: nothing is taken as a finished run
        raytune_table(tmp_path / "exp", score_key="score")


@pytest.mark.parametrize("params", ["", '{"algorithm": "C", "ta'])
def test_a_trial_folder_not_begun_beside_a_cut_state_file_is_passed_over(tmp_path, params):
    """The driver writes a trial's params.json in place too: killed while writing it, it leaves a trial folder
    with an empty or cut config and no report. Beside a cut state file that trial had not begun: it is passed
    over with a note (its run is not there, so a race runs it again), and the other trials read as before."""
    from rl_reliable_logger.trackers.raytune.experiment import read_experiment

    tune_folder(tmp_path / "exp", _runs())
    intact = read_experiment(tmp_path / "exp")
    state = next((tmp_path / "exp").glob("experiment_state-*.json"))
    state.write_text(state.read_text()[:100])
    begun = tmp_path / "exp" / "trainable_00099_99_algorithm=C"
    begun.mkdir()
    (begun / "params.json").write_text(params)
    (begun / "result.json").write_text("")  # Tune opens it after writing params.json: it may be there, empty
    cut = read_experiment(tmp_path / "exp")
    assert [(t.trial_id, t.config, t.last_result) for t in cut.trials] == [
        (t.trial_id, t.config, t.last_result) for t in intact.trials
    ]
    assert "its 12 trials were read from their folders" in cut.notes[0]
    assert (
        "1 trial folder(s) ('trainable_00099_99_algorithm=C') are not read: their params.json is empty"
        in (cut.notes[0])
    )
    # reports beside a cut config: the driver copies a trial's folder to the storage path in place too, so a kill
    # may cut an ended trial's params.json; its configuration is unknown, so it is passed over the same way
    (begun / "result.json").write_text('{"score": 1.0, "trial_id": "99"}\n')
    again = read_experiment(tmp_path / "exp")
    assert [t.trial_id for t in again.trials] == [t.trial_id for t in intact.trials]
    assert "are not read: their params.json is empty or cut short" in again.notes[0]


def test_no_state_file_but_pickles_says_they_are_not_read(tmp_path):
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "tuner.pkl").write_bytes(payload(tmp_path / "EXECUTED"))
    with pytest.raises(
        InputError, match=r"no Ray Tune experiment folder|not a Ray Tune experiment folder.*tuner\.pkl.*never read"
    ):
        raytune_table(tmp_path / "exp", score_key="score")
    assert not (tmp_path / "EXECUTED").exists()


def test_watch_raytune_with_the_default_keys_launches_runs(tmp_path, monkeypatch, capsys):
    overlapping = [
        Run(a, t, s, ((7 * s + 3 * i + j) % 10) / 10)
        for i, a in enumerate("AB")
        for j, t in enumerate("xy")
        for s in range(3)
    ]
    tune_folder(tmp_path / "exp", overlapping)
    monkeypatch.chdir(tmp_path)
    argv = ["watch", "raytune", "exp", "--score-key", "score", "--state", "st", "--looks", "2", "--max-runs", "10"]
    assert main(argv) == 3, capsys.readouterr().err
    launched = pd.read_csv(tmp_path / "st" / "runs.csv")
    assert list(launched.columns) == ["algorithm", "task", "seed"] and set(launched["seed"]) >= {3}


def test_typo_in_a_hyperparameter_key_is_one_sentence(tmp_path, capsys):
    tune_folder(tmp_path / "exp", [Run(r.algorithm, r.task, r.seed, r.score, config=(("lr", 0.1),)) for r in _runs()])
    argv = ["raytune", str(tmp_path / "exp"), "--score-key", "score", "--hyperparameter-keys", "config/lrr", *FAST]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --hyperparameter-keys names 'lrr', which no run has") and "lr" in err, err
    assert err.count("\n") == 1


def _progress_csv(path, rows):
    """progress.csv as Tune's csv.DictWriter writes it: ``nan`` for a NaN, an empty cell for a key not reported."""
    fields = list(dict.fromkeys(k for r in rows for k in r if k != "config"))
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fields, restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize("file", ["result.json", "progress.csv"])
def test_a_reported_nan_is_named_not_skipped(tmp_path, file):
    """A NaN a trial reported is a non-finite score (as MLflow's and TensorBoard's are), never skipped so that
    ``mean-last-2`` quietly averages two earlier reports instead; a report without the key is still no point."""
    results = tune_folder(tmp_path / "exp", _runs())
    folder = results[0].parent
    rows = [json.loads(line) for line in results[0].read_text().splitlines()]
    rows[-1]["score"] = float("nan")
    rows.insert(1, {k: v for k, v in rows[1].items() if k != "score"})  # a report of other metrics only
    if file == "result.json":
        results[0].write_text("".join(json.dumps(r) + "\n" for r in rows))  # json writes NaN, as Tune's does
    else:
        results[0].unlink()
        _progress_csv(folder / "progress.csv", rows)
    with pytest.raises(InputError, match=r"non-finite final score nan in score: c0ffe_00000"):
        raytune_table(tmp_path / "exp", score_key="score", score_rule="mean-last-2")
    rows[-1]["score"] = 5.0
    if file == "result.json":
        results[0].write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        _progress_csv(folder / "progress.csv", rows)
    table = raytune_table(tmp_path / "exp", score_key="score", score_rule="mean-last-2")
    first = table.frame.set_index("run_id").loc["c0ffe_00000", "score"]
    assert first == pytest.approx((rows[2]["score"] + 5.0) / 2)  # the report without the key is no point


@pytest.mark.parametrize(
    "damage, says",
    [
        ("short-row", r"progress\.csv: malformed CSV: row 1 \(line 3\) has 2 field\(s\)"),
        ("huge-field", r"progress\.csv: line 3 has a field longer than 131,072 characters"),
        ("column-twice", r"progress\.csv: column 'score' appears twice in the header"),
    ],
)
def test_a_progress_csv_no_tune_writes_is_one_sentence(tmp_path, capsys, damage, says):
    results = tune_folder(tmp_path / "exp", _runs())
    folder = results[0].parent
    results[0].unlink()  # progress.csv is read when there is no result.json
    lines = (folder / "progress.csv").read_text().splitlines()
    if damage == "short-row":
        lines[2] = ",".join(lines[2].split(",")[:2])
    elif damage == "huge-field":
        lines[2] = "x" * 131_073 + lines[2][lines[2].index(",") :]
    else:
        lines[0] = lines[0].replace("training_iteration", "score")
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=says):
        raytune_table(tmp_path / "exp", score_key="score", score_rule="mean-last-2")
    capsys.readouterr()
    code = main(["raytune", str(tmp_path / "exp"), "--score-key", "score", "--score-rule", "mean-last-2", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "progress.csv" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("rule", ["max", "mean-last-2"])
def test_a_reported_string_score_is_named(tmp_path, rule):
    results = tune_folder(tmp_path / "exp", _runs())
    rows = [json.loads(line) for line in results[0].read_text().splitlines()]
    rows[-1]["score"] = "0.9"
    results[0].write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"non-numeric value '0\.9' logged at step 3"):
        raytune_table(tmp_path / "exp", score_key="score", score_rule=rule)


@pytest.mark.parametrize("digits", [400, 4400])
def test_a_reported_integer_no_float_holds_is_named(tmp_path, digits):
    results = tune_folder(tmp_path / "exp", _runs())
    lines = results[0].read_text().splitlines()
    lines[-1] = lines[-1].replace('"training_iteration": 3', '"training_iteration": ' + "7" * digits)
    results[0].write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"result\.json: line 3: the integer 7777.* \({digits:,} digits\)"):
        raytune_table(tmp_path / "exp", score_key="score", score_rule="max")
