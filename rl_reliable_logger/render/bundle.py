"""The results bundle: a folder of report files plus ``manifest.json``, written atomically, read verified.

Why a bundle and not "files in a folder": a folder written file by file can be left half old and
half new (an interrupt, a full disk, two concurrent runs) and still look complete; files of an
earlier result survive in a reused folder; an input file in the folder gets overwritten; a planted
symlink redirects a write. So:

* **Writing** (:func:`write_bundle`) fills a fresh temporary folder next to the target, records
  every file (name, size, SHA-256), the report's content hash and the tool version in
  ``manifest.json``, then swaps the folder into place. A previous bundle is replaced as a whole,
  never merged. A folder holding anything the tool did not write, or an input file, is refused
  (:func:`check_output_folder`, which the CLI calls before any computation).
* **Reading** (:func:`read_bundle`) goes only through the manifest: every listed file must be a
  regular file (never a symlink) with the recorded size and hash, and nothing else may be in the
  folder. Anything else is a one-line :class:`BundleError` naming the file.

The content hash (:func:`report_hash`) covers the result tables and the analysis options only, not
paths, run ids of skipped runs, page sizes, time stamps or tracker-specific columns, so the same
scores and options give the same hash whichever tracker they came from.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..analysis.report import Report

MANIFEST = "manifest.json"
FORMAT = "rl-reliable-bundle"
FORMAT_VERSION = 1
#: Temporary siblings of a bundle being swapped in: ``.<name><marker><pid>-<random>``.
_NEW, _OLD = ".rl-reliable-new-", ".rl-reliable-old-"

#: The option keys of provenance that earlier versions hashed (every option, execution settings included): read
#: only to verify bundles those versions wrote (:func:`hash_matches`).
_EARLIER_HASH_KEYS = (
    "normalize",
    "normalization",
    "metrics",
    "gamma",
    "reps",
    "profile_reps",
    "improvement_reps",
    "curve_reps",
    "ci",
    "method",
    "task_bootstrap",
    "seed",
    "jordan",
    "options",
)
#: Columns of the scores table that only say where a run lives in one tracker.
TRACKER_COLUMNS = ("tracker_run_id", "run_name", "url", "state")

_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$")


class BundleError(InputError):
    """A results folder that is not a complete, unmodified bundle (or cannot be written safely)."""


@dataclass(frozen=True)
class Writer:
    """One kind of file or folder the package writes (every write names its kind; an unknown kind is refused).

    ``bundle``: a folder swapped in whole with a manifest (:func:`write_bundle`); else one file replaced
    atomically (:func:`write_file`). The contract battery (``tests/contract/test_writers.py``) attacks every
    kind listed in :data:`WRITERS` with the same hostile corpus, so a writer added here is attacked by construction.
    """

    kind: str
    what: str
    bundle: bool = True


#: Every writer of the package: bundles (``manifest.json`` ``kind``) and single files.
WRITERS: dict[str, Writer] = {
    w.kind: w
    for w in (
        Writer("report", "results bundle (rl-reliable evaluate)"),
        Writer("plan", "plan (rl-reliable plan)"),
        Writer("watch", "watch state (rl_reliable_logger.watch)"),
        Writer("race", "race state (rl_reliable_logger.race)"),
        Writer("scores", "score table (save_scores)", bundle=False),
        Writer("pending", "pending score file (log_final_score)", bundle=False),
        Writer("publish-record", "offline publish record (a tracker's offline sink)", bundle=False),
    )
}

#: What a bundle holds (``manifest.json`` ``kind``): an analysis (``rl-reliable evaluate``), a plan, or the state
#: of a watch (its design and looks, ``render.watch_state``).
KINDS = tuple(kind for kind, writer in WRITERS.items() if writer.bundle)


@dataclass(frozen=True)
class BundleFile:
    """One file of a bundle as the manifest records it."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Bundle:
    """A verified bundle: its folder, manifest fields and the verified contents of each file."""

    root: Path
    report_hash: str
    tool_version: str
    files: tuple[BundleFile, ...]
    contents: Mapping[str, bytes]
    kind: str = "report"

    def copy_to(self, target: str | os.PathLike, *, manifest: bool = True) -> list[Path]:
        """Write the verified bytes (and, with ``manifest``, the manifest) into ``target``; return the paths.

        Sinks upload from such a private copy, so nothing that changes in the folder after the
        check (or is not in the manifest) can be uploaded.
        """
        items = {**self.contents, **({MANIFEST: self.manifest_bytes()} if manifest else {})}
        return _copy_verified(Path(target), items)

    def manifest_bytes(self) -> bytes:
        return _manifest_bytes(self.report_hash, self.tool_version, self.files, self.kind)


