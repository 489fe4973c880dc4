"""Watching a running sweep: one group-sequential look at the scores so far (the state folder is ``looks.watch``).

A watch compares pairs of algorithms on an aggregate metric (IQM by default) while runs accumulate. Its
:class:`Design` is frozen at the first look: K looks, the maximum runs per (algorithm, task) cell, alpha, the
metric, the compared pairs, the error-spending function, the tasks and the analysis options that change the
numbers. Each look (:func:`take_look`)

* bootstraps every compared algorithm once with the engine's own streams (``analysis_streams``, as ``evaluate``);
* for the pairs still open, takes each one's information fraction ``t`` = runs in its cells / (max runs x cells)
  (1 at the K-th look) and tests them together (:func:`..stats.sequential.look_at_pairs`): Holm's step-down
  over the pairs (a pair starts at ``alpha / (m - r)``, r pairs decided before; each pair decided now raises the
  open ones' level, whose critical values are recomputed from the spending function at that level), repeated
  confidence intervals (:func:`..stats.sequential.repeated_interval`); a pair is decided when its interval
  excludes 0, and ``futile`` when from half its information its conditional power is below the design's
  ``futility``; either keeps its decision and interval from then on;
* lists the runs each cell still needs for the next look's planned count (``⌈(k+1) N / K⌉``), for the cells of
  open pairs only.

Why this calibration (``docs/watch.md``): the step-down is a shortcut of a closed test of weighted Bonferroni
group-sequential tests (Maurer & Bretz 2013), so the family-wise error over looks and pairs is at most ``alpha``
whatever the pairs' dependence and whenever each stops; futility is non-binding (the boundaries ignore it); the
spending function lets the looks fall at any runs counts. A design read from a state written before the
step-down (no ``multiplicity`` recorded) goes on with Bonferroni (``alpha / m`` throughout) and no futility.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..data.scores import ScoreTable
from ..errors import InputError
from ..moved import moved
from ..stats import bootstrap as bs
from ..stats import registry
from ..stats import sequential as sq
from ..wording import Message, kw, said
from .aggregates import analysis_streams, cells_by_algorithm, prepare
from .look_checks import cell_counts, cell_runs, check_growth, data_hash, look_options, missing_runs, short
from .summary import watch_summary
from .watch_options import FROZEN_OPTIONS, FUTILITY, FUTILITY_FROM, WatchDesign

DECISION_COLUMNS = ["algorithm_x", "algorithm_y", "metric", "decision", "low", "high", "look"]
LAUNCH_COLUMNS = ["algorithm", "task", "add_runs"]


@dataclass(frozen=True)
class Design:
    """Everything frozen at the first look (JSON-able through :meth:`to_json`)."""

    looks: int
    max_runs: int
    alpha: float
    metric: str
    pairs: tuple[tuple[str, str], ...]
    spending: str
    tasks: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    multiplicity: str = "holm"
    futility: float = FUTILITY
    futility_from: float = FUTILITY_FROM

    def to_json(self) -> dict[str, Any]:
        return {
            "looks": self.looks,
            "max_runs": self.max_runs,
            "alpha": self.alpha,
            "metric": self.metric,
            "pairs": [list(p) for p in self.pairs],
            "spending": self.spending,
            "tasks": list(self.tasks),
            "options": dict(self.options),
            "multiplicity": self.multiplicity,
            "futility": self.futility,
            "futility_from": self.futility_from,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Design:
        try:
            if data.get("multiplicity", "bonferroni") not in sq.MULTIPLICITY:
                raise ValueError(f"multiplicity {data['multiplicity']!r} is not one of {', '.join(sq.MULTIPLICITY)}")
            return cls(
                int(data["looks"]),
                int(data["max_runs"]),
                float(data["alpha"]),
                str(data["metric"]),
                tuple((str(x), str(y)) for x, y in data["pairs"]),
                str(data["spending"]),
                tuple(str(t) for t in data["tasks"]),
                tuple(sorted((str(k), str(v)) for k, v in dict(data["options"]).items())),
                # a state written before the step-down and futility (no such keys) goes on as it began
                str(data.get("multiplicity", "bonferroni")),
                float(data.get("futility", 0.0)),
                float(data.get("futility_from", 1.0)),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"the watch design is unreadable ({err}); start a new state folder") from None

    def changed(self, other: Design) -> Message | str | None:
        """The first field in which ``other`` differs from this design, in words (None: the same design)."""
        legacy = self.multiplicity == "bonferroni"  # a state from before `futility=`: it goes on as it began
        for name in (
            "looks",
            "max_runs",
            "alpha",
            "metric",
            "pairs",
            "spending",
            "tasks",
            *(() if legacy else ("futility",)),
        ):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:  # pairs and tasks come from the scores (and options): said in words, not keywords
                what = _FROM_SCORES.get(name, said(kw(f"{name}=")))
                verb = "were" if name in _FROM_SCORES else "was"
                return said(what, f" {verb} {short(mine)} at the first look, now {short(theirs)}")
        before, now = dict(self.options), dict(other.options)
        for key in sorted(set(before) | set(now)):
            if key == "normalize" and _same_reference(before.get(key), now.get(key)):
                continue  # a state that froze the path's text: the same content is the same design
            if before.get(key) != now.get(key):
                return said(kw(f"{key}="), f" was {before.get(key)} at the first look, now {now.get(key)}")
        return None


#: Design fields no keyword sets directly (the scores' algorithms and tasks decide them), in words.
_FROM_SCORES = {"pairs": "the compared pairs", "tasks": "the tasks of the scores"}


@dataclass
class WatchResult:
    """One look: ``stop`` (no more runs are needed), ``decisions`` (one row per pair), ``launch`` (runs to add)."""

    stop: bool
    decisions: pd.DataFrame
    launch: pd.DataFrame
    look: int
    design: Design
    replayed: bool = False
    record: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """At most 20 lines: the look, its design and each pair's decision with its repeated interval."""
        return watch_summary(self).text()

    def _repr_html_(self) -> str:
        """The same as one compact HTML table (what a notebook shows), every name escaped."""
        return watch_summary(self).html()


