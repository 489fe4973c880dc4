"""Reading what Stable-Baselines3 writes: ``evaluations.npz`` (``EvalCallback``) and ``monitor.csv`` (``Monitor``).

``EvalCallback(log_path=DIR)`` saves ``DIR/evaluations.npz`` after every evaluation with ``np.savez``:
``timesteps`` (n_evals,), ``results`` (n_evals, n_episodes) episode returns, ``ep_lengths`` (n_evals, n_episodes)
and, when the environment reports ``info["is_success"]``, ``successes`` (n_evals, n_episodes) booleans.
``Monitor(env, filename)`` writes ``*monitor.csv``: a first line ``#{"t_start": ..., "env_id": ...}``, then a CSV
with ``r`` (episode return), ``l`` (episode length), ``t`` (seconds since ``t_start``) and any ``info_keywords``
(``is_success``); a vectorised environment writes one file per worker (``0.monitor.csv``, ``1.monitor.csv``).

The files are untrusted: an ``.npz`` is read with ``allow_pickle=False`` (an object array, which only a pickle
could hold, is an error naming the file, never unpickled), each array's header is checked against its stored
size before it is read (a header claiming terabytes is named, not allocated), and only regular files are opened.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...data.csvrows import csv_records
from ...data.files import open_input, read_text
from ...data.jsontext import JsonProblem, parse
from ...errors import InputError
from ..base.reruns import start_seconds

EVALUATIONS = "evaluations.npz"
MONITOR_SUFFIX = "monitor.csv"
#: The arrays of an ``evaluations.npz`` (``successes`` only when the environment reports them).
REQUIRED = ("timesteps", "results")
OPTIONAL = ("ep_lengths", "successes")
#: Largest array of an ``evaluations.npz`` read (a million evaluations of a hundred episodes are 800 MB).
MAX_ARRAY_BYTES = 1 << 30
#: Largest ``evaluations.npz`` opened.
MAX_NPZ_BYTES = 4 << 30
#: Largest monitor file read (a training log of ~10 million episodes); larger ones are named, not read.
MAX_MONITOR_BYTES = 1 << 30


@dataclass(frozen=True)
class Evaluations:
    """An ``evaluations.npz``: one row per evaluation, one column per evaluation episode."""

    path: str
    timesteps: np.ndarray
    results: np.ndarray
    ep_lengths: np.ndarray | None = None
    successes: np.ndarray | None = None

    def mean_returns(self) -> np.ndarray:
        """Each evaluation's mean episode return (what ``EvalCallback`` prints as ``mean_reward``)."""
        return self.results.mean(axis=1)


@dataclass(frozen=True)
class MonitorLog:
    """The episodes of one run's ``*monitor.csv`` files, in the order they ended."""

    paths: tuple[str, ...]
    returns: np.ndarray
    lengths: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)

    def timesteps(self) -> np.ndarray:
        """Environment steps when each episode ended (the running sum of episode lengths, all workers)."""
        return np.cumsum(self.lengths)


def _bad(path: str, why: str) -> InputError:
    return InputError(f"{path}: {why}")


#: The zip compression methods of ``np.savez`` (stored) and ``np.savez_compressed`` (deflated): the only ones read.
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
#: The array kinds read (numpy's ``dtype.kind``): integers and real floats; booleans for ``successes`` only.
_REAL = "iuf"


def _entry(archive: zipfile.ZipFile, name: str, path: str) -> zipfile.ZipInfo:
    """The zip entry of one array, refused unless numpy could have written it: one entry of that name, not
    encrypted, stored or deflated (zipfile's own words for the others are a password prompt or "not supported")."""
    member = f"{name}.npy"
    entries = [info for info in archive.infolist() if info.filename == member]
    if len(entries) > 1:
        raise _bad(path, f"holds {len(entries)} arrays named {name!r}; which one SB3 wrote cannot be told")
    info = entries[0]
    if info.flag_bits & 0x1:
        raise _bad(
            path, f"array {name!r} is marked encrypted, which numpy never writes: the file is damaged or not SB3's"
        )
    if info.compress_type not in _METHODS:
        raise _bad(
            path,
            f"array {name!r} uses zip compression method {info.compress_type}, which numpy never writes "
            "(np.savez stores, np.savez_compressed deflates): the file is damaged or not SB3's",
        )
    return info


