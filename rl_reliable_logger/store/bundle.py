"""A bundle folder, written whole: filled in a temporary sibling, sealed with its manifest, swapped in under the
folder's lock; a previous bundle replaced as a whole, never merged; a folder holding anything the tool did not write
refused; a swap a killed writer left half done completed or undone by the next writer or reader.

Why a bundle and not "files in a folder": a folder written file by file can be left half old and half new (an
interrupt, a full disk, two concurrent runs) and still look complete; files of an earlier result survive in a reused
folder; an input file in the folder gets overwritten; a planted symlink redirects a write. So:

* **Writing** (:func:`write_bundle`) fills a fresh temporary folder next to the target, records every file (name,
  size, SHA-256), the given content hash and the tool version in ``manifest.json``, then swaps the folder into
  place. A folder holding anything the tool did not write, or an input file, is refused
  (:func:`check_output_folder`, which the CLI calls before any computation).
* **Reading** (:func:`read_bundle`) goes only through the manifest (:func:`.manifest.verify_bundle`): every listed
  file must be a regular file (never a symlink) with the recorded size and hash, and nothing else may be in the
  folder. Anything else is a one-line :class:`~.kinds.BundleError` naming the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..version import __version__
from ..wording import kw, said
from .disk import fsync, walk, write_new
from .encode import encode
from .kinds import KIND_NAMES, WRITERS, BundleError
from .lock import folder_lock
from .manifest import MANIFEST, Bundle, BundleFile, manifest_bytes, read_manifest, safe_relpath, sha256, verify_bundle
from .steps import reached

#: Temporary siblings of a bundle being swapped in: ``.<name><marker><pid>-<random>``.
_NEW, _OLD = ".rl-reliable-new-", ".rl-reliable-old-"
#: Temporary folders of writes running in this process (never taken for a killed writer's leftovers).
_MINE: set[Path] = set()


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
    return verify_bundle(root)


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
        if item and Path(item) == out:
            raise BundleError(
                f"{out}: the output folder is the input file itself; the bundle would replace it. "
                "Write the results to another folder."
            )
        if item and _inside(Path(item), out):
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
    files, dirs, other = walk(out)
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
    manifest = read_manifest(out)
    held = manifest.get("kind", "report")
    if held != kind:
        raise BundleError(
            f"{out / MANIFEST}: the output folder holds a {KIND_NAMES[held]}, not a {KIND_NAMES[kind]}; "
            "write to another folder"
        )
    try:
        read_bundle(out)
    except BundleError as err:
        listed = {str(e["path"]) for e in manifest["files"]} | {MANIFEST}
        foreign = [f for f in files if f not in listed]
        if foreign or not force:
            detail = (
                f"{out / foreign[0]}: not written by rl_reliable_logger" if foreign else getattr(err, "what", str(err))
            )
            hint = (
                said(
                    " Move that file out of the folder or write the results to another folder (files the tool did "
                    "not write are never deleted, not even with ",
                    kw("force=True"),
                    ").",
                )
                if foreign
                else said(" Pass ", kw("force=True"), " to replace it anyway.")
            )
            raise BundleError(said(f"{detail}; the output folder is not an unmodified results bundle.", hint)) from None


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
        verify_bundle(folder)
    except BundleError:
        return False
    return True


def _fill_from(files: Mapping[str, Any]) -> Callable[[Path], None]:
    def fill(tmp: Path) -> None:
        for rel, content in files.items():
            if not safe_relpath(rel) or rel == MANIFEST:
                raise BundleError(f"{rel!r}: unsafe file name produced while writing the bundle")
            path = tmp.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            write_new(path, encode(rel, content))

    return fill


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
        reached("locked")
        check_output_folder(out, inputs=inputs, force=force, kind=kind)
        parent = Path(os.path.abspath(out)).parent
        pid = os.getpid()
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_NEW}{pid}-", dir=parent))
        _MINE.add(tmp)
        old: Path | None = None
        try:
            write(tmp)
            reached("filled")
            _seal(tmp, digest, kind)
            reached("manifest")
            if out.exists():
                check_output_folder(out, inputs=inputs, force=force, kind=kind)  # still ours just before the swap
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}{_OLD}{pid}-", dir=parent))
                _MINE.add(old)
                os.rename(out, old / "bundle")
                reached("aside")
            os.rename(tmp, out)
            fsync(parent)
            reached("swapped")
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
        reached("done")
        written = read_bundle(out)
    if written.report_hash != digest:
        raise BundleError(f"{out / MANIFEST}: another writer replaced the bundle while this one was written; run again")
    return out


def _seal(tmp: Path, digest: str, kind: str) -> None:
    """List every file of the filled folder in its manifest (refusing links, special files and unsafe names)."""
    files, _dirs, other = walk(tmp)
    if other:
        raise BundleError(f"{tmp / other[0]}: the writer made a link or special file; bundle not written")
    entries = []
    for rel in files:
        if not safe_relpath(rel) or rel == MANIFEST:
            raise BundleError(f"{rel!r}: unsafe file name produced while writing the bundle")
        path = tmp / rel
        data = path.read_bytes()
        entries.append(BundleFile(rel, len(data), sha256(data)))
        fsync(path)
    write_new(tmp / MANIFEST, manifest_bytes(digest, str(__version__), entries, kind))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
