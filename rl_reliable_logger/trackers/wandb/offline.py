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

import io
import json
import os
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ...data.files import check_regular_file, open_input, walk
from ...data.jsontext import parse
from ...memory import format_bytes
from ..base.records import RunRecord
from ..base.reruns import start_seconds
from ..base.scoring import key_wanted

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
class _Damaged(ValueError):
    """The log is in W&B's format but damaged (cut short, a checksum that does not match): never retried through
    the CLI reader, which would read the intact part and silently drop what is missing."""


def _check_header(head: bytes) -> None:
    if not head.startswith(_HEADER[:4]):
        raise _FormatError("missing ':W&B' header")
    if head[4:6] != _HEADER[4:6]:
        raise _FormatError(f"unknown magic {head[4:6].hex()}")
    if head[6] != 0:
        raise _FormatError(f"unknown log version {head[6]}")


def _block_chunks(block: bytes, offset: int) -> Iterator[tuple[int, bytes]]:
    """``(type, data)`` of the chunks of one block (``offset``: where it starts in the file). A chunk never
    crosses a block; a block shorter than the rest of its block is the end of the file."""
    pos, n = 0, len(block)
    while pos < n:
        if n - pos < _CHUNK_HEADER:  # padding ends a full block; anywhere else it is a header cut short,
            if (offset + n) % _BLOCK:  # even when the bytes left are zeros (a checksum may start with 0x00)
                raise _Damaged(f"it ends in the middle of a chunk header at byte {offset + n}")
            return
        crc, length, ctype = struct.unpack_from("<IHB", block, pos)
        if crc == 0 and length == 0 and ctype == 0:
            return  # zero-filled remainder of a block (or of a preallocated file)
        start, end = pos + _CHUNK_HEADER, pos + _CHUNK_HEADER + length
        if end > n:
            raise _Damaged(f"it ends in the middle of a record at byte {offset + n}, {end - n} byte(s) short")
        if ctype not in (_FULL, _FIRST, _MIDDLE, _LAST):
            raise _FormatError(f"unknown chunk type {ctype} at byte {offset + pos}")
        chunk = block[start:end]
        if zlib.crc32(chunk, zlib.crc32(bytes([ctype]))) & 0xFFFFFFFF != crc:
            raise _Damaged(f"checksum mismatch at byte {offset + pos}")
        yield ctype, chunk
        pos = end


def _iter_chunks_payloads(data: bytes | BinaryIO) -> Iterator[bytes]:
    """Yield the raw record payloads of a ``.wandb`` log, read block by block (a file is never read whole).

    Not W&B's framing: ``_FormatError``. W&B's framing but damaged (cut short inside a chunk or a record, a bad
    checksum): ``_Damaged``. A log that ends exactly after a record (a run still being written, or killed
    between two writes) is not damaged: it reads as a run without an exit record (``crashed``).
    """
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    _check_header(stream.read(len(_HEADER)) + bytes(len(_HEADER)))
    offset, pending = len(_HEADER), None
    while block := stream.read(_BLOCK - offset % _BLOCK):
        for ctype, chunk in _block_chunks(block, offset):
            if ctype == _FULL and pending is None:
                yield chunk
            elif ctype == _FIRST and pending is None:
                pending = [chunk]
            elif ctype in (_MIDDLE, _LAST) and pending is not None:
                pending.append(chunk)
                if ctype == _LAST:
                    yield b"".join(pending)
                    pending = None
            else:
                raise _Damaged(f"chunk of type {ctype} out of sequence in the block at byte {offset}")
        offset += len(block)
    if pending is not None:
        raise _Damaged(f"its last record is cut short at byte {offset}")


def _loads(value_json: str) -> Any:
    """Decode a wandb ``value_json`` by the one JSON reader (``NaN``/``Infinity`` allowed); text it refuses (an
    integer no float holds, a key written twice, nesting too deep) or cannot decode stays a string, which the
    intake names as a non-numeric value where it is a score."""
    try:
        return parse(value_json)
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
            if keys is not None and not key_wanted(k, keys):  # a {seed} key matches each seed's
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


def _pb_run(rec: Any, st: _RunState, keys: set[str] | None) -> None:
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


def _drop(values: dict[str, Any], key: str) -> None:
    """Remove ``key`` and every flattened key under it."""
    for k in [k for k in values if k == key or k.startswith(key + ".")]:
        del values[k]


