"""The report every caller shows, saves and publishes: run names redacted under the active pattern.

``redacting_run_names(pattern)`` (:mod:`rl_reliable_logger.redaction`; ``--redact-run-names`` on the command
line) names the run-name texts to hide; :func:`redact_report` applies it to every text of a Report (tables,
provenance, warnings) after the numbers are computed (runs are ordered by their ids first). The library and the
command line call this one function, so both write and publish the same text for one analysis. A warning line that
keeps its message (:class:`~rl_reliable_logger.wording.Said`) is redacted part by part and stays one, so the console
still names flags for its keywords.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..wording import Field, Keyword, Message, Said

if TYPE_CHECKING:  # pragma: no cover
    from ..redaction import RunNameRedactor
    from .report import Report

#: What provenance says when run names were redacted (the pattern itself is never recorded).
REDACTED_NOTE = "every match of the --redact-run-names pattern (not recorded) was replaced by redacted-<8 hex digits of its SHA-256>"


def redact_report(report: Report) -> Report:
    """``report`` with the active run-name pattern applied to every text in it; the same report without one.

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> from rl_reliable_logger.redaction import redacting_run_names
        >>> with redacting_run_names("tok_[a-z]+"):
        ...     redact_report(Report(warnings=["run ppo-tok_abc stopped early"])).warnings[0].startswith("run ppo-redacted-")
        True
    """
    from ..redaction import active_run_name_redactor

    redactor = active_run_name_redactor()
    if redactor is None:
        return report
    changes = {f.name: redactor.scrub(getattr(report, f.name)) for f in dataclasses.fields(report)}
    changes["warnings"] = [_line(redactor, line) for line in report.warnings]
    report = dataclasses.replace(report, **changes)
    report.provenance["redacted_run_names"] = REDACTED_NOTE
    return report


def _line(redactor: RunNameRedactor, line: Any) -> Any:
    """One warning line redacted; a line that keeps its message redacted part by part (text, field references,
    keyword values) and kept as one when that reads as the whole line redacted, else the redacted text (a match
    across two parts is never left in)."""
    whole = redactor.scrub(line)
    if not isinstance(line, Said):
        return whole
    parts: list[str | Keyword | Field] = []
    for part in line.message.parts:
        if isinstance(part, Keyword):
            value = None if part.value is None else redactor(part.value)
            parts.append(dataclasses.replace(part, value=value))
        elif isinstance(part, Field):
            parts.append(Field(redactor(part.ref)))
        else:
            parts.append(redactor(part))
    message = Message(tuple(parts))
    return message.text() if str(message) == whole else whole
