"""Names (algorithm, task, seed, run) are untrusted text: checked once here, never parsed as numbers.

Rules, applied by :class:`~rl_reliable_logger.data.scores.ScoreTable` to every source:

* a name is text exactly as given: ``007`` stays ``007``, ``1`` and ``1.0`` are two algorithms;
* empty names, missing values and the NA markers a CSV reader would turn into "missing"
  (``NA``, ``nan``, ``None``, ``null``, ``#N/A``, ...) are errors naming the rows, in every format, so a
  name that one format cannot carry is refused by all of them;
* control characters (newline, tab, NUL, ...), bidirectional controls (an RTL override reorders the line)
  and lone surrogates are errors: no output format shows them;
* two different names that *print the same* — differing only in leading/trailing whitespace, Unicode
  normalisation (NFC vs NFD, compatibility forms), invisible format characters, variation selectors or
  Cyrillic/Greek look-alikes of Latin letters (``РРО`` vs ``PPO``) — are an error, and so is
  leading/trailing whitespace on its own. With ``names="normalize"`` such names are stripped and put in NFC
  instead, and every rewrite is recorded (warnings and provenance).

Example:
    >>> display_key("Cafe\\u0301 ") == display_key("Café")
    True
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import InputError
from ..wording import kw, said

#: Values pandas' CSV reader treats as missing by default; as names they are refused in every format.
NA_MARKERS = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)

NameMode = Literal["strict", "normalize"]

#: The ``task`` of the ``ranks`` table's rows that average over tasks (``ranks.csv``, the rank figure).
AVERAGE_TASK = "__average__"
#: Names an output table uses for its own rows, by field: a real name equal to one (as a reader sees it,
#: :func:`display_key`) would be indistinguishable from that row, so it is refused. Every other place where
#: names meet a table's own labels keeps them apart by column (``plan.csv``'s ``kind``) or by position
#: (``report.html``'s per-task table, whose first column is the task even when an algorithm is named "task").
RESERVED: dict[str, dict[str, str]] = {
    "task": {AVERAGE_TASK: "the ranks table's row for the mean over tasks"},
}
_MAX_ROWS = 8


def _rows(indices: Iterable[Any]) -> str:
    items = list(indices)
    shown = ", ".join(str(i) for i in items[:_MAX_ROWS])
    return shown + (f" and {len(items) - _MAX_ROWS} more" if len(items) > _MAX_ROWS else "")


def is_missing(value: Any) -> bool:
    """True for None, NaN, pd.NA/NaT and the NA marker strings."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str):
        return value.strip() in NA_MARKERS
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def as_text(value: Any) -> str:
    """A name as text: strings as given, bytes decoded as UTF-8, numbers by ``str`` (``1.0`` stays ``1.0``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()  # numpy scalar -> Python, so 3 prints as 3, not np.int64(3)
    return str(value)


#: Cyrillic and Greek letters that print like a Latin letter (Unicode's confusables, the unambiguous ones):
#: "РРО" (Cyrillic) and "PPO" are refused as two names that print the same.
_LOOKALIKES = str.maketrans(
    "АВЕКМНОРСТУХЅІЈԚԜҮӀаеорсухѕіјԁһԛԝӏ"  # Cyrillic
    + "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿονικρχϲϳ"  # Greek
    + "ՕՏօսհո"  # Armenian
    + "ıɑɡꓲ",  # Latin / Lisu letters that are not the ASCII one
    "ABEKMHOPCTYXSIJQWYIaeopcyxsijdhqwl" + "ABEZHIKMNOPTYXCJovikpxcj" + "OSouhn" + "iagI",
)
#: Characters that print as nothing (or a blank) although they are letters or marks: Hangul fillers, the
#: combining grapheme joiner, Khmer inherent vowels, the braille blank.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
#: Bidirectional controls: they reorder how a line prints (an RTL override shows "ABC" as "CBA").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _variation_selector(ch: str) -> bool:
    code = ord(ch)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def display_key(name: str) -> str:
    """What a reader sees: NFKC, without invisible format characters or variation selectors, Cyrillic and Greek
    look-alikes as the Latin letter they print as, stripped, runs of spaces as one."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(
        ch
        for ch in text
        if unicodedata.category(ch) not in ("Cf", "Cc") and not _variation_selector(ch) and ch not in _INVISIBLE
    )
    return " ".join(text.translate(_LOOKALIKES).split())


