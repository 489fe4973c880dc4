"""``race_tune`` interrupted for real (SIGTERM and SIGKILL, in look 1 and in a later look) on a local Ray: the next
call finishes the look that was cut off, running exactly its listed runs that did not finish (the same seeds), and
no seed runs to its end twice.

Each call is a driver process connected to this module's local Ray (one Ray at a time). A trial starting the run
the test names sends the driver the signal and then waits (it never ends: the driver's end ends it). Trials run one
at a time (``tune_config={"max_concurrent_trials": 1}``, the bundle's path to TuneConfig), so which runs finished
before the signal is known: in each look, two of the four listed runs. Should a kill land while Tune writes the
look's state file (Tune writes it in place), the file is left cut short and the next call reads the look's trials
from their folders; Tune records a trial's normal end only in that file, so race_tune records it too (an end record
per trial, written whole or not at all): the look's ended runs never run again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")

DRIVER = """
import json, os, sys, time
import numpy as np
import ray

args = json.loads(sys.argv[1])
ray.init(address=args["address"], include_dashboard=False, log_to_driver=False)
from rl_reliable_logger.analysis.race_options import RaceOptions
from rl_reliable_logger.trackers.raytune import race_tune


def trainable(config):
    from ray import train, tune

    run = f"{config['lr']} {config['task']} {config['seed']}"
    trigger = config["trigger"]
    if os.path.exists(trigger) and open(trigger).read().split("|")[0] == run:
        os.rename(trigger, trigger + ".fired")  # once
        pid, sig = open(trigger + ".fired").read().split("|")[1:]
        os.kill(int(pid), int(sig))
        time.sleep(300)  # never ends: the driver's end ends it
    value = float(np.random.default_rng([int(config["seed"])]).normal())
    value += 0.01 * float(np.random.default_rng([int(config["seed"]), int(config["lr"] * 10)]).normal())
    with open(config["log"], "a") as log:
        log.write(f"{config['call']}|{run}\\n")  # one write: the run ended
    (getattr(tune, "report", None) or train.report)({"score": value})


