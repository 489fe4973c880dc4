"""Racing a sweep's configurations: one look at the scores so far (the statistics are ``stats/racing.py``).

A race selects, for each algorithm, the configuration (the values of its ``hyperparameter_keys`` columns) whose
metric (IQM by default) is within ``delta`` of its best configuration's, with probability at least ``1 - alpha``
over all looks, on fewer runs than running every configuration to ``max_runs`` (``docs/race.md``). Its
:class:`Design` is frozen at the first look: K looks, N runs per (configuration, task) cell at most, alpha,
delta, the metric, the hyperparameter columns, every algorithm's configurations, the tasks, and the analysis
options that change the numbers. Configurations of each algorithm race among themselves.

Each look (:func:`take_look`) bootstraps every configuration still racing once with the engine's own streams (one
per configuration, as ``evaluate`` gives one per algorithm), takes one look of each algorithm's race
(:func:`..stats.racing.race_look`) and lists the runs the next look needs (:func:`..stats.racing.allocation`).
The checks that keep a sequential design honest are ``watch``'s own (:mod:`.watch`): the same scores replay the
recorded look, fewer runs than the last look or changed runs are refused, a look beyond K is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..data.names import value_key
from ..data.scores import ScoreTable
from ..errors import InputError
from ..stats import bootstrap as bs
from ..stats import pooled_level, racing, registry
from ..stats.tuning import config_labels
from ..wording import Message, kw, said
from .aggregates import analysis_streams, cells_by_algorithm, prepare
from .look_checks import (
    cell_counts,
    cell_runs,
    check_growth,
    data_hash,
    look_options,
    missing_runs,
    missing_text,
    short,
)
from .race_options import FEW_FIRST_RUNS, RaceLookOptions, RaceOptions
from .summary import race_summary
from .watch_options import FROZEN_OPTIONS

#: Options a race decides itself: passing them is refused with the keyword to use instead.
OWN_OPTIONS: dict[str, Message | str] = {
    "metrics": "metric=",
    "only_algorithms": "the table's algorithms (every algorithm races its own configurations)",
    "method": "nothing (the repeated intervals are normal intervals with the bootstrap standard deviation)",
    "hyperparameter_keys": said("the race's own ", kw("hyperparameter_keys=")),
}
#: The column of the launch list with the runs each cell needs before the next look.
ADD_RUNS = "add_runs"


def _text(value: Any) -> Any:
    """A hyperparameter value as JSON keeps it (numpy scalars become Python ones; NaN becomes None)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