def normalized(name: str) -> str:
    """The ``names="normalize"`` rewrite: stripped and in NFC."""
    return unicodedata.normalize("NFC", name.strip())


def bad_characters(name: str) -> str | None:
    for ch in name:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs") or ch in _BIDI:
            return f"U+{ord(ch):04X}"
    return None


def _check_reserved(texts: list[str], field: str, where: str) -> None:
    """Refuse a name an output table uses for its own rows (:data:`RESERVED`)."""
    reserved = {display_key(name): (name, role) for name, role in RESERVED.get(field, {}).items()}
    for text in texts:
        if display_key(text) in reserved:
            name, role = reserved[display_key(text)]
            raise InputError(
                f"{field} name {text!r} in {where} is reserved: {name!r} is {role}, so the two could not be told "
                "apart; rename it at the source.",
                [f"{field} {text!r}: reserved"],
            )


def _distinct(values: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """(code of each row, distinct values in order of first appearance). In an object column, values of
    different types stay apart (``1``, ``1.0`` and ``True`` are three names, as ``as_text`` writes them)."""
    if values.dtype != object:
        codes, distinct = pd.factorize(values, use_na_sentinel=False)
        return codes, list(distinct)
    try:
        codes, keyed = pd.factorize(pd.Series([(type(v), v) for v in values], dtype=object), use_na_sentinel=False)
    except TypeError:  # unhashable cells: every row its own value
        return np.arange(len(values)), list(values)
    return codes, [v for _, v in keyed]


def check_names(
    values: pd.Series, field: str, column: str, *, mode: NameMode = "strict", run_ids: pd.Series | None = None
) -> tuple[pd.Series, list[str]]:
    """``values`` as a text Series, checked; returns (names, notes about rewrites made in ``normalize`` mode).

    Raises InputError naming the column and rows for missing names, control characters and names that
    would print the same. ``run_ids`` (same index, e.g. tracker run ids) names the runs instead of row numbers,
    which mean nothing to a user whose scores came from a tracker.
    """
    if mode not in ("strict", "normalize"):
        raise ValueError(f"names must be 'strict' or 'normalize', not {mode!r}")
    unit = "row" if run_ids is None else "run"

    def at(indices: Iterable[Any]) -> str:
        return f"{unit}(s) " + _rows(i if run_ids is None else run_ids[i] for i in indices)

    def one(i: Any) -> str:
        return f"{unit} {i if run_ids is None else run_ids[i]}"

    where = f"{field} column {column!r}"
    # every check runs once per distinct value (a sweep repeats each name thousands of times), rows by code
    codes, distinct = _distinct(values)
    missing = list(values.index[np.array([is_missing(v) for v in distinct], dtype=bool)[codes]])
    if missing:
        raise InputError(
            f"empty or missing {field} name (empty, NaN or an NA marker such as 'NA'/'nan'/'None') in {where}, "
            f"{at(missing)}: every run needs {'an' if field[0] in 'aeiou' else 'a'} {field}; fill the cells or drop those rows.",
            [f"{one(i)}: missing {field}" for i in missing],
        )
    try:
        texts = [as_text(v) for v in distinct]
        text = pd.Series(np.array(texts, dtype=object)[codes], index=values.index, dtype=object)
    except UnicodeDecodeError:
        bad = [i for i, v in values.items() if isinstance(v, bytes) and not _decodes(v)]
        raise InputError(f"{where} holds bytes that are not UTF-8 text in {at(bad)}.") from None
    found = [bad_characters(v) for v in texts]
    rows = np.flatnonzero(np.array([c is not None for c in found], dtype=bool)[codes])
    controls = [(values.index[int(j)], found[codes[j]]) for j in rows]
    if controls:
        first = controls[0][1]
        raise InputError(
            f"{field} name with a control character ({first}) in {where}, {at([i for i, _ in controls])}: "
            "names must be printable text (no newline, tab, NUL, bidirectional override); rename them at the source.",
            [f"{one(i)}: control character {c}" for i, c in controls],
        )
    _check_reserved(texts, field, where)
    notes: list[str] = []
    if mode == "normalize":
        rewritten = [normalized(v) for v in texts]
        fixed = pd.Series(np.array(rewritten, dtype=object)[codes], index=values.index, dtype=object)
        changed = dict.fromkeys((old, new) for old, new in zip(texts, rewritten) if old != new)
        for old, new in changed:
            # a Unicode-only change is invisible on a console: show those code points escaped
            show = repr if old.strip() == new else ascii
            notes.append(f"{field} name {show(old)} normalised to {show(new)}")
        text = fixed
        if any(v == "" or v in NA_MARKERS for v in rewritten):
            raise InputError(f"{where}: a name is empty after stripping whitespace; fill the cells.")
        _check_merged(texts, rewritten, codes, values.index, field, where, at)
    else:
        rows = np.flatnonzero(np.array([v != v.strip() for v in texts], dtype=bool)[codes])
        padded = [(values.index[int(j)], texts[codes[j]]) for j in rows]
        if padded:
            raise InputError(
                said(
                    f"{field} name {padded[0][1]!r} has leading or trailing whitespace in {where}, "
                    f"{at((i for i, _ in padded))}; fix the data, or pass ",
                    kw("names='normalize'"),
                    " to strip it (recorded).",
                ),
                [f"{one(i)}: whitespace around {v!r}" for i, v in padded],
            )
    groups: dict[str, list[str]] = {}
    for name in pd.unique(text):
        groups.setdefault(display_key(name), []).append(name)
    clashes = [names for names in groups.values() if len(names) > 1]
    if clashes:
        shown = "; ".join(" vs ".join(f"{n!r} ({at(text.index[text == n])})" for n in names) for names in clashes[:4])
        raise InputError(
            f"{len(clashes)} group(s) of different {field} names in {where} print the same (Unicode normalisation, "
            f"compatibility forms or invisible characters differ): {shown}. Rename them at the source.",
            [" vs ".join(map(repr, names)) for names in clashes],
        )
    return text, notes


def _check_merged(
    texts: list[str],
    rewritten: list[str],
    codes: np.ndarray,
    index: pd.Index,
    field: str,
    where: str,
    at: Callable[[Iterable[Any]], str],
) -> None:
    """Refuse two different names that ``names="normalize"`` would make one (``'B '`` and ``'B'``): merged, the runs
    of two algorithms would count as one's, or be dropped as duplicate seeds of each other. Checked on the names
    themselves, before any duplicate is looked for, however invalid rows are handled."""
    spellings: dict[str, list[str]] = {}
    for old, new in dict.fromkeys(zip(texts, rewritten)):
        spellings.setdefault(new, [])
        if old not in spellings[new]:
            spellings[new].append(old)
    merged = [(new, olds) for new, olds in spellings.items() if len(olds) > 1]
    if not merged:
        return
    row_text = np.array(texts, dtype=object)[codes]

    def named(olds: list[str]) -> str:
        return " and ".join(f"{old!r} ({at(index[row_text == old])})" for old in olds)

    new, olds = merged[0]
    more = f" (and {len(merged) - 1} more such group(s))" if len(merged) > 1 else ""
    raise InputError(
        said(
            f"{field} names {named(olds)} in {where} both become {new!r} with ",
            kw("names='normalize'"),
            f"{more}: two names are never merged into one (their runs would count as one {field}'s, or as "
            f"duplicates of each other); write each {field} one way at the source, or rename one of them.",
        ),
        [" and ".join(map(repr, olds)) + f" -> {new!r}" for new, olds in merged],
    )


def _decodes(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: Characters that can start Markdown syntax inside a table cell (links, images, emphasis, HTML, math, pipes).
def escape_html(value: Any) -> str:
    r"""Any value as HTML text or attribute content: ``& < > " '`` escaped, control characters (NUL, ...) shown as
    ``\uXXXX``; None is empty (``report.html``, a notebook's table of a result).

    Example:
        >>> escape_html('<b class="x">A&B</b>\x00')
        '&lt;b class=&quot;x&quot;&gt;A&amp;B&lt;/b&gt;\\u0000'
    """
    text = html.escape("" if value is None else str(value), quote=True)
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 or 0xD800 <= ord(ch) < 0xE000 for ch in text):
        text = "".join(
            f"\\u{ord(ch):04X}"
            if (ord(ch) < 32 and ch not in "\t\n\r") or 127 <= ord(ch) < 160 or 0xD800 <= ord(ch) < 0xE000
            else ch
            for ch in text
        )
    return text


_MD_SPECIAL = set("\\`*_{}[]<>|~$&")


def escape_markdown(text: Any) -> str:
    """Text safe inside a Markdown table cell: specials backslash-escaped, newlines and controls shown as ``\\uXXXX``.

    Links, images, HTML and emphasis in a name are shown literally; a ``|`` cannot split the row.

    Example:
        >>> escape_markdown("[x](http://e) | *y*")
        '\\\\[x\\\\](http://e) \\\\| \\\\*y\\\\*'
    """
    out = []
    for ch in str(text):
        if ch in _MD_SPECIAL:
            out.append("\\" + ch)
        elif unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


#: Characters that format wherever they stand in Markdown prose (emphasis, strikethrough, math, escapes).
_PROSE_ALWAYS = set("\\*~$")
#: A line that starts like a heading, quote, list item, table row or setext underline is a block, not prose.
_BLOCK_START = re.compile(r"^( {0,3}(?:\d+(?=[.)]))?)([#>+=|.)-])")


def _prose_char(text: str, i: int, code_spans: bool) -> str:
    """One character of :func:`escape_markdown_prose`, escaped only where Markdown would read it as syntax."""
    ch, before, after = text[i], text[i - 1 : i], text[i + 1 : i + 2]
    if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
        return f"\\u{ord(ch):04X}"
    needs = (
        ch in _PROSE_ALWAYS
        or (ch == "`" and not code_spans)
        or (ch == "_" and not (before.isalnum() and after.isalnum()))  # intraword ``_`` never emphasises
        or (ch == "<" and (after.isalpha() or after in ("/", "!", "?")))  # an HTML tag or an autolink
        or (ch == "]" and after in ("(", "[", ":"))  # a link, a reference or a link definition
        or (ch == "[" and i == 0)  # a link reference definition starts a block
        or (ch == "&" and re.match(r"&#?\w+;", text[i:]) is not None)  # an entity
    )
    return "\\" + ch if needs else ch


def escape_markdown_prose(text: Any) -> str:
    r"""Text as literal Markdown *prose* (a paragraph or a list item), escaping only what would format.

    Unlike :func:`escape_markdown` (a table cell, every special escaped), a methods paragraph must read well
    as plain text too, so ``optimality_gap``, ``P(X > Y)`` and ``[Agarwal et al. (2021)]`` stay as they are,
    while a name that could format (``*v2*``, ``_x_``, ``[a](b)``, ``<b>``) is escaped. Backticks that pair up stay
    code spans (our warnings quote keywords so: ```normalize=```; a code span shows its text literally); an odd
    one out, which could only come from a name, escapes them all.

    Example:
        >>> print(escape_markdown_prose("optimality_gap of P(X > Y) [Agarwal et al. (2021)]; PPO_*v2* and _x_"))
        optimality_gap of P(X > Y) [Agarwal et al. (2021)]; PPO\_\*v2\* and \_x\_
    """
    raw = str(text)
    code_spans = raw.count("`") % 2 == 0
    out = "".join(_prose_char(raw, i, code_spans) for i in range(len(raw)))
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), out, count=1) if raw else out


