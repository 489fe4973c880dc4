"""The hostile corpus of the Source contract battery, written by each Source's own writer as that tracker writes it.

Every registered Source plugin (``trackers/registry.py``) needs a :class:`CorpusWriter` in :data:`WRITERS`, keyed by
its name: ``tests/contract/test_sources.py`` fails for a plugin without one, so a plugin added later is attacked by
construction. A writer turns a list of :class:`Run` into that tracker's real storage (MLflow: a SQLite store
through the MLflow client; W&B: real offline runs written by ``wandb`` in a subprocess; TensorBoard: event files
written by tensorboardX; Ray Tune: an experiment folder in the files and format Tune 2.x writes, checked against a
real Tune run in tests/trackers/raytune) and says how its command reads them (:class:`Corpus`). ``file`` is the
CSV path of ``rl-reliable evaluate`` (the rules hold there too).
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from tests.support.wandb_env import wandb_env


@dataclass(frozen=True)
class Run:
    """One run of the corpus: its fields, final score, state (``finished`` or not) and configuration."""

    algorithm: str
    task: str
    seed: Any
    score: float
    state: str = "finished"
    config: tuple[tuple[str, Any], ...] = ()
    #: how many reports the run made: fewer than the others' 3 is a run killed before the end of its budget
    reports: int = 3

    @property
    def history(self) -> list[tuple[int, float]]:
        """``reports`` reports (3: the whole budget), the last one the final score (score rules other than ``last``
        read them)."""
        return [(k, round(self.score - 0.1 * (self.reports - k), 6)) for k in range(1, self.reports + 1)]

    @property
    def settings(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "task": self.task, "seed": self.seed, **dict(self.config)}


@dataclass
class Corpus:
    """Runs as one tracker stores them: the command's arguments, the data file of each run (in run order; one
    shared file for a database), and the folder holding it all (where pickles are planted)."""

    command: list[str]
    files: list[Path]
    folder: Path
    #: the flag that tells configurations apart, with the key (``--hyperparameter-keys lr``)
    config_flag: str = "--hyperparameter-keys"

    def argv(self, *extra: str) -> list[str]:
        return [*self.command, *extra]


class CorpusWriter(Protocol):
    #: whether the format records a run state (event files and score files do not)
    states: bool

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus: ...


class PayloadMarker:
    """A pickle payload: unpickling it creates ``marker`` (an executed payload leaves a file behind)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


def payload(marker: Path) -> bytes:
    return pickle.dumps(PayloadMarker(marker))


# ---------------------------------------------------------------------------- MLflow
class MlflowWriter:
    states = True

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        import mlflow

        from tests.support.mlflow_store import log_run, make_store

        root.mkdir(parents=True, exist_ok=True)
        uri = make_store(root)
        client = mlflow.MlflowClient(uri)
        experiment = client.create_experiment("contract", artifact_location=(root / "artifacts").as_uri())
        for run in runs:
            log_run(
                client,
                experiment,
                f"{run.algorithm}-{run.seed}",
                params={k: str(v) for k, v in run.settings.items()},
                metrics={"score": run.score},
                history={"score": run.history},
                status="FINISHED" if run.state == "finished" else None,
            )
        fields = ["--algorithm-key", "params.algorithm", "--task-key", "params.task", "--seed-key", "params.seed"]
        command = ["mlflow", "--tracking-uri", uri, "--experiment", "contract", *fields, "--score-key", "metrics.score"]
        return Corpus(command, [root / "mlflow.db"] * len(runs), root)


# ---------------------------------------------------------------------------- W&B
_WANDB_WRITER = r"""
import json, os, sys
import wandb
root, runs = sys.argv[1], json.load(open(sys.argv[2]))
out = []
for spec in runs:
    run = wandb.init(project="contract", dir=root, config=spec["settings"])
    for step, value in spec["history"]:
        run.log({"score": value}, step=step)
    run.summary["score"] = spec["score"]
    out.append(run.settings.sync_dir)
    run.finish(exit_code=0 if spec["state"] == "finished" else 1)
json.dump(out, open(os.path.join(root, "written.json"), "w"))
"""


