"""Per-task means under a floor on their spread (issue 52): a candidate for the ``student-t`` per-task interval.

The Student-t interval of a task's mean, ``mean ± t_{N-1} s / sqrt(N)``, rests on the task's own few runs: where they
happen to agree (or a rare run off a cap is not drawn), ``s`` is far below the task's spread and the interval misses.
The candidate floors each task's ``s`` at ``f`` times the median ``s`` of the same algorithm's tasks (one scale after
normalisation), the width a task of typical spread gets. It is rated on the data sets of ``caveat_study.py``, drawn
again from its seed (no bootstrap: seconds per set):

    nice -n 10 python benchmarks/coverage/task_mean_candidates.py --out benchmarks/results/caveat_study

Per set role (training sets, where ``f`` may be chosen, and held-out ones) and run count: coverage pooled over every
(algorithm, task) row, the rows below 0.92, the worst row, the share of cells the floor widens, and the median of their width over
Student-t's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
from caveat_study import LOADERS, REAL, TRAIN, replay_draws, truths

from rl_reliable_logger.stats import distributions

#: The floors screened: 0 is Student-t itself.
FLOORS = (0.0, 0.1, 0.2, 0.5, 1.0)
FLOOR = 0.92


def rows_of(name: str, n: int, trials: int, seed: int) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """Per floor: misses (trials, rows) and widths over Student-t's (trials, rows) of one set at ``n`` runs."""
    data = LOADERS[name]()
    truth = truths(data)
    crit = float(distributions.t_ppf(0.975, n - 1.0))
    misses: dict[float, list[np.ndarray]] = {f: [] for f in FLOORS}
    ratios: dict[float, list[np.ndarray]] = {f: [] for f in FLOORS}
    for cells in replay_draws(data, n, trials, seed):
        for f in FLOORS:
            miss, ratio = [], []
            for a, c in cells.items():
                runs = c.values.reshape(c.n_tasks, n)
                mean, sd = runs.mean(axis=1), runs.std(axis=1, ddof=1)
                floored = np.maximum(sd, f * np.median(sd))
                miss.append(np.abs(mean - truth[f"{a}/tasks"]) > crit * floored / np.sqrt(n))
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio.append(np.where(sd > 0, floored / sd, np.where(floored > 0, np.inf, 1.0)))
            misses[f].append(np.concatenate(miss))
            ratios[f].append(np.concatenate(ratio))
    return {f: (np.array(misses[f]), np.array(ratios[f])) for f in FLOORS}


def _median_widened(ratio: np.ndarray) -> str:
    """The median width over Student-t's among the widened cells ("inf" where most had no spread of their own)."""
    widened = ratio[ratio > 1]
    return "-" if widened.size == 0 else f"{np.median(widened):.2f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", nargs="+", default=list(REAL), choices=list(LOADERS))
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--trials", type=int, default=400)
    p.add_argument("--seed", type=int, default=52)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    pooled: dict[tuple[str, int, float], list[tuple[np.ndarray, np.ndarray]]] = {}
    for name in args.sets:
        role = "train" if name in TRAIN else "held-out"
        for n in args.runs:
            for f, found in rows_of(name, n, args.trials, args.seed).items():
                pooled.setdefault((role, n, f), []).append(found)
    head = ["sets", "N", "floor", "coverage", "rows < 0.92", "worst row", "cells widened", "their width x (median)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (role, n, f), parts in sorted(pooled.items(), key=lambda kv: (kv[0][0] != "train", kv[0][1], kv[0][2])):
        cov = np.concatenate([1 - m.mean(axis=0) for m, _ in parts])
        ratio = np.concatenate([r.ravel() for _, r in parts])
        label = "Student-t" if f == 0 else f"{f:g} x median s"
        lines.append(
            f"| {role} | {n} | {label} | {np.mean(cov):.3f} | {int(np.sum(cov < FLOOR))} of {cov.size} | "
            f"{cov.min():.3f} | {np.mean(ratio > 1):.3f} | {_median_widened(ratio)} |"
        )
    print("\n".join(lines))
    (Path(args.out) / "task_mean_candidates.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
