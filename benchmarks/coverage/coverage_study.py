"""Coverage of the library's 95% intervals for every table a paper concludes from (issue 23), and the skew
diagnostic's calibration. One command reproduces the README's table:

    nice python benchmarks/coverage/coverage_study.py --out benchmarks/results/coverage_issue23.txt

For each configuration (task model, M tasks, N runs per task) ``--trials`` pairs of data sets are drawn from
two *known* populations X and Y (the same model, task parameters drawn from two seeds); each pair gets the
intervals ``evaluate()`` computes, from the same engine calls (``bootstrap.draw`` of each algorithm, the
registry's metrics, ``metrics.improvement_replicates``, ``intervals.interval`` / ``studentized_mean_interval``
with the levels the analysis layer passes), for six statistics:

* IQM, mean and median of X (the ``aggregates`` table);
* IQM(X) - IQM(Y) and mean(X) - mean(Y) (``differences``);
* P(X > Y) (``improvement``).

Methods: ``percentile`` (the default), ``expanded`` (Hesterberg's expanded percentile, the level pooled over
the cells of the statistic: X's for the aggregates, X's and Y's for the differences; for P(X > Y) the
U-statistic's own level, ``bootstrap.improvement_level``) and
``bootstrap-t`` (studentized for the mean and the mean difference, ``intervals.normal_interval`` for the
median, expanded for the rest; a degenerate studentized distribution falls back to expanded, as in the
library).

True values (task set fixed, as the stratified bootstrap assumes): exact IQM (25%-trimmed mean of the task
mixture), mean and median of task means (``tests/support/simulation.py``); P(X > Y) = mean over tasks of E[F_Y(X)] by
Monte Carlo with Y's exact CDF (error < 3e-4).

The former pooled skew diagnostic (``|estimator_skewness| * sqrt(runs)`` above ``--limit``; the library's rule
now: ``benchmarks/coverage/skew_calibration.py``) is evaluated on every trial's X (for the mean) and pair (for
the mean difference); a configuration counts as "flagged" when it fires on more than half of its trials. Its
calibration rates compare flagged configurations with the recommended method's coverage of the mean and of
the mean difference.

The machine is shared: each trial's replicates are drawn at once (vectorised over replicates), ``--reps``
defaults to 1,000; cells can be restricted with ``--models/--tasks/--runs``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import _paths  # noqa: F401  (tests/support on the path)
import numpy as np
import simulation as sim

from rl_reliable_logger.stats import aggregate as agg
from rl_reliable_logger.stats import bootstrap as bs
from rl_reliable_logger.stats import diagnostics as dg
from rl_reliable_logger.stats import intervals, registry
from rl_reliable_logger.stats import metrics as mt

STATS = ("iqm", "mean", "median", "iqm_diff", "mean_diff", "P(X>Y)")
METHODS = ("percentile", "expanded", "bootstrap-t")


def _truths(x: list[sim.Task], y: list[sim.Task], seed: int) -> np.ndarray:
    iqm_x, iqm_y = sim.true_trimmed_mean(x), sim.true_trimmed_mean(y)
    mean_x, mean_y = sim.true_mean(x), sim.true_mean(y)
    return np.array(
        [iqm_x, mean_x, sim.true_median(x), iqm_x - iqm_y, mean_x - mean_y, sim.true_improvement(x, y, seed=seed)]
    )


def _per_task(cells: bs.Cells) -> list[np.ndarray]:
    return [cells.values[o : o + n] for o, n in zip(cells.offsets, cells.sizes)]


def trial(cx: bs.Cells, cy: bs.Cells, reps: int, rx, ry, ci: float) -> dict[str, np.ndarray]:
    """Low and high of the six statistics for each method, on one pair of data sets."""
    metrics = [registry.get_metric(m) for m in ("iqm", "mean", "median")]

    def stat(r: bs.Resample) -> np.ndarray:
        return np.concatenate([np.stack([m(r) for m in metrics], axis=1), mt.mean_se(r)[:, 1:]], axis=1)

    dx, dy = bs.draw(cx, reps, rx), bs.draw(cy, reps, ry)
    sx, sy = stat(dx), stat(dy)
    px, py = stat(bs.original(cx))[0], stat(bs.original(cy))[0]
    poi = mt.improvement_replicates(cx, dx.small_counts(), cy, dy.small_counts())
    poi_point = mt.probability_of_improvement(_per_task(cx), _per_task(cy))
    dist = np.column_stack([sx[:, :3], sx[:, 0] - sy[:, 0], sx[:, 1] - sy[:, 1], poi])
    point = np.array([px[0], px[1], px[2], px[0] - py[0], px[1] - py[1], poi_point])
    alone, pair = bs.expanded_level(cx, ci), bs.expanded_level([cx, cy], ci)
    tails = np.array([alone] * 3 + [pair] * 2 + [bs.improvement_level(cx, cy, ci)])
    out = {"percentile": intervals.interval(dist, point, ci=ci)}
    out["expanded"] = intervals.interval(dist, point, ci=ci, method="expanded", tail=tails)
    low, high = (a.copy() for a in out["expanded"])
    # the median: a normal interval with the bootstrap standard deviation at the expanded level
    low[2], high[2] = intervals.normal_interval(sx[:, 2], px[2], alone)
    # studentized: the mean (X's replicates of (mean, se)) and the mean difference (se² of X and Y added)
    found = bs.studentized_mean_interval(sx[:, [1, 3]], px[[1, 3]], ci)
    if found is not None:
        low[1], high[1] = found
    found = agg.studentized_difference(
        {"dist": sx[:, [1, 3]], "point": px[[1, 3]]}, {"dist": sy[:, [1, 3]], "point": py[[1, 3]]}, ci
    )
    if found is not None:
        low[4], high[4] = found
    out["bootstrap-t"] = (low, high)
    return out


def populations(model: str, m: int, seed: int) -> tuple[list[sim.Task], list[sim.Task]]:
    """The two known populations X and Y of a configuration (the same model, task parameters from two seeds)."""
    return sim.make_tasks(model, m, seed + m), sim.make_tasks(model, m, seed + m + 500)


def data_sets(model: str, m: int, n: int, trials: int, seed: int) -> Iterator[tuple[bs.Cells, bs.Cells, Any, Any]]:
    """Each trial's pair of data sets (X's and Y's cells, ``n`` runs per task) and their two bootstrap streams:
    the study's, and the other benchmarks' on the same data (``median_candidates.py``, ``profile_coverage.py``)."""
    x_tasks, y_tasks = populations(model, m, seed)
    data_rng, boot_rng = np.random.default_rng([seed, m, n, sim.STUDY_MODELS.index(model)]).spawn(2)
    for _ in range(trials):
        cx = bs.Cells.from_list([t.sample(data_rng, n) for t in x_tasks])
        cy = bs.Cells.from_list([t.sample(data_rng, n) for t in y_tasks])
        rx, ry = boot_rng.spawn(2)
        yield cx, cy, rx, ry


def add_study_arguments(p: argparse.ArgumentParser, models: Sequence[str] = sim.STUDY_MODELS) -> None:
    """The configuration grid and sampling options every coverage benchmark shares."""
    p.add_argument("--models", nargs="+", default=list(models))
    p.add_argument("--tasks", nargs="+", type=int, default=[10, 26])
    p.add_argument("--runs", nargs="+", type=int, default=[3, 5, 10])
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2023)
    p.add_argument("--ci", type=float, default=0.95)


def print_grid(
    args: argparse.Namespace, header: list[str], cells: Callable[[str, int, int], str], model_width: int
) -> None:
    """One row per configuration of the grid (``--models`` x ``--tasks`` x ``--runs``), printed as it is done with
    its time, and the whole table written to ``--out``: the driver of ``median_candidates.py`` and
    ``profile_coverage.py``. ``cells(model, m, n)`` runs one configuration and returns its row's cells."""
    lines = list(header)
    print("\n".join(lines), flush=True)
    for model in args.models:
        for m in args.tasks:
            for n in args.runs:
                t0 = time.perf_counter()
                lines.append(f"{model:<{model_width}} {m:>3} {n:>3} {cells(model, m, n)}")
                print(lines[-1], f"# {time.perf_counter() - t0:.0f} s", flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


def run_config(model: str, m: int, n: int, trials: int, reps: int, seed: int, ci: float) -> dict:
    truth = _truths(*populations(model, m, seed), seed)
    hits = {k: np.zeros(len(STATS)) for k in METHODS}
    below = {k: np.zeros(len(STATS)) for k in METHODS}
    width = {k: np.zeros(len(STATS)) for k in METHODS}
    skew_mean, skew_diff = [], []
    for cx, cy, rx, ry in data_sets(model, m, n, trials, seed):
        for method, (low, high) in trial(cx, cy, reps, rx, ry, ci).items():
            hits[method] += (low <= truth) & (truth <= high)
            below[method] += truth < low
            width[method] += high - low
        skew_mean.append(dg.estimator_skewness([cx]))
        skew_diff.append(dg.estimator_skewness([cx, cy]))
    return {
        "model": model,
        "tasks": m,
        "runs": n,
        "trials": trials,
        "truth": truth.tolist(),
        "coverage": {k: (v / trials).tolist() for k, v in hits.items()},
        "below": {k: (v / trials).tolist() for k, v in below.items()},
        "width": {k: (v / trials).tolist() for k, v in width.items()},
        "skew_mean": skew_mean,
        "skew_diff": skew_diff,
    }


def fires(r: dict, key: str, limit: float) -> float:
    """Share of a configuration's trials on which the diagnostic fires (``key``: skew_mean or skew_diff, the
    stored ``estimator_skewness``; the former diagnostic read it times sqrt(runs of the groups))."""
    runs = r["tasks"] * r["runs"] * (2 if key == "skew_diff" else 1)
    return float(np.mean(np.abs(np.asarray(r[key]) * np.sqrt(runs)) > limit))


def _se(p: float, trials: int) -> float:
    return float(np.sqrt(p * (1 - p) / trials))


def table(results: list[dict], method: str, limit: float) -> list[str]:
    """One row per configuration: coverage ± SE of every statistic under ``method``, and the diagnostic."""
    head = f"{'model':<14} {'M':>3} {'N':>3} " + " ".join(f"{s:>13}" for s in STATS) + "  diag mean/diff"
    lines = [head, "-" * len(head)]
    for r in results:
        cov = r["coverage"][method]
        cells = " ".join(f"{c:.3f}±{_se(c, r['trials']):.3f}".rjust(13) for c in cov)
        diag = f"{fires(r, 'skew_mean', limit):.2f}/{fires(r, 'skew_diff', limit):.2f}"
        lines.append(f"{r['model']:<14} {r['tasks']:>3} {r['runs']:>3} {cells}  {diag}")
    return lines


def markdown(results: list[dict], method: str, limit: float) -> list[str]:
    """The README's table: ``method``'s coverage ± SE per statistic, the percentile default's IQM difference and
    P(X>Y) beside it, and the diagnostic's firing share; values outside 0.935-0.965 in bold."""
    head = ["model", "M", "N", *STATS, "percentile IQM diff / P(X>Y)", "diagnostic mean / diff"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = []
        for c in r["coverage"][method]:
            text = f"{c:.3f} ± {_se(c, r['trials']):.3f}"
            cells.append(text if 0.935 <= c <= 0.965 else f"**{text}**")
        pct = r["coverage"]["percentile"]
        diag = f"{fires(r, 'skew_mean', limit):.2f} / {fires(r, 'skew_diff', limit):.2f}"
        row = [r["model"], str(r["tasks"]), str(r["runs"]), *cells, f"{pct[3]:.3f} / {pct[5]:.3f}", diag]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def calibration(results: list[dict], method: str, limit: float) -> list[str]:
    """The diagnostic's two rates: flagged among the configurations covering below 0.90, and above 0.93."""
    low_cov, high_cov = [], []
    for r in results:
        for col, key in ((STATS.index("mean"), "skew_mean"), (STATS.index("mean_diff"), "skew_diff")):
            c = r["coverage"][method][col]
            flagged = fires(r, key, limit) > 0.5
            if c < 0.90:
                low_cov.append(flagged)
            elif c > 0.93:
                high_cov.append(flagged)
    rate = lambda xs: f"{np.mean(xs):.2f} ({sum(xs)}/{len(xs)})" if xs else "n/a (0 configurations)"
    return [
        f"diagnostic |pooled skewness of the runs| > {limit:g} ({method}, mean and mean difference): flagged in {rate(low_cov)} of configurations covering "
        f"< 0.90 (target >= 0.90), in {rate(high_cov)} of those covering > 0.93 (target <= 0.10)"
    ]


def per_task_study(trials: int, reps: int, seed: int, ci: float) -> list[str]:
    """Coverage of one task's mean (the per-task table) under percentile, expanded (Hesterberg's one-sample level,
    ``bootstrap.task_levels``) and the Student-t interval ``bootstrap-t`` gives it (``student_t_task_intervals``),
    on a normal and a lognormal(σ 1.0) task."""
    rng = np.random.default_rng(seed)
    models = (
        ("normal", lambda n: rng.normal(0.5, 0.2, n), 0.5),
        ("lognormal-1.0", lambda n: rng.lognormal(0, 1, n), np.exp(0.5)),
    )
    lines = [f"per-task mean, {trials} trials per row, {reps} replicates: percentile / expanded / student-t (± SE)"]
    for name, sample, truth in models:
        for n in (3, 5, 10):
            hits = np.zeros(3)
            for _ in range(trials):
                cells = bs.Cells.from_list([sample(n)])
                dist = bs.replicates(cells, bs.Resample.task_means, reps, rng)
                point = bs.original(cells).task_means()[0]
                ends = [
                    intervals.interval(dist, point, ci=ci),
                    intervals.interval(dist, point, ci=ci, method="expanded", tail=bs.task_levels(cells, ci)),
                    bs.student_t_task_intervals(cells, ci),
                ]
                hits += [bool(lo[0] <= truth <= hi[0]) for lo, hi in ends]
            cov = hits / trials
            lines.append(f"{name:<14} N={n:<3} " + "  ".join(f"{c:.3f}±{_se(c, trials):.3f}" for c in cov))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_study_arguments(p)
    p.add_argument("--recommended", default="bootstrap-t", choices=METHODS)
    p.add_argument("--markdown", action="store_true", help="print the recommended method's table as Markdown")
    p.add_argument("--limit", type=float, default=2.9, help="the former pooled diagnostic's threshold (superseded)")
    p.add_argument("--out", help="write the tables here (and the raw results beside it, as .json)")
    p.add_argument("--per-task", action="store_true", help="only the per-task table's study (one task, 2,000 trials)")
    p.add_argument("--from-json", nargs="+", help="print the tables of previous runs' .json files instead")
    args = p.parse_args()
    if args.per_task:
        lines = per_task_study(2000, args.reps, args.seed, args.ci)
        print("\n".join(lines))
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
        return
    results: list[dict] = []
    if args.from_json:
        results = [r for f in args.from_json for r in json.loads(Path(f).read_text())]
    else:
        for model in args.models:
            for m in args.tasks:
                for n in args.runs:
                    t0 = time.perf_counter()
                    results.append(run_config(model, m, n, args.trials, args.reps, args.seed, args.ci))
                    print(f"# {model} M={m} N={n}: {time.perf_counter() - t0:.0f} s", flush=True)
                    if args.out:
                        Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=1))
    lines = [
        f"95% intervals; {results[0]['trials']} trials per row, {args.reps} bootstrap replicates, seed {args.seed};",
        "coverage ± binomial SE; diag: share of trials where the skew diagnostic fires (mean / mean difference)",
        "",
    ]
    for method in METHODS:
        lines += [f"== {method}" + (" (recommended)" if method == args.recommended else "")]
        lines += table(results, method, args.limit) + [""]
    lines += calibration(results, args.recommended, args.limit)
    if args.markdown:
        lines += ["", *markdown(results, args.recommended, args.limit)]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
