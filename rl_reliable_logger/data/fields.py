"""Each field of a run plays one role: two options naming the same column or reference are an error.

A column given as both the algorithm and a hyperparameter (``--variant-key params.lr`` with
``--hyperparameter-keys params.lr``, ``--algorithm-key agent`` with ``--task-key agent``, ...) would be
accepted by every step on its own and give a silently wrong analysis (a tuning view over one
configuration each, a seed-reuse warning that disappears). One check, used by ScoreTable, the tracker
sources and the analysis, names both options; messages name Python keywords (backticked), which the CLI
turns into flags.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

from ..errors import InputError
from ..wording import kw, said


def check_distinct(roles: Mapping[str, str | Iterable[str | None] | None], *, what: str = "column") -> None:
    """Raise InputError when two keywords of ``roles`` (``{"variant=": ["params.lr"], ...}``) name one field.

    Example:
        >>> try:
        ...     check_distinct({"variant=": ["params.lr"], "extra_fields=": ["params.lr"]}, what="field")
        ... except InputError as err:
        ...     print(str(err).split(":")[0])
        `variant=` and `extra_fields=` both name the field 'params.lr'
    """
    owner: dict[str, str] = {}
    for keyword, names in roles.items():
        if names is None:
            continue
        for name in [names] if isinstance(names, str) else names:
            if name is None:
                continue
            first = owner.setdefault(str(name), keyword)
            if first != keyword:
                raise InputError(
                    said(
                        kw(first),
                        " and ",
                        kw(keyword),
                        f" both name the {what} {str(name)!r}: a field plays one role (algorithm, task, seed, "
                        "configuration, ...); drop it from one of the two.",
                    )
                )


def column_list(columns: Iterable[Hashable]) -> str:
    """Column names for a message, comma-separated: a name whose edges would vanish in the list (leading or trailing
    whitespace, empty) is quoted, so ``' score'`` is not read as ``score``.

    Example:
        >>> column_list(["algorithm", "task", " score", ""])
        "algorithm, task, ' score', ''"
    """
    return ", ".join(
        repr(name) if isinstance(name, str) and (name != name.strip() or not name) else str(name) for name in columns
    )


#: Separators a score file written by another tool or locale may use, and how a message names each.
_SEPARATORS = {",": "','", ";": "';'", "\t": "a tab", "|": "'|'"}


def separator_hint(columns: Iterable[Hashable], sep: str = ",") -> str | None:
    """What to tell about a header read as one column because the file uses another separator than ``sep``
    (``algorithm;task;seed;score`` in a .csv), or None.

    Example:
        >>> separator_hint(["algorithm;task;seed;score"])
        "the file seems to use ';' as separator, not ','; save it comma-separated (or tab-separated as .tsv)"
        >>> separator_hint(["algorithm\\ttask\\tseed\\tscore"])
        "the file seems to use a tab as separator, not ','; name it .tsv"
    """
    names = [str(c) for c in columns]
    if len(names) != 1:
        return None
    for other, name in _SEPARATORS.items():
        if other != sep and other in names[0]:
            fix = {",": "name it .csv", "\t": "name it .tsv"}.get(
                other, "save it comma-separated (or tab-separated as .tsv)"
            )
            return f"the file seems to use {name} as separator, not {_SEPARATORS[sep]}; {fix}"
    return None
