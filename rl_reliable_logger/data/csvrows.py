"""The one row reader of users' CSV files: every row as long as the header, every column named once.

Python's ``csv`` module and pandas read shapes a log should never have without a word, or fail in their own
words: a column named twice keeps one of the two (``csv.DictReader`` the last, pandas renames it ``.1``), a
short row is padded with ``None`` (which then fails deep inside a reader as a ``TypeError``), a long row
shifts its values, and a field longer than 131,072 characters is ``csv.Error: field larger than field limit``.
:func:`csv_records` refuses each of these with an :class:`~rl_reliable_logger.errors.InputError` naming the
file and the line, so every CSV reader (score files through ``csvcells.check_shape``, SB3's ``monitor.csv``,
Ray Tune's ``progress.csv``) says the same thing in the same words. No global ``csv.field_size_limit`` is
changed: a longer field is no value of a log.

Example:
    >>> rows = csv_records(["r,l,t", "1.5,10,0.5"], "monitor.csv")
    >>> list(rows)
    [(1, ['r', 'l', 't']), (2, ['1.5', '10', '0.5'])]
    >>> list(csv_records(["r,l,r", "1,2,3"], "monitor.csv"))
    Traceback (most recent call last):
    ...
    rl_reliable_logger.errors.InputError: monitor.csv: column 'r' appears twice in the header (columns 1 and 3); which one holds the values cannot be told: rename or drop one
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator

from ..errors import InputError

__all__ = ["FIELD_LIMIT", "csv_records"]

#: The longest field Python's ``csv`` reads (its default ``field_size_limit``), said in the refusal.
FIELD_LIMIT = csv.field_size_limit()


def csv_records(
    lines: Iterable[str],
    where: str,
    *,
    sep: str = ",",
    first_line: int = 1,
    short_last: bool = False,
    error: Callable[[str], InputError] = InputError,
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of the header, then of every row, of the CSV text ``lines`` (blank lines
    skipped, as pandas skips them); ``first_line`` is the line number of the header in the file (a file with
    a comment line before it, like SB3's ``monitor.csv``, starts at 2).

    The header must name each column once and every row hold as many fields as the header; ``short_last``
    allows a short last row (a file cut while its writer was appending: the caller decides whether that row
    is used). ``error`` builds the exception from the message (default: :class:`InputError`).
    """
    reader = csv.reader(lines, delimiter=sep)
    header: list[str] | None = None
    pending: tuple[int, list[str]] | None = None  # a short row, refused unless it is the last one
    row = -1
    try:
        for fields in reader:
            line = reader.line_num + first_line - 1
            if header is None:
                header = _header(fields, where, error)
                yield line, header
                continue
            if not fields:
                continue
            if pending is not None:
                raise error(_ragged(where, row, *pending, len(header)))
            row += 1
            if len(fields) > len(header) or (len(fields) < len(header) and not short_last):
                raise error(_ragged(where, row, line, fields, len(header)))
            if len(fields) < len(header):
                pending = (line, fields)
                continue
            yield line, fields
    except csv.Error as err:
        line = reader.line_num + first_line - 1
        if "field larger than field limit" in str(err):
            raise error(
                f"{where}: line {line} has a field longer than {FIELD_LIMIT:,} characters, longer than any value the "
                "file should hold: the file is damaged or not what it is named"
            ) from None
        raise error(f"{where}: malformed CSV at line {line}: {err}") from None
    if pending is not None:
        yield pending


def _header(fields: list[str], where: str, error: Callable[[str], InputError]) -> list[str]:
    seen: dict[str, int] = {}
    for i, name in enumerate(fields, start=1):
        if name in seen:
            raise error(
                f"{where}: column {name!r} appears twice in the header (columns {seen[name]} and {i}); "
                "which one holds the values cannot be told: rename or drop one"
            )
        seen[name] = i
    return fields


def _ragged(where: str, row: int, line: int, fields: list[str], width: int) -> str:
    return (
        f"{where}: malformed CSV: row {row} (line {line}) has {len(fields)} field(s) but the header has {width}; a "
        "field too many or too few would shift the values, so fix that row (quote a field that contains the "
        "separator)"
    )
