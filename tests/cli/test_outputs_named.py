"""Every command names what it wrote that a user opens next (issue 45): the main job's ``report.html`` and
``methods.md`` after a first line a terminal shows whole, Ray Tune's ``tuning.csv``, each launch file of a watch."""

from __future__ import annotations

from pathlib import Path

from rl_reliable_logger.cli.main import main
from tests.contract.source_corpus import Run, tune_folder
from tests.support.paths import REPO

FAST = ["--reps", "2000", "--profile-reps", "100", "--improvement-reps", "100"]


def test_the_main_job_says_where_its_report_is_after_a_short_first_line(tmp_path, capsys):
    out = tmp_path / "results-atari"
    argv = ["evaluate", str(REPO / "examples" / "atari100k_scores.csv"), "--normalize", "atari100k", "--seed", "0"]
    assert main([*argv, *FAST, "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines[0]) <= 200, lines[0]  # was 469 characters
    assert lines[0].startswith("1,430 runs (6 algorithms × 26 tasks") and "seed 0" in lines[0]
    assert lines[-1].startswith(f"wrote {out}/: {out / 'report.html'} (open it first") and "methods.md (" in lines[-1]
    assert (out / "report.html").is_file() and (out / "methods.md").is_file()


def test_ray_tune_names_its_tuning_table(tmp_path, capsys):
    runs = [
        Run(a, t, s, round(0.1 * i + 0.05 * j + 0.01 * s, 6), config=(("lr", lr),))
        for i, a in enumerate("AB")
        for t in ("x", "y")
        for j, lr in enumerate((0.1, 0.01))
        for s in range(3)
    ]
    tune_folder(tmp_path / "exp", runs)
    out = tmp_path / "tuned"
    argv = ["raytune", str(tmp_path / "exp"), "--score-key", "score", "--hyperparameter-keys", "config/lr"]
    assert (
        main(
            [
                *argv,
                "--reps",
                "200",
                "--profile-reps",
                "20",
                "--improvement-reps",
                "40",
                "--no-figures",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    last = capsys.readouterr().out.splitlines()[-1]
    assert (out / "tuning.csv").is_file() and "tuning.csv (the tuning view's aggregate metric)" in last, last


def test_a_watch_names_each_launch_file_it_wrote(tmp_path, capsys):
    state = tmp_path / "state"
    argv = ["watch", str(REPO / "examples" / "atari100k_scores.csv"), "--state", str(state), "--looks", "2"]
    more = ["--max-runs", "12", "--reps", "300", "--normalize", "atari100k", "--compare", "DER,DrQ,SimPLe"]
    assert main([*argv, *more]) == 3
    out = capsys.readouterr().out
    named = [line for line in out.splitlines() if line.startswith("launch files: ")]
    assert len(named) == 1, out
    for name in ("runs.csv", "sweep.yaml", "mlflow-params.txt"):
        assert (state / name).is_file() and f"{state / name} (" in named[0], (name, named)
    assert f"{state / 'launch.csv'}" in out
    extra = sorted(p.name for p in Path(state).glob("sweep-*.yaml"))
    assert all(f"{state / name} (" in named[0] for name in extra)


def test_without_an_output_folder_nothing_is_said_written(tmp_path, capsys):
    scores = tmp_path / "s.csv"
    rows = "".join(f"{a},t,{s},{s + (a == 'B')}\n" for a in "AB" for s in range(3))
    scores.write_text("algorithm,task,seed,score\n" + rows)
    assert main(["evaluate", str(scores), "--reps", "200", "--profile-reps", "20", "--improvement-reps", "40"]) == 0
    assert "wrote" not in capsys.readouterr().out
