"""P(X > Y) near the boundary (issue 52): which interval covers where the runs separate, and how wide it is.

The bootstrap of P(X > Y) collapses where the drawn runs of X and Y separate on a task: that task's Mann-Whitney
proportion is 0 or 1 in every replicate, so it adds no width however far its truth lies from 0 or 1. This screens
intervals on data sets drawn from known populations, against the exact P(X > Y) of the populations:

* ``expanded``: the expanded percentile interval of the independent two-sample bootstrap at the Mann-Whitney level
  (``bounds.improvement_level``), the default before issue 52;
* ``no floor``: ``P ± t·√V``, V the unbiased (Hoeffding) variance, never below the bootstrap's exact one, Welch
  degrees of freedom (``bounds.improvement_normal`` with no separated task's floor);
* ``a=...``: the same with each separated task's floor, a proportion's variance at Newcombe's effective count with
  ``a`` pseudo-trials on each side (``bounds.separated_floor``); the library's ``mann-whitney`` method is
  ``a = bounds.SEPARATED_PSEUDO``.

Sets (``--sets``): ``boundary-M-z`` (simulated, where the pseudo-count is chosen): M lognormal tasks of the
simulation's model (``tests/support/simulation.py``) as X, and as Y the same tasks shifted down in log space so that
each task's P(X > Y) is Φ(z_m), z_m ~ U(z, z + 2) (truths 0.96-0.996), 4,000 runs per task; and the real sets of
``caveat_study.py`` (held out for this choice: Dopamine's DQN at 3M frames against the others, truths to 0.977).
Each cell: coverage (share of misses above the truth) and mean width. Binomial SE at 400 trials about 0.011.

Run:  nice -n 10 python benchmarks/coverage/improvement_candidates.py --out benchmarks/results/improvement_candidates.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
from caveat_study import LOADERS, DataSet

from rl_reliable_logger.analysis.tables.base import pairs
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import metrics as mt
from rl_reliable_logger.stats.intervals import bounds

#: The pseudo-trials screened (``None``: no floor).
PSEUDO = (None, 0.025, 0.05, 0.1, 0.25, 0.5)


def boundary(tasks: int, low: float, seed: int):
    """A simulated pair near the boundary (see the module's docstring)."""

    def load() -> DataSet:
        import simulation as sim

        rng = np.random.default_rng([seed, tasks])
        xs, ys = [], []
        for task, z in zip(sim.make_tasks("lognormal", tasks, seed), rng.uniform(low, low + 2.0, size=tasks)):
            mu, sigma = task.parts[0].mu, task.parts[0].sigma
            xs.append(np.exp(mu + sigma * rng.standard_normal(4000)))
            ys.append(np.exp(mu - z * sigma * np.sqrt(2) + sigma * rng.standard_normal(4000)))
        return DataSet(f"boundary-{tasks}-{low:g}", "simulated", [f"t{m}" for m in range(tasks)], {"X": xs, "Y": ys})

    return load


SIMULATED = {f"boundary-{m}-{z:g}": boundary(m, z, 52 + m) for m in (5, 10, 26) for z in (1.0, 1.5, 2.0)}


def intervals(x: np.ndarray, y: np.ndarray, counts: tuple, ci: float = 0.95) -> dict[str, tuple[float, float]]:
    """Every candidate's interval for one drawn pair (``x``, ``y``: (tasks, runs)); ``counts``: the bootstrap draws."""
    cx, cy = bs.Cells.from_list(list(x)), bs.Cells.from_list(list(y))
    terms = bounds.pair_terms(cx, cy)
    point = float(terms.point.mean())
    dist = mt.improvement_replicates(cx, counts[0], cy, counts[1])
    lo, hi = bounds.expanded_bounds(dist[:, None], np.array([point]), ci, bounds.improvement_level(cx, cy, ci), None)
    out = {"expanded": (float(lo[0]), float(hi[0]))}
    for a in PSEUDO:
        low, high = bounds.improvement_normal(terms, ci, pseudo=0.0 if a is None else a)
        if a is None:  # no floor: zero pseudo-trials give a separated task θ̃ = 1, variance 0
            out["no floor"] = (float(low), float(high))
        else:
            out[f"a={a:g}"] = (float(low), float(high))
    return out


def run(data: DataSet, runs: list[int], trials: int, reps: int, seed: int) -> list[str]:
    algs = list(data.populations)
    truth = {(x, y): mt.probability_of_improvement(data.populations[x], data.populations[y]) for x, y in pairs(algs)}
    names = ["expanded", "no floor", *(f"a={a:g}" for a in PSEUDO if a is not None)]
    lines = []
    for n in runs:
        rng = np.random.default_rng([seed, n])
        found: dict = {(p, c): [] for p in truth for c in names}
        t0 = time.perf_counter()
        for _ in range(trials):
            drawn = {a: np.stack([rng.choice(r, n, replace=True) for r in data.populations[a]]) for a in algs}
            counts = {a: bs.draw(bs.Cells.from_list(list(drawn[a])), reps, rng).small_counts() for a in algs}
            for x, y in truth:
                for name, ends in intervals(drawn[x], drawn[y], (counts[x], counts[y])).items():
                    found[(x, y), name].append(ends)
        print(f"# {data.name} N={n}: {trials} trials in {time.perf_counter() - t0:.0f} s", flush=True)
        for p, t in truth.items():
            cells = []
            for name in names:
                ends = np.array(found[p, name])
                cover = np.mean((ends[:, 0] <= t) & (t <= ends[:, 1]))
                cells.append(f"{cover:.3f} ({np.mean(ends[:, 0] > t):.2f}) {np.mean(ends[:, 1] - ends[:, 0]):.3f}")
            lines.append(f"| {data.name} | {n} | {p[0]} > {p[1]} | {t:.3f} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", nargs="+", default=[*SIMULATED, "dopamine"], choices=[*SIMULATED, *LOADERS])
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--trials", type=int, default=400)
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path, help="write the table here (Markdown)")
    args = p.parse_args()
    names = ["expanded", "no floor", *(f"a={a:g}" for a in PSEUDO if a is not None)]
    lines = [
        "| set | N | pair | truth | " + " | ".join(names) + " |",
        "|" + "---|" * (4 + len(names)),
    ]
    for name in args.sets:
        data = SIMULATED[name]() if name in SIMULATED else LOADERS[name]()
        trials = args.trials if name in SIMULATED else max(args.trials // 2, 1)
        lines += run(data, args.runs, trials, args.reps, args.seed)
    text = "\n".join(lines) + "\n\nEach cell: coverage (share of misses above the truth) mean width.\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