def _copy_verified(root: Path, items: Mapping[str, bytes]) -> list[Path]:
    """Verified bytes (CSV included, escaped already) into a private folder, as they are."""
    written = []
    for rel, data in items.items():
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


# --------------------------------------------------------------------------- content hash
def report_hash(report: Report, *, legacy: bool = False) -> str:
    """SHA-256 (hex) of the result tables, the normaliser and the options that shape the results.

    The options are those of ``provenance["options"]`` that are no execution setting
    (:func:`~rl_reliable_logger.analysis.options.recorded_options`: the executor, progress bars and chunk size
    do not change a number, so they do not change the hash). Not hashed either: paths, time stamps, versions,
    page sizes, skipped runs, warnings (they can list unrelated run ids) and the scores' tracker columns (run
    ids, names, URLs). Two evaluations of the same scores with the same options therefore give the same hash
    on every tracker. ``legacy``: the hash of earlier versions (see :func:`hash_matches`).

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> report_hash(Report()) == report_hash(Report(provenance={"created": "now"}))
        True
    """
    from ..analysis.report import TABLES

    digest = hashlib.sha256()
    named = [(name, report.table(name)) for name in TABLES] + sorted(report.extra.items())
    for name, frame in named:
        if name == "scores":
            frame = frame.drop(columns=[c for c in TRACKER_COLUMNS if c in frame.columns])
        if name == "curves" and frame.empty:
            continue
        digest.update(name.encode() + b"\0" + frame.to_csv(index=False).encode() + b"\0")
    digest.update(json.dumps(_hashed_options(report.provenance, legacy), sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _hashed_options(provenance: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    if legacy:
        return {k: provenance.get(k) for k in _EARLIER_HASH_KEYS if k in provenance}
    from ..analysis.options import recorded_options

    return {
        "normalization": provenance.get("normalization"),
        "options": recorded_options(provenance.get("options") or {}),
    }


def hash_matches(report: Report, digest: str) -> bool:
    """Whether ``digest`` is the report's hash, by this version's rule or (for bundles written before the
    options were declared once, when every option, execution settings included, was hashed) by the earlier one."""
    return digest in (report_hash(report), report_hash(report, legacy=True))


# --------------------------------------------------------------------------- manifest
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_bytes(digest: str, version: str, files: Iterable[BundleFile], kind: str = "report") -> bytes:
    payload: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **({} if kind == "report" else {"kind": kind}),  # report bundles keep the manifest they always had
        "tool": "rl_reliable_logger",
        "tool_version": version,
        "report_hash": digest,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in sorted(files, key=lambda f: f.path)],
    }
    return (json.dumps(payload, indent=1) + "\n").encode()


def safe_relpath(rel: str) -> bool:
    """True for a relative POSIX path of plain names (no ``..``, no hidden or absolute parts)."""
    parts = str(rel).split("/")
    return 0 < len(parts) <= 4 and all(_PART.match(p) and ".." not in p for p in parts)


def _walk(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(files, folders, other entries) under ``root`` as relative POSIX paths; symlinks are never followed."""
    files: list[str] = []
    dirs: list[str] = []
    other: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for name in list(dirnames):
            rel = (base / name).relative_to(root).as_posix()
            if (base / name).is_symlink():
                other.append(rel)
                dirnames.remove(name)
            else:
                dirs.append(rel)
        for name in filenames:
            rel = (base / name).relative_to(root).as_posix()
            mode = os.lstat(base / name).st_mode
            (files if stat.S_ISREG(mode) else other).append(rel)
    return sorted(files), sorted(dirs), sorted(other)


def _read_manifest(root: Path) -> dict[str, Any]:
    """The manifest, every field checked for its type: a tampered value is one line naming the field."""
    path = root / MANIFEST
    if path.is_symlink() or not path.is_file():
        raise BundleError(f"{path}: no manifest; not a results bundle written by rl_reliable_logger")
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as err:
        raise BundleError(f"{path}: unreadable manifest ({str(err)[:200] or 'nested too deeply'})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(f'{path}: not a bundle manifest (no "format": "{FORMAT}")')
    problem = _manifest_problem(data)
    if problem:
        raise BundleError(f"{path}: unreadable manifest: {problem}; the bundle was changed after it was written")
    return data


def _manifest_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a parsed manifest's fields (None: nothing)."""
    if data.get("kind", "report") not in KINDS:
        return f"field 'kind' is {data.get('kind')!r}, not one of {', '.join(KINDS)}"
    for key in ("report_hash", "tool_version"):
        if not isinstance(data.get(key, ""), str):
            return f"field {key!r} is a {type(data[key]).__name__}, not text"
    if not isinstance(data.get("files"), list):
        return "field 'files' is not a list"
    for i, entry in enumerate(data["files"]):
        if not (isinstance(entry, dict) and {"path", "size", "sha256"} <= set(entry)):
            return f"files[{i}] is not an object with path, size and sha256"
        size, sha, rel = entry["size"], entry["sha256"], entry["path"]
        if not isinstance(rel, str):
            return f"files[{i}].path is a {type(rel).__name__}, not text"
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return f"files[{i}].size ({rel}) is {str(size)[:40]!r}, not a byte count"
        if not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha)):
            return f"files[{i}].sha256 ({rel}) is not a SHA-256 in hex"
    return None


