"""Read W&B offline runs (``wandb/offline-run-*``) straight from their transaction logs.

``wandb.init(mode="offline")`` writes no ``config.yaml`` or ``wandb-summary.json``: config, tags,
group, sweep id, summary, history and the exit code live only in ``run-<id>.wandb``. That file is a
LevelDB-style log of ``wandb_internal_pb2.Record`` protobufs (framing below). The protobuf schema is
internal to wandb, so everything here is defensive: a file we cannot parse is retried through the
supported CLI reader (``wandb leet inspect --json``), and a file neither can read is reported by
path in ``problems`` instead of crashing the whole scan.

Framing (stable since 2020, verified on 0.31): a 7-byte header ``b":W&B" + <H 0xBEE1 + version 0``,
then 32 KiB blocks of chunks ``<I crc32><H length><B type>`` + data (FULL=1, FIRST=2, MIDDLE=3,
LAST=4), zero padding at the end of each block; ``crc = zlib.crc32(data, zlib.crc32(bytes([type])))``.

Nothing here writes to the run directories.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.records import RunRecord

_HEADER = b":W&B" + struct.pack("<H", 0xBEE1) + b"\x00"
_BLOCK = 32 * 1024
_CHUNK_HEADER = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4

#: Config keys wandb adds for itself; never user data.
_INTERNAL_CONFIG = {"_wandb", "wandb_version"}


class _FormatError(ValueError):
    """The log is not in the framing/protobuf format this reader knows."""


@dataclass
class OfflineProblem:
    """A run directory that could not be read (or only partly), with the reason and what to do."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class OfflineRuns(list):
    """A ``list[RunRecord]`` that also carries ``problems``: runs skipped or read only partly."""

    def __init__(self, records: Iterable[RunRecord] = (), problems: Iterable[OfflineProblem] = ()):
        super().__init__(records)
        self.problems: list[OfflineProblem] = list(problems)


# ---------------------------------------------------------------------------- framing
def _iter_chunks_payloads(data: bytes) -> Iterator[bytes]:
    """Yield the raw record payloads of a ``.wandb`` log (bytes after the 7-byte header).

    A truncated tail (the process died mid-write) ends the iteration quietly: everything before it
    is intact and checksummed. A bad checksum or unknown chunk type raises ``_FormatError``.
    """
    if not data.startswith(_HEADER[:4]):
        raise _FormatError("missing ':W&B' header")
    if data[4:6] != _HEADER[4:6]:
        raise _FormatError(f"unknown magic {data[4:6].hex()}")
    if data[6] != 0:
        raise _FormatError(f"unknown log version {data[6]}")
    pos = len(_HEADER)
    pending: list[bytes] | None = None
    n = len(data)
    while pos < n:
        left_in_block = _BLOCK - (pos % _BLOCK)
        if left_in_block < _CHUNK_HEADER:
            pos += left_in_block  # zero padding at the end of a block
            continue
        if pos + _CHUNK_HEADER > n:
            return  # truncated header at the very end
        crc, length, ctype = struct.unpack_from("<IHB", data, pos)
        if crc == 0 and length == 0 and ctype == 0:
            # zero-filled remainder of a block (or of a preallocated file): skip to next block
            pos += left_in_block
            continue
        start = pos + _CHUNK_HEADER
        end = start + length
        if end > n:
            return  # truncated payload at the very end
        chunk = data[start:end]
        if zlib.crc32(chunk, zlib.crc32(bytes([ctype]))) & 0xFFFFFFFF != crc:
            raise _FormatError(f"checksum mismatch at byte {pos}")
        pos = end
        if ctype == _FULL:
            yield chunk
        elif ctype == _FIRST:
            pending = [chunk]
        elif ctype == _MIDDLE:
            if pending is None:
                raise _FormatError(f"MIDDLE chunk without FIRST at byte {pos}")
            pending.append(chunk)
        elif ctype == _LAST:
            if pending is None:
                raise _FormatError(f"LAST chunk without FIRST at byte {pos}")
            pending.append(chunk)
            yield b"".join(pending)
            pending = None
        else:
            raise _FormatError(f"unknown chunk type {ctype} at byte {pos}")


