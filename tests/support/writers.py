"""One case per writer of ``store.kinds.WRITERS``, for the writer half of the contract battery
(``tests/contract/test_writers.py``).

Each case writes through the package's real entry point (``save_report``, ``save_plan``, ``watch``, ``race``, ``gate``, ``save_scores``,
``save_pending``, the W&B offline publish record) and reads back through the package's real reader. A write has a
``version`` (1, 2, 3, ...) that the reader can tell apart, so a test can say whether the previous or the new content
is in place after a kill. ``python -m tests.support.writers KIND TARGET VERSION STEP ACTION`` is the child process
the battery kills (``ACTION`` ``kill``: SIGKILL at ``STEP``; ``hold``: stop at ``STEP`` until a line arrives on
stdin, holding the lock).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: Names a spreadsheet would execute, names that look like numbers or YAML words, quotes and separators: every
#: writer must write them so that a spreadsheet runs nothing and the package reads them back exactly.
HOSTILE_NAMES = ["=HYPERLINK(1)", "+1", "-2", "@SUM(A1)", "'=quoted", "1e3", "007", "yes", "a,b", 'q"x', "ñ é"]
#: Tasks of the hostile tables (numbers-as-text and a formula too).
HOSTILE_TASKS = ["=cmd|'/C calc'!A0", "0.5", "-x", "true"]


def hostile_table(version: int, names: Sequence[str] = HOSTILE_NAMES[:4]) -> Any:
    """A ScoreTable of ``names`` x :data:`HOSTILE_TASKS` with ``version + 2`` seeds per cell (so versions differ)."""
    from rl_reliable_logger import ScoreTable

    rows = [
        (a, t, s, float(s) + i + 0.25 * j)
        for i, a in enumerate(names)
        for j, t in enumerate(HOSTILE_TASKS)
        for s in range(version + 2)
    ]
    return ScoreTable(pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"]))


@dataclass(frozen=True)
class Written:
    """What the package reads back: the version it holds and the names found in it."""

    version: Any
    names: set[str]


@dataclass(frozen=True)
class WriterCase:
    """How to write (``write(target, version)``) and read back (``read(target)``) one writer's output.

    ``target`` is the folder or file the writer replaces; ``shared``: two writers write the same target (a
    pending score gets a file of its own, so two at once both succeed); :meth:`after` says what ``read`` gives
    after some versions were written (a pending folder holds every version, a watch one look per write).
    """

    kind: str
    target: str
    write: Callable[[Path, int], None]
    read: Callable[[Path], Written]
    names: frozenset[str]  # the names version 1 writes
    shared: bool = True
    history: bool = False  # each write adds to what is there (a watch's looks): read gives how many landed

    def after(self, versions: Sequence[int]) -> Any:
        """What :attr:`read` gives after ``versions`` were written in order."""
        if self.history:
            return len(versions)
        return versions[-1] if self.shared else sorted(versions)


# ----------------------------------------------------------------------------- report
def _write_report(out: Path, version: int) -> None:
    from rl_reliable_logger import evaluate, save_report

    report = evaluate(hostile_table(version), reps=200, profile_reps=20, improvement_reps=20, seed=0)
    save_report(report, out, figures=False)


def _read_report(out: Path) -> Written:
    from rl_reliable_logger import load_report

    report = load_report(out)
    runs = int(report.scores.groupby(["algorithm", "task"]).size().max())
    return Written(runs - 2, set(report.scores["algorithm"]) | set(report.scores["task"]))


# ----------------------------------------------------------------------------- plan
def _write_plan(out: Path, version: int) -> None:
    from rl_reliable_logger import plan, save_plan

    save_plan(
        plan(hostile_table(1), runs=[3, 3 + version], trials=4, sim_reps=20, target_width=0.5), out, figures=False
    )


def _read_plan(out: Path) -> Written:
    from rl_reliable_logger.data import csvcells
    from rl_reliable_logger.store.bundle import read_bundle

    bundle = read_bundle(out)
    assert bundle.kind == "plan"
    frame = csvcells.read_csv(out / "plan.csv")
    names = set(frame["algorithm"].astype(str)) if "algorithm" in frame else set()
    return Written(int(pd.to_numeric(frame["n_runs"]).max()) - 3, names)


# ----------------------------------------------------------------------------- watch
def _write_watch(out: Path, version: int) -> None:
    from rl_reliable_logger import watch

    watch(hostile_table(version), out, looks=6, max_runs=12, reps=200, seed=0)


def _read_watch(out: Path) -> Written:
    from rl_reliable_logger.looks.ledger import read_state
    from rl_reliable_logger.looks.watch import WATCH

    state = read_state(out, ledger=WATCH)
    assert state is not None, f"{out}: no watch state"
    design, looks = state
    return Written(len(looks), {a for pair in design.pairs for a in pair} | set(design.tasks))


# ----------------------------------------------------------------------------- race
#: A race's configurations: hostile hyperparameter values (they become launch fields, YAML values and -P words).
RACE_VALUES = HOSTILE_NAMES[4:6]


def _write_race(out: Path, version: int) -> None:
    from rl_reliable_logger import race

    frame = hostile_table(version).frame[["algorithm", "task", "seed", "score"]]
    sweep = pd.concat([frame.assign(lr=value) for value in RACE_VALUES], ignore_index=True)  # tied: none is out
    race(sweep, out, looks=6, max_runs=12, hyperparameter_keys=["lr"], reps=200, seed=0)


def _read_race(out: Path) -> Written:
    from rl_reliable_logger.looks.ledger import read_state
    from rl_reliable_logger.looks.race import RACE

    state = read_state(out, ledger=RACE)
    assert state is not None, f"{out}: no race state"
    design, looks = state
    return Written(
        len(looks), {a for a, _ in design.configs} | {v for _, c in design.configs for v in c} | set(design.tasks)
    )


# ----------------------------------------------------------------------------- gate
#: A gate's candidate and incumbent: hostile names (they become CSV cells, launch fields, YAML values and -P words).
GATE_NAMES = HOSTILE_NAMES[:2]
#: Paired differences (candidate - incumbent, per seed) that keep a candidate open for several looks.
_GATE_GAPS = [0.9, 0.1, 0.6, 0.45, 0.2, 0.7, 0.35, 0.5, 0.4, 0.55]


def _write_gate(out: Path, version: int) -> None:
    """Version v is the candidate's look at 2 + v paired seeds (each write adds one look to the ledger)."""
    from rl_reliable_logger import gate

    seeds = range(2 + version)
    rows = [(HOSTILE_TASKS[m], s, 1.0 + m + 0.1 * s) for m in range(len(HOSTILE_TASKS)) for s in seeds]
    inc = pd.DataFrame([(GATE_NAMES[1], t, s, x) for t, s, x in rows], columns=["algorithm", "task", "seed", "score"])
    cand = inc.assign(algorithm=GATE_NAMES[0], score=inc["score"] + [_GATE_GAPS[s] for _, s, _ in rows])
    gate(cand, inc, state=out, name=GATE_NAMES[0], min_effect=0.1)