def read_bundle(folder: str | os.PathLike) -> Bundle:
    """Verify a bundle against its manifest and return it with the verified file contents.

    Raises :class:`BundleError` (one line, naming the file) for a missing manifest, a missing,
    changed, resized or symlinked file, a file the manifest does not list, or an unsafe name.

    Example:
        >>> read_bundle("results").report_hash[:8]   # doctest: +SKIP
        '3f1c9a0b'
    """
    root = Path(folder)
    if not os.path.lexists(root):
        recover_swap(root)  # a writer killed between its two renames: the bundle is aside, put it back
    if root.is_symlink():
        raise BundleError(f"{root}: is a symlink; a results bundle is read only from a real folder")
    if not root.is_dir():
        raise BundleError(f"{root}: not a folder")
    manifest = _read_manifest(root)
    listed: dict[str, BundleFile] = {}
    for entry in manifest["files"]:
        rel = str(entry["path"])
        if not safe_relpath(rel) or rel == MANIFEST:
            raise BundleError(f"{root / MANIFEST}: unsafe file name {rel!r} in the manifest")
        listed[rel] = BundleFile(rel, entry["size"], entry["sha256"])
    files, dirs, other = _walk(root)
    if other:
        raise BundleError(f"{root / other[0]}: not a regular file (symlinks are never followed); bundle refused")
    extra = [f for f in files if f != MANIFEST and f not in listed]
    if extra:
        raise BundleError(f"{root / extra[0]}: not listed in the manifest; the bundle was changed after it was written")
    contents: dict[str, bytes] = {}
    for rel, meta in sorted(listed.items()):
        path = root.joinpath(*rel.split("/"))
        if rel not in files:
            raise BundleError(f"{path}: listed in the manifest but missing; the bundle is incomplete")
        data = _read_no_follow(path)
        if len(data) != meta.size or _sha256(data) != meta.sha256:
            raise BundleError(f"{path}: does not match the manifest (size or SHA-256); the bundle was modified")
        contents[rel] = data
    return Bundle(
        root=root,
        report_hash=str(manifest.get("report_hash", "")),
        tool_version=str(manifest.get("tool_version", "")),
        files=tuple(listed[k] for k in sorted(listed)),
        contents=contents,
        kind=str(manifest.get("kind", "report")),
    )