class WandbWriter:
    """Real offline runs. Writing one takes seconds, so each distinct run is written once per session (in one
    subprocess, for every corpus the battery asks for) and a corpus copies its runs' folders."""

    states = True

    def __init__(self) -> None:
        self.pool: dict[Run, Path] = {}
        self.pool_root: Path | None = None

    def prepare(self, root: Path, runs: Sequence[Run]) -> None:
        todo = list(dict.fromkeys(r for r in runs if r not in self.pool))
        if not todo:
            return
        part = root / f"pool{len(self.pool)}"
        part.mkdir(parents=True)
        spec = [{"settings": r.settings, "history": r.history, "score": r.score, "state": r.state} for r in todo]
        (part / "runs.json").write_text(json.dumps(spec))
        subprocess.run(
            [sys.executable, "-c", _WANDB_WRITER, str(part), str(part / "runs.json")],
            env=wandb_env(part),
            check=True,
            timeout=900,
        )
        for run, folder in zip(todo, json.loads((part / "written.json").read_text())):
            self.pool[run] = Path(folder)

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        self.prepare(root.parent / f"{root.name}-pool", runs)
        files = []
        for run in runs:
            folder = self.pool[run]
            target = root / "wandb" / folder.name
            shutil.copytree(folder, target)
            files.append(next(target.glob("run-*.wandb")))
        fields = ["--algorithm-key", "config.algorithm", "--task-key", "config.task", "--seed-key", "config.seed"]
        return Corpus(["wandb", "--offline-dir", str(root), *fields, "--score-key", "summary.score"], files, root)


# ---------------------------------------------------------------------------- TensorBoard
class TensorBoardWriter:
    """Event files written by tensorboardX, one run folder per run: ``{algorithm}/{task}/seed_{seed}`` and one
    ``{key}_{value}`` folder per configuration key."""

    states = False

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        import tensorboardX

        keys = sorted({k for run in runs for k, _ in run.config})
        layout = "/".join(["{algorithm}", "{task}", "seed_{seed}", *(f"{k}_{{{k}}}" for k in keys)])
        files = []
        for run in runs:
            config = dict(run.config)
            folder = root.joinpath(run.algorithm, run.task, f"seed_{run.seed}", *(f"{k}_{config[k]}" for k in keys))
            writer = tensorboardX.SummaryWriter(str(folder))
            for step, value in run.history:
                writer.add_scalar("score", value, step)
            writer.close()
            files.append(next(folder.glob("*tfevents*")))
        return Corpus(["tensorboard", str(root), "--layout", layout, "--score-key", "score"], files, root)


# ---------------------------------------------------------------------------- Ray Tune
_TUNE_STATUS = {"finished": "TERMINATED", "running": "RUNNING"}


def tune_folder(root: Path, runs: Sequence[Run], *, pickled: Mapping[str, bytes] | None = None) -> list[Path]:
    """An experiment folder as Ray Tune 2.x writes it: ``experiment_state-<time>.json`` (``trial_data``: pairs of
    JSON texts, the trial state and its runtime state; values Tune could only pickle as ``CLOUDPICKLE_FALLBACK``
    hex), one folder per trial with ``params.json``, ``params.pkl``, ``result.json`` and ``progress.csv``, and
    ``tuner.pkl``. ``pickled`` puts bytes where Tune keeps a pickle (the config key ``pickled_config``, the trial
    state's ``storage``). Returns each trial's ``result.json``."""
    root.mkdir(parents=True, exist_ok=True)
    pickled = dict(pickled or {})
    fallback = {"_type": "CLOUDPICKLE_FALLBACK", "value": pickled.get("storage", pickle.dumps(None)).hex()}
    trial_data, results = [], []
    for i, run in enumerate(runs):
        trial_id = f"c0ffe_{i:05d}"
        name = f"trainable_{trial_id}_{i}_seed={run.seed}_2026-11-28_00-00-00"
        folder = root / name
        folder.mkdir()
        config = dict(run.settings)
        if "config" in pickled:
            config["pickled_config"] = {"_type": "CLOUDPICKLE_FALLBACK", "value": pickled["config"].hex()}
        reports = []
        started = time.time()
        for step, value in run.history:
            reports.append(
                {
                    "score": value,
                    "training_iteration": step,
                    "trial_id": trial_id,
                    "done": False,
                    "timestamp": int(started) + step,
                    "time_total_s": float(step),
                    "config": run.settings,
                }
            )
        (folder / "params.json").write_text(json.dumps(run.settings))
        (folder / "params.pkl").write_bytes(pickled.get("params", pickle.dumps(run.settings)))
        (folder / "result.json").write_text("".join(json.dumps(r) + "\n" for r in reports))
        frame = pd.DataFrame([{k: v for k, v in r.items() if k != "config"} for r in reports])
        frame.to_csv(folder / "progress.csv", index=False)
        if run.state == "error":
            (folder / "error.txt").write_text("RuntimeError: boom")
            (folder / "error.pkl").write_bytes(pickled.get("error", pickle.dumps(RuntimeError("boom"))))
        state = {
            "stub": False,
            "trainable_name": "trainable",
            "trial_id": trial_id,
            "storage": fallback,
            "config": config,
            "status": _TUNE_STATUS.get(run.state, run.state.upper()),
            "relative_logdir": name,
            "results": "80054e2e",
        }
        runtime = {
            "start_time": started,
            "num_failures": 0,
            "error_filename": "error.txt" if run.state == "error" else None,
            "pickled_error_filename": "error.pkl" if run.state == "error" else None,
            "last_result": reports[-1],
        }
        trial_data.append([json.dumps(state), json.dumps(runtime)])
        results.append(folder / "result.json")
    state_file = root / "experiment_state-2026-11-28_00-00-00.json"
    state_file.write_text(json.dumps({"trial_data": trial_data, "runner_data": {}, "stats": {}}))
    (root / "tuner.pkl").write_bytes(pickled.get("tuner", pickle.dumps({"tuner": True})))
    return results


