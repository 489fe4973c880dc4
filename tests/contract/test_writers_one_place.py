"""Every file the package writes is written in ``store/`` or ``render/writer.py`` (the one writer: escaping,
atomic replacement, the lock). The check reads the source (nothing is imported) and flags, anywhere else, a call
that writes a file: ``write_text``/``write_bytes``, ``to_csv``/``to_json``/``to_parquet``/``savefig`` given a
destination, ``open``/``os.open``/``os.fdopen`` for writing, ``json.dump``/``yaml.dump`` into a file,
``shutil.copy*``/``os.replace``/``os.rename``/``Path.rename``/``Path.replace``. Producers hand bytes, text or
tables to the writer instead (``to_csv()`` with no destination returns text; ``savefig`` into an in-memory buffer
is how a figure becomes bytes, ``render/export.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rl_reliable_logger"
#: The one writer: every module of ``store/``, and the writer of a Report's figures and pages.
WRITERS = ("store/", "render/writer.py")
#: Writes that are not ours to route: each with its reason.
ALLOWED = {
    # the W&B sink puts each artifact file beside the offline run it belongs to (wandb's staging copy moved in);
    # the files are the verified bundle's bytes, already written by the one writer
    ("trackers/wandb/sink.py", "copyfile"),
    # pending scores pushed are moved into pushed/ (a rename inside the pending folder, the record of a push)
    ("trackers/base/pending.py", "replace"),
}
_ALWAYS = {"write_text", "write_bytes"}
#: (module, function) pairs that write: copies, moves, a serialiser into an open file.
_MODULE_WRITES = {("shutil", n) for n in ("copyfile", "copy", "copy2", "copytree", "move")} | {
    (m, "dump") for m in ("json", "yaml", "pickle")
}
_WITH_DESTINATION = {"to_csv", "to_json", "to_parquet", "savefig", "to_excel", "to_pickle"}
_RENAMES = {"replace", "rename"}


def _destination_is_memory(call: ast.Call) -> bool:
    """``savefig(buf, ...)`` / ``to_csv(text, ...)`` into an in-memory buffer named so (``buf``, ``text``, ...)."""
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Name) and first.id in {"buf", "buffer", "text", "out_buffer"}


def _mode(call: ast.Call) -> str:
    if len(call.args) > 1 and isinstance(call.args[1], ast.Constant):
        return str(call.args[1].value)
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return "r"


def _writes(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _ALWAYS:
        return name
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (func.value.id, name) in _MODULE_WRITES:
        return name
    if name in _WITH_DESTINATION and (call.args or any(k.arg in ("path_or_buf", "fname") for k in call.keywords)):
        return None if _destination_is_memory(call) else name
    if name == "open" and isinstance(func, ast.Name) and any(c in _mode(call) for c in "wax+"):
        return name
    if name in ("open", "fdopen") and isinstance(func, ast.Attribute):
        flags = ast.unparse(call)
        if any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT", '"w', "'w")):
            return name
    if name in _RENAMES and isinstance(func, ast.Attribute) and not call.keywords:
        on_os = isinstance(func.value, ast.Name) and func.value.id == "os"
        if on_os or (len(call.args) == 1 and not isinstance(call.args[0], ast.Constant) and not _module(func)):
            return name  # os.rename(a, b) / path.rename(target)
    return None


def _module(func: ast.Attribute) -> bool:
    """``dataclasses.replace(...)`` and the like: a function of a module, not a method of a path."""
    return isinstance(func.value, ast.Name) and func.value.id in ("dataclasses", "re", "copy")


def test_every_file_write_is_in_the_one_writer():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(WRITERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                what = _writes(node)
                if what and (rel, what) not in ALLOWED:
                    found.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:100]}")
    assert found == [], "file writes outside store/ and render/writer.py:\n" + "\n".join(found)


def test_the_check_finds_a_write():
    source = "from pathlib import Path\nPath('x').write_text('y')\nopen('z', 'w')\nframe.to_csv('f.csv')\n"
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    assert sorted(filter(None, map(_writes, calls))) == ["open", "to_csv", "write_text"]