def _read_no_follow(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise BundleError(f"{path}: cannot be read without following a link ({err.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


# --------------------------------------------------------------------------- writing
def _inside(child: Path, parent: Path) -> bool:
    try:
        child.resolve().relative_to(parent.resolve())
        return True
    except ValueError:
        return False


def check_output_folder(
    folder: str | os.PathLike,
    *,
    inputs: Iterable[str | os.PathLike] = (),
    force: bool = False,
    kind: str = "report",
) -> None:
    """Refuse an output folder that a bundle must not replace; call it before any computation.

    Allowed: a missing or empty folder, or a folder holding exactly an earlier bundle of the same
    ``kind`` (it will be replaced as a whole). Refused: a symlink, a file, an input file inside the
    folder, a folder with anything the tool did not write, a bundle of another kind (a plan never
    replaces an analysis), and (unless ``force``) an earlier bundle whose files were changed since.
    ``force`` never lets the tool delete files it did not write. A swap that a killed writer left
    half done is first completed or undone (:func:`recover_swap`).

    Example:
        >>> check_output_folder("results", inputs=["scores.csv"])   # doctest: +SKIP
    """
    out = Path(folder)
    for item in inputs:
        if item and (Path(item) == out or _inside(Path(item), out)):
            raise BundleError(
                f"{item}: an input file inside the output folder {out}; the bundle would replace it. "
                "Write the results to another folder."
            )
    if out.is_symlink():
        raise BundleError(f"{out}: the output folder is a symlink; pass a real folder (symlinks are never followed)")
    recover_swap(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise BundleError(f"{out}: exists and is not a folder")
    files, dirs, other = _walk(out)
    if not files and not other:
        if dirs:
            raise BundleError(f"{out / dirs[0]}: the output folder holds folders the tool did not write")
        return
    if other:
        raise BundleError(f"{out / other[0]}: a symlink or special file in the output folder; refusing to replace it")
    if MANIFEST not in files:
        raise BundleError(
            f"{out / files[0]}: the output folder holds files rl_reliable_logger did not write (no {MANIFEST}); "
            "pick a new or empty folder"
        )
    manifest = _read_manifest(out)
    held = manifest.get("kind", "report")
    if held != kind:
        raise BundleError(
            f"{out / MANIFEST}: the output folder holds a {_KIND_NAMES[held]}, not a {_KIND_NAMES[kind]}; "
            "write to another folder"
        )
    try:
        read_bundle(out)
    except BundleError as err:
        listed = {str(e["path"]) for e in manifest["files"]} | {MANIFEST}
        foreign = [f for f in files if f not in listed]
        if foreign or not force:
            detail = f"{out / foreign[0]}: not written by rl_reliable_logger" if foreign else str(err)
            hint = (
                " Move that file out of the folder or write the results to another folder (files the tool did not"
                " write are never deleted, not even with `force=True`)."
                if foreign
                else " Pass `force=True` to replace it anyway."
            )
            raise BundleError(f"{detail}; the output folder is not an unmodified results bundle.{hint}") from None


_KIND_NAMES = {w.kind: w.what for w in WRITERS.values()}


#: The steps of a bundle write, in order; a kill at any of them leaves the previous or the new bundle for the next
#: reader (:func:`recover_swap`). ``aside`` exists only when a previous bundle is replaced.
BUNDLE_STEPS = ("locked", "filled", "manifest", "aside", "swapped", "done")
#: The steps of a single-file write (:func:`write_file`).
FILE_STEPS = ("locked", "written", "renamed")

#: Called with each step's name as a write reaches it; None in normal use. Tests set it in a child process to
#: kill that process at one step (``tests/contract``): the kill is real, the recovery is the code users run.
fault_hook: Callable[[str], None] | None = None

#: Seconds a writer waits for another process writing the same folder or file before it refuses in one sentence.
LOCK_WAIT = 60.0
_LOCK = ".rl-reliable-lock"
#: Locks this process holds: (lock path, thread) -> [fd, depth]. A nested write of the same folder re-enters.
_HELD: dict[tuple[str, int], list[int]] = {}
#: Temporary folders of writes running in this process (never taken for a killed writer's leftovers).
_MINE: set[Path] = set()


def _reached(step: str) -> None:
    if fault_hook is not None:
        fault_hook(step)


def _lock_path(target: Path) -> Path:
    out = Path(os.path.abspath(target))
    return out.parent / f".{out.name}{_LOCK}"


@contextlib.contextmanager
def folder_lock(target: str | os.PathLike, *, wait: float | None = None) -> Iterator[None]:
    """Hold the write lock of a folder or file (``.<name>.rl-reliable-lock`` beside it, removed on release).

    Two writers of one folder cannot both write: the second waits up to ``wait`` seconds (default
    :data:`LOCK_WAIT`, read when called), then refuses with a
    :class:`BundleError` naming the folder and the process holding it. A killed holder's lock is released by
    the operating system. The lock is re-entrant within a thread (a watch holds it from reading its state to
    writing it back, and the write inside takes it again).
    """
    path = _lock_path(Path(target))
    key = (str(path), threading.get_ident())
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    fd = _acquire(path, Path(target), LOCK_WAIT if wait is None else wait)
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):
            os.unlink(path)  # before closing: a waiter that opened this file sees it is gone and opens anew
        os.close(fd)


def _acquire(path: Path, target: Path, wait: float) -> int:
    """The fd of ``path`` locked exclusively (flock), waiting up to ``wait`` seconds."""
    deadline = time.monotonic() + max(0.0, float(wait))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BundleError(f"{target}: cannot be written ({err.strerror or err})") from None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as err:
            raise BundleError(f"{target}: cannot be written; its lock file {path.name} cannot be made "
                              f"({err.strerror or err})") from None  # fmt: skip
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise BundleError(
                    f"{target}: another rl-reliable process{holder} is writing it; waited {wait:g} s. "
                    "Run again once it has finished, or write to another folder"
                ) from None
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
            continue
        try:
            same = os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if same:  # else the previous holder removed it between our open and our lock: take the new one
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""


def _leftovers(out: Path) -> list[tuple[str, Path]]:
    """Temporary siblings of ``out`` that writes left (``.<name>.rl-reliable-new-*`` / ``-old-*``), not this
    process's running writes."""
    parent = Path(os.path.abspath(out)).parent
    try:
        entries = list(parent.iterdir()) if parent.is_dir() else []
    except OSError:  # an unreadable parent: nothing of ours can be found there
        return []
    found = []
    for entry in entries:
        for marker in (_NEW, _OLD):
            if (
                entry.name.startswith(f".{out.name}{marker}")
                and entry not in _MINE
                and entry.is_dir()
                and not entry.is_symlink()
            ):
                found.append((marker, entry))
    return sorted(found, key=lambda item: item[1].name)


def recover_swap(folder: str | os.PathLike, *, wait: float | None = None) -> str | None:
    """Complete or undo a bundle swap that a killed writer left half done; return what was done.

    :func:`write_bundle` fills ``.<name>.rl-reliable-new-<pid>-*``, moves the previous bundle into
    ``.<name>.rl-reliable-old-<pid>-*`` and renames the new folder to ``<name>``, all under the folder's lock.
    Holding that lock, every leftover belongs to a writer that is gone (killed: the operating system released its
    lock), whatever its process id says (ids are reused). If ``<name>`` is missing, the new bundle, when
    complete, is put in place (else the previous one is restored); leftovers are then removed.
    """
    out = Path(os.path.abspath(folder))
    if not _leftovers(out):
        return None
    with folder_lock(out, wait=wait):
        leftovers = _leftovers(out)
        done = None
        if not os.path.lexists(out):
            news = [entry for marker, entry in leftovers if marker == _NEW and _complete(entry)]
            olds = [entry / "bundle" for marker, entry in leftovers if marker == _OLD and (entry / "bundle").is_dir()]
            if news:
                os.rename(news[0], out)
                done = f"{folder}: completed the results bundle an interrupted run had written"
            elif olds:
                os.rename(olds[0], out)
                done = f"{folder}: restored the previous results bundle an interrupted run had moved aside"
        for _marker, entry in leftovers:
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)
    return done


def _complete(folder: Path) -> bool:
    try:
        read_bundle(folder)
    except BundleError:
        return False
    return True


# --------------------------------------------------------------------------- the one writer: formats
def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as CSV: every text cell a spreadsheet would execute gets a leading ``'`` (:mod:`..data.csvcells`,
    which also undoes it on reading); numbers are untouched.

    Example:
        >>> import pandas as pd
        >>> csv_bytes(pd.DataFrame({"algorithm": ["=A", "B"], "score": [-1.0, 2.0]})).decode()
        "algorithm,score\\n'=A,-1.0\\nB,2.0\\n"
    """
    from ..data.csvcells import neutralise_frame

    return str(neutralise_frame(frame).to_csv(index=False)).encode()


class Text(str):
    """A user's name in a YAML file: always written quoted, so ``1e3``, ``007``, ``yes`` or ``null`` stay text for
    every YAML reader (1.1 and 1.2)."""


def yaml_bytes(data: Any, *, head: str = "") -> bytes:
    """``data`` as YAML through PyYAML's safe dumper (no Python objects); :class:`Text` values single-quoted."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(Text, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style="'"))
    return (head + yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False)).encode()


