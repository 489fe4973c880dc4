"""A W&B analysis run records every option that shapes the results in its config (as MLflow records params).

A real offline run, published by a subprocess (wandb's process-wide settings never leak between test modules),
read back with the offline reader.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.wandb_env import wandb_env

pytest.importorskip("wandb")

from rl_reliable_logger.trackers.wandb import offline as off

PUBLISH = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import pandas as pd
from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.options import published_options
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.wandb.sink import WandbSink, publish_wandb
rows = [{"algorithm": a, "task": t, "seed": s, "score": s * 0.1 + (a == "B") + (t == "y")}
        for a in ("A", "B") for t in ("x", "y") for s in range(4)]
report = evaluate(ScoreTable(pd.DataFrame(rows)), reps=300, profile_reps=100, improvement_reps=100,
                  task_bootstrap=True, gamma=0.5, rank_by="task-means", metrics=["iqm", "median"], seed=7,
                  chunk_bytes=2**20)
sink = WandbSink(project="opts", client_kwargs={"mode": "offline", "dir": sys.argv[1]},
                 publishing=PublishOptions(figures=False))
where = publish_wandb(report, sink)
print(json.dumps({"where": str(where), "recorded": published_options(report.provenance["options"])}))
"""


def test_every_option_that_shapes_the_results_is_in_the_config(tmp_path):
    env = wandb_env(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", PUBLISH, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    rec = off.read_offline_run(next(Path(result["where"]).glob("run-*.wandb")))
    recorded = result["recorded"]
    assert {"task_bootstrap", "gamma", "rank_by", "curve_points", "profile_reps", "jordan_delta"} <= set(recorded)
    config = {k.removeprefix("rl_reliable.options."): v for k, v in rec.config.items()}
    assert {name: config.get(name) for name in recorded} == recorded
    assert (
        config["ci_label"] == "95%"
        and config["task_bootstrap"] is True
        and config["gamma"] == 0.5
        and config["rank_by"] == "task-means"
    )
    assert not any(k.endswith(("chunk_bytes", "executor", "progress")) for k in rec.config if "options" in k)


def test_a_published_look_records_its_design_in_the_config(tmp_path):
    """A watch's or race's look (``provenance["look_design"]``): its frozen design is the config's ``design``, as
    MLflow's ``rl_reliable.design.*`` params."""
    script = PUBLISH.replace(
        "where = publish_wandb",
        "from rl_reliable_logger.analysis.options import look_design\n"
        "report.provenance['look_design'] = look_design('race', {'looks': 3, 'delta': 0.2, 'keys': ['lr'], "
        "'tasks': ['x', 'y']})\nwhere = publish_wandb",
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        env=wandb_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rec = off.read_offline_run(next(Path(json.loads(out.stdout.strip().splitlines()[-1])["where"]).glob("run-*.wandb")))
    design = {k.removeprefix("rl_reliable.design."): v for k, v in rec.config.items() if ".design." in k}
    assert design == {"kind": "race", "looks": 3, "delta": 0.2, "keys": ["lr"]}, rec.config