@dataclass(frozen=True)
class Design:
    """Everything frozen at the first look (JSON-able through :meth:`to_json`). ``configs`` are (algorithm,
    values of the ``keys`` columns) in a sorted order; each algorithm's own configurations race, in that order."""

    looks: int
    max_runs: int
    alpha: float
    delta: float
    metric: str
    keys: tuple[str, ...]
    configs: tuple[tuple[str, tuple[Any, ...]], ...]
    tasks: tuple[str, ...]
    spending: str = "pocock"
    options: tuple[tuple[str, str], ...] = ()
    first_runs: int = FEW_FIRST_RUNS

    @property
    def algorithms(self) -> list[str]:
        return sorted({a for a, _ in self.configs})

    def of(self, algorithm: str) -> list[int]:
        """Indices (into ``configs``) of ``algorithm``'s configurations."""
        return [i for i, (a, _) in enumerate(self.configs) if a == algorithm]

    def labels(self) -> list[str]:
        """One name per configuration: ``algorithm [key=value, ...]`` (what the console and the record show)."""
        frame = pd.DataFrame([dict(zip(self.keys, values)) for _, values in self.configs], columns=list(self.keys))
        inner = config_labels(frame, self.keys) if len(frame) else pd.Series([], dtype=object)
        return [f"{a} [{c}]" for (a, _), c in zip(self.configs, inner)]

    def statistics(self, algorithm: str) -> racing.RaceDesign:
        """The race of ``algorithm``'s configurations, as :mod:`..stats.racing` takes it."""
        return racing.RaceDesign(
            configs=len(self.of(algorithm)),
            tasks=len(self.tasks),
            looks=self.looks,
            max_runs=self.max_runs,
            delta=self.delta,
            alpha=self.alpha,
            spending=self.spending,
            lower_is_better=registry.lower_is_better(self.metric),
            trim=pooled_level.trimmed_share(self.metric),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "race",
            "procedure": racing.PROCEDURE,
            "looks": self.looks,
            "max_runs": self.max_runs,
            "alpha": self.alpha,
            "delta": self.delta,
            "metric": self.metric,
            "keys": list(self.keys),
            "configs": [[a, list(v)] for a, v in self.configs],
            "tasks": list(self.tasks),
            "spending": self.spending,
            "options": dict(self.options),
            "first_runs": self.first_runs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Design:
        """The design of a state folder; one written by an earlier version of the race (whose intervals and runs
        were decided otherwise: ``racing.PROCEDURE``) is refused, not continued with this one's decisions."""
        if data.get("kind") == "race" and data.get("procedure", 1) != racing.PROCEDURE:
            raise InputError(
                f"this race was started by another version of the race (procedure {data.get('procedure', 1)!r}, "
                f"this one is {racing.PROCEDURE}), which decides its intervals and runs differently; finish it with "
                "that version or start a new state folder"
            )
        try:
            if data.get("kind") != "race":
                raise ValueError("it is not a race design")
            return cls(
                int(data["looks"]),
                int(data["max_runs"]),
                float(data["alpha"]),
                float(data["delta"]),
                str(data["metric"]),
                tuple(str(k) for k in data["keys"]),
                tuple((str(a), tuple(v)) for a, v in data["configs"]),
                tuple(str(t) for t in data["tasks"]),
                str(data["spending"]),
                tuple(sorted((str(k), str(v)) for k, v in dict(data["options"]).items())),
                int(data.get("first_runs", FEW_FIRST_RUNS)),  # a design written before issue 54 took 2
            )
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"the race design is unreadable ({err}); start a new state folder") from None

    def changed(self, other: Design) -> Message | str | None:
        """The first field in which ``other`` differs from this design, in words (None: the same design)."""
        names = ("looks", "max_runs", "first_runs", "alpha", "delta", "metric", "keys", "spending", "tasks", "configs")
        for name in names:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                if name == "configs":
                    new = sorted(set(other.labels()) - set(self.labels()))
                    gone = sorted(set(self.labels()) - set(other.labels()))
                    which = f"new {new[:3]}" if new else f"missing {gone[:3]}"
                    return f"the configurations changed since the first look ({which})"
                return said(kw(f"{name}="), f" was {short(mine)} at the first look, now {short(theirs)}")
        before, now = dict(self.options), dict(other.options)
        for key in sorted(set(before) | set(now)):
            if before.get(key) != now.get(key):
                return said(kw(f"{key}="), f" was {before.get(key)} at the first look, now {now.get(key)}")
        return None


@dataclass
class RaceResult:
    """One look of a race.

    ``stop``: every algorithm's race selected a configuration (no more runs are needed); ``best``: the selected
    configuration as a dict (``algorithm`` and its hyperparameter values) when the table has one algorithm, a dict
    of them by algorithm when it has several, None until every race stopped; ``selected`` (one row per stopped
    algorithm: the configuration, its metric's estimate and interval valid after selection, the regret bound R,
    the margin interval over the runner-up, why and when it stopped); ``alive`` (configurations still racing,
    ``settled`` when they need no runs: they cannot be δ better than their leader, or no runs of theirs could
    change the selection or certify it, ``docs/race.md``); ``eliminated`` (configuration,
    look, the interval of its metric minus the one it was shown worse than, the reason); ``launch`` (algorithm,
    hyperparameter columns, task, add_runs: the runs to start before the next look).
    """

    stop: bool
    best: dict[str, Any] | None
    selected: pd.DataFrame
    alive: pd.DataFrame
    eliminated: pd.DataFrame
    launch: pd.DataFrame
    look: int
    design: Design
    replayed: bool = False
    record: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """At most 20 lines: the look, its design and each algorithm's selection or the configurations still racing."""
        return race_summary(self).text()

    def _repr_html_(self) -> str:
        """The same as one compact HTML table (what a notebook shows), every name escaped."""
        return race_summary(self).html()


