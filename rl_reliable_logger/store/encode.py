"""The bytes of a file the package writes: a table as escaped CSV, YAML with every name quoted, a shell line with
every word quoted; :func:`encode` picks one by the file's name."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .kinds import BundleError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A table as CSV: every text cell a spreadsheet would execute gets a leading ``'``
    (:mod:`rl_reliable_logger.data.csvcells`, which also undoes it on reading); numbers are untouched.

    Example:
        >>> import pandas as pd
        >>> csv_bytes(pd.DataFrame({"algorithm": ["=A", "B"], "score": [-1.0, 2.0]})).decode()
        "algorithm,score\\n'=A,-1.0\\nB,2.0\\n"
    """
    from ..data.csvcells import neutralise_frame

    return str(neutralise_frame(frame).to_csv(index=False)).encode()


class Text(str):
    """A user's name in a YAML file: always written quoted, so ``1e3``, ``007``, ``yes`` or ``null`` stay text for
    every YAML reader (1.1 and 1.2)."""


def yaml_bytes(data: Any, *, head: str = "") -> bytes:
    """``data`` as YAML through PyYAML's safe dumper (no Python objects); :class:`Text` values single-quoted."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(Text, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style="'"))
    return (head + yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False)).encode()


def shell_line(words: Iterable[str]) -> str:
    """One command-line fragment, each word shell-quoted; a word with a control character is refused (a newline
    would split the line a launcher reads as one run).

    Example:
        >>> shell_line(["-P", "algorithm=A B", "-P", "task=$(rm -rf ~)"])
        "-P 'algorithm=A B' -P 'task=$(rm -rf ~)'"
    """
    out = []
    for word in words:
        if any(ord(c) < 32 or ord(c) == 127 for c in str(word)):
            raise BundleError(f"{str(word)[:60]!r}: a control character cannot be written on a command line")
        out.append(shlex.quote(str(word)))
    return " ".join(out)


def encode(name: str, content: Any) -> bytes:
    """The bytes of one file of a bundle: a table (``.csv``: only as a DataFrame, so it is always escaped),
    text (UTF-8) or bytes as given."""
    if name.endswith(".csv"):
        import pandas as pd  # a CSV is only ever made from a table; pandas loads with the first one

        if not isinstance(content, pd.DataFrame):
            raise TypeError(f"{name}: a CSV file is written from a table (escaped), not from {type(content).__name__}")
        return csv_bytes(content)
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray)):
        return bytes(content)
    raise TypeError(f"{name}: cannot write a {type(content).__name__}")
