"""Moved: which algorithms the figures show is a fact of the report's view, :mod:`rl_reliable_logger.render.view`
(``ReportView.figure_algorithms``, ``figure_note``). The old names here warn and forward for one release."""

from __future__ import annotations

from ..moved import moved

__getattr__ = moved(
    __name__, dict.fromkeys(("MAX_SHOWN", "shown_algorithms", "shown_report"), "rl_reliable_logger.render.view")
)
