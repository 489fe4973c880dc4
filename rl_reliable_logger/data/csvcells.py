"""CSV files that are safe to open in a spreadsheet and that read back exactly.

Formula injection (OWASP, "CSV Injection"): a spreadsheet executes a cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return. Every *text* cell we write that starts with one of these — or with
``'`` itself, so that the rule can be undone — gets a leading ``'``, which spreadsheets show as "this is
text". Numbers are never touched (``-0.5`` stays a number); only strings are.

Reading undoes it: a text cell that starts with ``'`` followed by one of ``= + - @ TAB CR '`` loses that
first ``'``. So ``save_scores``/``ScoreTable.from_csv`` and ``save_report``/``Report.load`` round-trip every
name byte for byte. (A hand-written CSV whose name really starts with ``'=`` reads as ``=...``: write
``''=...`` for that.)

Name columns are read as text (``dtype=str``, no NA guessing), so ``007``, ``1e3`` and ``NA`` reach the
name checks exactly as written.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..errors import ScoreTableError
from .csvrows import csv_records
from .names import NA_MARKERS

#: First characters a spreadsheet would evaluate (OWASP), plus ``'`` so that the escape is reversible.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "'")

#: Columns of the package's own tables that hold names, never numbers.
NAME_COLUMNS = frozenset(
    {"algorithm", "task", "run_id", "seed", "algorithm_x", "algorithm_y", "metric", "kind", "reason"}
)


def neutralise(value: Any) -> Any:
    """``'``-prefix a text cell a spreadsheet would execute; anything else unchanged.

    Example:
        >>> neutralise("=HYPERLINK(1)"), neutralise(-0.5), neutralise("-x")
        ("'=HYPERLINK(1)", -0.5, "'-x")
    """
    if isinstance(value, str) and value.startswith(TRIGGERS):
        return "'" + value
    return value


def restore(value: Any) -> Any:
    """Undo :func:`neutralise` on one cell.

    Example:
        >>> restore("'=1+2"), restore("'plain")
        ('=1+2', "'plain")
    """
    if isinstance(value, str) and len(value) >= 2 and value[0] == "'" and value[1] in TRIGGERS:
        return value[1:]
    return value


def _text_columns(frame: pd.DataFrame) -> list[Any]:
    return [
        c
        for c, dtype in frame.dtypes.items()
        if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)
    ]


def _rewrite(frame: pd.DataFrame, needs: Any, fn: Any) -> pd.DataFrame:
    """``fn`` applied to the cells of the text columns where ``needs(cell)`` holds somewhere, all in one block."""
    cols = _text_columns(frame)
    if not cols:
        return frame
    block = frame[cols].astype(object)
    hit = [
        c for c, found in block.apply(lambda col: col.map(needs)).any().items() if found
    ]  # pandas 2.0: no DataFrame.map
    if hit:
        frame[hit] = block[hit].apply(lambda col: col.map(fn))
    return frame


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell neutralised (numeric columns untouched)."""
    return _rewrite(frame.copy(), lambda v: isinstance(v, str) and v.startswith(TRIGGERS), neutralise)


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell restored (in place for the columns that need it)."""
    return _rewrite(frame, lambda v: isinstance(v, str) and v[:1] == "'", restore)


#: pandas 2's default float parser can be one unit in the last place off (0.019801980198019802 reads back as
#: 0.0198019801980198): ask it for exact parsing. pandas 3 parses exactly and deprecates the argument.
_EXACT_FLOATS: dict[str, Any] = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def check_shape(path: str | os.PathLike, *, sep: str = ",") -> None:
    """Refuse a CSV whose header repeats a column name or whose rows have more or fewer fields than the header.

    pandas reads both without a word: a repeated ``score`` column becomes ``score.1``, a row with one field
    too many shifts its values one column right (the first field becomes the index) and a short row is
    padded with missing values; the analysis would then run on shifted or arbitrarily chosen numbers.
    """
    opener: Any = gzip.open if str(path).lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        for _ in csv_records(fh, str(path), sep=sep, error=ScoreTableError):
            pass


def read_csv(
    path: str | os.PathLike,
    *,
    text_columns: Iterable[Any] = NAME_COLUMNS,
    value_columns: Iterable[Any] = (),
    sep: str = ",",
) -> pd.DataFrame:
    """Read a CSV with ``text_columns`` as exact text, ``value_columns`` (a sweep's configuration) as written (see
    :func:`as_written`) and the others parsed as usual; undo neutralisation."""
    wanted, values = set(text_columns), set(value_columns)
    check_shape(path, sep=sep)
    header = pd.read_csv(path, sep=sep, nrows=0)
    text = [c for c in header.columns if c in wanted or c in values]
    others = {c: sorted(NA_MARKERS) for c in header.columns if c not in text}
    frame = pd.read_csv(
        path,
        sep=sep,
        dtype=dict.fromkeys(text, str),
        keep_default_na=False,
        na_values=others,
        **_EXACT_FLOATS,
    )
    for col in text:  # an all-empty file column reads as float NaN even with dtype=str on some pandas
        frame[col] = frame[col].astype(object).where(frame[col].notna(), "")
    frame = restore_frame(frame)
    for col in text:
        if col in values and col not in wanted:
            frame[col] = as_written(frame[col])
    return frame


def as_written(cells: pd.Series) -> pd.Series:
    """A configuration column's text cells as values: a number is a number (a column of numbers a numeric column,
    as pandas reads it), an empty cell no value, and every other text stays the text written. ``None``, ``null``,
    ``NA`` and ``nan`` are four values, never pandas' one missing value (a sweep's ``lr=None`` is a configuration).

    Example:
        >>> as_written(pd.Series(["0.1", "None", "null", "NA", ""])).tolist()
        [0.1, 'None', 'null', 'NA', None]
        >>> as_written(pd.Series(["3", "2, b=3", "1e3"])).tolist()
        [3, '2, b=3', 1000.0]
        >>> as_written(pd.Series(["0.1", "0.2"])).dtype
        dtype('float64')
    """
    filled = cells[cells != ""]
    numbers = pd.to_numeric(filled, errors="coerce")
    words = filled.str.strip().str.lower().isin({"nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity"})
    numeric = numbers.notna() & ~words
    if numeric.all():  # as pandas reads a column of numbers (an empty cell NaN)
        return pd.to_numeric(cells.where(cells != "", None))
    out = cells.astype(object).where(cells != "", None)
    out[numeric[numeric].index] = [_number(text, n) for text, n in zip(filled[numeric], numbers[numeric])]
    return out


#: A whole number as written (up to 300 digits: a Python int reads it exactly, far below CPython's limit).
_WHOLE = re.compile(r"\s*[+-]?\d{1,300}\s*")


def _number(text: str, parsed: Any) -> Any:
    """A numeric cell of a column that also holds text: a whole number written as one is an int (``3``, never
    ``3.0``, which a training script's ``type=int`` refuses), any other number the float pandas read."""
    if _WHOLE.fullmatch(text):
        return int(text)
    return parsed.item() if hasattr(parsed, "item") else parsed