class RayTuneWriter:
    states = True

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        results = tune_folder(root, runs)
        return Corpus(["raytune", str(root), "--score-key", "score"], results, root)


# ---------------------------------------------------------------------------- Stable-Baselines3
class SB3Writer:
    """One run folder per run as ``EvalCallback(log_path=folder)`` writes it (``evaluations.npz``, one evaluation
    episode per report) beside the ``monitor.csv`` Monitor writes: ``{algorithm}/{task}/seed_{seed}`` and one
    ``{key}_{value}`` folder per configuration key."""

    states = False

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        from tests.support.rl_logs import write_evaluations, write_monitor

        keys = sorted({k for run in runs for k, _ in run.config})
        layout = "/".join(["{algorithm}", "{task}", "seed_{seed}", *(f"{k}_{{{k}}}" for k in keys)])
        files = []
        for run in runs:
            config = dict(run.config)
            folder = root.joinpath(run.algorithm, run.task, f"seed_{run.seed}", *(f"{k}_{config[k]}" for k in keys))
            files.append(write_evaluations(folder, [s for s, _ in run.history], [[v] for _, v in run.history]))
            write_monitor(folder, [v for _, v in run.history], t_start=time.time())  # Monitor's own t_start
        return Corpus(["sb3", str(root), "--layout", layout], files, root)


# ---------------------------------------------------------------------------- marl-eval
class MarlEvalWriter:
    """marl-eval JSON as its ``JsonLogger`` writes it: one ``metrics.json`` per configuration (every run of it,
    ``env -> task -> algorithm -> seed``), in one ``{key}_{value}`` folder per configuration key; the reports are
    ``step_<k>`` entries and the final score the ``absolute_metrics``."""

    states = False

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        from tests.support.rl_logs import marl_eval_json, write_marl_eval

        keys = sorted({k for run in runs for k, _ in run.config})
        groups: dict[tuple[Any, ...], list[Run]] = {}
        for run in runs:
            groups.setdefault(tuple(dict(run.config).get(k) for k in keys), []).append(run)
        where: dict[Run, Path] = {}
        for values, members in groups.items():
            folder = root.joinpath(*(f"{k}_{v}" for k, v in zip(keys, values)))
            folder.mkdir(parents=True, exist_ok=True)
            data = marl_eval_json(
                [
                    {
                        "env": "env",
                        "task": r.task,
                        "algorithm": r.algorithm,
                        "seed": str(r.seed),
                        "steps": [(step, [value]) for step, value in r.history],
                        "absolute": [r.score],
                    }
                    for r in members
                ],
                "score",
            )
            path = write_marl_eval(folder / "metrics.json", data)
            where.update(dict.fromkeys(members, path))
        command = ["marl-eval", str(root), "--metric", "score"]
        if keys:
            command += ["--layout", "/".join([*(f"{k}_{{{k}}}" for k in keys), "metrics.json"])]
        return Corpus(command, [where[r] for r in runs], root)


