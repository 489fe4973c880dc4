"""One line of text a user reads: what any message, error or note is folded into before it is printed.

Tracker clients raise errors whose text spans many lines: REST errors carry the server's response body (JSON, or a
whole HTML error page), SQLAlchemy adds the SQL and a "Background on this error" link, some clients add tracebacks.
:func:`one_line` folds such a text into one redacted line that keeps the cause; :func:`printable` shows what could
move a terminal's cursor; :func:`shorten` cuts at a word. At the floor of the package beside ``wording``: the
command line's console, the trackers' messages and the library's notes (:mod:`.notes`) fold a line the same way.

Example:
    >>> one_line("failed with error code 403. Response body: '{\\n  \\"error_code\\": \\"PERMISSION_DENIED\\"\\n}'")
    'failed with error code 403. Response body: \\'{ "error_code": "PERMISSION_DENIED" }\\''
"""

from __future__ import annotations

import html
import re
import unicodedata

from .redaction import redact

__all__ = ["MAX_LINE", "one_line", "printable", "shorten"]

#: Longest line :func:`one_line` returns (the cause comes first in every message, so it survives the cut).
MAX_LINE = 1000

_TAG = re.compile(r"<[^<>]{0,400}>")
_HTML_NOISE = re.compile(r"<(script|style|head)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
#: Lines that carry no cause: Python traceback frames and SQLAlchemy's footers.
_NOISE_LINES = re.compile(
    r"^\s*(Traceback \(most recent call last\):|File \".*\", line \d+(, in .*)?|\(Background on this error at: .*\)"
    r"|\[SQL: .*\]?|\[parameters: .*\]|\^+|~+)\s*$"
)
_FRAME = re.compile(r'^\s*File ".*", line \d+')
_BULLET = re.compile(r"^\s*[-*•]\s+")


def _strip_html(text: str) -> str:
    if not re.search(r"<(!DOCTYPE|html|body|p|h\d|title|div)\b", text, re.IGNORECASE):
        return text
    text = _HTML_NOISE.sub(" ", text)
    return html.unescape(_TAG.sub(" ", text))


def _joiner(previous: str, following: str) -> str:
    """What joins a line to the next: a space inside a sentence, a quote or brackets; else ``; ``."""
    if following.startswith(("}", "]", ")")) or previous.endswith((".", ":", ";", ",", "(", "{", "[")):
        return " "
    if previous.endswith(("'", '"')) and previous.count(previous[-1]) % 2 == 1:  # an opening quote
        return " "
    return "; "


def printable(text: object) -> str:
    """``text`` with every control, format (bidi overrides, zero-width) or separator character shown as ``\\uXXXX``:
    what reaches a terminal cannot move the cursor, recolour it, reorder the line or start a new one."""
    return "".join(
        f"\\u{ord(ch):04X}" if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co") else ch
        for ch in str(text)
    )


def one_line(text: object, *, limit: int = MAX_LINE) -> str:
    """``text`` redacted and folded into one line: HTML bodies reduced to their words, traceback frames and
    SQL echoes dropped, list items joined with ``;``, whitespace runs as one space, control characters
    escaped (:func:`printable`), at most ``limit`` characters.

    Redaction (:func:`rl_reliable_logger.redaction.redact`) runs first, on the whole text, so a secret split
    over two lines is still found.
    """
    out = _strip_html(redact(text))
    parts: list[str] = []
    in_frame = False  # the indented source line under a traceback frame is noise too
    for raw in out.splitlines():
        if in_frame and raw.startswith((" ", "\t")):
            in_frame = False
            continue
        in_frame = bool(_FRAME.match(raw))
        if not raw.strip() or _NOISE_LINES.match(raw):
            continue
        line = " ".join(raw.split())
        if _BULLET.match(raw) and parts:
            parts[-1] = parts[-1].rstrip(":;") + (": " if parts[-1].endswith(":") else "; ")
            parts.append(_BULLET.sub("", line))
            continue
        if parts and not parts[-1].endswith((": ", "; ")):
            parts.append(_joiner(parts[-1], line))
        parts.append(line)
    folded = printable("".join(parts).strip() or " ".join(out.split()) or "(no message)")  # never the unredacted text
    return shorten(folded, limit)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with ``…`` when cut (never mid-word).

    Example:
        >>> shorten("the total time by --retry-for", 20)
        'the total time by…'
    """
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"