def _array(archive: zipfile.ZipFile, name: str, path: str) -> np.ndarray:
    """One array of an ``.npz``: its header checked against its stored size before anything is allocated, then
    read whole (so the archive's CRC is checked: a damaged byte is an error, never a wrong number)."""
    member = f"{name}.npy"
    info = _entry(archive, name, path)
    if info.file_size > MAX_ARRAY_BYTES:
        raise _bad(path, f"array {name!r} is {info.file_size:,} bytes; SB3's evaluation logs are far smaller")
    with archive.open(member) as raw:
        try:
            version = np.lib.format.read_magic(raw)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(raw)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(raw)
            else:
                raise ValueError(f"unsupported .npy format version {version}")
        except (ValueError, SyntaxError) as err:
            raise _bad(path, f"array {name!r} has a damaged header ({err})") from None
        if dtype.hasobject:
            raise _bad(
                path,
                f"array {name!r} holds Python objects, which only unpickling could read, and files are never "
                "unpickled; SB3 writes numbers (every evaluation with the same number of episodes)",
            )
        if dtype.kind not in _REAL + ("b" if name == "successes" else ""):
            raise _bad(path, f"array {name!r} holds {_kind(dtype)} ({dtype.str}), not real numbers as SB3 writes")
        body = info.file_size - raw.tell()
        needed = math.prod(shape) * dtype.itemsize
        if needed != body:
            raise _bad(path, f"array {name!r} claims {needed:,} bytes of data but holds {body:,}: the file is damaged")
    data = archive.read(member)  # checks the CRC
    try:
        return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    except ValueError as err:
        raise _bad(path, f"array {name!r} cannot be read ({err})") from None


def read_evaluations(path: str | os.PathLike[str]) -> Evaluations:
    """The arrays of an ``evaluations.npz``, checked: an InputError names the file and what is wrong.

    Example:
        >>> import tempfile, numpy as np
        >>> folder = tempfile.mkdtemp()
        >>> np.savez(f"{folder}/evaluations", timesteps=[1000, 2000], results=[[1.0, 3.0], [4.0, 6.0]],
        ...          ep_lengths=[[10, 12], [9, 11]])
        >>> read_evaluations(f"{folder}/evaluations.npz").mean_returns().tolist()
        [2.0, 5.0]
    """
    text = str(path)
    with open_input(path, "evaluations", max_bytes=MAX_NPZ_BYTES) as handle:
        try:
            with zipfile.ZipFile(handle) as archive:
                names = {n[:-4] for n in archive.namelist() if n.endswith(".npy")}
                missing = [n for n in REQUIRED if n not in names]
                if missing:
                    raise _bad(
                        text, f"has no {' or '.join(missing)} array (SB3's EvalCallback writes timesteps and results)"
                    )
                arrays = {n: _array(archive, n, text) for n in (*REQUIRED, *OPTIONAL) if n in names}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, KeyError, zlib.error) as err:
            raise _bad(text, f"is not a readable .npz archive ({err})") from None
    return _checked(text, arrays)


def _kind(dtype: np.dtype) -> str:
    """What an array's type is, in words (for the arrays that are no real numbers)."""
    words = {"c": "complex numbers", "m": "time spans", "M": "dates", "U": "text", "S": "bytes", "V": "records"}
    return words.get(dtype.kind, "booleans" if dtype.kind == "b" else f"values of type {dtype}")


