"""A conventional grid sweep written as real offline W&B runs: seeds reused per configuration, mixed conventions.

The writer logs a learning curve (``eval/return``) and, separately, the final score: lr 0.1 through
``log_final_score`` (summary ``rl_reliable_final_score``), lr 0.01 the old way (summary ``final_score``).
Expected values come from the writer's manifest, not from the reader.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.errors import ScoreTableError
from rl_reliable_logger.trackers.wandb.source import WandbSource
from tests.support.wandb_env import wandb_env

WRITER = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import wandb
from rl_reliable_logger import log_final_score

root = sys.argv[1]
manifest = []
for lr in (0.1, 0.01):
    for task in ("easy", "hard"):
        for seed in (0, 1, 2):
            run = wandb.init(project="sweep", dir=root, config={"algo": "ppo", "env": task, "seed": seed, "lr": lr})
            hist = []
            for step in range(0, 40, 10):
                value = float(step * (seed + 1) + (lr == 0.1))
                run.log({"eval/return": value}, step=step)
                hist.append((step, value))
            score = 500.0 + 10 * seed + (100 if task == "hard" else 0) + (7 if lr == 0.1 else 0)
            if lr == 0.1:
                log_final_score(score, algorithm="ppo", task=task, seed=seed)
            else:
                run.summary["final_score"] = score
            manifest.append({"id": run.id, "lr": lr, "task": task, "seed": seed, "score": score, "history": hist})
            run.finish()
json.dump(manifest, open(os.path.join(root, "manifest.json"), "w"))
"""

FIELDS = dict(algorithm="config.algo", task="config.env", seed="config.seed")
SCORE = "summary.rl_reliable_final_score,summary.final_score"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("wandb_sweep")
    subprocess.run([sys.executable, "-c", WRITER, str(root)], env=wandb_env(root), check=True, timeout=300)
    return {"root": root, "manifest": json.loads((root / "manifest.json").read_text())}


def test_final_scores_and_curves_are_separate_inputs(sweep):
    table = WandbSource(offline_dir=sweep["root"]).table(
        **FIELDS, score=SCORE, curve_key="eval/return", extra_fields={"lr": "config.lr"}
    )
    final = dict(zip(table.final().frame.tracker_run_id, table.final().frame.score))
    for m in sweep["manifest"]:
        assert final[m["id"]] == m["score"]
        rows = table.frame[table.frame.tracker_run_id == m["id"]].sort_values("step")
        assert list(zip(rows.step, rows.score)) == [(float(s), v) for s, v in m["history"]]
    assert table.source["score"]["runs_per_key"] == {"summary.rl_reliable_final_score": 6, "summary.final_score": 6}


def test_mean_last_rule_reads_the_history(sweep):
    table = WandbSource(offline_dir=sweep["root"]).table(
        **FIELDS, score="summary.eval/return", score_rule="mean-last-2", extra_fields={"lr": "config.lr"}
    )
    got = dict(zip(table.frame.tracker_run_id, table.frame.score))
    for m in sweep["manifest"]:
        assert got[m["id"]] == pytest.approx((m["history"][-1][1] + m["history"][-2][1]) / 2)


def test_reused_seeds_need_the_configuration_named(sweep):
    with pytest.raises(ScoreTableError, match="duplicate seed 0 for ppo / easy: runs") as err:
        WandbSource(offline_dir=sweep["root"]).table(**FIELDS, score=SCORE)
    ids = {(m["lr"], m["task"], m["seed"]): m["id"] for m in sweep["manifest"]}
    line = next(ln for ln in str(err.value).splitlines() if "duplicate seed 0 for ppo / easy" in ln)
    assert ids[(0.1, "easy", 0)] in line and ids[(0.01, "easy", 0)] in line
    table = WandbSource(offline_dir=sweep["root"]).table(**FIELDS, score=SCORE, variant=["config.lr"])
    assert sorted(table.algorithms) == ["ppo lr=0.01", "ppo lr=0.1"]


def test_cli_tuning_view_on_offline_sweep(sweep, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    out = tmp_path / "out"
    args = ["wandb", "--offline-dir", str(sweep["root"]), "--algorithm-key", "config.algo", "--task-key"]
    args += ["config.env", "--seed-key", "config.seed", "--score-key", SCORE, "--hyperparameter-keys", "lr"]
    args += ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--publish", "none"]
    code = main([*args, "--out", str(out), "--no-figures", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    tuning = pd.read_csv(out / "tuning.csv")
    assert not tuning.empty


def test_only_algorithms_matches_base_names_and_sweep_labels(sweep, tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    src = WandbSource(offline_dir=sweep["root"])
    both = src.table(**FIELDS, score=SCORE, variant=["config.lr"], algorithms=["ppo"])
    assert sorted(both.algorithms) == ["ppo lr=0.01", "ppo lr=0.1"]
    one = src.table(**FIELDS, score=SCORE, variant=["config.lr"], algorithms=["ppo lr=0.01"])
    assert one.algorithms == ["ppo lr=0.01"]
    assert set(one.frame.tracker_run_id) == {m["id"] for m in sweep["manifest"] if m["lr"] == 0.01}

    out = tmp_path / "out"
    args = ["wandb", "--offline-dir", str(sweep["root"]), "--algorithm-key", "config.algo", "--task-key"]
    args += ["config.env", "--seed-key", "config.seed", "--score-key", SCORE, "--variant-key", "config.lr"]
    args += ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--publish", "none"]
    assert main([*args, "--only-algorithms", "ppo lr=0.1", "--out", str(out), "--no-figures", "--quiet"]) == 0
    assert set(pd.read_csv(out / "aggregates.csv")["algorithm"]) == {"ppo lr=0.1"}
    assert main([*args, "--only-algorithms", "ppo lr=1", "--quiet"]) == 2
    assert "--only-algorithms names 'ppo lr=1', which no run has" in capsys.readouterr().err
