"""Each field of a run plays one role: two options naming the same column or reference are an error.

A column given as both the algorithm and a hyperparameter (``--variant-key params.lr`` with
``--hyperparameter-keys params.lr``, ``--algorithm-key agent`` with ``--task-key agent``, ...) would be
accepted by every step on its own and give a silently wrong analysis (a tuning view over one
configuration each, a seed-reuse warning that disappears). One check, used by ScoreTable, the tracker
sources and the analysis, names both options; messages name Python keywords (backticked), which the CLI
turns into flags.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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
