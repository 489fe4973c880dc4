"""plan(): how many runs per task before the intervals are narrow enough, or a pair separates.

From pilot runs, predict by simulation what an evaluation with N runs per task would show:

1. *Synthetic data*: in each (algorithm, task) cell, N scores are drawn with replacement from the
   observed runs of that cell. With few pilot runs the empirical spread understates the true one
   (its variance is biased by (n-1)/n), so by default the draws are *variance-corrected*: each draw
   is the cell mean plus its deviation scaled by √(n/(n-1)) (``correction="variance"``;
   ``"none"`` resamples the raw scores). A cell with one run cannot say anything about spread and
   contributes a constant (and a warning).
2. *Interval*: the synthetic data go through the project's own stratified bootstrap
   (the draws :func:`~rl_reliable_logger.stats.bootstrap.draw` takes, and the metric resolved by
   :mod:`~rl_reliable_logger.stats.registry`) with ``sim_reps`` replicates — fewer than the 50,000
   of a real evaluation: the *width* of a percentile interval is estimated well by a few hundred
   replicates, and averaging over ``trials`` synthetic data sets removes most of the remaining
   Monte-Carlo noise.
3. *Summaries*: the expected interval width per algorithm and N; for a pair (A, B) the fraction of
   synthetic experiments in which the interval of metric(A) − metric(B) excludes 0 and in which
   the interval of P(A > B) excludes 0.5 (``p_separate`` / ``p_separate_poi``).

The pilot's observed difference stands in for the true one, so a pair that looks separated in a
small pilot can be over-optimistic (a winner's curse); the calibration study
(``benchmarks/coverage/plan_calibration.py``) measures how far predictions are from realised values.

Random streams: one per (algorithm, N), keyed by the algorithm's position in sorted name order and
by N, so a number does not depend on the grid, the input's row order or what else is asked.

Work: each (algorithm, N) is an independent unit (:class:`PlanUnit`; the compared pair's two algorithms share
one, since their differences are taken experiment by experiment), run by :func:`simulate_unit` on the executor
given to :func:`plan` (``executor=``; serial by default). Within a unit each synthetic experiment's replicates are
one batched metric call on the raw words the engine turns into run indices
(:func:`~rl_reliable_logger.stats.bootstrap.multiply_shift`), in buffers reused from experiment to experiment;
every :data:`SHARED_DRAWS` consecutive experiments resample their own data sets with one set of draws. The pair's
P(X > Y) reads the block's draw counts once (their running sums) and each experiment's own data sets only where each
of its runs falls among the other algorithm's, a few experiments in one array operation (:class:`_PairWins`): the
engine's numbers bit for bit, at a fraction of the time one experiment at a time took.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..data.counts import agree, plural
from ..data.scores import ScoreTable
from ..errors import InputError
from ..executors import Executor, resolve
from ..stats import bootstrap as bs
from ..stats import intervals, registry
from ..stats import metrics as mt
from ..wording import kw, said
from .normalization import normalize_final
from .options import check_plan_memory, ci_label, replicates_needed
from .plan_options import PLANNED_METHOD, PlanOptions
from .protocol import Finding, check_protocol
from .summary import plan_summary

Correction = Literal["variance", "none"]

PLAN_COLUMNS = [
    "kind",
    "algorithm",
    "metric",
    "n_runs",
    "expected_width",
    "width_q10",
    "width_q90",
    "p_separate",
    "p_separate_poi",
]
LAUNCH_COLUMNS = ["algorithm", "task", "n_runs", "more_runs"]


@dataclass
class Plan:
    """The result of :func:`plan`.

    ``table`` (the contract of ``plan.csv``): one row per algorithm and N (``kind == "algorithm"``)
    with the expected interval width and its 10%/90% quantiles over synthetic experiments; with a
    pair, also rows ``kind == "pair"`` whose ``algorithm`` is ``"A - B"``, whose width is that of
    the difference interval, and whose ``p_separate`` / ``p_separate_poi`` are the probabilities
    that the difference interval excludes 0 / the P(A > B) interval excludes 0.5.
    ``launch``: how many more runs each (algorithm, task) cell needs to reach ``needed`` runs.
    ``needed``: the smallest N on the grid meeting the target, per algorithm (None: not reached).
    """

    table: pd.DataFrame
    launch: pd.DataFrame
    needed: dict[str, int | None]
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: protocol checks on the pilot (see :mod:`~rl_reliable_logger.analysis.protocol`), shown first
    findings: list[Finding] = field(default_factory=list)

    def __repr__(self) -> str:
        """At most 20 lines: the target and the runs per task each algorithm needs for it."""
        return plan_summary(self).text()

    def _repr_html_(self) -> str:
        """The same as one compact HTML table (what a notebook shows), every name escaped."""
        return plan_summary(self).html()


# ----------------------------------------------------------------------------- simulation
@dataclass(frozen=True)
class PlanUnit:
    """One independent unit of the simulation: ``trials`` synthetic experiments with ``n_runs`` runs per task.

    One algorithm, or the two algorithms of the compared pair simulated side by side (their differences are taken
    experiment by experiment). Each algorithm draws from its own (algorithm, N) stream (``seeds``), so a unit's
    result depends on its fields only, never on where or in which order units run.
    """

    pilots: tuple[tuple[np.ndarray, ...], ...]  # per algorithm: its pilot runs, one sorted array per task
    seeds: tuple[np.random.SeedSequence, ...]  # per algorithm: its stream
    n_runs: int
    metric: mt.Metric
    trials: int
    sim_reps: int
    ci: float
    correction: Correction = "variance"


def simulation_cells(pilot: Sequence[np.ndarray], correction: Correction = "variance") -> bs.Cells:
    """The values synthetic draws take: each pilot cell, variance-corrected unless ``correction="none"``.

    A synthetic run drawn from pilot run i scores ``centre + (x_i - centre) * sqrt(n / (n - 1))`` (see the module
    docstring); a cell with one run keeps its score.
    """
    per_task = []
    for x in pilot:
        x = np.asarray(x, dtype=float)
        if correction == "variance" and x.size > 1:
            centre = x.mean()
            x = centre + (x - centre) * math.sqrt(x.size / (x.size - 1))
        per_task.append(x)
    return bs.Cells.from_list(per_task)


#: synthetic experiments that share one set of bootstrap draws (see :class:`_Experiments`)
SHARED_DRAWS = 10


class _Experiments:
    """The synthetic experiments of one algorithm for one N, one after the other.

    Experiment t takes from the stream, in this order, its synthetic data set (for each task, ``n`` pilot runs drawn
    with replacement: ``rng.integers``, held in ascending order) and then, when t is a multiple of
    :data:`SHARED_DRAWS`, the ``reps`` bootstrap replicates that it and the next ``SHARED_DRAWS - 1`` experiments
    resample their data sets with (the raw words :func:`~rl_reliable_logger.stats.bootstrap.draw` takes, which the
    engine turns into run indices as ``draw``'s replicates). Each experiment's interval is still an honest bootstrap
    of its own data set, so the expected width is unchanged; sharing the draws saves drawing and mapping 9 of every
    10 sets (1.6x less time per unit), and the Monte-Carlo spread of the expected width over seeds stayed that of
    independent draws (relative SD 0.4-1.0% over 12 seeds, Atari 100k DER at N = 10 and SPR at N = 20, whether 1, 10
    or all 200 experiments shared a set). All replicates of an experiment are one batched metric call; experiments
    are not stacked into one array: that needs one more gather per draw (the synthetic data sets differ), which
    costs more than the calls it saves (measured on the README example: 1.02-1.2x the time per unit).
    """

    def __init__(self, pilot: Sequence[np.ndarray], seed: np.random.SeedSequence, unit: PlanUnit) -> None:
        self.rng = np.random.default_rng(seed)
        self.cells = simulation_cells(pilot, unit.correction)
        n, m = unit.n_runs, self.cells.n_tasks
        self.n, self.reps, self.m = n, unit.sim_reps, m
        sizes = np.full(m, n, dtype=np.int64)  # the synthetic data set: n runs in each task
        offsets = np.arange(m, dtype=np.int64) * n
        self.layout = (sizes, offsets, np.repeat(np.arange(m), n))
        self.workspace: dict = {}  # the engine's intermediates, reused from experiment to experiment
        sizes = self.cells.sizes
        # each task's bound; one number when all are equal (the same stream, element by element; half the time)
        self.high = int(sizes[0]) if (sizes == sizes[0]).all() else sizes[:, None]
        self.done = 0
        self.shared: bs.Resample | None = None  # the current block's draws
        self.chosen = np.empty((m, n), dtype=np.int64)  # the last experiment's pilot runs, per task (ascending)
        self.block_start = True  # whether the last experiment drew the bootstrap replicates of a new block

    def next(self) -> bs.Resample:
        """The next experiment's bootstrap replicates (its synthetic data set is ``.cells``)."""
        n, m = self.n, self.m
        chosen = self.rng.integers(0, self.high, size=(m, n))  # each task's n pilot runs
        chosen.sort(axis=1)  # ascending, as evaluate() holds runs (pilot cells are sorted): P(X>Y) needs no sort
        self.chosen = chosen
        values = self.cells.values[(chosen + self.cells.offsets[:, None]).ravel()]
        cells = bs.Cells(values, *self.layout)
        first = self.done % SHARED_DRAWS == 0
        self.done += 1
        self.block_start = first or self.shared is None
        if self.shared is None or self.block_start:
            u = bs.uniform32(self.rng, (self.reps, m, n))  # the words bs.draw takes: replicate, task, draw
            self.shared = bs.Resample(cells, values, uniforms=u, workspace=self.workspace)
            return self.shared
        return self.shared.on_cells(cells)


def _interval(dists: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The planned method's interval (low, high) and width of each row's bootstrap distribution."""
    low, high = intervals.interval(dists.T, np.zeros(dists.shape[0]), ci=ci, method=PLANNED_METHOD)
    return low, high, high - low


#: bytes of P(X > Y)'s per-experiment intermediates held at once (:class:`_PairWins`: a few experiments of a block
#: are taken together within it; any value gives the same numbers)
PAIR_BYTES = 4 * 2**20


class _PairWins:
    """P(X > Y) of every replicate of the pair's synthetic experiments, a block of shared draws at a time.

    The same numbers as :func:`~rl_reliable_logger.stats.metrics.improvement_replicates` on each experiment's data
    sets and draw counts, bit for bit, with the work that depends on the draws alone done once per block: per task,
    ``U = Σ_a c_x[a] (#y draws below x_a + ½ #y draws equal to x_a) / (n_x n_y)``, where the running sums of Y's draw
    counts over its runs (ascending: each experiment's runs are held sorted) are the block's, and only which of them
    each X run reads is the experiment's own. That is read from the pilot: an experiment's runs are pilot runs, so the
    Y runs below X's run are those drawn from the Y pilot runs below its pilot run (counted once per unit). Every
    count and half-count is an exact integer or half in float64, so each task's sum is exact in any order and its
    division and the mean over tasks (:func:`~rl_reliable_logger.stats.metrics.task_mean`) round as the engine's do.
    Memory: the experiments taken together hold at most about :data:`PAIR_BYTES` (at least one experiment).
    """

    def __init__(self, x: _Experiments, y: _Experiments, trials: int) -> None:
        self.x, self.y = x, y
        self.out = np.empty((trials, x.reps))
        xc, yc = x.cells, y.cells
        # for each X pilot run: the Y pilot runs of its task below it / up to it, as an index into Y's pilot runs
        self.below = np.empty(xc.n_runs, dtype=np.int64)
        self.upto = np.empty(xc.n_runs, dtype=np.int64)
        for m in range(xc.n_tasks):
            xs = slice(xc.offsets[m], xc.offsets[m] + xc.sizes[m])
            ys = yc.values[yc.offsets[m] : yc.offsets[m] + yc.sizes[m]]  # ascending (sorted pilot, corrected)
            self.below[xs] = yc.offsets[m] + np.searchsorted(ys, xc.values[xs], side="left")
            self.upto[xs] = yc.offsets[m] + np.searchsorted(ys, xc.values[xs], side="right")
        self.tied = self.below != self.upto  # the X pilot runs equal to a Y pilot run of their task
        self.pending: list[tuple[int, np.ndarray, np.ndarray]] = []  # (trial, X's chosen runs, Y's chosen runs)
        self.step = max(1, min(SHARED_DRAWS, PAIR_BYTES // (8 * x.reps * x.m * x.n)))
        self.cum = np.empty((0, 0))  # the block's running sums of Y's draw counts, (R, M·(n + 1))
        self.counts_x = np.empty((0, 0))  # the block's draw counts of X's runs, (R, M·n)

    def add(self, trial: int) -> None:
        """Take the experiment both algorithms just drew (``next()``); a chunk of them is computed at once."""
        if self.x.block_start:  # a new block of draws: the last one's experiments first, then its draw counts
            self.flush()
            reps, m, n = self.y.reps, self.y.m, self.y.n
            assert self.x.shared is not None and self.y.shared is not None
            cum = np.zeros((reps, m, n + 1))
            np.cumsum(self.y.shared.counts().reshape(reps, m, n), axis=2, out=cum[:, :, 1:], dtype=float)
            self.cum = cum.reshape(reps, m * (n + 1))
            self.counts_x = self.x.shared.counts()
        self.pending.append((trial, self.x.chosen.copy(), self.y.chosen.copy()))
        if len(self.pending) == self.step:
            self.flush()

    def flush(self) -> None:
        """Compute the experiments taken and not yet computed (all of them at the end)."""
        if not self.pending:
            return
        x, cum = self.x, self.cum
        trials = [t for t, _, _ in self.pending]
        chosen_x = np.stack([c for _, c, _ in self.pending])  # (T, M, n): each experiment's X pilot runs
        chosen_y = np.stack([c for _, _, c in self.pending])
        self.pending = []
        reps, m, n = x.reps, x.m, x.n
        ends = self._ends(chosen_y)
        start = np.take(ends, self.y.cells.offsets, axis=1)[:, :, None]  # Y draws before each task's first pilot run
        pilot_x = (chosen_x + x.cells.offsets[None, :, None]).reshape(len(trials), -1)
        base = (np.arange(m) * (n + 1))[None, :, None]

        def position(index: np.ndarray) -> np.ndarray:  # (T·M·n,) where each X run reads Y's running sums
            # the Y runs of X's task below (up to) its run: those drawn from the Y pilot runs below (up to) it
            local = np.take_along_axis(ends, index[pilot_x], axis=1).reshape(len(trials), m, n) - start
            return (base + local).ravel()

        wins = np.take(cum, position(self.below), axis=1)  # (R, T·M·n): Y's draws below each X run
        tied = np.flatnonzero(self.tied[pilot_x])  # the X runs equal to a Y run: those draws count 1/2 each
        if tied.size:
            low = wins[:, tied]
            wins[:, tied] = low + 0.5 * (np.take(cum, position(self.upto)[tied], axis=1) - low)
        # times X's draw counts (the block's), summed over each task's X runs: exact, so in any order
        per_task = np.einsum("rtma,rma->rtm", wins.reshape(reps, len(trials), m, n), self.counts_x.reshape(reps, m, n))
        per_task /= n * n
        self.out[trials] = mt.task_mean(per_task).T

    def _ends(self, chosen: np.ndarray) -> np.ndarray:
        """(T, K + 1): per experiment, how many of its Y runs were drawn from the Y pilot runs before each one (K of
        them, every task's after the previous task's, as in its cells)."""
        trials, k = chosen.shape[0], self.y.cells.n_runs
        flat = chosen + self.y.cells.offsets[None, :, None] + (np.arange(trials) * k)[:, None, None]
        ends = np.zeros((trials, k + 1), dtype=np.int64)
        np.cumsum(np.bincount(flat.ravel(), minlength=trials * k).reshape(trials, k), axis=1, out=ends[:, 1:])
        return ends


def unit_distributions(unit: PlanUnit) -> dict[str, np.ndarray]:
    """Every synthetic experiment's bootstrap distribution: ``dists`` (algorithms, trials, sim_reps) of the metric;
    for a pair also ``poi`` (trials, sim_reps) of P(A > B)."""
    sims = [_Experiments(p, s, unit) for p, s in zip(unit.pilots, unit.seeds)]
    dists = np.empty((len(sims), unit.trials, unit.sim_reps))
    wins = _PairWins(sims[0], sims[1], unit.trials) if len(sims) == 2 else None
    for t in range(unit.trials):
        for i, sim in enumerate(sims):
            # a metric that reads run weights gets the same bits with the block's counts cached (count x weight
            # products, gathered in sorted order) as on a fresh bs.draw (counted straight into sorted order)
            dists[i, t] = unit.metric(sim.next())
        if wins is not None:
            wins.add(t)
    out: dict[str, np.ndarray] = {"dists": dists}
    if wins is not None:
        wins.flush()
        out["poi"] = wins.out
    return out


def simulate_unit(unit: PlanUnit) -> dict[str, np.ndarray]:
    """Interval widths over the unit's synthetic experiments: ``widths`` (algorithms, trials); for a pair also
    ``diff_width``, ``sep`` and ``sep_poi`` (trials,): the difference interval's width and whether it excludes 0,
    and whether the P(A > B) interval excludes 0.5."""
    found = unit_distributions(unit)
    dists = found["dists"]
    out = {"widths": np.stack([_interval(d, unit.ci)[2] for d in dists])}
    if "poi" in found:
        low, high, out["diff_width"] = _interval(dists[0] - dists[1], unit.ci)
        out["sep"] = (low > 0.0) | (high < 0.0)
        low, high, _ = _interval(found["poi"], unit.ci)
        out["sep_poi"] = (low > 0.5) | (high < 0.5)
    return out


# ----------------------------------------------------------------------------- public API
def default_grid(current: int, max_runs: int) -> list[int]:
    """N from ``current`` to ``max_runs``: every integer up to 12 values, else 12 spread evenly."""
    if max_runs < current:
        return [current]
    span = max_runs - current + 1
    if span <= 12:
        return list(range(current, max_runs + 1))
    return sorted({int(round(v)) for v in np.linspace(current, max_runs, 12)})


def plan(table: ScoreTable, options: PlanOptions | None = None, **overrides: Any) -> Plan:
    """Predict interval widths (and a pair's separation) for N runs per task, from pilot runs.

    Args:
        table: the pilot's per-run scores (final scores are used).
        options, overrides: a :class:`~.plan_options.PlanOptions`, and any of its fields as keywords (which
            override ``options``' own), as ``evaluate()`` takes its options:
        metric: the aggregate metric (``iqm``, ``mean``, ``median``, ``optimality_gap``, ...).
        normalize: as in :func:`~rl_reliable_logger.evaluate` (widths are in normalised units).
        target_width: the interval width wanted; ``needed`` and ``launch`` then say how many runs
            reach it for each algorithm.
        compare: two algorithm names (A, B): also predict the probability that the interval of
            metric(A) − metric(B) excludes 0; the target is ``power`` for that pair.
        power: the separation probability wanted for ``compare`` (default 0.8).
        max_runs: the largest N considered (default: max(20, 2 × the largest cell)).
        runs: the exact list of N to simulate (overrides the default grid).
        trials: synthetic experiments per N; sim_reps: bootstrap replicates inside each.
        ci: confidence level of the intervals being planned.
        correction: ``"variance"`` (default) or ``"none"``; see the module docstring.
        seed: the same inputs and seed give identical numbers.
        progress: show a progress bar on stderr.
        executor: where the independent (algorithm, N) units run: ``"serial"`` (default), another name of
            :data:`~rl_reliable_logger.executors.EXECUTORS`, or an :class:`~rl_reliable_logger.executors.Executor`;
            the numbers are the same on every executor.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 6, "task": ["x"] * 3 + ["y"] * 3,
        ...                    "seed": [0, 1, 2] * 2, "score": [0.1, 0.4, 0.3, 0.8, 0.5, 0.9]})
        >>> p = plan(ScoreTable(df), runs=[3, 10], trials=20, sim_reps=200, seed=0)
        >>> list(p.table["n_runs"])
        [3, 10]
    """
    base = options if options is not None else PlanOptions()
    known = {f.name for f in dataclasses.fields(PlanOptions)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise TypeError(f"unknown plan option(s): {', '.join(unknown)}; the options are: {', '.join(sorted(known))}")
    opts = dataclasses.replace(base, **overrides) if overrides else base
    return plan_with(table, opts)


def plan_with(table: ScoreTable, opts: PlanOptions) -> Plan:
    """:func:`plan` with its options already checked (a :class:`~.plan_options.PlanOptions`)."""
    findings = check_protocol(table)
    final = table.final()
    if opts.normalize is not None:
        final = normalize_final(final, opts.normalize)
    algorithms = final.algorithms
    tasks = sorted(final.tasks)
    pair = _known_pair(opts.compare, algorithms)
    metric_obj = registry.get_metric(opts.metric, gamma=opts.gamma)
    runner = resolve(opts.executor)  # an unknown executor is refused before any simulation
    cells = final.cells()
    # runs sorted within each cell: a canonical order, so the plan does not depend on the order the runs came
    # in (a file's rows, a tracker's listing)
    pilots = {a: [np.sort(cells[(a, t)]) for t in tasks] for a in algorithms}
    _refuse_single_run_pilots(pilots)
    sizes = final.runs_per_cell()
    current = int(sizes.to_numpy().min())
    grid = list(opts.runs) if opts.runs is not None else _default_grid(opts, current, int(sizes.to_numpy().max()))
    check_plan_memory(len(tasks), grid[-1], opts.sim_reps, pair=pair is not None)

    warnings = _pilot_warnings(opts, pilots, tasks, current)
    slot = {a: i for i, a in enumerate(sorted(algorithms))}
    pilot_diff = None
    if pair is not None:
        pilot_diff = _pilot_difference(pilots, pair, metric_obj, opts.ci, opts.seed)
        warnings += _separation_warning(pair, pilot_diff, opts.ci)
    units = _units(pilots, slot, grid, metric_obj, pair, opts)
    rows = _rows(units, runner, algorithms, grid, metric_obj.name, pair, opts.progress)
    frame = pd.DataFrame(rows, columns=PLAN_COLUMNS)
    needed = _needed(frame, algorithms, opts.target_width, pair, opts.power)
    launch = _launch(needed, sizes, tasks)
    unmet = [a for a, n in needed.items() if n is None]
    if unmet:
        warnings.append(
            said(
                f"the target is not reached within {grid[-1]} runs per task for {', '.join(unmet)}: raise ",
                kw("max_runs="),
                " or relax the target.",
            ).text()
        )
    provenance = {
        "metric": metric_obj.name,
        "normalize": None if opts.normalize is None else str(opts.normalize),
        "target_width": opts.target_width,
        "compare": list(pair) if pair else None,
        "power": opts.power if pair else None,
        "grid": grid,
        "trials": opts.trials,
        "sim_reps": opts.sim_reps,
        "ci": opts.ci,
        "correction": opts.correction,
        "seed": opts.seed,
        "pilot_difference": pilot_diff,
        "pilot_runs_per_task": {a: {t: int(x.size) for t, x in zip(tasks, pilots[a])} for a in algorithms},
        "protocol": [f.to_dict() for f in findings],
        "method": "resample each cell's pilot runs to N (variance-corrected unless correction='none'), "
        f"stratified bootstrap {PLANNED_METHOD} interval on each synthetic data set",
        "interval_method": PLANNED_METHOD,
    }
    return Plan(frame, launch, needed, provenance, warnings, findings)


def _known_pair(compare: tuple[str, str] | None, algorithms: Sequence[str]) -> tuple[str, str] | None:
    """``compare`` when both names are algorithms of the pilot; else an error naming the unknown."""
    if compare is None:
        return None
    unknown = [n for n in compare if n not in algorithms]
    if unknown:
        raise InputError(
            said(kw("compare="), f" names unknown algorithm(s) {', '.join(map(repr, unknown))}; the table has ")
            + ", ".join(map(repr, algorithms))
        )
    return compare


def _refuse_single_run_pilots(pilots: dict[str, list[np.ndarray]]) -> None:
    """Refuse a pilot in which an algorithm has one run on every task: nothing shows its run-to-run spread, so every
    synthetic data set would repeat its runs and predict a width of 0 (power 1) at every N."""
    alone = [a for a, cells in pilots.items() if cells and all(x.size < 2 for x in cells)]
    if alone:
        names = " and ".join(filter(None, [", ".join(map(repr, alone[:-1])), repr(alone[-1])]))
        raise InputError(
            f"the pilot has one run per task for {names}, which shows no run-to-run spread to plan from (every N "
            "would predict a width of 0): run at least 2 seeds per task for a pilot (3 or more predict better)",
            [f"{a}: one run per task" for a in alone],
        )


def _default_grid(opts: PlanOptions, current: int, largest: int) -> list[int]:
    limit = max(20, 2 * largest) if opts.max_runs is None else opts.max_runs
    return default_grid(max(current, 2), limit)


def _pilot_warnings(
    opts: PlanOptions, pilots: dict[str, list[np.ndarray]], tasks: list[str], current: int
) -> list[str]:
    """What makes the predictions too narrow or rough: too few replicates, single-run cells, tiny pilots."""
    warnings: list[str] = []
    if opts.sim_reps < replicates_needed(opts.ci):
        warnings.append(
            said(
                kw(f"sim_reps={opts.sim_reps}"),
                f" cannot resolve a {ci_label(opts.ci)} interval: its ends need at least "
                f"{replicates_needed(opts.ci):,} replicates (2 / (1 - level)); the predicted widths are too narrow",
            ).text()
        )
    singles = [f"{a} / {t}" for a in pilots for t, x in zip(tasks, pilots[a]) if x.size < 2]
    if singles:
        # a task of one pilot run adds no variance to the synthetic data sets, so its algorithm's width comes out
        # narrower (a 3-task pilot of 4 runs, one task cut to 1 run: 0.29-0.89 of the width, 24 of 24 narrower)
        short = list(dict.fromkeys(cell.split(" / ")[0] for cell in singles))
        one = len(singles) == 1
        warnings.append(
            f"{plural(len(singles), 'cell')} {agree(len(singles), 'have')} a single pilot run ({', '.join(singles[:6])}"
            + (", ..." if len(singles) > 6 else "")
            + f"): {'it adds' if one else 'they add'} no spread to the simulation, so the predicted widths of "
            + ", ".join(short)
            + " are too narrow."
        )
    if current < 3:
        warnings.append(
            f"the smallest pilot cell has {plural(current, 'run')}: predictions from fewer than 3 runs per cell are rough."
        )
    return warnings


def _separation_warning(pair: tuple[str, str], pilot_diff: dict[str, float], ci: float) -> list[str]:
    if not pilot_diff["low"] <= 0 <= pilot_diff["high"]:
        return []
    return [
        f"the pilot itself cannot tell {pair[0]} and {pair[1]} apart (its {ci:.0%} interval of the difference "
        f"is [{pilot_diff['low']:.3g}, {pilot_diff['high']:.3g}]): p_separate assumes the pilot's difference "
        f"({pilot_diff['point']:.3g}) is the true one and overstates power when the true difference is "
        "smaller (see the calibration in the README)."
    ]


def _pilot_difference(
    pilots: dict[str, list[np.ndarray]], pair: tuple[str, str], metric: mt.Metric, ci: float, seed: int
) -> dict[str, float]:
    """The pilot's own estimate and interval of metric(A) − metric(B) (2,000 replicates)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(2**31,)))
    cells = {a: bs.Cells.from_list(pilots[a]) for a in pair}
    dist = metric(bs.draw(cells[pair[0]], 2000, rng)) - metric(bs.draw(cells[pair[1]], 2000, rng))
    point = float(metric(bs.original(cells[pair[0]]))[0] - metric(bs.original(cells[pair[1]]))[0])
    low, high = intervals.interval(dist[:, None], np.array([point]), ci=ci, method=PLANNED_METHOD)
    return {"point": point, "low": float(low[0]), "high": float(high[0])}


def _units(
    pilots: dict[str, list[np.ndarray]],
    slot: dict[str, int],
    grid: list[int],
    metric: mt.Metric,
    pair: tuple[str, str] | None,
    opts: PlanOptions,
) -> list[list[tuple[tuple[str, ...], PlanUnit]]]:
    """Per N of the grid, its units (each with the algorithms it simulates): one per algorithm, the pair's two
    together. Each algorithm's stream is keyed by its slot in sorted name order and by N."""
    alone = [a for a in pilots if pair is None or a not in pair]
    groups = [(a,) for a in alone] + ([pair] if pair is not None else [])
    return [
        [
            (
                names,
                PlanUnit(
                    tuple(tuple(pilots[a]) for a in names),
                    tuple(np.random.SeedSequence(int(opts.seed), spawn_key=(slot[a], int(n))) for a in names),
                    int(n),
                    metric,
                    opts.trials,
                    opts.sim_reps,
                    opts.ci,
                    opts.correction,
                ),
            )
            for names in groups
        ]
        for n in grid
    ]


def _rows(
    units: list[list[tuple[tuple[str, ...], PlanUnit]]],
    executor: Executor,
    algorithms: list[str],
    grid: list[int],
    metric: str,
    pair: tuple[str, str] | None,
    progress: bool,
) -> list[dict[str, Any]]:
    """Run the units on ``executor`` and lay their results out as plan rows: per N, each algorithm, then the pair.

    With a progress bar the units are given to the executor one N at a time (the bar moves after each N);
    without, all at once. Either way each unit's numbers are the same.
    """
    flat = [u for per_n in units for u in per_n]
    if progress:
        bar = _Bar(len(flat))
        try:
            results = []
            for per_n in units:
                results += executor.map(simulate_unit, [u for _, u in per_n])
                bar(len(per_n))
        finally:
            bar.close()
    else:
        results = executor.map(simulate_unit, [u for _, u in flat])
    rows: list[dict[str, Any]] = []
    k = 0
    for n, per_n in zip(grid, units):
        widths: dict[str, np.ndarray] = {}
        pair_sim: dict[str, np.ndarray] = {}
        for (names, _), sim in zip(per_n, results[k : k + len(per_n)]):
            widths.update(zip(names, sim["widths"]))
            if len(names) == 2:
                pair_sim = sim
        k += len(per_n)
        rows += [_row("algorithm", a, metric, n, widths[a], np.nan, np.nan) for a in algorithms]
        if pair is not None:
            sep, sep_poi = float(pair_sim["sep"].mean()), float(pair_sim["sep_poi"].mean())
            rows.append(_row("pair", f"{pair[0]} - {pair[1]}", metric, n, pair_sim["diff_width"], sep, sep_poi))
    return rows


def _row(kind: str, name: str, metric: str, n: int, widths: np.ndarray, sep: float, sep_poi: float) -> dict:
    return {
        "kind": kind,
        "algorithm": name,
        "metric": metric,
        "n_runs": int(n),
        "expected_width": float(widths.mean()),
        "width_q10": float(np.quantile(widths, 0.1)),
        "width_q90": float(np.quantile(widths, 0.9)),
        "p_separate": sep,
        "p_separate_poi": sep_poi,
    }


def _needed(
    frame: pd.DataFrame,
    algorithms: list[str],
    target_width: float | None,
    pair: tuple[str, str] | None,
    power: float,
) -> dict[str, int | None]:
    """Smallest N on the grid meeting every target that concerns each algorithm."""
    needed: dict[str, int | None] = {}
    if target_width is not None:
        for a in algorithms:
            rows = frame[(frame["kind"] == "algorithm") & (frame["algorithm"] == a)]
            ok = rows[rows["expected_width"] <= target_width]["n_runs"]
            needed[a] = int(ok.min()) if len(ok) else None
    if pair is not None:
        rows = frame[frame["kind"] == "pair"]
        ok = rows[rows["p_separate"] >= power]["n_runs"]
        n_pair = int(ok.min()) if len(ok) else None
        for a in pair:
            if n_pair is None or (a in needed and needed[a] is None):
                needed[a] = None
            else:
                needed[a] = max(n_pair, needed.get(a) or 0)
    return needed


def _launch(needed: dict[str, int | None], sizes: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    rows = []
    for a, n in needed.items():
        if n is None:
            continue
        for t in tasks:
            have = int(sizes.at[a, t])  # type: ignore[arg-type]
            rows.append({"algorithm": a, "task": t, "n_runs": have, "more_runs": max(0, n - have)})
    return pd.DataFrame(rows, columns=LAUNCH_COLUMNS)


class _Bar:
    def __init__(self, total: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc="plan", unit="unit", file=sys.stderr, leave=False)

    def __call__(self, n: int) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()