def shell_line(words: Iterable[str]) -> str:
    """One command-line fragment, each word shell-quoted; a word with a control character is refused (a newline
    would split the line a launcher reads as one run).

    Example:
        >>> shell_line(["-P", "algorithm=A B", "-P", "task=$(rm -rf ~)"])
        "-P 'algorithm=A B' -P 'task=$(rm -rf ~)'"
    """
    out = []
    for word in words:
        if any(ord(c) < 32 or ord(c) == 127 for c in str(word)):
            raise BundleError(f"{str(word)[:60]!r}: a control character cannot be written on a command line")
        out.append(shlex.quote(str(word)))
    return " ".join(out)


def encode(name: str, content: Any) -> bytes:
    """The bytes of one file of a bundle: a table (``.csv``: only as a DataFrame, so it is always escaped),
    text (UTF-8) or bytes as given."""
    if name.endswith(".csv"):
        import pandas as pd  # a CSV is only ever made from a table; pandas loads with the first one

        if not isinstance(content, pd.DataFrame):
            raise TypeError(f"{name}: a CSV file is written from a table (escaped), not from {type(content).__name__}")
        return csv_bytes(content)
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray)):
        return bytes(content)
    raise TypeError(f"{name}: cannot write a {type(content).__name__}")


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (never following or replacing anything) with ``data``, flushed to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fill_from(files: Mapping[str, Any]) -> Callable[[Path], None]:
    def fill(tmp: Path) -> None:
        for rel, content in files.items():
            if not safe_relpath(rel) or rel == MANIFEST:
                raise BundleError(f"{rel!r}: unsafe file name produced while writing the bundle")
            path = tmp.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_new(path, encode(rel, content))

    return fill


