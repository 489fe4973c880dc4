"""The issue's reproductions of the watch ledger and the console, run as a user runs them (real processes where a
kill or a second process is the point): each ends in correct output or one sentence, exit 2, nothing lost."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rl_reliable_logger.looks.ledger import read_state
from rl_reliable_logger.looks.watch import WATCH as WATCH_LEDGER
from rl_reliable_logger.store.bundle import read_bundle, recover_swap
from tests.support.cli import run_cli
from tests.support.ledger_edits import edit_looks
from tests.support.paths import REPO
from tests.support.writers import hostile_table

WATCH = ["--looks", "4", "--max-runs", "12", "--reps", "200", "--seed", "0"]

#: ``rl-reliable ARGV`` with a fault at one step of the one writer: SIGKILL, or hold (print, wait for stdin).
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from rl_reliable_logger.store import steps
    from rl_reliable_logger.cli.main import main

    step, action, argv = sys.argv[1], sys.argv[2], sys.argv[3:]

    def hook(reached):
        if reached == step and action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if reached == step and action == "hold":
            print("held", flush=True)
            sys.stdin.readline()

    steps.fault_hook = hook
    sys.exit(main(argv))
    """
)


def _cli(step: str, action: str, *argv: object) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore")
    return subprocess.Popen([sys.executable, "-c", CHILD, step, action, *map(str, argv)], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _scores(tmp_path: Path, version: int) -> Path:
    path = tmp_path / f"scores{version}.csv"
    hostile_table(version).frame[["algorithm", "task", "seed", "score"]].to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_watch_killed_between_the_two_renames_keeps_its_history(tmp_path, capsys):
    state = tmp_path / "state"
    code, out, err = run_cli(capsys, "watch", _scores(tmp_path, 1), "--state", state, *WATCH)
    assert code == 3 and out.startswith("look 1 of 4"), err
    second = _scores(tmp_path, 2)
    child = _cli("aside", "kill", "watch", second, "--state", state, *WATCH)  # old look aside, new not yet in place
    child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL and not state.exists()
    code, out, err = run_cli(capsys, "watch", second, "--state", state, *WATCH)
    assert code == 3, err
    assert out.startswith("look 2 of 4 (the same scores as this recorded look: no look spent)"), out
    assert (
        len(read_state(state, ledger=WATCH_LEDGER)[1]) == 2
    )  # look 1 kept, look 2 completed from the killed run's new state


@pytest.mark.slow
def test_two_looks_at_once_take_one_look_and_the_other_waits_or_refuses(tmp_path, capsys, monkeypatch):
    state = tmp_path / "state"
    assert run_cli(capsys, "watch", _scores(tmp_path, 1), "--state", state, *WATCH)[0] == 3
    second = _scores(tmp_path, 2)
    first = _cli("filled", "hold", "watch", second, "--state", state, *WATCH)
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "held"
        from rl_reliable_logger.store import lock

        monkeypatch.setattr(lock, "LOCK_WAIT", 0.5)
        code, out, err = run_cli(capsys, "watch", second, "--state", state, *WATCH)
        assert code == 2 and out == ""
        assert err.startswith(f"error: {state}: another rl-reliable process (pid {first.pid}) is writing it; "
                              "waited 0.5 s.") and err.count("\n") == 1, err  # fmt: skip
        out, err = first.communicate(input="\n", timeout=300)
        assert first.returncode == 3 and "look 2 of 4;" in out, err
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    monkeypatch.setattr(lock, "LOCK_WAIT", 60.0)
    code, out, _ = run_cli(capsys, "watch", second, "--state", state, *WATCH)  # after it: the same look, replayed
    assert code == 3 and out.startswith("look 2 of 4 (the same scores")
    assert [look["look"] for look in read_state(state, ledger=WATCH_LEDGER)[1]] == [1, 2]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda looks: looks[0].pop("hash"), "look 1 has no 'hash'"),
        (lambda looks: looks.clear(), "holds no look"),  # the history emptied: never look 1 again
    ],
)
def test_a_hand_edited_ledger_with_a_rehashed_manifest_is_one_sentence(tmp_path, capsys, edit, problem):
    state = tmp_path / "state"
    assert run_cli(capsys, "watch", _scores(tmp_path, 1), "--state", state, *WATCH)[0] == 3
    edit_looks(state, edit)
    code, out, err = run_cli(capsys, "watch", _scores(tmp_path, 2), "--state", state, *WATCH)
    assert code == 2 and out == ""
    assert err == f"error: {state / 'looks.json'}: {problem}; the watch state was edited, start a new state folder\n"