# ---------------------------------------------------------------------------- score files (rl-reliable evaluate)
class FileWriter:
    states = False

    def write(self, root: Path, runs: Sequence[Run]) -> Corpus:
        root.mkdir(parents=True, exist_ok=True)
        path = root / "scores.csv"
        pd.DataFrame([{**r.settings, "score": r.score} for r in runs]).to_csv(path, index=False)
        return Corpus(["evaluate", str(path)], [path] * len(runs), root)


#: One writer per registered Source plugin (and ``file``, the CSV path): a plugin without one fails the battery.
WRITERS: dict[str, CorpusWriter] = {
    "mlflow": MlflowWriter(),
    "wandb": WandbWriter(),
    "tensorboard": TensorBoardWriter(),
    "raytune": RayTuneWriter(),
    "sb3": SB3Writer(),
    "marl-eval": MarlEvalWriter(),
    "file": FileWriter(),
}


# ---------------------------------------------------------------------------- hostile variations (issue 54)
#: Damage a data file of one run can carry, applied by each source's spoiler (:data:`SPOILERS`) to the first run's
#: data file as that format holds it: a number no float holds, a key written twice in one JSON object, a CSV field
#: beyond the csv module's limit or a row shorter than its header, an array of no real numbers, a zip entry numpy
#: never writes, a scalar tensor of the wrong size with valid checksums.
SPOILS = (
    "integer-400-digits",
    "integer-4400-digits",
    "key-twice",
    "field-over-limit",
    "ragged-row",
    "array-complex",
    "array-text",
    "array-timedelta",
    "zip-encrypted",
    "zip-method",
    "tensor-size",
)
#: A field one longer than Python's csv module reads.
HUGE_FIELD = "x" * 131_073


def _big(digits: int) -> str:
    return "1" + "0" * (digits - 1)


def _marl_eval(corpus: Corpus, kind: str) -> Path:
    path = corpus.files[0]
    text = path.read_text()
    head = '"absolute_metrics": {'
    if kind == "key-twice":
        text = text.replace(head, head + '"score": [1.0], ', 1)
    else:
        at = text.index(head)
        value = text.index("[", at)
        text = text[: value + 1] + _big(400 if kind == "integer-400-digits" else 4400) + text[text.index("]", value) :]
    path.write_text(text)
    return path


def _raytune(corpus: Corpus, kind: str) -> Path:
    result = corpus.files[0]
    if kind in ("field-over-limit", "ragged-row"):  # progress.csv is read when a trial has no result.json
        result.unlink()
        progress = result.parent / "progress.csv"
        lines = progress.read_text().splitlines()
        cells = lines[1].split(",")
        lines[1] = ",".join([HUGE_FIELD, *cells[1:]] if kind == "field-over-limit" else cells[:2])
        progress.write_text("\n".join(lines) + "\n")
        return progress
    lines = result.read_text().splitlines()
    if kind == "key-twice":
        lines[0] = lines[0].replace('{"score": ', '{"score": 1.0, "score": ', 1)
    else:
        lines[-1] = lines[-1].replace(
            '"training_iteration": 3', '"training_iteration": ' + _big(400 if "400" in kind else 4400)
        )
    result.write_text("\n".join(lines) + "\n")
    return result


def _sb3(corpus: Corpus, kind: str) -> Path:
    import numpy as np

    npz = corpus.files[0]
    if kind.startswith("zip-"):
        from tests.support.rl_logs import flag_zip_entries

        flag_zip_entries(npz, encrypted=kind == "zip-encrypted", method=99 if kind == "zip-method" else None)
        return npz
    if kind.startswith("array-"):
        arrays = dict(np.load(npz))
        arrays["ep_lengths"] = {
            "array-complex": arrays["results"] + 1j,
            "array-text": arrays["results"].astype(str),
            "array-timedelta": arrays["results"].astype("int64").astype("timedelta64[s]"),
        }[kind]
        np.savez(npz, **arrays)
        return npz
    npz.unlink()  # the monitor file is what is read
    monitor = npz.parent / "monitor.csv"
    lines = monitor.read_text().splitlines()
    if kind.startswith("integer-"):
        lines[0] = '#{"t_start": ' + _big(400 if "400" in kind else 4400) + ', "env_id": "CartPole-v1"}'
    elif kind == "key-twice":
        lines[0] = '#{"t_start": 1.0, "t_start": 2.0}'
    elif kind == "field-over-limit":
        lines[2] = HUGE_FIELD + lines[2][lines[2].index(",") :]
    else:
        lines[2] = ",".join(lines[2].split(",")[:2])
    monitor.write_text("\n".join(lines) + "\n")
    return monitor