def make_design(table: ScoreTable, design: RaceOptions, hyperparameter_keys: Sequence[str], **options: Any) -> Design:
    """The design ``design`` asks for on this table's configurations (the values of its ``hyperparameter_keys``
    columns), with the analysis ``options`` it freezes (validated; each problem is one sentence)."""
    keys = _keys(hyperparameter_keys)
    opts = _options(options)
    final = prepare(table, opts).final
    configs = _configs(final.frame, keys)
    for algorithm in sorted({a for a, _ in configs}):
        n = sum(a == algorithm for a, _ in configs)
        if n < 2:
            raise InputError(
                f"algorithm {algorithm!r} has {n} configuration of {', '.join(keys)}; a race needs at least 2 "
                "configurations of each algorithm"
            )
    frozen = tuple(sorted((k, str(getattr(opts, k))) for k in FROZEN_OPTIONS))
    return Design(
        design.looks,
        design.max_runs,
        design.alpha,
        design.delta,
        design.metric,
        keys,
        configs,
        tuple(sorted(final.tasks)),
        design.spending,
        frozen,
        design.first_runs,
    )


def _keys(keys: Sequence[str]) -> tuple[str, ...]:
    names = [keys] if isinstance(keys, str) else list(keys or ())
    if not names or any(not isinstance(k, str) or not k for k in names) or len(set(names)) < len(names):
        raise InputError(
            said(
                kw("hyperparameter_keys="),
                f" must name the columns that make a configuration (each once), got {keys!r}",
            )
        )
    return tuple(names)


def _options(options: dict[str, Any]) -> Any:
    return look_options(options, "race", OWN_OPTIONS)