# --------------------------------------------------------------------------- the one writer: writing
def write_bundle(
    folder: str | os.PathLike,
    fill: Mapping[str, Any] | Callable[[Path], None],
    *,
    digest: str,
    inputs: Iterable[str | os.PathLike] = (),
    force: bool = False,
    kind: str = "report",
    wait: float | None = None,
) -> Path:
    """Write a bundle: its files (``fill``: name -> content, see :func:`encode`; or a function writing them into
    the temporary folder), then the manifest, then the folder is swapped in, all under the folder's lock.

    The previous bundle (if any) is renamed aside and deleted only once the new one is in place;
    a failure before the swap leaves the old bundle untouched and removes the temporary folder, and
    a kill at any step (:data:`BUNDLE_STEPS`) is completed or undone by the next writer or reader
    (:func:`recover_swap`). A second writer of the same folder waits up to ``wait`` seconds for the lock, then
    refuses in one sentence.
    """
    if kind not in WRITERS or not WRITERS[kind].bundle:
        raise ValueError(f"not a bundle kind: {kind!r}")
    out = Path(folder)
    write = _fill_from(fill) if isinstance(fill, Mapping) else fill
    with folder_lock(out, wait=wait):
        _reached("locked")
        check_output_folder(out, inputs=inputs, force=force, kind=kind)
        parent = Path(os.path.abspath(out)).parent
        pid = os.getpid()
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_NEW}{pid}-", dir=parent))
        _MINE.add(tmp)
        old: Path | None = None
        try:
            write(tmp)
            _reached("filled")
            _seal(tmp, digest, kind)
            _reached("manifest")
            if out.exists():
                check_output_folder(out, inputs=inputs, force=force, kind=kind)  # still ours just before the swap
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}{_OLD}{pid}-", dir=parent))
                _MINE.add(old)
                os.rename(out, old / "bundle")
                _reached("aside")
            os.rename(tmp, out)
            _fsync(parent)
            _reached("swapped")
        except BaseException as err:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and (old / "bundle").exists() and not out.exists():
                os.rename(old / "bundle", out)  # put the previous bundle back
            if isinstance(err, OSError) and err.errno and not err.filename:  # a full disk names no file: the folder
                raise OSError(err.errno, err.strerror, str(out)) from err
            raise
        finally:
            _MINE.discard(tmp)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
                _MINE.discard(old)
        _reached("done")
        written = read_bundle(out)
    if written.report_hash != digest:
        raise BundleError(f"{out / MANIFEST}: another writer replaced the bundle while this one was written; run again")
    return out


