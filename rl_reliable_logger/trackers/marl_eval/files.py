"""Reading marl-eval's JSON (what Mava, Stoix and BenchMARL write with marl-eval's ``JsonLogger``).

The layout is ``{env: {task: {algorithm: {seed: {"step_<k>": {"step_count": N, metric: [values]}, ...,
"absolute_metrics": {metric: [values]}}}}}}``: each ``step_<k>`` one evaluation during training (its values one
per evaluation episode, or one number such as a win rate), ``absolute_metrics`` the final evaluation (marl-eval's
"absolute metric": the best policy evaluated over ten times the episodes). Seed keys are labels as written
(``seed_0``, ``42``). Other keys of a run (``elapsed_time`` inside a step) are ignored.

The file is untrusted: it is parsed as JSON only (no code) by the one JSON reader (:mod:`...data.jsontext`: a key
written twice in one object, an integer no float holds and nesting too deep to parse are refused, naming the file),
its size is bounded before reading, names stay text, and every value read must be a finite number; an InputError
names the file, the run and the key.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...data.jsontext import read_json
from ...errors import InputError

ABSOLUTE = "absolute_metrics"
_STEP = re.compile(r"^step_(\d+)$", re.IGNORECASE)
#: Largest JSON file read (marl-eval's files of a whole benchmark are a few hundred MB at most).
MAX_BYTES = 2 << 30


@dataclass(frozen=True)
class MarlRun:
    """One seed of one algorithm on one task: its evaluations during training and its absolute metrics."""

    file: str
    env: str
    task: str
    algorithm: str
    seed: str
    #: (step_count, {metric: values}) per ``step_<k>``, in the order of k
    steps: list[tuple[float, dict[str, list[float]]]] = field(default_factory=list)
    absolute: dict[str, list[float]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.env} / {self.task} / {self.algorithm} / {self.seed}"


def _bad(path: str, why: str) -> InputError:
    return InputError(f"{path}: {why}")


def _values(path: str, where: str, key: str, raw: Any) -> list[float]:
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
            raise _bad(path, f"{where}: {key} holds {item!r}, not a finite number")
        out.append(float(item))
    if not out:
        raise _bad(path, f"{where}: {key} is an empty list")
    return out


def _metrics(path: str, where: str, block: Any, skip: tuple[str, ...] = ()) -> dict[str, list[float]]:
    if not isinstance(block, Mapping):
        raise _bad(path, f"{where} is not an object of metric lists")
    return {str(k): _values(path, where, str(k), v) for k, v in block.items() if k not in skip}


def _run(path: str, env: str, task: str, algorithm: str, seed: str, body: Any) -> MarlRun:
    run = MarlRun(path, env, task, algorithm, seed)
    if not isinstance(body, Mapping):
        raise _bad(path, f"run {run.where} is not an object of step_<k> and absolute_metrics entries")
    steps = []
    for key, block in body.items():
        m = _STEP.match(str(key))
        if m is None:
            continue
        where = f"run {run.where}, {key}"
        if not isinstance(block, Mapping) or "step_count" not in block:
            raise _bad(path, f"{where} has no step_count")
        counts = _values(path, where, "step_count", block["step_count"])
        if len(counts) != 1:
            raise _bad(path, f"{where}: step_count must be one number, got {len(counts)}")
        count = counts[0]
        steps.append((int(m.group(1)), count, _metrics(path, where, block, skip=("step_count", "elapsed_time"))))
    steps.sort(key=lambda s: s[0])
    absolute = body.get(ABSOLUTE)
    return MarlRun(
        path,
        env,
        task,
        algorithm,
        seed,
        [(count, metrics) for _, count, metrics in steps],
        {} if absolute is None else _metrics(path, f"run {run.where}, {ABSOLUTE}", absolute),
    )


def _level(path: str, node: Any, what: str, parent: str) -> Mapping[str, Any]:
    if not isinstance(node, Mapping) or not node:
        raise _bad(path, f"{parent or 'the top level'} must be a non-empty object of {what} names")
    return node


def read_marl_eval(path: str | os.PathLike[str]) -> list[MarlRun]:
    """Every run of a marl-eval JSON file; an InputError names the file and what is wrong.

    Example:
        >>> import json, tempfile
        >>> f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        >>> json.dump({"Matrax": {"Climbing": {"ippo": {"seed_0": {
        ...     "step_0": {"step_count": 100, "return": [1.0, 2.0]},
        ...     "absolute_metrics": {"return": [3.0, 5.0]}}}}}}, f); f.close()
        >>> [(r.task, r.seed, r.absolute["return"]) for r in read_marl_eval(f.name)]
        [('Climbing', 'seed_0', [3.0, 5.0])]
    """
    text = str(path)
    data = read_json(path, "marl-eval JSON", max_bytes=MAX_BYTES)
    runs = []
    for env, tasks in _level(text, data, "environment", "").items():
        for task, algorithms in _level(text, tasks, "task", f"environment {env!r}").items():
            for algorithm, seeds in _level(text, algorithms, "algorithm", f"task {env} / {task}").items():
                for seed, body in _level(text, seeds, "seed", f"algorithm {env} / {task} / {algorithm}").items():
                    runs.append(_run(text, str(env), str(task), str(algorithm), str(seed), body))
    return runs
