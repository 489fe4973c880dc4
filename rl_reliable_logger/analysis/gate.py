"""One look of a gate: a candidate against the incumbent on paired seeds, in a stream whose false keeps are controlled
(the state folder is :mod:`rl_reliable_logger.looks.gate`; the statistics :mod:`..stats.gate`).

The stream's :class:`Design` is frozen at its first candidate: ``min_effect``, ``alpha``, ``max_seeds``, the metric
that makes a seed's score from its runs on the tasks, the tasks, and the candidate plan and online rule of
:mod:`..stats.gate` (recorded, so that a later version's defaults never change a stream under way). A look
(:func:`take_look`)

* pairs the candidate's and the incumbent's runs by seed (a seed on one side only is an error naming it; seeds the
  incumbent was already measured on are checked to be its recorded runs);
* rebuilds the stream from the recorded looks (:func:`stream_of`: the ended tests, the open candidate, the
  incumbent and its runs, every seed used) and refuses a look that reuses another candidate's seeds;
* takes the look of :func:`..stats.gate.stream.look` (screen, group-sequential looks, SAFFRON level) and says the
  verdict (``keep``, ``discard``, ``run_more``), the seeds to run next on both sides and why, in one line.

A new name while another candidate is still open ends that one first (``discard``, abandoned: its level stays
spent). A keep makes the candidate the incumbent, on its measured seeds: the next candidates are compared with its
runs on their own fresh seeds, and the incumbent's runs the stream recorded are its identity.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from ..data.names import seed_key, seed_number
from ..data.scores import ScoreTable
from ..errors import InputError
from ..stats import bootstrap as bs
from ..stats import registry
from ..stats.gate import candidate as gc
from ..stats.gate import online
from ..stats.gate import stream as gs
from ..wording import Message, kw, said
from .gate_options import GateDesign
from .look_checks import short
from .report import SPECS

#: A verdict of each outcome of :mod:`..stats.gate.candidate` (and ``abandoned``: a new candidate started first).
VERDICTS = {
    "keep": "keep",
    "screened": "discard",
    "futile": "discard",
    "exhausted": "discard",
    "abandoned": "discard",
    "run_more": "run_more",
    "too_few": "run_more",
}


@dataclass(frozen=True)
class Design:
    """Everything frozen at a stream's first candidate (JSON-able through :meth:`to_json`)."""

    min_effect: float
    alpha: float
    max_seeds: int
    metric: str
    tasks: tuple[str, ...]
    plan: tuple[tuple[str, Any], ...] = ()
    rule: tuple[tuple[str, Any], ...] = ()

    @property
    def candidate_plan(self) -> gc.Plan:
        return gc.Plan(max_seeds=self.max_seeds, **dict(self.plan))

    @property
    def online_rule(self) -> online.Rule:
        return online.Rule(alpha=self.alpha, **dict(self.rule))

    def to_json(self) -> dict[str, Any]:
        return {
            "min_effect": self.min_effect,
            "alpha": self.alpha,
            "max_seeds": self.max_seeds,
            "metric": self.metric,
            "tasks": list(self.tasks),
            "plan": dict(self.plan),
            "rule": dict(self.rule),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Design:
        try:
            design = cls(
                float(data["min_effect"]),
                float(data["alpha"]),
                int(data["max_seeds"]),
                str(data["metric"]),
                tuple(str(t) for t in data["tasks"]),
                tuple(sorted(dict(data["plan"]).items())),
                tuple(sorted(dict(data["rule"]).items())),
            )
            design.candidate_plan, design.online_rule  # noqa: B018 - a recorded plan or rule must still be valid
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"the gate design is unreadable ({err}); start a new state folder") from None
        return design

    def changed(self, other: Design) -> Message | str | None:
        """The first option in which ``other`` differs from this design, in words (None: the same design)."""
        for name in ("min_effect", "alpha", "max_seeds", "metric"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                return said(kw(f"{name}="), f" was {short(mine)} at the stream's first candidate, now {short(theirs)}")
        if self.tasks != other.tasks:
            return f"the stream was started on the tasks {short(list(self.tasks))}, these scores have {short(list(other.tasks))}"
        return None


def make_design(candidate: ScoreTable, asked: GateDesign) -> Design:
    """The design a first candidate's scores and ``asked`` give (the plan and rule: :mod:`..stats.gate`'s defaults)."""
    plan, rule = gc.Plan(max_seeds=asked.max_seeds), online.Rule(alpha=asked.alpha)
    plan_fields = tuple((f.name, getattr(plan, f.name)) for f in fields(plan) if f.name != "max_seeds")
    rule_fields = tuple((f.name, getattr(rule, f.name)) for f in fields(rule) if f.name != "alpha")
    return Design(
        asked.min_effect,
        asked.alpha,
        asked.max_seeds,
        asked.metric,
        tuple(sorted(map(str, candidate.final().tasks))),
        plan_fields,
        rule_fields,
    )


# ----------------------------------------------------------------------------- the paired seeds
@dataclass(frozen=True)
class Side:
    """One side's runs, as the gate reads them: its algorithm name and each seed's score (the metric over its runs
    on the tasks), by seed label."""

    name: str
    scores: dict[str, float]


def side_of(table: ScoreTable, design: Design, what: str) -> Side:
    """The per-seed scores of one side (``what``: candidate or incumbent), each problem one sentence."""
    final = table.final()
    algorithms = final.algorithms
    if len(algorithms) != 1:
        raise InputError(
            f"the {what} scores hold {len(algorithms)} algorithms ({short(sorted(map(str, algorithms)))}); pass one "
            f"algorithm's runs as the {what}"
        )
    tasks = sorted(map(str, final.tasks))
    if tuple(tasks) != design.tasks:
        raise InputError(
            f"the {what} has the tasks {short(tasks)}, the stream was started on {short(list(design.tasks))}; every "
            "candidate and the incumbent run on the same tasks"
        )
    labels = [seed_key(v) for v in final.frame["seed"]]
    task_of = [str(t) for t in final.frame["task"]]
    values = final.frame["score"].to_numpy(dtype=float)
    by_seed: dict[str, dict[str, float]] = {}
    for label, task, value in zip(labels, task_of, values):
        runs = by_seed.setdefault(label, {})
        if task in runs:
            raise InputError(
                f"the {what} has several runs of seed {label!r} on task {task!r}; a gate pairs one run per seed and "
                "task on each side"
            )
        runs[task] = float(value)
    metric = registry.get_metric(design.metric)
    scores: dict[str, float] = {}
    for label, by_task in sorted(by_seed.items()):
        missing = [t for t in design.tasks if t not in by_task]
        if missing:
            raise InputError(f"seed {label!r} of the {what} has no run on task {missing[0]!r}; run it on every task")
        cells = bs.Cells.from_list([np.array([by_task[t]]) for t in design.tasks])
        scores[label] = float(metric(bs.original(cells))[0])
    return Side(str(algorithms[0]), scores)


# ----------------------------------------------------------------------------- the stream so far
@dataclass
class Stream:
    """The stream rebuilt from its recorded looks: the ended tests, each candidate's looks (in order of first
    appearance), which one is open, the incumbent (its name and recorded runs: seed -> score), and every seed used
    by each candidate."""

    tests: gs.Tests = field(default_factory=gs.Tests)
    looks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    open: str | None = None
    incumbent: str | None = None
    incumbent_runs: dict[str, float] = field(default_factory=dict)
    seeds_of: dict[str, set[str]] = field(default_factory=dict)
    ended: dict[str, str] = field(default_factory=dict)

    def end(self, name: str, record: dict[str, Any], kept: bool, *, how: str | None = None) -> None:
        """Candidate ``name`` ended with its last look ``record`` (a test of the stream unless screened out);
        ``how`` says how, in words (default: its verdict at that look)."""
        if record["level"] is not None:
            self.tests = self.tests.add(float(record["level"]), bool(record["candidacy"]), kept)
        if self.open == name:
            self.open = None
        self.ended[name] = how or f"ended at stream look {record['look']} ({VERDICTS[record['outcome']]})"

    def abandon(self, record: dict[str, Any]) -> None:
        """End the candidate that ``record``'s look abandoned, if any (it is the first step of that look)."""
        gone = record.get("abandoned")
        if gone:
            self.end(gone, self.looks[gone][-1], kept=False, how=_abandoned(record["look"]))

    def add(self, record: dict[str, Any]) -> None:
        """The stream after the look ``record`` (once :meth:`abandon` ended what it abandoned)."""
        name = record["name"]
        if self.incumbent is None or record["incumbent"] != self.incumbent:
            self.incumbent, self.incumbent_runs = record["incumbent"], {}
        self.looks.setdefault(name, []).append(record)
        seeds = [str(x) for x in record["seeds"]]
        self.seeds_of.setdefault(name, set()).update(seeds)
        self.incumbent_runs.update(zip(seeds, map(float, record["incumbent_scores"])))
        if record["outcome"] in gs.FINAL:
            self.end(name, record, kept=record["outcome"] == "keep")
            if record["outcome"] == "keep":
                self.incumbent, self.incumbent_runs = name, dict(zip(seeds, map(float, record["scores"])))
        else:
            self.open = name


def _abandoned(look: int) -> str:
    return f"was abandoned at stream look {look} (a new candidate started while it was open)"


def stream_of(history: Sequence[dict[str, Any]]) -> Stream:
    """The stream after the recorded looks, in order."""
    s = Stream()
    for record in history:
        s.abandon(record)
        s.add(record)
    return s


def fresh_seeds(used: set[str], count: int) -> list[int]:
    """The ``count`` smallest whole numbers no label in ``used`` stands for (``007`` stands for 7)."""
    taken = {n for n in map(seed_number, used) if n is not None}
    out: list[int] = []
    seed = 0
    while len(out) < count:
        if seed not in taken:
            out.append(seed)
        seed += 1
    return out


# ----------------------------------------------------------------------------- the result
@dataclass(frozen=True, repr=False)
class GateResult:
    """One gate look: ``verdict`` (``keep``, ``discard`` or ``run_more``), ``next_seeds`` (run them on both sides:
    this candidate's next look, or after a final verdict the next candidate's screen), ``interval`` of the
    improvement (candidate - incumbent; incumbent - candidate for a metric where lower is better) at this look,
    ``level`` (the error this candidate may spend, its SAFFRON level; None before its screen), ``alpha_spent`` and
    ``wealth`` (the stream's error charged so far, and what the keeps earned that is not charged yet), ``estimate``
    (the improvement, median-unbiased given the screen and the look it stopped at; the mean before that), a
    one-line ``reason``, and ``stream``: one row per candidate so far (its last look). ``replayed``: this call
    recorded no look (the same scores as a recorded look, or fewer seeds than the screen needs)."""

    name: str
    verdict: str
    reason: str
    next_seeds: tuple[int, ...]
    interval: tuple[float, float]
    level: float | None
    alpha_spent: float
    wealth: float
    estimate: float
    mean: float
    seeds: int
    outcome: str
    look: int
    candidate: int
    incumbent: str
    design: Design
    replayed: bool = False
    record: dict[str, Any] = field(default_factory=dict, compare=False)
    stream: pd.DataFrame | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        low, high = self.interval
        level = "not a test yet (before its screen)" if self.level is None else f"{self.level:.4g}"
        lines = [
            f"GateResult: {self.verdict} — {self.name!r} against {self.incumbent!r}" + self._replay_note(),
            f"  reason:      {self.reason}",
            f"  improvement: mean {self.mean:+.4g} over {self.seeds} paired seeds; estimate {self.estimate:+.4g}",
            f"  interval:    [{low:.4g}, {high:.4g}] at this look (min_effect {self.design.min_effect:g})",
            f"  level:       {level}; stream: {self.alpha_spent:.4g} of alpha charged, wealth {self.wealth:.4g}",
            f"  next seeds:  {', '.join(map(str, self.next_seeds)) or 'none'} (on both sides)",
            f"  stream look {self.look}, candidate {self.candidate}; design alpha {self.design.alpha:g}, "
            f"max_seeds {self.design.max_seeds}, metric {self.design.metric}",
        ]
        return "\n".join(lines)

    def _replay_note(self) -> str:
        if self.outcome == "too_few":
            return " (no look taken: too few seeds for the screen)"
        return f" (replayed: the same scores as stream look {self.look})" if self.replayed else ""

    def _repr_html_(self) -> str:
        from html import escape

        rows = [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in repr(self).splitlines()[1:])]
        body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
        head = escape(repr(self).splitlines()[0])
        return f"<table><caption>{head}</caption>{body}</table>"


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _number(value: float) -> float | str:
    """A float as JSON holds it: an infinite one as the text ``inf`` or ``-inf`` (``float()`` reads both)."""
    return float(value) if math.isfinite(value) else str(float(value))


