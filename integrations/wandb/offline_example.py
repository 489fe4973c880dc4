"""Offline end to end, no W&B account needed: train a grid offline, evaluate, publish offline.

    python integrations/wandb/offline_example.py [WORKDIR] [--seeds 5] [--reps 2000]

1. runs train.py's learner for 3 algorithms x 2 tasks x N seeds with WANDB_MODE=offline: each run
   ends with `log_final_score(...)` and lands in WORKDIR/wandb/offline-run-*;
2. `rl-reliable wandb --offline-dir WORKDIR` reads them straight from their transaction logs,
   evaluates (IQM, optimality gap, bootstrap CIs, profiles, ...) and writes WORKDIR/results/;
3. publishes the analysis as one more offline run (job type rl-reliable-analysis, group
   rl-reliable, artifact rl-reliable-report) next to the training runs.

Later, with an account: `wandb sync WORKDIR/wandb/offline-run-*` uploads everything (keep
WANDB_DATA_DIR, where wandb stages artifact files, until then). Running the script again
publishes nothing new: the report content is unchanged.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def _wait_until_flushed(work: Path, expected: int, timeout: float = 120.0) -> None:
    """wandb writes offline runs in a background process; on a busy machine the last run's exit
    record can land a moment after ``run.finish()`` returns. Wait until every run reads as finished,
    so the analysis (and its content hash) does not depend on timing."""
    from rl_reliable_logger.trackers.wandb.offline import read_offline_runs

    deadline = time.monotonic() + timeout
    while True:
        runs = read_offline_runs(work)
        if sum(r.state == "finished" for r in runs) >= expected and not runs.problems:
            return
        if time.monotonic() > deadline:
            print(f"warning: only {sum(r.state == 'finished' for r in runs)} of {expected} runs read as finished")
            return
        time.sleep(0.5)


def _training_runs(work: Path) -> list[Path]:
    """The offline training runs in WORKDIR/wandb: not the analysis runs an earlier run of this script published
    there (the offline publish record names them)."""
    import json

    from rl_reliable_logger.trackers.wandb.sink import OFFLINE_INDEX

    folder = work / "wandb"
    if not folder.exists():
        return []
    try:
        published = {str(e.get("run_id")) for e in json.loads((folder / OFFLINE_INDEX).read_text())["published"]}
    except (OSError, ValueError, KeyError, TypeError):
        published = set()
    return [d for d in sorted(folder.glob("offline-run-*")) if d.name.rsplit("-", 1)[-1] not in published]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="offline W&B end-to-end example")
    parser.add_argument("workdir", nargs="?", default="rl-reliable-wandb-offline")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args(argv)
    work = Path(args.workdir).absolute()
    work.mkdir(parents=True, exist_ok=True)
    # before wandb is imported: offline, quiet, everything inside WORKDIR
    os.environ.update(
        WANDB_MODE="offline",
        WANDB_DIR=str(work),
        WANDB_DATA_DIR=str(work / "wandb-data"),
        WANDB_CACHE_DIR=str(work / "wandb-cache"),
        WANDB_SILENT="true",
        WANDB_X_DISABLE_STATS="true",
        WANDB_X_DISABLE_MACHINE_INFO="true",
        WANDB_ERROR_REPORTING="false",
    )
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import train

    from rl_reliable_logger.cli.main import main as rl_reliable

    existing = _training_runs(work)
    if not existing:
        for algorithm in ("eps-greedy", "ucb", "gradient"):
            for task in ("bandit-hard", "bandit-noisy"):  # on bandit-easy most runs find the best arm: scores 1.0
                for seed in range(args.seeds):
                    score = train.main(
                        [
                            "--algorithm",
                            algorithm,
                            "--task",
                            task,
                            "--seed",
                            str(seed),
                            "--steps",
                            str(args.steps),
                            "--project",
                            "rl-reliable-bandits",
                        ]
                    )
                    print(f"trained {algorithm:10s} {task:12s} seed {seed}: final score {score:.3f}")
        _wait_until_flushed(work, expected=3 * 2 * args.seeds)
    else:
        print(f"reusing {len(existing)} offline training runs in {work / 'wandb'}")
    return rl_reliable(
        [
            "wandb",
            "--offline-dir",
            str(work),
            "--normalize",
            "already-normalized",  # train.py's score is already a fraction of the best arm (worst arm 0, best 1)
            "--seed",
            "0",
            "--reps",
            str(args.reps),
            "--out",
            str(work / "results"),
            "--publish",
            "group",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