def make_design(table: ScoreTable, design: WatchDesign, **options: Any) -> Design:
    """The design ``design`` asks for on this table, with the analysis ``options`` it freezes (validated; each
    problem is one sentence)."""
    opts = look_options(options)
    final = prepare(table, opts).final
    algorithms = sorted(final.algorithms)
    chosen = algorithms if design.compare is None else _compared(design.compare, algorithms)
    pairs = tuple((x, y) for i, x in enumerate(chosen) for y in chosen[i + 1 :])
    if not pairs:  # nothing to decide: a look would say "every comparison is decided" at once (compare= names two)
        raise InputError(
            f"the scores have one algorithm ({chosen[0]!r}) and a watch compares pairs of algorithms; "
            "give the runs of two or more"
        )
    frozen = tuple(sorted((k, _frozen(k, getattr(opts, k))) for k in FROZEN_OPTIONS))
    return Design(
        design.looks,
        design.max_runs,
        design.alpha,
        design.metric,
        pairs,
        design.spending,
        tuple(sorted(final.tasks)),
        frozen,
        futility=design.futility,
    )


#: How a design records reference scores: by their content, not by the path or object that gave them.
_REFERENCE = "reference scores sha256:"


def _frozen(key: str, value: Any) -> str:
    """An option as the design freezes it: its text, except ``normalize=`` reference scores (a file, a mapping, a
    table), frozen by their content (``./refs.csv`` and ``refs.csv`` are one design; an edited file is another)."""
    if key != "normalize" or value is None:
        return str(value)
    from ..data.normalize import available, get_normalizer

    if isinstance(value, str) and value.strip().lower() in available():
        return value
    table = getattr(get_normalizer(value), "table", None)
    if table is None:  # percentiles, a range normaliser
        return str(value)
    rows = sorted((str(t), float(lo), float(hi)) for t, lo, hi in zip(table["task"], table["low"], table["high"]))
    return _REFERENCE + hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def _same_reference(before: str | None, now: str | None) -> bool:
    """Whether a design that froze a reference file by its path text (earlier versions) holds the content frozen
    now (the file, read again, gives the same scores)."""
    if before is None or now is None or not now.startswith(_REFERENCE) or before.startswith(_REFERENCE):
        return False
    try:
        return _frozen("normalize", before) == now
    except (InputError, OSError, ValueError):
        return False


