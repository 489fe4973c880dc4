"""The manifest of a bundle (every file's name, size and SHA-256, the content hash, the tool version, the kind), and
verifying a folder against it: a listed file missing, changed or a link, or a file it does not list, is refused in
one sentence naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .disk import read_no_follow, walk
from .kinds import KINDS, BundleError

MANIFEST = "manifest.json"
FORMAT = "rl-reliable-bundle"
FORMAT_VERSION = 1

_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$")


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
        return copy_verified(Path(target), items)

    def manifest_bytes(self) -> bytes:
        return manifest_bytes(self.report_hash, self.tool_version, self.files, self.kind)


def copy_verified(root: Path, items: Mapping[str, bytes]) -> list[Path]:
    """Verified bytes (CSV included, escaped already) into a private folder, as they are."""
    written = []
    for rel, data in items.items():
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_bytes(digest: str, version: str, files: Iterable[BundleFile], kind: str = "report") -> bytes:
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


def read_manifest(root: Path) -> dict[str, Any]:
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


class ChangedBundle(BundleError):
    """A bundle changed after it was written (a file edited, missing or added), and what to do: its files are the
    writer's alone, so the way back is the files as written, or the bundle written again (the writer then says how
    to replace a changed bundle). ``what`` is the change alone, for a message that gives its own advice."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(
            f"{what}: put its files back as written, or write the bundle again with the command that wrote it"
        )


def verify_bundle(root: Path) -> Bundle:
    """Verify the bundle folder ``root`` against its manifest and return it with the verified file contents (a swap
    a killed writer left half done is not looked for: :func:`.bundle.read_bundle` does that first).

    Raises :class:`BundleError` (one line, naming the file) for a missing manifest, a missing,
    changed, resized or symlinked file, a file the manifest does not list, or an unsafe name.
    """
    if root.is_symlink():
        raise BundleError(f"{root}: is a symlink; a results bundle is read only from a real folder")
    if not root.is_dir():
        raise BundleError(f"{root}: not a folder")
    manifest = read_manifest(root)
    listed: dict[str, BundleFile] = {}
    for entry in manifest["files"]:
        rel = str(entry["path"])
        if not safe_relpath(rel) or rel == MANIFEST:
            raise BundleError(f"{root / MANIFEST}: unsafe file name {rel!r} in the manifest")
        listed[rel] = BundleFile(rel, entry["size"], entry["sha256"])
    files, dirs, other = walk(root)
    if other:
        raise BundleError(f"{root / other[0]}: not a regular file (symlinks are never followed); bundle refused")
    extra = [f for f in files if f != MANIFEST and f not in listed]
    if extra:
        raise ChangedBundle(
            f"{root / extra[0]}: not listed in the manifest; the bundle was changed after it was written"
        )
    contents: dict[str, bytes] = {}
    for rel, meta in sorted(listed.items()):
        path = root.joinpath(*rel.split("/"))
        if rel not in files:
            raise ChangedBundle(f"{path}: listed in the manifest but missing; the bundle is incomplete")
        data = read_no_follow(path)
        if len(data) != meta.size or sha256(data) != meta.sha256:
            raise ChangedBundle(f"{path}: does not match the manifest (size or SHA-256); the bundle was modified")
        contents[rel] = data
    return Bundle(
        root=root,
        report_hash=str(manifest.get("report_hash", "")),
        tool_version=str(manifest.get("tool_version", "")),
        files=tuple(listed[k] for k in sorted(listed)),
        contents=contents,
        kind=str(manifest.get("kind", "report")),
    )
