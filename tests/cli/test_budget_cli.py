"""`--budget` and the curves' run counts on the command line (issue 13, item 3)."""

import pandas as pd

from rl_reliable_logger.cli.main import main

FAST = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0"]


def _logs(path):
    """Two algorithms × 2 tasks × 4 seeds logging every 100 steps to 1000; A / x seed 3 crashes at 500."""
    rows = []
    for alg in ("A", "B"):
        for task in ("x", "y"):
            for seed in range(4):
                last = 500 if (alg, task, seed) == ("A", "x", 3) else 1000
                rows += [(alg, task, seed, step, step / 100 + seed) for step in range(100, last + 1, 100)]
    pd.DataFrame(rows, columns=["algorithm", "task", "seed", "step", "score"]).to_csv(path, index=False)
    return path


def test_budget_takes_final_scores_at_it_and_curves_count_runs(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        ["evaluate", str(_logs(tmp_path / "logs.csv")), "--step-key", "step", "--curves", "--budget", "800"]
        + FAST
        + ["--out", str(out), "--no-figures"]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "warning: final scores are taken at the budget 800" in text and "A / x run 3 (last step 500)" in text
    assert "warning: curves: 1 cell loses runs along the curve" in text and "A / x 4 → 3 runs" in text
    curves = pd.read_csv(out / "curves.csv")
    assert curves["step"].max() == 800
    a = curves[(curves["algorithm"] == "A") & (curves["metric"] == "mean")].sort_values("step")
    assert (a["n_runs"] == [8 if s <= 500 else 7 for s in a["step"]]).all()
    scores = pd.read_csv(out / "scores.csv")
    final = scores.groupby(["algorithm", "task", "run_id"])["step"].max()
    assert final.max() == 1000  # the scores table keeps every step; the aggregates use the budget:
    agg = pd.read_csv(out / "aggregates.csv").set_index(["algorithm", "metric"])
    # B's final scores at step 800: 8 + seed, mean over seeds 0..3 = 9.5 on both tasks
    assert agg.loc[("B", "mean"), "point"] == 9.5


def test_budget_without_steps_is_a_flag_error(tmp_path, capsys):
    path = tmp_path / "final.csv"
    pd.DataFrame({"algorithm": ["A"] * 3, "task": ["x"] * 3, "seed": [0, 1, 2], "score": [1.0, 2.0, 3.0]}).to_csv(
        path, index=False
    )
    code = main(["evaluate", str(path), "--budget", "100"] + FAST)
    err = capsys.readouterr().err
    assert code == 2 and "--budget needs per-step scores" in err and "Traceback" not in err