def _compared(compare: Sequence[str], algorithms: list[str]) -> list[str]:
    unknown = [n for n in compare if n not in algorithms]
    if unknown:
        raise InputError(
            said(kw("compare="), f" names {unknown[0]!r}, which the scores do not have; they have {algorithms}")
        )
    return list(compare)


def take_look(table: ScoreTable, design: Design, history: Sequence[dict[str, Any]], **options: Any) -> WatchResult:
    """The next look of ``design`` at ``table``, after the recorded ``history`` (JSON records of earlier looks).

    The same data as a recorded look returns that look (``replayed``), and so does more data once every
    comparison was decided before the last look (that look is final); fewer runs in a cell than the last look,
    a look beyond ``design.looks``, other tasks, or a cell outside 2..max_runs runs are refused.
    """
    opts = look_options(options)
    final = prepare(table, opts).final
    algorithms = sorted({a for pair in design.pairs for a in pair})
    tasks = list(design.tasks)
    if sorted(final.tasks) != tasks:
        raise InputError(
            f"the scores have the tasks {short(sorted(final.tasks))}, the watch was designed for {short(tasks)}; "
            "every look must cover the same tasks"
        )
    counts = cell_counts(final, algorithms, tasks, design.max_runs)
    subset = {a: c for a, c in cells_by_algorithm(final, tasks).items() if a in algorithms}
    digest = data_hash(subset, tasks)
    for record in history:
        if record["hash"] == digest:
            return result_from(record, design, replayed=True)
    runs = cell_runs(subset, tasks)
    check_growth(history, counts, runs, design.looks)
    if history and result_from(history[-1], design).stop:  # decided early: that look is final, more data spends none
        return result_from(history[-1], design, replayed=True)
    missing = missing_runs(history, counts, lambda row: str(row["algorithm"]))
    look = len(history) + 1
    metric = registry.get_metric(design.metric, gamma=opts.gamma)
    rng, shared = analysis_streams(opts.seed, algorithms, opts.task_bootstrap)
    dists = {
        a: bs.replicates(subset[a], metric, opts.reps, rng["aggregates"][a], task_bootstrap=shared) for a in algorithms
    }
    points = {a: float(metric(bs.original(subset[a]))[0]) for a in algorithms}
    previous = {(p["algorithm_x"], p["algorithm_y"]): p for p in (history[-1]["pairs"] if history else [])}
    lower = registry.lower_is_better(design.metric)
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    open_pairs: list[tuple[str, str]] = []
    for x, y in design.pairs:
        before = previous.get((x, y))
        if before is not None and (before["final"] or _same_cells(history[-1]["counts"], counts, (x, y))):
            kept[(x, y)] = dict(before)  # decided, ended, or no new runs: no look spent on this pair
        else:
            open_pairs.append((x, y))
    times = {
        (x, y): [*(previous[(x, y)]["times"] if (x, y) in previous else []), _time(counts, (x, y), design, look)]
        for x, y in open_pairs
    }
    tested = sq.look_at_pairs(
        [dists[x] - dists[y] for x, y in open_pairs],
        [points[x] - points[y] for x, y in open_pairs],
        [[subset[x], subset[y]] for x, y in open_pairs],
        [times[p] for p in open_pairs],
        _planned(design, look),
        sq.Procedure(
            alpha=design.alpha,
            pairs=len(design.pairs),
            decided=sum(p["decision"] in ("x>y", "y>x") for p in previous.values()),
            spending=design.spending,
            multiplicity=design.multiplicity,
            futility=design.futility,
            futility_from=design.futility_from,
        ),
    )
    for i, (x, y) in enumerate(open_pairs):
        decision = str(sq.decide(tested.low[i], tested.high[i], lower_is_better=lower))
        if tested.futile[i]:
            decision = "futile"
        kept[(x, y)] = {
            "algorithm_x": x,
            "algorithm_y": y,
            "point": points[x] - points[y],
            "low": float(tested.low[i]),
            "high": float(tested.high[i]),
            "decision": decision,
            "look": look,
            "times": times[(x, y)],
            "bound": float(tested.bound[i]),
            "final": decision != "undecided" or times[(x, y)][-1] >= 1.0,
            **_procedure_fields(design, tested, i),
        }
    pairs = [kept[p] for p in design.pairs]
    record = {"look": look, "hash": digest, "counts": counts, "runs": runs, "pairs": pairs}
    record["launch"] = _launch(record, design)
    if missing:
        record["missing"] = missing
    return result_from(record, design)


