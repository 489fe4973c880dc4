"""Keywords that moved into a bundle (``read=``, ``publishing=``, ``client_kwargs=``) keep working for one release.

A caller that still passes an option as its own keyword gets the same result and a ``DeprecationWarning``
pointing at its own line and naming the new spelling; passing the bundle too is an error, since the two could
disagree (as :mod:`rl_reliable_logger.moved` does for names that moved to another module).

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     moved_keywords(None, {"force": True}, where="publish()", keyword="publishing", bundle="PublishOptions")
    {'force': True}
    >>> str(caught[0].message)
    'publish(force=...) is deprecated: pass publishing=PublishOptions(force=...) (the old keywords go in the next release)'
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Collection, Mapping
from typing import Any

from ...errors import InputError
from ...wording import kw, said


def callers_level() -> int:
    """The ``stacklevel`` of the first frame outside this package: the warning points at the caller's line."""
    package = __name__.split(".")[0]
    frame, level = inspect.currentframe(), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == package:
        frame, level = frame.f_back, level + 1
    return max(level - 1, 1)


def spelled(keywords: Collection[str]) -> str:
    """``a=..., b=...``: keywords as a message names them."""
    return ", ".join(f"{name}=..." for name in keywords)


def moved_keywords(
    given: Any,
    legacy: Mapping[str, Any],
    *,
    where: str,
    keyword: str,
    bundle: str,
    renamed: Mapping[str, str] | None = None,
    implied: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The keywords of a new ``bundle`` from the old separate ones (``legacy``, with a DeprecationWarning naming
    ``keyword=bundle(...)``), or None when there are none (``given`` is then the whole answer); an old keyword
    beside a ``given`` bundle is an InputError in one sentence. ``implied``: what the old keywords meant without
    saying it (added to the new keywords, and to the spelling the warning shows)."""
    if not legacy:
        return None
    if given is not None:
        raise InputError(
            said(
                f"{where} got both ",
                kw(keyword + "="),
                f" and {', '.join(f'{name}=' for name in legacy)}: give these options once, in ",
                kw(f"{keyword}={bundle}(...)"),
            )
        )
    new = {(renamed or {}).get(name, name): value for name, value in legacy.items()}
    new.update({name: value for name, value in (implied or {}).items() if name not in new})
    warnings.warn(
        f"{where.removesuffix('()')}({spelled(legacy)}) is deprecated: pass {keyword}={bundle}({spelled(new)}) "
        "(the old keywords go in the next release)",
        DeprecationWarning,
        stacklevel=callers_level(),
    )
    return new