def _value(value: float | None, missing: float) -> float:
    return missing if value is None else float(value)


def result_from(
    record: dict[str, Any], design: Design, *, replayed: bool = False, stream: pd.DataFrame | None = None
) -> GateResult:
    """The :class:`GateResult` of a look's record (a new look's, or one read back from the state folder)."""
    return GateResult(
        name=str(record["name"]),
        verdict=VERDICTS[record["outcome"]],
        reason=str(record["reason"]),
        next_seeds=tuple(int(s) for s in record["next_seeds"]),
        interval=(_value(record["low"], -math.inf), _value(record["high"], math.inf)),
        level=None if record["level"] is None else float(record["level"]),
        alpha_spent=float(record["charged"]),
        wealth=float(record["budget"]) - float(record["charged"]),
        estimate=float(record["estimate"]),
        mean=float(record["mean"]),
        seeds=len(record["seeds"]),
        outcome=str(record["outcome"]),
        look=int(record["look"]),
        candidate=int(record["candidate"]),
        incumbent=str(record["incumbent"]),
        design=design,
        replayed=replayed,
        record=record,
        stream=stream,
    )


#: The columns of a stream's table (one row per candidate, its last look): the Report's ``gate`` table.
STREAM_COLUMNS = list(SPECS["gate"].columns)


