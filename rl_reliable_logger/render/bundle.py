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

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.report import Report

MANIFEST = "manifest.json"
FORMAT = "rl-reliable-bundle"
FORMAT_VERSION = 1
#: What a bundle holds (``manifest.json`` ``kind``): an analysis (``rl-reliable evaluate``), a plan, or the state
#: of a watch (its design and looks, ``render.watch_state``).
KINDS = ("report", "plan", "watch", "race")
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
        out = Path(target)
        written = []
        items = list(self.contents.items()) + ([(MANIFEST, self.manifest_bytes())] if manifest else [])
        for rel, data in items:
            path = out.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(path)
        return written

    def manifest_bytes(self) -> bytes:
        return _manifest_bytes(self.report_hash, self.tool_version, self.files, self.kind)


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


_KIND_NAMES = {
    "report": "results bundle (rl-reliable evaluate)",
    "plan": "plan (rl-reliable plan)",
    "watch": "watch state (rl_reliable_logger.watch)",
    "race": "race state (rl_reliable_logger.race)",
}


def recover_swap(folder: str | os.PathLike) -> str | None:
    """Complete or undo a bundle swap that a killed writer left half done; return what was done.

    :func:`write_bundle` fills ``.<name>.rl-reliable-new-<pid>-*``, moves the previous bundle into
    ``.<name>.rl-reliable-old-<pid>-*`` and renames the new folder to ``<name>``. If the writer was
    killed between those renames, ``<name>`` is missing: the new bundle, when complete, is put in
    place (else the previous one is restored). Leftovers of writers that are no longer running are
    removed. Leftovers of a running writer are never touched.
    """
    out = Path(folder)
    parent = out.absolute().parent
    if not parent.is_dir():
        return None
    leftovers: list[tuple[str, Path]] = []
    try:
        entries = list(parent.iterdir())
    except OSError:  # an unreadable parent: nothing of ours can be found there
        return None
    for entry in entries:
        for marker in (_NEW, _OLD):
            prefix = f".{out.name}{marker}"
            pid = entry.name[len(prefix) :].split("-", 1)[0] if entry.name.startswith(prefix) else ""
            if pid.isdigit() and not _alive(int(pid)) and entry.is_dir() and not entry.is_symlink():
                leftovers.append((marker, entry))
    done = None
    if not os.path.lexists(out):
        news = [entry for marker, entry in leftovers if marker == _NEW and _complete(entry)]
        olds = [entry / "bundle" for marker, entry in leftovers if marker == _OLD and (entry / "bundle").is_dir()]
        if news:
            os.rename(news[0], out)
            done = f"{out}: completed the results bundle an interrupted run had written"
        elif olds:
            os.rename(olds[0], out)
            done = f"{out}: restored the previous results bundle an interrupted run had moved aside"
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


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (a writer's leftovers are its own while it runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def write_bundle(
    folder: str | os.PathLike,
    fill: Callable[[Path], None],
    *,
    digest: str,
    inputs: Iterable[str | os.PathLike] = (),
    force: bool = False,
    kind: str = "report",
) -> Path:
    """Write a bundle: ``fill(tmp)`` writes the files, then the manifest, then the folder is swapped in.

    The previous bundle (if any) is renamed aside and deleted only once the new one is in place;
    a failure before the swap leaves the old bundle untouched and removes the temporary folder, and
    a kill at any point is completed or undone by the next writer or reader (:func:`recover_swap`).
    After the swap the manifest is read back: if another writer replaced the folder meanwhile, a
    :class:`BundleError` says so instead of returning as if this bundle were there.
    """
    out = Path(folder)
    check_output_folder(out, inputs=inputs, force=force, kind=kind)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_NEW}{pid}-", dir=parent))
    old: Path | None = None
    try:
        fill(tmp)
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
        manifest = tmp / MANIFEST
        manifest.write_bytes(_manifest_bytes(digest, str(__version__), entries, kind))
        _fsync(manifest)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        if out.exists():
            check_output_folder(out, inputs=inputs, force=force, kind=kind)  # still ours just before the swap
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}{_OLD}{pid}-", dir=parent))
            os.rename(out, old / "bundle")
        os.rename(tmp, out)
        _fsync(parent)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / "bundle").exists() and not out.exists():
            os.rename(old / "bundle", out)  # put the previous bundle back
        if isinstance(err, OSError) and err.errno and not err.filename:  # a full disk names no file: name the folder
            raise OSError(err.errno, err.strerror, str(out)) from err
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    written = read_bundle(out)
    if written.report_hash != digest:
        raise BundleError(f"{out / MANIFEST}: another writer replaced the bundle while this one was written; run again")
    return out


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
