"""A state folder's ``looks.json`` edited by hand with its manifest rewritten to match: a consistent edit (the kind a
user or attacker makes), not a corrupt file, which the ledger must refuse by what the looks say."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def edit_looks(state: Path, edit: Callable[[list[dict[str, Any]]], Any]) -> None:
    """Apply ``edit`` to the recorded looks, write them back and rewrite the manifest's size and SHA-256."""
    looks = json.loads((state / "looks.json").read_text())
    edit(looks)
    data = (json.dumps(looks, indent=1, sort_keys=True) + "\n").encode()
    (state / "looks.json").write_bytes(data)
    manifest = json.loads((state / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "looks.json":
            entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (state / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