def _tensorboard(corpus: Corpus, kind: str) -> Path:
    """A record of the score tag whose float32 tensor holds 3 bytes, its checksums valid."""
    import struct

    import google_crc32c
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2

    def masked(data: bytes) -> int:
        crc = google_crc32c.value(data)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    tensor = tensor_pb2.TensorProto(dtype=1, tensor_content=b"\x00\x00\x00")
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="score", tensor=tensor)])
    data = event_pb2.Event(step=4, wall_time=time.time(), summary=summary).SerializeToString()
    header = struct.pack("<Q", len(data))
    path = corpus.files[0]
    with open(path, "ab") as fh:
        fh.write(header + struct.pack("<I", masked(header)) + data + struct.pack("<I", masked(data)))
    return path


def _file(corpus: Corpus, kind: str) -> Path:
    path = corpus.files[0]
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    if kind.startswith("integer-"):
        cells[-1] = _big(400 if "400" in kind else 4400)
    elif kind == "field-over-limit":
        cells[0] = HUGE_FIELD
    else:
        cells = cells[:2]
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


def _wandb(corpus: Corpus, kind: str) -> Path:
    """A summary value of 400 or 4,400 digits, written by wandb itself (which accepts it) in an offline run."""
    digits = 400 if "400" in kind else 4400
    target = corpus.folder / "big"
    code = (
        "import sys, wandb; run = wandb.init(project='contract', dir=sys.argv[1], "
        "config={'algorithm': 'A', 'task': 'x', 'seed': 99}); "
        f"run.summary['score'] = 10 ** {digits - 1}; run.finish()"
    )
    target.mkdir()
    subprocess.run([sys.executable, "-c", code, str(target)], env=wandb_env(target), check=True, timeout=900)
    shutil.copytree(next((target / "wandb").glob("offline-run-*")), corpus.folder / "wandb" / "offline-run-big")
    return next((corpus.folder / "wandb" / "offline-run-big").glob("run-*.wandb"))


#: Each source's spoiler by kind (applied to a corpus written by its writer; returns the damaged file) ...
SPOILERS: dict[str, dict[str, Any]] = {
    "marl-eval": dict.fromkeys(("integer-400-digits", "integer-4400-digits", "key-twice"), _marl_eval),
    "raytune": dict.fromkeys(
        ("integer-400-digits", "integer-4400-digits", "key-twice", "field-over-limit", "ragged-row"), _raytune
    ),
    "sb3": dict.fromkeys(SPOILS[:-1], _sb3),
    "tensorboard": {"tensor-size": _tensorboard},
    "file": dict.fromkeys(("integer-400-digits", "integer-4400-digits", "field-over-limit", "ragged-row"), _file),
    "wandb": dict.fromkeys(("integer-400-digits", "integer-4400-digits"), _wandb),
    "mlflow": {},
}
#: ... and, for every other kind, why its format cannot carry it (a plugin without an entry fails the battery).
CANNOT: dict[str, str] = {
    "mlflow": "MLflow stores metrics as doubles and parameters as text; no JSON, CSV, array or zip is read",
    "wandb": "a run's log is wandb's own protocol buffers; only its values are JSON, written by wandb's encoder",
    "tensorboard": "event files hold protocol buffers of float and 64-bit values: no JSON, CSV, array or zip",
    "raytune": "a trial's files are JSON and CSV: no array or zip; its scalar values are JSON numbers",
    "marl-eval": "one JSON file: no CSV, array, zip or tensor",
    "sb3": "evaluations.npz and monitor.csv hold no event-file tensor",
    "file": "a CSV score file: no JSON object, array, zip or tensor",
}


def write(source: str, root: Path, runs: Sequence[Run]) -> Corpus:
    """The corpus of ``runs`` as ``source`` stores them, under ``root`` (a new folder)."""
    return WRITERS[source].write(root, list(runs))


__all__ = [
    "CANNOT",
    "SPOILERS",
    "SPOILS",
    "WRITERS",
    "Corpus",
    "CorpusWriter",
    "Run",
    "payload",
    "tune_folder",
    "write",
]