result = race_tune(
    trainable, [{"lr": 0.1}, {"lr": 0.2}], ["a"], state=args["state"], design=RaceOptions(looks=2, max_runs=4),
    score_key="score", reps=200, seed=0, param_space={"trigger": args["trigger"], "log": args["log"],
    "call": args["call"]}, run_config={"storage_path": args["storage"], "verbose": 0},
    tune_config={"max_concurrent_trials": 1},
)
print(json.dumps({"stop": bool(result.stop), "look": result.look}))
"""
LOOK_1 = [(lr, 0, s) for lr in (0.1, 0.2) for s in (0, 1)]  # listed order: configuration, task, seed
LOOK_2 = [(lr, 0, s) for lr in (0.1, 0.2) for s in (2, 3)]


@pytest.fixture(scope="module")
def ray_address():
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    if started:
        ray.shutdown()


def _call(
    tmp_path: Path, address: str, call: int, kill: tuple[tuple[float, int, int], int] | None
) -> subprocess.CompletedProcess:
    trigger = tmp_path / "trigger"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    args = {"address": address, "state": str(tmp_path / "race"), "storage": str(tmp_path / "tune"),
            "trigger": str(trigger), "log": str(tmp_path / "ended.log"), "call": call}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, str(script), json.dumps(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if kill is not None:
        (lr, _, seed), sig = kill
        trigger.write_text(f"{lr} a {seed}|{process.pid}|{int(sig)}")
    out, err = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _ended(tmp_path: Path) -> list[tuple[int, str]]:
    lines = (tmp_path / "ended.log").read_text().splitlines()
    return [(int(call), run) for call, run in (line.split("|") for line in lines)]


def _run(cell: tuple[float, int, int]) -> str:
    return f"{cell[0]} a {cell[2]}"


@pytest.mark.slow
@pytest.mark.parametrize(("first", "later"), [(signal.SIGTERM, signal.SIGKILL), (signal.SIGKILL, signal.SIGTERM)])
def test_an_interrupted_look_is_finished_by_the_next_call_and_no_seed_runs_twice(
    ray_address: str, tmp_path: Path, first: signal.Signals, later: signal.Signals
) -> None:
    from rl_reliable_logger.trackers.raytune.attempts import TrialReading, read_looks

    cut = _call(tmp_path, ray_address, 1, (LOOK_1[2], first))  # look 1: two runs ended, the third is cut off
    assert cut.returncode != 0 and (tmp_path / "trigger.fired").exists(), cut.stderr[-2000:]
    assert not (tmp_path / "race").exists()  # no look was taken
    assert [run for _, run in _ended(tmp_path)] == [_run(c) for c in LOOK_1[:2]]
    (tmp_path / "trigger.fired").unlink()

    cut1 = {_run(c) for c in LOOK_1[:2]} - _readable_runs(tmp_path, 1)  # ended, but their config cut by the kill
    cut = _call(tmp_path, ray_address, 2, (LOOK_2[2], later))  # look 1 finished and taken; look 2 cut off likewise
    assert cut.returncode != 0 and (tmp_path / "trigger.fired").exists(), cut.stderr[-2000:]
    ended = _ended(tmp_path)
    again2 = [run for call, run in ended if call == 2]
    assert [r for r in again2 if r not in cut1] == [_run(c) for c in LOOK_1[2:] + LOOK_2[:2]]
    assert len(json.loads((tmp_path / "race" / "looks.json").read_text())) == 1

    cut2 = {_run(c) for c in LOOK_2[:2]} - _readable_runs(tmp_path, 2)
    done = _call(tmp_path, ray_address, 3, None)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"stop": True, "look": 2}
    ended = _ended(tmp_path)
    again3 = [run for call, run in ended if call == 3]
    assert [r for r in again3 if r not in cut2] == [_run(c) for c in LOOK_2[2:]]  # what did not end
    rerun = (set(again2) & cut1) | (set(again3) & cut2)  # the same seed and score, counted once in the race
    assert Counter(run for _, run in ended) == {_run(c): 1 + (_run(c) in rerun) for c in LOOK_1 + LOOK_2}
    looks = json.loads((tmp_path / "race" / "looks.json").read_text())
    assert len(looks) == 2 and all("missing" not in look for look in looks)  # each look had every listed run
    for k, cells in ((1, LOOK_1), (2, LOOK_2)):
        before, _ = read_looks(tmp_path / "tune", "race", k - 1, ["lr"], TrialReading("score"))
        upto, _ = read_looks(tmp_path / "tune", "race", k, ["lr"], TrialReading("score"))
        this = sorted((float(r.lr), int(r.seed)) for r in upto.itertuples())
        assert len(upto) - len(before) == len(cells)
        assert sorted((lr, s) for lr, _, s in cells) == sorted(
            set(this) - {(float(r.lr), int(r.seed)) for r in before.itertuples()}
        )
    assert (tmp_path / "tune" / "race-look1.2").is_dir() and (tmp_path / "tune" / "race-look2.2").is_dir()


def _cut(tmp_path: Path, look: int) -> None:
    """Cut the look's state file as a kill landing while Tune writes it leaves it (Tune writes it in place)."""
    state = next((tmp_path / "tune" / f"race-look{look}").glob("experiment_state-*.json"))
    text = state.read_text()
    state.write_text(text[: len(text) // 2])


def _readable_runs(tmp_path: Path, look: int = 1) -> set[str]:
    """The runs of a look whose trial folder still holds its configuration (a whole ``params.json``): a kill can cut
    an ended trial's (Tune copies a trial's folder to the storage path in place); such a run runs again."""
    from rl_reliable_logger.trackers.raytune.experiment import read_experiment

    trials = read_experiment(tmp_path / "tune" / f"race-look{look}").trials
    return {f"{float(t.config['lr'])} a {int(t.config['seed'])}" for t in trials if "seed" in t.config}


def _outcome(tmp_path: Path) -> tuple[list[tuple[float, int, float]], list[dict]]:
    """The race's scores (lr, seed, score: every look's finished runs) and its looks as recorded."""
    from rl_reliable_logger.trackers.raytune.attempts import TrialReading, read_looks

    frame, _ = read_looks(tmp_path / "tune", "race", 2, ["lr"], TrialReading("score"))
    scores = sorted((float(r.lr), int(r.seed), round(float(r.score), 12)) for r in frame.itertuples())
    return scores, json.loads((tmp_path / "race" / "looks.json").read_text())


@pytest.mark.slow
def test_a_look_whose_state_file_was_cut_short_runs_only_what_had_not_ended(ray_address: str, tmp_path: Path) -> None:
    """Ray writes its experiment state in place: a driver killed while writing it leaves the file cut short, and
    Tune records a function trial's normal end only there. race_tune records each normal end itself (one record
    per trial, swapped in whole), so the next call reads the look's trials from their folders, takes the two that
    ended as finished and runs only the two that had not: the race comes out as an uninterrupted one."""
    from rl_reliable_logger.trackers.raytune.ended import FOLDER

    cut = _call(tmp_path, ray_address, 1, (LOOK_1[2], signal.SIGKILL))  # look 1: two runs ended, the third cut off
    assert cut.returncode != 0 and (tmp_path / "trigger.fired").exists(), cut.stderr[-2000:]
    (tmp_path / "trigger.fired").unlink()
    records = sorted((tmp_path / "tune" / "race-look1" / FOLDER).glob("*.ended.json"))
    assert len(records) == 2  # the two that ended; the trial killed mid-run has none
    _cut(tmp_path, 1)

    done = _call(tmp_path, ray_address, 2, None)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"stop": True, "look": 2}
    ended = _ended(tmp_path)
    # not LOOK_1[:2], unless the kill also cut an ended trial's params.json (Tune copies a trial's folder to the
    # storage path in place): its configuration is then unknown and its run runs again, the same score counted once
    cut_configs = {_run(c) for c in LOOK_1[:2]} - _readable_runs(tmp_path)
    again = [run for call, run in ended if call == 2]
    assert [r for r in again if r not in cut_configs] == [_run(c) for c in LOOK_1[2:] + LOOK_2]
    assert Counter(run for _, run in ended) == {
        _run(c): 1 + (_run(c) in again and _run(c) in cut_configs) for c in LOOK_1 + LOOK_2
    }

    plain = tmp_path / "uninterrupted"
    plain.mkdir()
    whole = _call(plain, ray_address, 1, None)
    assert whole.returncode == 0, whole.stderr[-2000:]
    assert whole.stdout.strip().splitlines()[-1] == done.stdout.strip().splitlines()[-1]
    assert _outcome(tmp_path) == _outcome(plain)


@pytest.mark.slow
def test_a_look_stopped_by_ctrl_c_is_not_taken_and_the_next_call_finishes_it(ray_address: str, tmp_path: Path) -> None:
    """Tune ends an experiment on Ctrl-C (SIGINT) by returning from ``fit()`` as it does when the experiment is
    done. A look whose trials did not all end is not taken (taken, it would lack the cut-off run for good): the
    call stops with KeyboardInterrupt, saying so, and the next call runs only the run that had not ended."""
    cut = _call(tmp_path, ray_address, 1, (LOOK_1[3], signal.SIGINT))  # three runs ended, the fourth interrupted
    assert cut.returncode != 0 and (tmp_path / "trigger.fired").exists(), cut.stderr[-2000:]
    assert "KeyboardInterrupt: Ray Tune stopped the experiment 'race-look1' on an interrupt with 3 of its 4" in (
        cut.stderr
    ), cut.stderr[-2000:]
    assert not (tmp_path / "race" / "looks.json").exists()  # look 1 is not taken
    (tmp_path / "trigger.fired").unlink()

    done = _call(tmp_path, ray_address, 2, None)
    assert done.returncode == 0, done.stderr[-2000:]
    ended = _ended(tmp_path)
    assert [run for call, run in ended if call == 2] == [_run(c) for c in LOOK_1[3:] + LOOK_2]
    assert Counter(run for _, run in ended) == {_run(c): 1 for c in LOOK_1 + LOOK_2}  # none twice
    looks = json.loads((tmp_path / "race" / "looks.json").read_text())
    assert len(looks) == 2 and all("missing" not in look for look in looks)  # each look had every listed run