def seed_number(label: Any) -> int | None:
    """The whole number a seed label stands for, however it is written (``7``, ``7.0``, ``007``; a launcher
    passes ``--seed 007`` as 7), or None for a text label (``a``, Arabic-Indic digits): the seeds a watch must not
    launch again.

    Example:
        >>> [seed_number(s) for s in (7, 7.0, "007", "seed-a", "\u0667", True)]
        [7, 7, 7, None, None, None]
    """
    if isinstance(label, bool):
        return None
    if isinstance(label, int):
        return label
    if isinstance(label, float):
        return int(label) if label.is_integer() else None
    text = str(label).strip()
    if text.endswith(".0"):
        text = text[:-2]
    return int(text) if text.isascii() and text.isdigit() else None


def seed_key(seed: Any) -> str:
    """A seed as a run key: ``3.0`` and ``3`` are the same run, ``"3"``."""
    if isinstance(seed, float) and seed.is_integer():
        return str(int(seed))
    return str(seed)


_LABEL_DIGITS = re.compile(r"[0-9]+")


def label_number(label: Any) -> int | None:
    """The number a text seed label carries beside its text (``s3``, ``seed_3``, ``run-07``: 3, 3, 7), or None for
    a label that is a number itself (:func:`seed_number`), has no ASCII digits or several runs of them (``a1b2``).

    Example:
        >>> [label_number(s) for s in ("s3", "seed_3", "run-07", "7", 7, "a1b2", "seed-a")]
        [3, 3, 7, None, None, None, None]
    """
    if seed_number(label) is not None or isinstance(label, (bool, int, float)):
        return None
    found = _LABEL_DIGITS.findall(str(label))
    return int(found[0]) if len(found) == 1 else None