def _pb_config(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    for item in rec.config.update:
        st.set_config(_item_key(item), _loads(item.value_json))
    for item in rec.config.remove:
        _drop(st.config, _item_key(item))


def _pb_summary(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    for item in rec.summary.update:
        st.set_summary(_item_key(item), _loads(item.value_json))
    for item in rec.summary.remove:
        _drop(st.summary, _item_key(item))


def _pb_history(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    h = rec.history
    items = {_item_key(i): _loads(i.value_json) for i in h.item}
    step = h.step.num if h.HasField("step") else items.get("_step", 0)
    for k, v in items.items():
        st.add_history(step, k, v, keys)


def _pb_exit(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    st.exit_code = int(rec.exit.exit_code)


#: What each protobuf record kind changes; other kinds (files, stats, output, ...) are counted only.
_PB_KINDS = {"run": _pb_run, "config": _pb_config, "summary": _pb_summary, "history": _pb_history, "exit": _pb_exit}


def _apply_pb(rec: Any, st: _RunState, keys: set[str] | None) -> None:
    """Fold one protobuf ``Record`` into ``st``."""
    st.n_records += 1
    apply = _PB_KINDS.get(rec.WhichOneof("record_type"))
    if apply is not None:
        apply(rec, st, keys)


def _read_pb(path: Path, keys: set[str] | None) -> _RunState:
    """Pure-Python reader (fast; raises ``_FormatError`` when the internal format is not understood)."""
    try:
        from google.protobuf.message import DecodeError
        from wandb.proto import wandb_internal_pb2 as pb
    except Exception as exc:  # pragma: no cover - wandb/protobuf missing or renamed
        raise _FormatError(f"cannot import wandb's protobuf schema ({exc})") from exc
    st = _RunState()
    with open_input(path, "W&B transaction log") as fh:
        for payload in _iter_chunks_payloads(fh):
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
    """``.wandb`` logs under ``directory`` (a project dir, its ``wandb/`` dir, one run dir, or one file), found by
    the folder walk of ``data.files`` (``rglob`` recursed once per folder level: 1,100 were a RecursionError; links
    to folders, such as ``wandb/latest-run``, are not followed)."""
    if directory.is_file():
        return [directory]
    found: dict[Path, Path] = {}
    logs = [directory / folder / name for folder, files in walk(directory) for name in files]  # no recursion
    for p in sorted(p for p in logs if p.name.startswith("run-") and p.name.endswith(".wandb")):
        run_dir = p.parent
        if run_dir.name == "latest-run" or run_dir.is_symlink():
            continue  # wandb/latest-run points at a run we also see under its own name
        if run_dir != directory and not (run_dir.name.startswith("offline-run-") or run_dir.name.startswith("run-")):
            continue
        try:
            key = p.resolve()
        except (OSError, RuntimeError):  # a symbolic link loop: the reader names it (data.files)
            key = p
        found.setdefault(key, p)
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
        started=start_seconds(st.start_time),
    )


def read_offline_run(log: str | os.PathLike, *, history_keys: Iterable[str] | None = None) -> RunRecord:
    """Read one ``run-<id>.wandb`` log; raise ``ValueError`` (with the path and reason) if impossible."""
    path = Path(log)
    keys = set(history_keys) if history_keys is not None else None
    check_regular_file(path, "W&B transaction log")  # a link to /dev/zero would be read forever
    size = path.stat().st_size
    if size == 0:
        raise ValueError(
            f"damaged transaction log {path.name}: the file is empty (0 bytes); re-sync or re-run this seed"
        )
    if size <= len(_HEADER):
        raise ValueError(
            "empty transaction log (header only): the process was hard-killed (SIGKILL, OOM, os._exit) "
            "before W&B flushed anything, so nothing can be recovered; re-run this seed"
        )
    try:
        st = _read_pb(path, keys)
    except _Damaged as err:
        raise ValueError(
            f"damaged transaction log {path.name} ({format_bytes(size)}): {err}; the run is not used (copy the "
            "folder again from where the run wrote it, or re-run this seed)"
        ) from None
    except _FormatError as first:
        try:
            st = _read_cli(path, keys)
        except _FormatError as second:
            raise ValueError(
                f"damaged or unreadable transaction log {path.name} ({first}; fallback: {second})"
            ) from second
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