def _same_cells(before: dict[str, dict[str, int]], now: dict[str, dict[str, int]], pair: tuple[str, str]) -> bool:
    return all(before[a] == now[a] for a in pair)


def _fraction(counts: dict[str, dict[str, int]], pair: tuple[str, str], max_runs: int) -> float:
    runs = [n for a in pair for n in counts[a].values()]
    return min(1.0, sum(runs) / (max_runs * len(runs)))


def _time(counts: dict[str, dict[str, int]], pair: tuple[str, str], design: Design, look: int) -> float:
    """A pair's information fraction at ``look``: its runs over the maximum, 1 at the last look."""
    return 1.0 if look == design.looks else _fraction(counts, pair, design.max_runs)


def _planned(design: Design, look: int) -> list[float]:
    """The planned information fractions of the looks after ``look`` (the last one is 1)."""
    targets = sq.look_targets(design.max_runs, design.looks)
    return [float(n) / design.max_runs for n in targets[look : design.looks - 1]] + (
        [1.0] if look < design.looks else []
    )


def _procedure_fields(design: Design, tested: sq.PairsLook, i: int) -> dict[str, Any]:
    """What a Holm/futility design records per pair besides the Bonferroni ones (nothing for an old design)."""
    if design.multiplicity == "bonferroni" and design.futility <= 0:
        return {}
    power = float(tested.power[i])
    return {"level": float(tested.level[i]), "conditional_power": None if np.isnan(power) else power}


def _launch(record: dict[str, Any], design: Design) -> list[dict[str, Any]]:
    """Runs each cell of an open pair needs for the next look's planned count (none after the last look)."""
    look = record["look"]
    if look >= design.looks:
        return []
    planned = int(sq.look_targets(design.max_runs, design.looks)[look])
    counts = record["counts"]
    need: dict[tuple[str, str], int] = {}
    for p in record["pairs"]:
        if p["final"]:
            continue
        cells = [(a, t) for a in (p["algorithm_x"], p["algorithm_y"]) for t in design.tasks]
        # runs added beyond the plan already: the next look still needs new information
        target = max(planned, min(design.max_runs, max(counts[a][t] for a, t in cells) + 1))
        for a, t in cells:
            if counts[a][t] < target:
                need[(a, t)] = max(need.get((a, t), 0), target - counts[a][t])
    return [{"algorithm": a, "task": t, "add_runs": n} for (a, t), n in sorted(need.items())]


def result_from(record: dict[str, Any], design: Design, *, replayed: bool = False) -> WatchResult:
    """The :class:`WatchResult` of a look's record (a new look's, or one read back from the state folder)."""
    decisions = pd.DataFrame(
        [
            {
                "algorithm_x": p["algorithm_x"],
                "algorithm_y": p["algorithm_y"],
                "metric": design.metric,
                "decision": p["decision"],
                "low": float(p["low"]),
                "high": float(p["high"]),
                "look": int(p["look"]),
            }
            for p in record["pairs"]
        ],
        columns=DECISION_COLUMNS,
    )
    launch = pd.DataFrame(record["launch"], columns=LAUNCH_COLUMNS).astype({"add_runs": int})
    stop = record["look"] >= design.looks or all(p["final"] for p in record["pairs"])
    return WatchResult(bool(stop), decisions, launch, int(record["look"]), design, replayed, record)


__getattr__ = moved(__name__, {"DESIGN_KEYWORDS": "rl_reliable_logger.analysis.look_checks"})