def seed_label_collisions(labels: Iterable[Any], proposed: Iterable[int]) -> str | None:
    """The note for a launch whose proposed whole-number seeds are the numbers the runs' text labels carry (labels
    ``s0, s1, s2``, proposed ``0, 1, 2``: a script that names seed k ``s<k>`` would run those seeds again); None
    when none collides. The hook of the launch files (a watch's and a race's ``runs.csv``), which propose the
    smallest whole numbers no label stands for.

    Example:
        >>> seed_label_collisions(["s0", "s1", "s2"], [0, 1, 2, 3])
        "the proposed seeds 0, 1, 2 are the numbers of the seed labels 's0', 's1', 's2': if your script names seed k 's<k>', it would run those seeds again; launch seeds the labels do not carry, or label the new runs as the runs were"
        >>> seed_label_collisions(["s0"], [5]) is None
        True
    """
    carried: dict[int, list[str]] = {}
    for label in labels:
        number = label_number(label)
        if number is not None:
            carried.setdefault(number, []).append(str(label))
    hit = sorted({n for n in proposed if n in carried})
    if not hit:
        return None
    shown = [repr(label) for n in hit[:8] for label in carried[n][:1]]
    return (
        f"the proposed seeds {', '.join(map(str, hit[:8]))}{' ...' if len(hit) > 8 else ''} are the numbers of the "
        f"seed labels {', '.join(shown)}: if your script names seed k 's<k>', it would run those seeds again; launch "
        "seeds the labels do not carry, or label the new runs as the runs were"
    )