def _checked(path: str, arrays: dict[str, np.ndarray]) -> Evaluations:
    steps, results = arrays["timesteps"], arrays["results"]
    if steps.ndim != 1 or steps.size == 0:
        raise _bad(path, f"timesteps must be a non-empty list of numbers, got shape {steps.shape} ({steps.dtype})")
    if not np.all(np.isfinite(steps)):
        raise _bad(path, "timesteps holds values that are not finite numbers (NaN or infinite)")
    if results.ndim != 2 or results.shape[0] != steps.size or results.shape[1] == 0:
        raise _bad(
            path,
            f"results must have one row of episode returns per evaluation ({steps.size}), got shape {results.shape}",
        )
    if not np.all(np.isfinite(results)):
        raise _bad(path, "results holds values that are not finite numbers")
    if np.any(np.diff(steps) < 0):
        raise _bad(path, "timesteps go backwards (two runs written into one file?)")
    extra: dict[str, np.ndarray | None] = {}
    for name in OPTIONAL:
        value = arrays.get(name)
        if value is not None and value.shape != results.shape:
            raise _bad(path, f"{name} has shape {value.shape}, results {results.shape}: they must match")
        if value is not None and value.dtype.kind != "b" and not np.all(np.isfinite(value)):
            raise _bad(path, f"{name} holds values that are not finite numbers")
        extra[name] = value
    successes = extra["successes"]
    if successes is not None and not (
        successes.dtype == bool or (np.issubdtype(successes.dtype, np.number) and np.isin(successes, (0, 1)).all())
    ):
        raise _bad(path, "successes must be true/false per episode")
    return Evaluations(
        path,
        steps.astype(float),
        results.astype(float),
        extra["ep_lengths"],
        None if successes is None else successes.astype(bool),
    )


def monitor_files(folder: Path) -> list[Path]:
    """A run folder's ``*monitor.csv`` files (one per vectorised worker), in name order."""
    return sorted(p for p in folder.iterdir() if p.name.endswith(MONITOR_SUFFIX) and not p.is_dir())


def _monitor_rows(path: Path) -> tuple[float, list[str], list[tuple[int, dict[str, str]]]]:
    """(t_start, columns, (line, row) pairs) of one monitor file: its header line through the one JSON reader, its
    rows through the one CSV row reader (a column named twice, a ragged row or a huge field named by line)."""
    text = read_text(path, "monitor", max_bytes=MAX_MONITOR_BYTES)
    first, _, rest = text.partition("\n")
    if not first.startswith("#"):
        raise _bad(str(path), 'has no SB3 header line (#{"t_start": ..., "env_id": ...})')
    try:
        header = parse(first[1:])
    except JsonProblem as err:
        raise _bad(str(path), f"its header line is not SB3's JSON ({err})") from None
    start = header.get("t_start", 0.0) if isinstance(header, dict) else None
    t_start = float(start) if isinstance(start, (int, float)) and not isinstance(start, bool) else float("nan")
    if not math.isfinite(t_start):
        raise _bad(str(path), "has a damaged header line (t_start)")
    records = csv_records(io.StringIO(rest, newline=""), str(path), first_line=2)
    _, columns = next(records, (0, []))
    if not {"r", "l", "t"} <= set(columns):
        raise _bad(str(path), "has no r, l, t columns (episode return, length, time)")
    return t_start, columns, [(line, dict(zip(columns, fields))) for line, fields in records]


#: The longest header line of a monitor file read for its start time (SB3's is under 200 bytes).
_HEADER_BYTES = 1 << 16


def monitor_start(path: Path) -> float | None:
    """The ``t_start`` of a monitor file's header line (when ``Monitor`` was created), read without the rest of the
    file; None when the line is missing or not SB3's (the reader names that when it reads the file)."""
    try:
        with open_input(path, "monitor", max_bytes=MAX_MONITOR_BYTES) as fh:
            first = fh.readline(_HEADER_BYTES).decode("utf-8", "replace")
        header = parse(first[1:]) if first.startswith("#") else None
    except (InputError, JsonProblem, OSError):
        return None
    return start_seconds(header.get("t_start")) if isinstance(header, dict) else None


def _number(path: Path, line: int, column: str, text: str | None) -> float:
    try:
        value = float(text) if text is not None else float("nan")
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):
        raise _bad(str(path), f"line {line}: {column} is {text!r}, not a finite number")
    return value