def stream_table(history: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per candidate of the recorded looks (its last look; ``abandoned`` when a new candidate started
    while it was open)."""
    last: dict[str, dict[str, Any]] = {}
    gone: set[str] = set()
    for record in history:
        if record.get("abandoned"):
            gone.add(record["abandoned"])
        last[record["name"]] = record
    rows = []
    for name, r in last.items():
        outcome = "abandoned" if name in gone and r["outcome"] not in gs.FINAL else r["outcome"]
        rows.append(
            {
                "candidate": int(r["candidate"]),
                "name": name,
                "verdict": VERDICTS[outcome],
                "outcome": outcome,
                "seeds": len(r["seeds"]),
                "mean": float(r["mean"]),
                "estimate": float(r["estimate"]),
                "low": _value(r["low"], -math.inf),
                "high": _value(r["high"], math.inf),
                "level": math.nan if r["level"] is None else float(r["level"]),
                "incumbent": str(r["incumbent"]),
                "look": int(r["look"]),
                "reason": "abandoned: a new candidate started first" if outcome == "abandoned" else str(r["reason"]),
            }
        )
    return pd.DataFrame(rows, columns=STREAM_COLUMNS)


# ----------------------------------------------------------------------------- a look
def record_hash(name: str, seeds: Sequence[str], cand: Sequence[float], inc: Sequence[float]) -> str:
    """SHA-256 of a look's paired scores (name, then each seed's two scores in seed order): what a replay matches."""
    digest = hashlib.sha256(name.encode() + b"\0")
    for s, c, i in sorted(zip(seeds, cand, inc)):
        digest.update(s.encode() + b"\0" + np.array([float(c), float(i)], dtype="<f8").tobytes())
    return digest.hexdigest()


def _check_incumbent(candidate: Side, incumbent: Side, stream: Stream, asked: set[str]) -> None:
    """Every seed of the candidate on the incumbent's side, and every seed the gate ``asked`` for that the incumbent
    ran on the candidate's side (a seed on one side only is named); the incumbent's runs the stream recorded have
    their recorded scores (the incumbent is who the stream says it is). Other incumbent runs are not this look's."""
    missing = sorted(set(candidate.scores) - set(incumbent.scores))
    if missing:
        raise InputError(
            f"seed {missing[0]!r} of candidate {candidate.name!r} has no run of the incumbent {incumbent.name!r}; "
            "run both on every seed (paired seeds)"
        )
    alone = sorted((asked & set(incumbent.scores)) - set(candidate.scores))
    if alone:
        raise InputError(
            f"seed {alone[0]!r} of the incumbent {incumbent.name!r} has no run of candidate {candidate.name!r}; run "
            "both on every seed (paired seeds)"
        )
    for seed, score in sorted(incumbent.scores.items()):
        recorded = stream.incumbent_runs.get(seed)
        if recorded is not None and not math.isclose(score, recorded, rel_tol=1e-12, abs_tol=1e-12):
            raise InputError(
                f"the incumbent's run on seed {seed!r} scores {score:.6g}, but the stream recorded {recorded:.6g} for "
                f"its incumbent {stream.incumbent!r} there; pass the current incumbent's runs"
            )