def _seal(tmp: Path, digest: str, kind: str) -> None:
    """List every file of the filled folder in its manifest (refusing links, special files and unsafe names)."""
    files, _dirs, other = _walk(tmp)
    if other:
        raise BundleError(f"{tmp / other[0]}: the writer made a link or special file; bundle not written")
    entries = []
    for rel in files:
        if not safe_relpath(rel) or rel == MANIFEST:
            raise BundleError(f"{rel!r}: unsafe file name produced while writing the bundle")
        path = tmp / rel
        data = path.read_bytes()
        entries.append(BundleFile(rel, len(data), _sha256(data)))
        _fsync(path)
    _write_new(tmp / MANIFEST, _manifest_bytes(digest, str(__version__), entries, kind))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)


def write_file(
    path: str | os.PathLike,
    data: bytes | Callable[[bytes | None], bytes],
    *,
    kind: str,
    exclusive: bool = False,
    mode: int = 0o644,
    wait: float | None = None,
) -> Path:
    """Replace one file atomically under its lock: a temporary sibling is written, flushed, renamed over it.

    ``data`` may be a function of the file's current bytes (None: no file yet), called under the lock, so two
    writers updating one record cannot lose each other's change. ``exclusive``: refuse a file that exists. A
    reader sees the old file or the new one, never half of one; a kill leaves at most a hidden
    ``.<name>.<pid>.tmp`` (readers skip hidden files; the next write of the file removes it).
    """
    if kind not in WRITERS or WRITERS[kind].bundle:
        raise ValueError(f"not a file kind: {kind!r}")
    target = Path(path)
    with folder_lock(target, wait=wait):
        _reached("locked")
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise BundleError(f"{target}: not a regular file (a link or a folder); it is never replaced")
        if exclusive and target.exists():
            raise BundleError(f"{target}: exists already; it is never replaced")
        _remove_stale(target)
        body = data(_read_no_follow(target) if target.exists() else None) if callable(data) else data
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            _write_new(tmp, body)
            os.chmod(tmp, mode)
            _reached("written")
            os.replace(tmp, target)
            _fsync(target.parent)
            _reached("renamed")
        except BaseException as err:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if isinstance(err, OSError) and err.errno and not err.filename:  # a full disk names no file: name it
                raise OSError(err.errno, err.strerror, str(target)) from err
            raise
    return target


def _remove_stale(target: Path) -> None:
    """Remove the temporary files killed writers left beside ``target``: this file's (we hold its lock) and, in the
    folder, those of processes that are gone (``.<name>.<pid>.tmp``; a live process's are never touched)."""
    for stale in target.parent.glob(".*.tmp"):
        name, _, pid = stale.name[: -len(".tmp")].rpartition(".")
        if pid.isdigit() and (name == f".{target.name}" or not _alive(int(pid))):
            with contextlib.suppress(OSError):
                stale.unlink()


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def write_private(folder: str | os.PathLike, files: Mapping[str, Any]) -> list[Path]:
    """Write ``files`` (name -> content, :func:`encode`) into a private temporary folder this process made (what a
    Sink uploads): no lock or swap, since nobody else writes or reads there."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, content in files.items():
        if not safe_relpath(rel):
            raise BundleError(f"{rel!r}: unsafe file name")
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(rel, content))
        written.append(path)
    return written


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
