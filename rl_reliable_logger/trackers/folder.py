"""The results folder as a Sink: the same contract as the trackers, for a bundle on disk."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.hashing import report_hash
from ..store.bundle import read_bundle, write_bundle
from ..store.kinds import BundleError
from .base.protocols import PublishResult
from .base.publishing import bundle_files

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.report import Report

#: How messages name this sink.
LABEL = "the results folder"


class FolderSink:
    """Publish a report as a results bundle in ``path`` (replacing an earlier bundle there as a whole).

    ``inputs`` are files the folder must not hold (they would be replaced). Publishing the same
    content again writes nothing.

    Example:
        >>> FolderSink("results").publish(report).created   # doctest: +SKIP
        True
    """

    tracker = "folder"

    def __init__(self, path: str | os.PathLike, *, inputs: Sequence[str | os.PathLike] = (), figures: bool = True):
        self.path = Path(path)
        self.inputs = list(inputs)
        self.figures = figures

    def publish(self, report: Report, *, bundle: str | os.PathLike | None = None) -> PublishResult:
        digest = report_hash(report)
        with bundle_files(report, bundle, figures=self.figures) as verified:  # verified before anything is written
            try:
                if read_bundle(self.path).report_hash == digest:
                    return PublishResult("folder", str(self.path), None, False, digest, label=LABEL)
            except BundleError:
                pass  # no bundle yet, or not ours: write_bundle decides whether it may be replaced

            def fill(tmp: Path) -> None:
                verified.copy_to(tmp, manifest=False)

            write_bundle(
                self.path,
                fill,
                digest=digest,
                inputs=self.inputs,
            )
        return PublishResult("folder", str(self.path), None, True, digest, label=LABEL)