def test_max_runs_beyond_memory_is_refused_with_the_estimate_before_any_look(tmp_path, capsys):
    state = tmp_path / "state"
    code, out, err = run_cli(capsys, "watch", _scores(tmp_path, 1), "--state", state, "--looks", "3",
                             "--max-runs", "1000000000000", "--reps", "200")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(
        "error: --max-runs 1000000000000 would list up to 16,000,000,000,000 runs in the launch files"
    )
    assert "of memory, but about" in err and not state.exists()


def test_a_reference_file_is_frozen_by_its_content_not_its_path(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = sorted(set(hostile_table(1).frame["task"]))
    Path("refs.csv").write_text("task,low,high\n" + "".join(f'"{t}",0,{i + 1}\n' for i, t in enumerate(tasks)))
    scores = _scores(tmp_path, 1)
    assert run_cli(capsys, "watch", scores, "--state", "s", *WATCH, "--normalize", "./refs.csv")[0] == 3
    code, out, err = run_cli(capsys, "watch", scores, "--state", "s", *WATCH, "--normalize", "refs.csv")
    assert code == 3 and out.startswith("look 1 of 4 (the same scores"), err
    Path("refs.csv").write_text(Path("refs.csv").read_text().replace(",0,1\n", ",0,9\n"))
    code, out, err = run_cli(capsys, "watch", scores, "--state", "s", *WATCH, "--normalize", "refs.csv")
    assert code == 2 and "--normalize was reference scores sha256:" in err, err


def test_design_changes_name_no_flag_that_was_not_given(tmp_path, capsys):
    state = tmp_path / "state"
    table = hostile_table(1).frame
    assert run_cli(capsys, "watch", _scores(tmp_path, 1), "--state", state, *WATCH)[0] == 3
    for changed in (table.assign(task=table["task"].replace("-x", "y")), table.replace({"-2": "C"})):
        path = tmp_path / "changed.csv"
        changed.to_csv(path, index=False)
        code, _, err = run_cli(capsys, "watch", path, "--state", state, *WATCH)
        assert code == 2 and "cannot change: the " in err, err
        assert "--only-tasks" not in err and "pairs=" not in err and "--compare" not in err, err


def test_a_killed_evaluate_out_is_completed_by_the_next_reader(tmp_path, capsys):
    out = tmp_path / "results"
    example = REPO / "examples" / "atari100k_scores.csv"
    fast = ["--reps", "200", "--profile-reps", "20", "--improvement-reps", "20", "--no-figures", "--quiet"]
    assert run_cli(capsys, "evaluate", example, "--out", out, *fast)[0] == 0
    digest = read_bundle(out).report_hash
    child = _cli("aside", "kill", "evaluate", example, "--out", out, *fast, "--seed", "1")
    child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL and not out.exists()
    assert read_bundle(out).report_hash != digest  # the reader completed the swap: the new bundle, whole
    assert recover_swap(out) is None and sorted(p.name for p in tmp_path.iterdir()) == ["results"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the limits from /proc")
def test_a_300_mb_address_space_is_one_sentence_and_exit_2(tmp_path):
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (300_000 * 1024, 300_000 * 1024))

    example = REPO / "examples" / "atari100k_scores.csv"
    argv = [sys.executable, "-m", "rl_reliable_logger.cli", "evaluate", str(example), "--normalize", "atari100k",
            "--seed", "0", "--out", str(tmp_path / "out")]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("RL_RELIABLE_DEBUG", None)
    done = subprocess.run(argv, preexec_fn=cap, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith("error: loading numpy and pandas would need about") and done.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_watch_mlflow_publish_prints_our_lines_only(tmp_path, capsys, monkeypatch):
    from tests.support.mlflow_store import convention, log_run, make_store, mlflow, use_store

    uri = make_store(tmp_path)
    monkeypatch.chdir(tmp_path)
    with use_store(uri, monkeypatch):
        client = mlflow.MlflowClient(uri)
        experiment = client.create_experiment("bandits")
        for i, (algorithm, task, seed, score) in enumerate(
            hostile_table(1).frame[["algorithm", "task", "seed", "score"]].itertuples(index=False)
        ):
            log_run(client, experiment, f"run{i}", tags=convention(algorithm, task, seed),
                    metrics={"rl_reliable_final_score": score})  # fmt: skip
        capsys.readouterr()  # the store's own set-up lines, before the command
        argv = ["watch", "mlflow", "--tracking-uri", uri, "--experiment", "bandits", "--state", tmp_path / "state",
                *WATCH, "--publish", "new", "--no-figures"]  # fmt: skip
        code, out, err = run_cli(capsys, *argv)
    assert code == 3 and out.startswith("look 1 of 4"), err
    lines = err.splitlines()
    assert lines and all(line.startswith(("warning: ", "note: ", "published to MLflow")) for line in lines), err
    assert ".py:" not in err and "Warning:" not in err and len(set(lines)) == len(lines), err
