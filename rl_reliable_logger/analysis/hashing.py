"""The content hash of a Report: what a bundle's manifest records (``report_hash``), so that a reader can tell the
files belong to these results and a Sink can tell the same results were published already.

The hash covers the result tables and the analysis options only, not paths, run ids of skipped runs, page sizes,
time stamps or tracker-specific columns, so the same scores and options give the same hash whichever tracker they
came from. The writer (:mod:`rl_reliable_logger.store`) is given it; it knows files, not Reports.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .report import Report

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
    from .report import TABLES

    digest = hashlib.sha256()
    named = [(name, report.table(name)) for name in TABLES] + sorted(report.extra.items())
    for name, frame in named:
        if name == "scores":
            frame = frame.drop(columns=[c for c in TRACKER_COLUMNS if c in frame.columns])
        if name == "curves" and frame.empty:
            continue
        digest.update(name.encode() + b"\0" + _csv_text(frame).encode() + b"\0")
    digest.update(json.dumps(_hashed_options(report.provenance, legacy), sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _csv_text(frame: Any) -> str:
    """``frame`` as CSV text, the hashed form. Python 3.10's csv module cannot write a NUL character (3.11 can,
    as it is): there a text cell's NULs are written ``\\x00`` instead, so a name with a NUL does not stop the hash
    (every other frame, and every frame on 3.11 and later, hashes as before)."""
    try:
        return str(frame.to_csv(index=False))
    except csv.Error:
        escaped = frame.copy()
        for column in frame.select_dtypes(include=["object", "string"]).columns:
            escaped[column] = frame[column].map(_no_nul)
        return str(escaped.to_csv(index=False))


def _no_nul(value: Any) -> Any:
    return value.replace("\x00", "\\x00") if isinstance(value, str) else value


def _hashed_options(provenance: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    if legacy:
        return {k: provenance.get(k) for k in _EARLIER_HASH_KEYS if k in provenance}
    from .options import recorded_options

    return {
        "normalization": provenance.get("normalization"),
        "options": recorded_options(provenance.get("options") or {}),
    }


def hash_matches(report: Report, digest: str) -> bool:
    """Whether ``digest`` is the report's hash, by this version's rule or (for bundles written before the
    options were declared once, when every option, execution settings included, was hashed) by the earlier one."""
    return digest in (report_hash(report), report_hash(report, legacy=True))
