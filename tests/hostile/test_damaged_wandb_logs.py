"""A damaged offline ``.wandb`` log is named as damaged, by path; the run is reported as dropped because of it,
and ``--strict`` refuses. Before, a log cut at 10-99 %, empty, random, bit-flipped or linked to ``/dev/zero`` was
read in part (or not at all) and the run dropped as having "none of the fields", exit 0, the PPO mean moved."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rl_reliable_logger.cli.main import main
from tests.support.wandb_env import wandb_env

pytest.importorskip("wandb")
pytestmark = pytest.mark.slow

WRITER = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import wandb
from rl_reliable_logger import log_final_score
root, runs = sys.argv[1], []
for algorithm, base in (("PPO", 0.1), ("DQN", 0.5)):
    for seed in range(3):
        run = wandb.init(project="damage", dir=root, config={"lr": 0.1})
        for step in range(60):  # enough history for a log of several records
            run.log({"eval/return": base + 0.001 * step, "text": "x" * 200}, step=step)
        log_final_score(base + 0.05 * seed, algorithm=algorithm, task="t", seed=seed)
        runs.append({"algorithm": algorithm, "seed": seed, "dir": run.settings.sync_dir})
        run.finish()
json.dump(runs, open(os.path.join(root, "runs.json"), "w"))
"""

STATS = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--no-figures"]


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("damaged_wandb")
    subprocess.run([sys.executable, "-c", WRITER, str(root)], env=wandb_env(root), check=True, timeout=600)
    runs = json.loads((root / "runs.json").read_text())
    return {"root": root, "victim": next(r for r in runs if r["algorithm"] == "PPO" and r["seed"] == 0)}


def _cut(fraction: float):
    return lambda data: data[: max(8, int(len(data) * fraction))]


def _flip(data: bytes) -> bytes:
    out = bytearray(data)
    out[len(out) // 2] ^= 0x10
    return bytes(out)


DAMAGE = {
    "truncated_10": _cut(0.10),
    "truncated_50": _cut(0.50),
    "truncated_99": _cut(0.99),
    "empty": lambda data: b"",
    "random_bytes": lambda data: random.Random(0).randbytes(len(data)),
    "bit_flipped": _flip,
    "link_to_dev_zero": None,
}
SAYS = {
    "empty": r"damaged transaction log run-\w+\.wandb: the file is empty",
    "random_bytes": r"damaged or unreadable transaction log run-\w+\.wandb \(missing ':W&B' header",
    "link_to_dev_zero": r"is a character device, not a regular file",
    "bit_flipped": r"damaged transaction log run-\w+\.wandb \(.*\): checksum mismatch at byte \d+; the run is not used",
}


def _damaged_copy(offline: dict, tmp_path: Path, how: str) -> tuple[Path, Path]:
    root = tmp_path / "copy"
    shutil.copytree(offline["root"], root, ignore=shutil.ignore_patterns("runs.json", "cache", "data", "config"))
    victim = root / Path(offline["victim"]["dir"]).relative_to(offline["root"])
    log = next(victim.glob("run-*.wandb"))
    if DAMAGE[how] is None:
        log.unlink()
        os.symlink("/dev/zero", log)
    else:
        log.write_bytes(DAMAGE[how](log.read_bytes()))
    return root, victim


@pytest.mark.timeout(600)
@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_damaged_log_is_named_and_its_run_reported_dropped(offline, tmp_path, capsys, how):
    root, victim = _damaged_copy(offline, tmp_path, how)
    out = tmp_path / "out"
    status = main(["wandb", "--offline-dir", str(root), *STATS, "--out", str(out), "--publish", "none"])
    err = capsys.readouterr().err
    assert status == 0, err
    lines = [line for line in err.splitlines() if str(victim) in line]
    assert len(lines) == 1 and lines[0].startswith(f"warning: skipped offline run {victim}: "), err
    pattern = SAYS.get(
        how, r"damaged transaction log run-\w+\.wandb \(.*\): it ends in the middle of|last record is cut short"
    )
    import re

    assert re.search(pattern, lines[0]), lines[0]
    assert "none of the fields" not in err, err
    provenance = json.loads((out / "provenance.json").read_text())
    assert any(str(victim) in p for p in provenance["source"]["offline_problems"])
    scores = json.loads(json.dumps(provenance["counts"]))
    assert scores["runs"] == 5, scores  # the other five runs, every one of them used
    # --strict: the dropped run is an error naming the log, exit 2
    status = main(["wandb", "--offline-dir", str(root), *STATS, "--strict", "--publish", "none"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith(f"error: --strict: offline run {victim}: "), err


@pytest.mark.timeout(600)
def test_every_cut_point_is_damage_never_a_partly_read_run(offline):
    """Cutting the log at every 97th byte: each cut is either exactly at a record's end (a run read as crashed,
    no exit record) or named damaged, never a run read with its records silently missing."""
    from rl_reliable_logger.trackers.wandb.offline import read_offline_run

    log = next(Path(offline["victim"]["dir"]).glob("run-*.wandb"))
    data = log.read_bytes()
    full = read_offline_run(log)
    assert full.state == "finished"
    cut = log.parent.parent / "cut" / log.name
    cut.parent.mkdir(exist_ok=True)
    for at in range(8, len(data) - 1, 97):
        cut.write_bytes(data[:at])
        try:
            record = read_offline_run(cut)
        except ValueError as err:
            assert "damaged transaction log" in str(err), (at, str(err))
            continue
        assert record.state == "crashed", at  # cut exactly at a record's end: no exit record