def _check_fresh(name: str, seeds: Sequence[str], stream: Stream) -> None:
    """No seed of this look was a seed of another candidate of the stream (every candidate runs on fresh seeds)."""
    for other, used in stream.seeds_of.items():
        if other == name:
            continue
        shared = sorted(set(seeds) & used)
        if shared:
            raise InputError(
                f"seed {shared[0]!r} was a seed of candidate {other!r} of this stream; every candidate runs on fresh "
                f"seeds (on both sides), else the candidates share the incumbent's noise"
            )


def _check_growth(name: str, cand: Side, inc: Side, looks: list[dict[str, Any]]) -> None:
    """A later look of a candidate only adds seeds, and keeps every earlier seed's scores on both sides."""
    last = looks[-1]
    for seed, c, i in zip(last["seeds"], last["scores"], last["incumbent_scores"]):
        seed = str(seed)
        if seed not in cand.scores:
            raise InputError(
                f"seed {seed!r} of look {last['look']} of candidate {name!r} is missing now; a later look only adds seeds"
            )
        now = (cand.scores[seed], inc.scores.get(seed, i))  # a missing incumbent run is named by the pairing check
        for side, value, before in (("candidate's", now[0], c), ("incumbent's", now[1], i)):
            if not math.isclose(value, before, rel_tol=1e-12, abs_tol=1e-12):
                raise InputError(
                    f"the {side} run on seed {seed!r} scores differently from look {last['look']} of candidate "
                    f"{name!r}; a later look only adds seeds, never replaces or changes them"
                )