def _configs(frame: pd.DataFrame, keys: tuple[str, ...]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """Every (algorithm, values) of the table, sorted (by algorithm, then by the values as text)."""
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        raise InputError(
            f"hyperparameter column(s) {', '.join(map(repr, missing))} not in the scores; they have "
            f"{', '.join(map(str, frame.columns))}"
        )
    seen: dict[tuple[str, tuple[Any, ...]], None] = {}
    for row in frame[["algorithm", *keys]].drop_duplicates().itertuples(index=False):
        values = tuple(_text(v) for v in row[1:])
        seen[(str(row[0]), values)] = None
    return tuple(sorted(seen, key=lambda c: (c[0], tuple(map(repr, c[1])))))


def _pseudo(final: ScoreTable, design: Design) -> tuple[ScoreTable, list[str]]:
    """The scores with each configuration as its own "algorithm" (named by its label), and the labels in design
    order; a configuration outside the design is refused."""
    frame = final.frame
    keys = list(design.keys)
    index = {c: i for i, c in enumerate(design.configs)}
    labels = design.labels()
    rows = [
        index.get((str(r[0]), tuple(_text(v) for v in r[1:])), -1)
        for r in frame[["algorithm", *keys]].itertuples(index=False)
    ]
    unknown = sorted({(str(frame["algorithm"].iat[i]), i) for i, k in enumerate(rows) if k < 0})
    if unknown:
        raise InputError(
            f"the scores have a configuration the race was not designed with (algorithm {unknown[0][0]!r}, "
            f"row {unknown[0][1]}); every look must race the configurations of the first look"
        )
    pseudo = frame.assign(algorithm=[labels[k] for k in rows])[["algorithm", "task", "run_id", "score"]]
    return ScoreTable(pseudo, seed=None, run_id="run_id", step=None), labels


def take_look(
    table: ScoreTable,
    design: Design,
    history: Sequence[dict[str, Any]],
    choices: RaceLookOptions = RaceLookOptions(),
    **options: Any,
) -> RaceResult:
    """The next look of ``design`` at ``table``, after the recorded ``history`` (JSON records of earlier looks).

    The same data as a recorded look returns that look (``replayed``), and so does more data once every race
    stopped; fewer runs in a cell than the last look, changed runs, a look beyond ``design.looks``, other tasks,
    another set of configurations, or a cell outside 2..max_runs runs are refused. Runs the last look listed that
    never arrived are recorded (``record["missing"]``); a look that lacks some of a race's and would stop that race
    is refused unless ``choices.stop_on_missing``.
    """
    opts = _options(options)
    final = prepare(table, opts).final
    tasks = list(design.tasks)
    if sorted(final.tasks) != tasks:
        raise InputError(
            f"the scores have the tasks {short(sorted(final.tasks))}, the race was designed for "
            f"{short(tasks)}; every look must cover the same tasks"
        )
    pseudo, labels = _pseudo(final, design)
    counts = cell_counts(pseudo, labels, tasks, design.max_runs)
    cells = cells_by_algorithm(pseudo, tasks)
    digest = data_hash(cells, tasks)
    for record in history:
        if record["hash"] == digest:
            return result_from(record, design, replayed=True)
    runs = cell_runs(cells, tasks)
    check_growth(history, counts, runs, design.looks)
    if history and result_from(history[-1], design).stop:  # every race stopped: that look is final
        return result_from(history[-1], design, replayed=True)
    missing = missing_runs(history, counts, _unit_of(design))
    if not history:
        _check_first_look(counts, design.first_runs)
    look = len(history) + 1
    metric = registry.get_metric(design.metric, gamma=opts.gamma)
    rng, shared = analysis_streams(opts.seed, labels, opts.task_bootstrap)
    before = history[-1]["races"] if history else {}
    races: dict[str, Any] = {}
    launch: list[dict[str, Any]] = []
    for algorithm in design.algorithms:
        members = design.of(algorithm)
        stats = design.statistics(algorithm)
        previous = racing.RaceLook.from_json(before[algorithm]) if algorithm in before else None
        if previous is not None and previous.stop:
            races[algorithm] = before[algorithm]
            continue
        alive = [previous is None or previous.alive[k] for k in range(len(members))]
        dists: list[np.ndarray | None] = []
        points: list[float] = []
        member_cells: list[bs.Cells | None] = []
        for k, i in enumerate(members):
            if not alive[k]:
                dists.append(None)
                points.append(float("nan"))
                member_cells.append(None)
                continue
            c = cells[labels[i]]
            member_cells.append(c)
            dists.append(bs.replicates(c, metric, opts.reps, rng["aggregates"][labels[i]], task_bootstrap=shared))
            points.append(float(metric(bs.original(c))[0]))
        now = racing.race_look(previous, stats, dists, points, member_cells)
        if now.stop and not choices.stop_on_missing:
            _refuse_stop_on_missing(
                algorithm, {labels[i]: missing[labels[i]] for i in members if labels[i] in missing}, look
            )
        races[algorithm] = now.to_json()
        matrix = np.array([[counts[labels[i]][t] for t in tasks] for i in members])
        add = racing.allocation(now, stats, matrix)
        for k, i in enumerate(members):
            for m, task in enumerate(tasks):
                if add[k, m] > 0:
                    launch.append(_launch_row(design, i, task, int(add[k, m])))
    record = {"look": look, "hash": digest, "counts": counts, "runs": runs, "races": races, "launch": launch}
    if missing:
        record["missing"] = missing
    return result_from(record, design)


def _check_first_look(counts: dict[str, dict[str, int]], first_runs: int) -> None:
    """Refuse a first look with a cell of fewer runs than the design's ``first_runs``."""
    few = [(label, task, n) for label, tasks in counts.items() for task, n in tasks.items() if n < first_runs]
    if few:
        label, task, n = few[0]
        raise InputError(
            said(
                f"the race's first look takes at least {first_runs} runs per cell (",
                kw(f"first_runs={first_runs}"),
                f"), but cell ({label!r}, {task!r}) has "
                f"{n}{(f' (and {len(few) - 1} more cells too few)' if len(few) > 1 else '')}; run more seeds of "
                "every configuration before the first look",
            )
        )


def first_look_note(record: dict[str, Any]) -> str | None:
    """The note of a first look with cells of :data:`~.race_options.FEW_FIRST_RUNS` runs (None for another look)."""
    if int(record["look"]) != 1:
        return None
    cells = [n for tasks in record["counts"].values() for n in tasks.values()]
    few = sum(n <= FEW_FIRST_RUNS for n in cells)
    if not few:
        return None
    return said(
        f"the race's first look has {FEW_FIRST_RUNS} runs in {few} of its {len(cells)} cells: in a study of small "
        f"races on bimodal RL scores (issue 54), a first look of {FEW_FIRST_RUNS} runs per cell eliminated the "
        "true best configuration in 7% of races (the selection stayed within delta); for a safer start run more "
        "seeds first and ask for them with ",
        kw(f"first_runs={FEW_FIRST_RUNS + 1}"),
        " (or more) in a new state folder",
    ).text()


def _unit_of(design: Design) -> Any:
    """The configuration label of a recorded launch row (its algorithm and hyperparameter values)."""
    label = {(a, tuple(map(value_key, v))): name for (a, v), name in zip(design.configs, design.labels())}
    return lambda row: label.get((str(row["algorithm"]), tuple(value_key(row.get(k)) for k in design.keys)), "")


def _refuse_stop_on_missing(algorithm: str, missing: dict[str, dict[str, int]], look: int) -> None:
    """A race does not stop on a look that lacks runs the look before listed for its configurations, unless asked."""
    if missing:
        raise InputError(
            said(
                f"look {look} would stop the race of {algorithm!r}, but {missing_text(missing, look)}; wait for "
                "them (or launch them again: the state folder's runs.csv lists them) and look again, or pass ",
                kw("stop_on_missing=True"),
                " to stop on the runs that arrived",
            )
        )


def _launch_row(design: Design, i: int, task: str, add: int) -> dict[str, Any]:
    algorithm, values = design.configs[i]
    return {"algorithm": algorithm, **dict(zip(design.keys, values)), "task": task, ADD_RUNS: add}


def _config(design: Design, i: int) -> dict[str, Any]:
    algorithm, values = design.configs[i]
    return {"algorithm": algorithm, **dict(zip(design.keys, values))}


def result_from(record: dict[str, Any], design: Design, *, replayed: bool = False) -> RaceResult:
    """The :class:`RaceResult` of a look's record (a new look's, or one read back from the state folder)."""
    labels = design.labels()
    sign = -1.0 if registry.lower_is_better(design.metric) else 1.0
    keys = ["algorithm", *design.keys]
    selected, alive, eliminated = [], [], []
    for algorithm in design.algorithms:
        members = design.of(algorithm)
        look = racing.RaceLook.from_json(record["races"][algorithm])
        lead = members[look.leader]
        for k, i in enumerate(members):
            row = _config(design, i)
            if look.alive[k]:
                settled = not look.stop and not look.wants[k]
                alive.append({**row, "point": look.points[k], "runs": look.runs[k], "settled": settled})
            else:
                j = look.eliminated_by[k]
                # the pair's interval of θ_k - θ_j in the metric's own direction
                upper = look.upper(k, j)
                lower = -look.upper(j, k)
                low, high = sorted((sign * lower, sign * upper))
                eliminated.append(
                    {
                        **row,
                        "look": look.eliminated_at[k],
                        "against": labels[members[j]],
                        "low": low,
                        "high": high,
                        "reason": f"worse than {labels[members[j]]}",
                    }
                )
        if look.stop:
            s = look.selected
            selected.append(
                {
                    **_config(design, members[s]),
                    "metric": design.metric,
                    "point": look.points[s],
                    "low": look.config_low[s],
                    "high": look.config_high[s],
                    "regret": look.regret,
                    "margin_low": look.margin_low,
                    "margin_high": look.margin_high,
                    "reason": look.reason,
                    "look": look.look,
                    "leader": labels[lead],
                }
            )
    stop = len(selected) == len(design.algorithms)
    best: dict[str, Any] | None = None
    if stop:
        chosen = [{k: row[k] for k in keys} for row in selected]
        best = chosen[0] if len(chosen) == 1 else {row["algorithm"]: row for row in chosen}
    frame = pd.DataFrame(
        selected,
        columns=[*keys, "metric", "point", "low", "high", "regret", "margin_low", "margin_high", "reason", "look"],
    )
    return RaceResult(
        stop,
        best,
        frame,
        pd.DataFrame(alive, columns=[*keys, "point", "runs", "settled"]),
        pd.DataFrame(eliminated, columns=[*keys, "look", "against", "low", "high", "reason"]),
        pd.DataFrame(record["launch"], columns=[*keys, "task", ADD_RUNS]).astype({ADD_RUNS: int}),
        int(record["look"]),
        design,
        replayed,
        record,
    )
