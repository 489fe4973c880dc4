"""The one intake: what a Source hands over (:class:`SourceRuns`) and the one step that makes it a ScoreTable.

A Source only reads: its :meth:`~.protocols.Source.runs` returns the runs it found as tracker-neutral
:class:`~.records.RunRecord` objects, with what it could not read and where they came from. :func:`read_table`
is the only way from there to a ScoreTable, the same for every Source (MLflow, W&B, TensorBoard, Ray Tune and any
plugin): the shared selection (analysis runs, unrelated runs, ``algorithms``/``tasks``), the run-state rule
(unfinished runs left out and listed unless ``include_unfinished``), names kept as text, seed labels as written,
exact ``{seed}`` matching, the duplicate and configuration rules (with the fix named), hyperparameter keys that
no run has, the score rules, and every drop recorded in ``table.dropped`` and said in ``table.warnings``.
A Source has no ``table()`` of its own to get wrong: the command line, ``watch`` and ``plan`` call
:func:`read_table`, and each public ``XSource.table()`` is this function.

Example:
    >>> from rl_reliable_logger.trackers.base.records import RunRecord
    >>> from rl_reliable_logger.trackers.base.request import SourceRequest
    >>> class Two:
    ...     tracker = "demo"
    ...     def runs(self, request):
    ...         return SourceRuns([RunRecord(f"r{s}", None, "finished" if s < 2 else "running",
    ...                                      config={"a": "A", "t": "x", "s": s}, summary={"v": float(s)})
    ...                            for s in range(3)], label="demo", info={"location": "a demo"})
    >>> table = read_table(Two(), SourceRequest(algorithm="config.a", task="config.t", seed="config.s",
    ...                                         score="summary.v"))
    >>> len(table.frame), table.warnings[-1]
    (2, 'left out 1 unfinished demo run (1 running); pass `include_unfinished=True` to use them')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .protocols import SourceRuns
from .selection import source_table

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable
    from .protocols import Source
    from .request import SourceRequest

__all__ = ["SourceRuns", "read_table"]


def read_table(source: Source, request: SourceRequest) -> ScoreTable:
    """The runs of ``source`` as ``request`` asks: the one way any Source's runs become a ScoreTable."""
    runs = source.runs(request)
    if not isinstance(runs, SourceRuns):
        raise TypeError(f"{type(source).__name__}.runs() must return SourceRuns, got {type(runs).__name__}")
    return source_table(runs, request)