def _reason(outcome: str, look: gs.Look, design: Design, next_seeds: Sequence[int]) -> str:
    seeds = ", ".join(map(str, next_seeds))
    m = f"{design.min_effect:g}"
    if outcome == "keep":
        return (
            f"keep: better than the incumbent by more than min_effect {m} at {look.seeds} paired seeds "
            f"(z {look.z:.2f} >= {look.bound:.2f}, level {look.level:.3g})"
        )
    if outcome == "screened":  # z is of the improvement beyond min_effect: a mean above it can still fall short
        screen = design.candidate_plan.screen
        z = f", z {look.z:.2f} < screen {screen:g}" if math.isfinite(look.z) else ""
        return (
            f"discard at the screen: not on course to beat the incumbent by min_effect {m} (mean improvement "
            f"{look.mean:+.3g} over {look.seeds} seeds{z})"
        )
    if outcome == "futile":
        return f"discard: unlikely to be better by min_effect {m} (z {look.z:.2f} at {look.seeds} seeds, futility)"
    if outcome == "exhausted":
        return f"discard: not shown better by min_effect {m} within max_seeds ({design.max_seeds})"
    if outcome == "too_few":
        return f"run_more: the screen needs {look.next_seeds} paired seeds; run seeds {seeds} on both sides"
    return f"run_more: run seeds {seeds} on both sides, then look again (z {look.z:.2f} at {look.seeds} seeds)"