def read_monitor(paths: list[Path], success_column: str = "is_success") -> MonitorLog:
    """The episodes of one run's monitor files, merged by the time they ended (as SB3's ``load_results``).

    ``success_column`` (``Monitor(info_keywords=("is_success",))``) is read into ``extras`` when every file has
    it; a column that only some of the files have is an error naming the first file without it.
    """
    read = [(path, *_monitor_rows(path)) for path in paths]
    having = [success_column in columns for _, _, columns, _ in read]
    if any(having) and not all(having):
        lacking = next(path for (path, *_), has in zip(read, having) if not has)
        raise _bad(str(lacking), f"has no {success_column} column, which the run's other monitor files have")
    extra = (success_column,) if read and all(having) else ()
    rows: list[tuple[float, float, float, dict[str, float]]] = []
    for path, t_start, _, records in read:
        for i, rec in records:
            values = {c: _number(path, i, c, rec.get(c)) for c in ("r", "l", "t")}
            more = {c: _success_value(path, i, c, rec.get(c)) for c in extra}
            rows.append((t_start + values["t"], values["r"], values["l"], more))
    rows.sort(key=lambda row: row[0])
    return MonitorLog(
        tuple(str(p) for p in paths),
        np.array([r[1] for r in rows], dtype=float),
        np.array([r[2] for r in rows], dtype=float),
        {c: np.array([r[3][c] for r in rows], dtype=float) for c in extra},
    )


def _success_value(path: Path, line: int, column: str, text: str | None) -> float:
    words = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0}
    value = words.get(str(text).strip().lower())
    if value is None:
        raise _bad(str(path), f"line {line}: {column} is {text!r}, not true/false")
    return value


# ---------------------------------------------------------------------------- rl-zoo's args.yml
#: The file rl-baselines3-zoo saves the training command's arguments in, in a subfolder of each run folder named
#: after the environment (``logs/ppo/CartPole-v1_1/CartPole-v1/args.yml``); its ``seed`` is the run's seed (the
#: folder's ``_1`` is rl-zoo's run counter).
ZOO_ARGS = "args.yml"
#: Largest args.yml read (rl-zoo's is about 2 KB).
MAX_ARGS_BYTES = 1 << 20
#: The one Python tag of rl-zoo's args.yml (``yaml.dump`` of an OrderedDict): read as key-value pairs, never run.
_ORDERED_DICT = "tag:yaml.org,2002:python/object/apply:collections.OrderedDict"


def _loader() -> type:
    """PyYAML's safe loader, which also reads rl-zoo's OrderedDict tag as plain pairs (any other Python tag is
    refused as by the safe loader: no object is ever built from a file)."""
    import yaml

    class ZooLoader(yaml.SafeLoader):
        pass

    def ordered(loader: yaml.SafeLoader, node: yaml.Node) -> dict:
        args = loader.construct_sequence(node, deep=True) if isinstance(node, yaml.SequenceNode) else None
        pairs = args[0] if isinstance(args, list) and len(args) == 1 and isinstance(args[0], list) else None
        if pairs is None or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise yaml.constructor.ConstructorError(
                None, None, "an OrderedDict that is not a list of pairs", node.start_mark
            )
        return dict(pairs)

    ZooLoader.add_constructor(_ORDERED_DICT, ordered)
    return ZooLoader


def zoo_args(folder: Path) -> list[Path]:
    """The rl-zoo ``args.yml`` files of a run folder (in its subfolders, one level down), in name order."""
    try:
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    return [sub / ZOO_ARGS for sub in subfolders if os.path.lexists(sub / ZOO_ARGS)]


def zoo_seed(path: Path) -> int | None:
    """The ``seed`` of an rl-zoo ``args.yml`` (None when it has none), read by the one opener and PyYAML's safe
    loader; a file that is no such mapping, or a seed that is no whole number, is an InputError naming the file.
    Raises ImportError without PyYAML."""
    import yaml

    text = read_text(path, "rl-zoo args", max_bytes=MAX_ARGS_BYTES)
    try:
        args = yaml.load(text, Loader=_loader())
    except (yaml.YAMLError, RecursionError) as err:
        why = " ".join(str(err).split())[:160]
        raise _bad(str(path), f"is not rl-zoo's args.yml (safe YAML only: {why})") from None
    if not isinstance(args, dict):
        raise _bad(str(path), "is not rl-zoo's args.yml (a mapping of the training command's arguments)")
    seed = args.get("seed")
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _bad(str(path), f"its seed is {seed!r}, not a whole number")
    return seed
