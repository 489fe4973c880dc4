"""A tracker client's own options as one mapping, ``client_kwargs=``: each tracker declares the keys it takes.

A tracker table or sink passes its client's settings (MLflow's tracking URI, W&B's timeout, API key or base URL,
the page size of a listing) through one ``client_kwargs=`` mapping instead of a parameter each, so a client
option is declared once, in the tracker's :data:`ClientKeys`, and every function of that tracker checks it the
same way. A key the tracker does not take, or a value of the wrong kind, is an InputError in one sentence naming
the key; the value itself is never shown (an API key is a secret).

Example:
    >>> keys = {"timeout": ClientKey("a number of seconds above 0", positive_number)}
    >>> client_options({"timeout": 30}, keys, tracker="W&B")
    {'timeout': 30}
    >>> client_options({"api_key": "secret"}, keys, tracker="W&B")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.errors.InputError: `client_kwargs=` of W&B takes timeout, not 'api_key'
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...redaction import redact
from ...wording import Keyword, kw, said
from .deprecation import callers_level, spelled

#: The keyword that takes a tracker client's options as one mapping.
CLIENT_KWARGS = "client_kwargs"


def client_key(name: str) -> Keyword:
    """A client option as messages name it: a key of ``client_kwargs=`` (```client_kwargs['tracking_uri']``` in the
    library; a command line names the flag its tracker declares for that key).

    Example:
        >>> str(client_key("tracking_uri"))
        "`client_kwargs['tracking_uri']`"
    """
    return Keyword(name, bundle=CLIENT_KWARGS)


def positive_number(value: Any) -> bool:
    """A real number above 0 (not a boolean)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value) > 0


def positive_whole(value: Any) -> bool:
    """A whole number of at least 1 (not a boolean)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1


def text(value: Any) -> bool:
    """A non-empty string."""
    return isinstance(value, str) and bool(value.strip())


@dataclass(frozen=True)
class ClientKey:
    """One client option a tracker takes: what its value must be (for the message) and the check of it."""

    what: str
    check: Callable[[Any], bool]


#: A tracker's client options: key -> its declaration.
ClientKeys = Mapping[str, ClientKey]


def client_options(given: Mapping[str, Any] | None, keys: ClientKeys, *, tracker: str) -> dict[str, Any]:
    """``given`` checked against the tracker's ``keys`` (None is no option): a copy, or an InputError naming the
    key (never its value)."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise InputError(
            said(kw("client_kwargs="), f" is a mapping of {tracker} client options, got a {type(given).__name__}")
        )
    out: dict[str, Any] = {}
    for key, value in given.items():
        declared = keys.get(key) if isinstance(key, str) else None
        if declared is None:
            raise InputError(
                said(kw("client_kwargs="), f" of {tracker} takes {', '.join(keys)}, not {redact(repr(key))}")
            )
        if value is not None and not declared.check(value):
            raise InputError(
                said(
                    kw("client_kwargs="),
                    f" key {key!r} of {tracker} must be {declared.what}; the value given (a "
                    f"{type(value).__name__}) is not",
                )
            )
        out[key] = value
    return out


def moved_client_options(
    client_kwargs: Mapping[str, Any] | None, legacy: Mapping[str, Any], *, where: str
) -> dict[str, Any] | None:
    """``client_kwargs`` with the client options a caller still gives as separate keywords (the old spelling, with
    a DeprecationWarning naming ``client_kwargs=``); a key given both ways is an InputError."""
    if not legacy:
        return dict(client_kwargs) if client_kwargs is not None else None
    both = [key for key in legacy if client_kwargs is not None and key in client_kwargs]
    if both:
        raise InputError(
            said(
                f"{where} got {both[0]}= and ",
                kw("client_kwargs="),
                f" with the key {both[0]!r}: give it once, in ",
                kw("client_kwargs="),
            )
        )
    warnings.warn(
        f"{where.removesuffix('()')}({spelled(legacy)}) is deprecated: pass client_kwargs={{"
        + ", ".join(f"{key!r}: ..." for key in legacy)
        + "} (the old keywords go in the next release)",
        DeprecationWarning,
        stacklevel=callers_level(),
    )
    return {**(client_kwargs or {}), **legacy}