def value_key(value: Any) -> tuple[str, Any]:
    """A configuration value as a key that compares values, never their printed text: ``None`` (no value), the
    text ``"None"``, ``"null"`` and ``"NA"`` are four keys; ``0.1`` and ``0.10`` one (the same number), the number
    ``1`` and the text ``"1"`` two; text holding ``", b=2"`` never meets another configuration's label.

    Example:
        >>> [value_key(v) for v in (None, float("nan"), "None", "NA", 3, 3.0, "3", True)]
        [('missing', ''), ('missing', ''), ('text', 'None'), ('text', 'NA'), ('number', 3), ('number', 3.0), ('text', '3'), ('bool', True)]
        >>> value_key(3) == value_key(3.0), value_key(3) == value_key("3")
        (True, False)
    """
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return ("missing", "")
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):  # 3 and 3.0 are equal keys, as equal numbers
        return ("number", value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, str):
        return ("text", value)
    return (type(value).__name__, repr(value))


#: Text a configuration label quotes so that it reads back as one value: the separators of a label, quotes and
#: what would read as a number or as no value.
_LABEL_SEPARATORS = re.compile(r"[,='\"\\]|^\s|\s$")


def value_text(value: Any) -> str:
    """A configuration value as a label writes it: a number as written (``3.0`` as ``3``), no value as ``NA``, plain
    text as it is (a tracker's parameter ``"0.001"`` too), and text that a label would misread quoted as a Python
    literal: ``'NA'``, ``'None'``, ``'1, b=2'``, ``''``. So ``lr='1, b=2', b=3`` and ``lr=1, b='2, b=3'`` stay two
    labels, and no value is never the text ``NA``.

    Example:
        >>> [value_text(v) for v in (0.001, 3.0, None, "adam", "NA", "0.001", "1, b=2", "")]
        ['0.001', '3', 'NA', 'adam', "'NA'", '0.001', "'1, b=2'", "''"]
    """
    kind, key = value_key(value)
    if kind == "missing":
        return "NA"
    if kind == "number":
        return seed_key(key)
    if kind != "text":
        return str(value)
    text = str(key)
    return repr(text) if not text or text.strip() in NA_MARKERS or _LABEL_SEPARATORS.search(text) else text