def take_look(
    candidate: ScoreTable, incumbent: ScoreTable, name: str, design: Design, history: Sequence[dict[str, Any]]
) -> GateResult:
    """The next look of candidate ``name`` in the stream recorded by ``history`` (JSON records of earlier looks).

    The same scores as a recorded look of ``name`` return that look (``replayed``); a candidate whose verdict was
    final refuses other scores; a look that reuses another candidate's seeds, drops or changes a seed of its last
    look, or pairs a seed on one side only is refused, each in one sentence.
    """
    cand, inc = side_of(candidate, design, "candidate"), side_of(incumbent, design, "incumbent")
    stream = stream_of(history)
    seeds = sorted(cand.scores, key=lambda s: (seed_number(s) is None, seed_number(s) or 0, s))
    scores = [cand.scores[s] for s in seeds]
    against = [inc.scores.get(s, math.nan) for s in seeds]
    digest = record_hash(name, seeds, scores, against)
    earlier = stream.looks.get(name, [])
    for record in earlier:  # a recorded look again (even of a candidate kept since): its verdict, nothing new
        if record["hash"] == digest:
            return result_from(record, design, replayed=True, stream=stream_table(history))
    if name == (stream.incumbent or inc.name):
        raise InputError(f"{name!r} is the incumbent of this stream; give the candidate another name")
    if name in stream.ended:
        raise InputError(
            f"candidate {name!r} {stream.ended[name]}; its verdict is final: submit a new change under a new name"
        )
    _check_fresh(name, seeds, stream)
    if earlier:
        _check_growth(name, cand, inc, earlier)
    # the seeds the gate asked for: this candidate's next ones, or after a final verdict the next candidate's
    last = earlier[-1] if earlier else (history[-1] if history and history[-1]["outcome"] in gs.FINAL else None)
    _check_incumbent(cand, inc, stream, {str(x) for x in last["next_seeds"]} if last is not None else set())
    plan, rule = design.candidate_plan, design.online_rule
    if len(seeds) > plan.max_seeds:
        raise InputError(
            said(
                f"candidate {name!r} has {len(seeds)} paired seeds, more than the stream's ",
                kw(f"max_seeds={plan.max_seeds}"),
                "; leave the extra seeds out",
            )
        )
    abandoned = stream.open if stream.open not in (None, name) else None
    if abandoned is not None:
        stream.end(abandoned, stream.looks[abandoned][-1], kept=False, how=_abandoned(len(history) + 1))
    sign = -1.0 if registry.lower_is_better(design.metric) else 1.0
    differences = sign * (np.array(scores) - np.array(against))
    previous = [(len(r["seeds"]), float(r["z"])) for r in earlier]
    look = gs.look(plan, rule, stream.tests, previous, differences, design.min_effect)
    used = set().union(*stream.seeds_of.values(), seeds) if stream.seeds_of else set(seeds)
    count = plan.screen_seeds if look.final else look.next_seeds - look.seeds
    following = fresh_seeds(used, count)
    if look.outcome == "too_few":  # nothing to record: no look taken, nothing spent
        return _unrecorded(name, look, design, stream, inc, following, history)
    record = {
        "look": len(history) + 1,
        "hash": digest,
        "name": name,
        "candidate": _index(stream, name),
        "incumbent": stream.incumbent if stream.incumbent is not None else inc.name,
        "seeds": seeds,
        "scores": scores,
        "incumbent_scores": against,
        "outcome": look.outcome,
        "z": _number(look.z),
        "bound": _finite(look.bound),
        "level": _finite(look.level),
        "candidacy": bool(look.candidate),
        "low": _finite(look.interval[0]),
        "high": _finite(look.interval[1]),
        "mean": float(look.mean),
        "estimate": float(look.estimate),
        "next_seeds": following,
        "charged": float(look.charged),
        "budget": float(look.budget),
        "reason": _reason(look.outcome, look, design, following),
        "abandoned": abandoned,
    }
    return result_from(record, design, stream=stream_table([*history, record]))


def _index(stream: Stream, name: str) -> int:
    """The candidate's number in the stream (1 for the first)."""
    names = list(stream.looks)
    return names.index(name) + 1 if name in names else len(names) + 1


def _unrecorded(
    name: str, look: gs.Look, design: Design, stream: Stream, inc: Side, following: list[int], history: Sequence[dict]
) -> GateResult:
    """A call with fewer seeds than the screen needs: no look is taken (nothing recorded, nothing spent)."""
    return GateResult(
        name=name,
        verdict="run_more",
        reason=_reason("too_few", look, design, following),
        next_seeds=tuple(following),
        interval=(-math.inf, math.inf),
        level=None,
        alpha_spent=float(look.charged),
        wealth=float(look.budget) - float(look.charged),
        estimate=float(look.mean),
        mean=float(look.mean),
        seeds=look.seeds,
        outcome="too_few",
        look=len(history),
        candidate=_index(stream, name),
        incumbent=stream.incumbent if stream.incumbent is not None else inc.name,
        design=design,
        replayed=True,  # nothing to write
        stream=stream_table(history),
    )
