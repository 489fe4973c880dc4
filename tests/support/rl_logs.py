"""Files as RL libraries write them, written the way their own code does (read from their sources):

* Stable-Baselines3 2.x ``EvalCallback``: ``np.savez(os.path.join(log_path, "evaluations"), timesteps=[int],
  results=[[float]], ep_lengths=[[int]], successes=[[bool]])`` (``successes`` only when the environment reports
  ``info["is_success"]``), the lists growing by one evaluation per call;
* SB3 ``Monitor`` / ``ResultsWriter``: ``#{"t_start": ..., "env_id": ...}`` then ``csv.DictWriter`` rows of
  ``r`` (rounded to 6 places), ``l``, ``t`` (seconds since t_start, rounded to 6) and the info keywords;
* marl-eval's ``JsonLogger``: ``{env: {task: {algorithm: {"seed_<n>": {"step_<k>": {"step_count", "elapsed_time",
  metric: [value]}, "absolute_metrics": {metric: [value]}}}}}}``, ``json.dump(..., indent=4)``.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def write_evaluations(
    folder: str | os.PathLike,
    timesteps: Sequence[int],
    results: Sequence[Sequence[float]],
    successes: Sequence[Sequence[bool]] | None = None,
) -> Path:
    """``evaluations.npz`` as EvalCallback saves it after its last evaluation (Python lists in, as SB3 keeps them)."""
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "evaluations")
    kwargs = {} if successes is None else {"successes": [list(map(bool, s)) for s in successes]}
    np.savez(
        log_path,
        timesteps=[int(t) for t in timesteps],
        results=[[float(r) for r in row] for row in results],
        ep_lengths=[[100 + i for i, _ in enumerate(row)] for row in results],
        **kwargs,
    )
    return Path(log_path + ".npz")


def write_monitor(
    folder: str | os.PathLike,
    returns: Sequence[float],
    lengths: Sequence[int] | None = None,
    *,
    rank: int | None = None,
    t_start: float = 1_700_000_000.0,
    env_id: str = "CartPole-v1",
    info: Mapping[str, Sequence[object]] | None = None,
) -> Path:
    """A ``monitor.csv`` (``{rank}.monitor.csv`` for a vectorised worker) as Monitor's ResultsWriter writes it."""
    os.makedirs(folder, exist_ok=True)
    name = "monitor.csv" if rank is None else f"{rank}.monitor.csv"
    path = Path(folder) / name
    lengths = list(lengths) if lengths is not None else [10] * len(returns)
    info = dict(info or {})
    with open(path, "w", newline="\n") as handle:
        handle.write(f"#{json.dumps({'t_start': t_start, 'env_id': env_id})}\n")
        writer = csv.DictWriter(handle, fieldnames=("r", "l", "t", *info))
        writer.writeheader()
        for i, (r, n) in enumerate(zip(returns, lengths)):
            row = {"r": round(float(r), 6), "l": int(n), "t": round(0.5 * (i + 1), 6)}
            row.update({k: v[i] for k, v in info.items()})
            writer.writerow(row)
    return path


def marl_eval_json(
    runs: Sequence[Mapping[str, object]],
    metric: str = "mean_episode_return",
) -> dict:
    """marl-eval's nesting from run dicts with env, task, algorithm, seed, steps ([(step_count, [values])]) and
    absolute ([values])."""
    data: dict = {}
    for run in runs:
        node = data.setdefault(run["env"], {}).setdefault(run["task"], {}).setdefault(run["algorithm"], {})
        body: dict = {}
        for k, (count, values) in enumerate(run.get("steps", [])):  # type: ignore[arg-type]
            body[f"step_{k}"] = {"step_count": count, "elapsed_time": 1.5 * k, metric: list(values)}
        body["absolute_metrics"] = {metric: list(run["absolute"])}  # type: ignore[call-overload]
        node[str(run["seed"])] = body
    return data


def write_marl_eval(path: str | os.PathLike, data: Mapping) -> Path:
    """The file as JsonLogger writes it."""
    with open(path, "w") as handle:
        json.dump(data, handle, indent=4)
    return Path(path)


def flag_zip_entries(path: str | os.PathLike, *, method: int | None = None, encrypted: bool = False) -> None:
    """The archive with every entry's compression method or encryption flag changed in both of its headers (the
    local header and the central directory), as a damaged disk or a hostile writer would leave an ``.npz``."""
    data = bytearray(Path(path).read_bytes())
    for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(signature)
        while at >= 0:
            if encrypted:
                data[at + flag_at] |= 1
            if method is not None:
                data[at + method_at : at + method_at + 2] = method.to_bytes(2, "little")
            at = data.find(signature, at + 4)
    Path(path).write_bytes(bytes(data))
