"""`--curves` where the runs share no range of steps, or one step only: exit 2 and one sentence naming them."""

import pandas as pd

from rl_reliable_logger.cli.main import main

FAST = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--no-figures"]


def _logs(path, steps):
    """Two algorithms × 2 tasks × 3 seeds; ``steps(alg, seed)`` the steps a run logs."""
    rows = [
        (alg, task, seed, step, step / 100 + seed)
        for alg in ("A", "B")
        for task in ("t1", "t2")
        for seed in range(3)
        for step in steps(alg, seed)
    ]
    pd.DataFrame(rows, columns=["algorithm", "task", "seed", "step", "score"]).to_csv(path, index=False)
    return str(path)


def _run(tmp_path, capsys, steps, *extra):
    code = main(
        ["evaluate", _logs(tmp_path / "logs.csv", steps), "--curves", *FAST, "--out", str(tmp_path / "o"), *extra]
    )
    return code, capsys.readouterr().err


def test_disjoint_step_ranges_name_the_late_and_the_early_cells(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, lambda alg, seed: range(0, 501, 100) if alg == "A" else range(600, 1001, 100))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and "ValueError" not in err
    assert err.startswith(
        "error: curves: the runs share no range of steps: B / t1 (first step 600), B / t2 (first step 600) start "
        "after A / t1 (last step 500), A / t2 (last step 500) end; log the same range of steps for every run"
    )


def test_a_single_shared_step_is_no_curve(tmp_path, capsys):
    """One run logs only step 1000, where the others end: the old grid was step 1000 ten times, exit 0."""
    code, err = _run(
        tmp_path,
        capsys,
        lambda alg, seed: [1000] if (alg, seed) == ("A", 0) else range(0, 1001, 100),
        "--curve-points",
        "10",
    )
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "o" / "curves.csv").exists()
    assert err.startswith(
        "error: curves: the runs share only step 1000, no range of steps: A / t1 run 0 (first step 1000), "
        "A / t2 run 0 (first step 1000) first log where the curves end"
    )


def test_runs_the_budget_leaves_out_of_the_final_scores_are_left_out_of_the_curves(tmp_path, capsys):
    code, err = _run(
        tmp_path,
        capsys,
        lambda alg, seed: [1000] if (alg, seed) == ("A", 0) else range(0, 1001, 100),
        "--curve-points",
        "5",
        "--budget",
        "800",
    )
    assert code == 0, err
    curves = pd.read_csv(tmp_path / "o" / "curves.csv")
    assert curves["step"].tolist()[:5] == [0, 200, 400, 600, 800]
    assert set(curves.loc[curves["algorithm"] == "A", "n_runs"]) == {4}  # 2 tasks × 2 runs: run 0 has no score by 800
