"""A results bundle's own ``scores.csv`` read back: its ``score`` column was normalised by the analysis that wrote it.

``save_report`` releases the per-run scores as the analysis used them: ``score`` normalised, ``raw_score`` as
logged. Evaluating that file again with the same ``normalize=`` would normalise twice (DER's IQM on Atari 100k
became -0.034), so the reader records where such a file came from and the analysis refuses a second
normalisation of its ``score`` column; ``score="raw_score"`` with the recorded normaliser reproduces the tables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: What the manifest of a results bundle says it is (``render/bundle.py`` writes it).
BUNDLE_FORMAT = "rl-reliable-bundle"
#: Recorded normalisers that leave the logged scores as they are (nothing to refuse).
UNCHANGED = (None, "None", "already-normalized")


def bundle_normalization(path: str | os.PathLike, score_column: str) -> str | None:
    """The normaliser the analysis that wrote ``path`` applied to its ``score_column``, if ``path`` is a results
    bundle's scores file and that column holds the normalised scores; else None.

    Example:
        >>> bundle_normalization("examples/atari100k_scores.csv", "score") is None   # not inside a bundle
        True
    """
    file = Path(path)
    if score_column != "score":
        return None
    try:
        manifest = json.loads((file.parent / "manifest.json").read_text(encoding="utf-8"))
        provenance = json.loads((file.parent / "provenance.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        return None
    if manifest.get("kind", "report") != "report" or not isinstance(provenance, dict):
        return None
    listed = {str(entry.get("path")) for entry in manifest.get("files", []) if isinstance(entry, dict)}
    options = provenance.get("options")
    recorded = options.get("normalize") if isinstance(options, dict) else None
    if file.name not in listed or recorded in UNCHANGED:
        return None
    return str(recorded)