def _read_gate(out: Path) -> Written:
    from rl_reliable_logger.looks.gate import GATE
    from rl_reliable_logger.looks.ledger import read_state

    state = read_state(out, ledger=GATE)
    assert state is not None, f"{out}: no gate state"
    design, looks = state
    return Written(
        len(looks), {str(x) for look in looks for x in (look["name"], look["incumbent"])} | set(design.tasks)
    )


# ----------------------------------------------------------------------------- scores
def _write_scores(path: Path, version: int) -> None:
    from rl_reliable_logger import save_scores

    save_scores(hostile_table(version, HOSTILE_NAMES), path)


def _read_scores(path: Path) -> Written:
    from rl_reliable_logger import ScoreTable

    frame = ScoreTable.from_csv(path).frame
    runs = int(frame.groupby(["algorithm", "task"]).size().max())
    return Written(runs - 2, set(frame["algorithm"]) | set(frame["task"]))


# ----------------------------------------------------------------------------- pending
def _write_pending(folder: Path, version: int) -> None:
    from rl_reliable_logger.trackers.base.final_score import check_final_score
    from rl_reliable_logger.trackers.base.pending import save_pending

    name = HOSTILE_NAMES[version % len(HOSTILE_NAMES)]
    checked = check_final_score(float(version), algorithm=name, task=HOSTILE_TASKS[0], seed=version)
    error = ConnectionError("the tracker is down")
    save_pending(checked, tracker="mlflow", target={"run_id": f"run{version}"}, error=error, directory=folder)