def _loads(value_json: str) -> Any:
    """Decode a wandb ``value_json`` (``NaN``/``Infinity`` allowed); undecodable text stays a string."""
    try:
        return json.loads(value_json)
    except (TypeError, ValueError):
        return value_json


def _item_key(item: Any) -> str:
    """Dotted key of a Config/Summary/History item (``nested_key`` in 0.31, ``key`` before)."""
    nested = list(getattr(item, "nested_key", []) or [])
    if nested:
        return ".".join(nested)
    return str(getattr(item, "key", ""))


def flatten(prefix: str, value: Any, out: dict[str, Any], *, keep_whole: tuple[str, ...] = ()) -> None:
    """Flatten nested mappings into ``out`` with ``.``-joined keys (online and offline runs alike).

    A mapping whose key ends with one of ``keep_whole`` is stored as it is (e.g. W&B's own ``_wandb``).
    """
    if isinstance(value, Mapping) and value and not prefix.endswith(keep_whole):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out, keep_whole=keep_whole)
    else:
        out[prefix] = value


def _as_float(value: Any) -> float | None:
    """History values that are numbers (bools excluded); ints come back as float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# ---------------------------------------------------------------------------- state accumulation
@dataclass
class _RunState:
    """What one log says about its run, accumulated record by record."""

    run_id: str = ""
    name: str | None = None
    project: str | None = None
    entity: str | None = None
    group: str | None = None
    job_type: str | None = None
    sweep: str | None = None
    tags: list[str] = field(default_factory=list)
    notes: str | None = None
    start_time: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    history: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    exit_code: int | None = None
    n_records: int = 0
    saw_run: bool = False

    def set_config(self, key: str, value: Any) -> None:
        if key.split(".", 1)[0] in _INTERNAL_CONFIG:
            return
        flat: dict[str, Any] = {}
        flatten(key, value, flat)
        self.config.update(flat)

    def set_summary(self, key: str, value: Any) -> None:
        for k in [k for k in self.summary if k == key or k.startswith(key + ".")]:
            del self.summary[k]
        flat: dict[str, Any] = {}
        flatten(key, value, flat)
        self.summary.update(flat)

    def add_history(self, step: float, key: str, value: Any, keys: set[str] | None) -> None:
        if key.startswith("_"):
            return
        flat: dict[str, Any] = {}
        flatten(key, value, flat)
        for k, v in flat.items():
            if keys is not None and k not in keys:
                continue
            x = _as_float(v)
            if x is not None:
                self.history.setdefault(k, []).append((float(step), x))

    @property
    def state(self) -> str:
        if self.exit_code is None:
            # No exit record: the process died before wandb finished the run (or is still running).
            return "crashed"
        return "finished" if self.exit_code == 0 else "failed"


def _apply_pb(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    """Fold one protobuf ``Record`` into ``st``."""
    kind = rec.WhichOneof("record_type")
    st.n_records += 1
    if kind == "run":
        r = rec.run
        st.saw_run = True
        st.run_id = r.run_id or st.run_id
        st.project = r.project or st.project
        st.entity = r.entity or st.entity
        st.name = r.display_name or st.name
        st.group = r.run_group or st.group
        st.job_type = r.job_type or st.job_type
        st.sweep = r.sweep_id or st.sweep
        st.notes = r.notes or st.notes
        if len(r.tags):
            st.tags = list(r.tags)
        if r.HasField("start_time"):
            st.start_time = r.start_time.ToJsonString()
        for item in r.config.update:
            st.set_config(_item_key(item), _loads(item.value_json))
        for item in r.summary.update:
            st.set_summary(_item_key(item), _loads(item.value_json))
    elif kind == "config":
        for item in rec.config.update:
            st.set_config(_item_key(item), _loads(item.value_json))
        for item in rec.config.remove:
            key = _item_key(item)
            for k in [k for k in st.config if k == key or k.startswith(key + ".")]:
                del st.config[k]
    elif kind == "summary":
        for item in rec.summary.update:
            st.set_summary(_item_key(item), _loads(item.value_json))
        for item in rec.summary.remove:
            key = _item_key(item)
            for k in [k for k in st.summary if k == key or k.startswith(key + ".")]:
                del st.summary[k]
    elif kind == "history":
        h = rec.history
        items = {_item_key(i): _loads(i.value_json) for i in h.item}
        step = h.step.num if h.HasField("step") else items.get("_step", 0)
        for k, v in items.items():
            st.add_history(step, k, v, keys)
    elif kind == "exit":
        st.exit_code = int(rec.exit.exit_code)


def _read_pb(path: Path, keys: set[str] | None) -> _RunState:
    """Pure-Python reader (fast; raises ``_FormatError`` when the internal format is not understood)."""
    try:
        from google.protobuf.message import DecodeError
        from wandb.proto import wandb_internal_pb2 as pb
    except Exception as exc:  # pragma: no cover - wandb/protobuf missing or renamed
        raise _FormatError(f"cannot import wandb's protobuf schema ({exc})") from exc
    st = _RunState()
    for payload in _iter_chunks_payloads(path.read_bytes()):
        rec = pb.Record()  # type: ignore[attr-defined]
        try:
            rec.ParseFromString(payload)
        except DecodeError as exc:
            raise _FormatError(f"undecodable record ({exc})") from exc
        _apply_pb(rec, st, keys)
    return st


def _apply_json(obj: dict[str, Any], st: _RunState, keys: set[str] | None) -> None:
    """Fold one ``wandb leet inspect --json`` line into ``st`` (the CLI's own, supported view)."""
    kind = str(obj.get("type"))
    body = obj.get(kind) or {}
    st.n_records += 1
    if kind == "run":
        st.saw_run = True
        st.run_id = body.get("run_id") or st.run_id
        st.project = body.get("project") or st.project
        st.entity = body.get("entity") or st.entity
        st.name = body.get("display_name") or st.name
        st.group = body.get("run_group") or st.group
        st.job_type = body.get("job_type") or st.job_type
        st.sweep = body.get("sweep_id") or st.sweep
        st.notes = body.get("notes") or st.notes
        st.start_time = body.get("start_time") or st.start_time
        if body.get("tags"):
            st.tags = list(body["tags"])
        for k, v in ((body.get("config") or {}).get("update") or {}).items():
            st.set_config(k, v)
    elif kind == "config":
        for k, v in (body.get("update") or {}).items():
            st.set_config(k, v)
    elif kind == "summary":
        for k, v in (body.get("update") or {}).items():
            st.set_summary(k, v)
    elif kind == "history":
        items = body.get("item") or {}
        step = (body.get("step") or {}).get("num", items.get("_step", 0))
        for k, v in items.items():
            st.add_history(step, k, v, keys)
    elif kind == "exit":
        st.exit_code = int(body.get("exit_code", 0) or 0)


def _read_cli(path: Path, keys: set[str] | None, timeout: float = 120.0) -> _RunState:
    """Fallback reader: ``wandb leet inspect --json PATH`` (wandb's supported Go reader)."""
    cmd = [sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _FormatError(f"`wandb leet inspect --json` failed to run ({exc})") from exc
    if proc.returncode != 0:
        raise _FormatError(f"`wandb leet inspect --json` exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    st = _RunState()
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            _apply_json(obj, st, keys)
    return st


# ---------------------------------------------------------------------------- discovery
def _find_logs(directory: Path) -> list[Path]:
    """``.wandb`` logs under ``directory`` (a project dir, its ``wandb/`` dir, one run dir, or one file)."""
    if directory.is_file():
        return [directory]
    found: dict[Path, Path] = {}
    for p in sorted(directory.rglob("run-*.wandb")):
        run_dir = p.parent
        if run_dir.name == "latest-run" or run_dir.is_symlink():
            continue  # wandb/latest-run points at a run we also see under its own name
        if run_dir != directory and not (run_dir.name.startswith("offline-run-") or run_dir.name.startswith("run-")):
            continue
        found.setdefault(p.resolve(), p)
    return sorted(found.values(), key=str)


def _record_from_state(st: _RunState, log: Path) -> RunRecord:
    run_dir = log.parent
    attrs = {
        "id": st.run_id,
        "name": st.name,
        "display_name": st.name,
        "group": st.group,
        "job_type": st.job_type,
        "sweep": st.sweep,
        "project": st.project,
        "entity": st.entity,
        "url": None,
        "path": str(run_dir),
        "log": str(log),
        "start_time": st.start_time,
        "exit_code": st.exit_code,
        "notes": st.notes,
        "state": st.state,
    }
    return RunRecord(
        run_id=st.run_id,
        name=st.name,
        state=st.state,
        config=dict(st.config),
        summary=dict(st.summary),
        params={},
        metrics=dict(st.summary),
        tags=list(st.tags),
        attrs=attrs,
        source="wandb-offline",
        history={k: sorted(v) for k, v in st.history.items()},
    )


def read_offline_run(log: str | os.PathLike, *, history_keys: Iterable[str] | None = None) -> RunRecord:
    """Read one ``run-<id>.wandb`` log; raise ``ValueError`` (with the path and reason) if impossible."""
    path = Path(log)
    keys = set(history_keys) if history_keys is not None else None
    if path.stat().st_size <= len(_HEADER):
        raise ValueError(
            "empty transaction log (header only): the process was hard-killed (SIGKILL, OOM, os._exit) "
            "before W&B flushed anything, so nothing can be recovered; re-run this seed"
        )
    try:
        st = _read_pb(path, keys)
    except _FormatError as first:
        try:
            st = _read_cli(path, keys)
        except _FormatError as second:
            raise ValueError(f"unreadable transaction log ({first}; fallback: {second})") from second
    if not st.saw_run or not st.run_id:
        # The run record is written first; without it we cannot name the run.
        fallback_id = path.stem[len("run-") :] if path.stem.startswith("run-") else path.stem
        if st.n_records == 0:
            raise ValueError("transaction log holds no records (process killed before W&B flushed); re-run this seed")
        st.run_id = st.run_id or fallback_id
    return _record_from_state(st, path)


def read_offline_runs(directory: str | os.PathLike, *, history_keys: Iterable[str] | None = None) -> OfflineRuns:
    """Read every offline run under ``directory`` into ``RunRecord`` objects (``source="wandb-offline"``).

    ``directory`` may be a project folder (with ``wandb/`` inside), the ``wandb/`` folder itself,
    one ``offline-run-*`` folder or one ``.wandb`` file. Runs whose log is empty or unreadable are
    not returned; they are listed in the result's ``problems`` (path + reason) instead. Runs with no
    exit record get ``state="crashed"`` and runs with a non-zero exit code ``state="failed"``.

    Example:
        >>> runs = read_offline_runs("wandb")                      # doctest: +SKIP
        >>> [(r.config["rl_reliable_seed"], r.summary["rl_reliable_final_score"]) for r in runs]  # doctest: +SKIP
        >>> runs.problems                                           # doctest: +SKIP
    """
    root = Path(directory)
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist; pass the folder that holds `wandb/offline-run-*` directories")
    result = OfflineRuns()
    for log in _find_logs(root):
        try:
            result.append(read_offline_run(log, history_keys=history_keys))
        except (ValueError, OSError) as exc:
            result.problems.append(OfflineProblem(str(log.parent), str(exc)))
    # creation order, like the online listing (+created_at); folder names tie within one second
    result.sort(key=lambda r: (_time_key(r.attrs.get("start_time")), r.attrs.get("path") or ""))
    return result


def _time_key(stamp: str | None) -> str:
    """``2026-11-22T00:31:11.65369Z`` -> a string that sorts in time order (fraction padded to 9 digits)."""
    if not stamp:
        return ""
    body = stamp.rstrip("Z")
    whole, _, frac = body.partition(".")
    return f"{whole}.{(frac + '0' * 9)[:9]}"
