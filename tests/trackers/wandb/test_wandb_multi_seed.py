"""Several seeds in one offline W&B run (``summary.eval/return_seed{seed}``): one row per seed, the CSV's tables.

Real offline runs written by the wandb client in a subprocess; each logs ``eval/return_seed0..2`` (history and
summary) for one (algorithm, task), as JAX training that vmaps over seeds does.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable
from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.wandb.source import WandbSource
from tests.support.same_tables import assert_same_tables
from tests.support.wandb_env import wandb_env

pytest.importorskip("wandb")

KEY = "summary.eval/return_seed{seed}"

WRITER = r"""
import json, os, sys
import wandb

root = sys.argv[1]
rows = []
cells = [("ppo", "pong"), ("ppo", "breakout"), ("dqn", "pong"), ("dqn", "breakout")]
for i, (algorithm, task) in enumerate(cells):
    run = wandb.init(project="vmapped", dir=root, config={"algo": algorithm, "env": task})
    for step in (1, 2, 3):
        row = {f"eval/return_seed{s}": round(0.1 * i + 0.37 * s + 0.05 * step + 0.013 * (i * s % 5), 6)
               for s in (0, 1, 2)}
        run.log(row, step=step)
        rows += [{"algorithm": algorithm, "task": task, "seed": s, "step": step, "score": row[f"eval/return_seed{s}"]}
                 for s in (0, 1, 2)]
    run.finish()
# a run that logged one key for all seeds together: no key matches the placeholder
run = wandb.init(project="vmapped", dir=root, config={"algo": "sac", "env": "pong"})
run.log({"eval/return": 1.0}, step=1)
rows.append({"odd": run.id})
run.finish()
json.dump(rows, open(os.path.join(root, "rows.json"), "w"))
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("wandb_multi_seed")
    subprocess.run([sys.executable, "-c", WRITER, str(root)], env=wandb_env(root), check=True, timeout=300)
    rows = json.loads((root / "rows.json").read_text())
    odd = rows.pop()["odd"]
    frame = pd.DataFrame(rows)
    frame[frame.step == 3].drop(columns="step").to_csv(root / "final.csv", index=False)
    frame.to_csv(root / "curves.csv", index=False)
    return {"root": root, "odd": odd}


def _table(written: dict, **request: object) -> ScoreTable:
    source = WandbSource(offline_dir=written["root"])
    return source.table(algorithm="config.algo", task="config.env", score=KEY, **request)  # type: ignore[arg-type]


def test_each_seed_of_an_offline_run_is_one_row_and_the_tables_are_the_csvs(written):
    table = _table(written, algorithms=["ppo", "dqn"])
    assert len(table.frame) == 12
    assert sorted(set(table.frame.seed)) == ["0", "1", "2"]
    assert_same_tables(table, ScoreTable.from_file(written["root"] / "final.csv"))


def test_curve_key_with_the_placeholder_reads_each_seeds_offline_history(written):
    table = _table(written, algorithms=["ppo", "dqn"], curve_key=KEY)
    assert len(table.frame) == 12 * 3
    assert_same_tables(table, ScoreTable.from_file(written["root"] / "curves.csv", step="step"))


def test_an_offline_run_without_a_matching_key_is_named(written):
    with pytest.raises(InputError, match=rf"lacks summary\.eval/return_seed\{{seed\}}: {written['odd']}"):
        _table(written)
    table = _table(written, on_invalid="drop")
    assert list(table.dropped.run_id) == [written["odd"]]
    assert len(table.frame) == 12