def _read_pending(folder: Path) -> Written:
    from rl_reliable_logger.trackers.base.pending import list_pending

    found, problems = list_pending(folder)
    assert not problems, problems
    return Written(sorted(int(p.score) for p in found), {p.algorithm for p in found} | {p.task for p in found})


# ----------------------------------------------------------------------------- W&B offline publish record
def _write_record(path: Path, version: int) -> None:
    from rl_reliable_logger.trackers.wandb import sink

    entries = [{"artifact": name, "version": version} for name in HOSTILE_NAMES]
    sink._update_index(path, lambda _old: entries)


def _read_record(path: Path) -> Written:
    from rl_reliable_logger.trackers.wandb import sink

    entries = sink._read_index(path)
    assert entries, f"{path}: no publish record"
    return Written(entries[0]["version"], {e["artifact"] for e in entries})


# ----------------------------------------------------------------------------- race_tune's trial end record
def _write_end(path: Path, version: int) -> None:
    from rl_reliable_logger.trackers.raytune.ended import SUFFIX, write_end

    write_end(path.parent.parent, path.name.removesuffix(SUFFIX), version)


def _read_end(path: Path) -> Written:
    from rl_reliable_logger.trackers.raytune.ended import SUFFIX, ended

    records, notes = ended(path.parent.parent)
    assert not notes, notes
    return Written(records[path.name.removesuffix(SUFFIX)], set())


#: One case per registered writer (``store.kinds.WRITERS``); the battery fails for a writer without one.
_TABLE = frozenset(HOSTILE_NAMES[:4] + HOSTILE_TASKS)
CASES: dict[str, WriterCase] = {
    case.kind: case
    for case in (
        WriterCase("report", "results", _write_report, _read_report, _TABLE),
        WriterCase("plan", "plan", _write_plan, _read_plan, frozenset(HOSTILE_NAMES[:4])),
        WriterCase("watch", "watch-state", _write_watch, _read_watch, _TABLE, history=True),
        WriterCase("race", "race-state", _write_race, _read_race, _TABLE | frozenset(RACE_VALUES), history=True),
        WriterCase("gate", "gate-state", _write_gate, _read_gate, frozenset(GATE_NAMES + HOSTILE_TASKS), history=True),
        WriterCase("scores", "scores.csv", _write_scores, _read_scores, frozenset(HOSTILE_NAMES + HOSTILE_TASKS)),
        WriterCase(
            "pending",
            "pending",
            _write_pending,
            _read_pending,
            frozenset(HOSTILE_NAMES[1:2] + HOSTILE_TASKS[:1]),
            shared=False,
        ),  # fmt: skip
        WriterCase("publish-record", "published.json", _write_record, _read_record, frozenset(HOSTILE_NAMES)),
        WriterCase("raytune-end", "exp/rl-reliable-ended/t_00001.ended.json", _write_end, _read_end, frozenset()),
    )
}


def child(kind: str, target: str, version: str, step: str, action: str) -> None:
    """Write ``version`` with a fault at ``step``: SIGKILL (``kill``) or stop holding the lock (``hold``)."""
    from rl_reliable_logger.store import steps

    def hook(reached: str) -> None:
        if reached != step:
            return
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        print(json.dumps({"held": reached, "pid": os.getpid()}), flush=True)
        sys.stdin.readline()

    steps.fault_hook = hook
    CASES[kind].write(Path(target), int(version))
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    child(*sys.argv[1:6])
