"""Names that moved to another module stay importable from the old one for one release, with a warning.

An old module keeps only ``__getattr__ = moved(__name__, {name: new module, ...})``: reading a moved name imports it
from its new module and warns (``DeprecationWarning``) where it was read, naming the new place. Setting a name on
the old module changes nothing in the new one (a test hook such as ``store.steps.fault_hook`` is set there).

Example:
    >>> import warnings
    >>> from rl_reliable_logger.render import bundle
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     bundle.read_bundle.__module__
    'rl_reliable_logger.store.bundle'
    >>> str(caught[0].message)
    'rl_reliable_logger.render.bundle.read_bundle moved to rl_reliable_logger.store.bundle.read_bundle; import it from there (the old name goes in the next release)'
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


class Moved:
    """The module ``__getattr__`` of ``old``: each name of :attr:`names` read from its new module (a module path),
    with a ``DeprecationWarning`` naming it; any other name is an AttributeError."""

    def __init__(self, old: str, names: Mapping[str, str]) -> None:
        self.old = old
        #: Each moved name -> the module it lives in now.
        self.names: Mapping[str, str] = MappingProxyType(dict(names))

    def __call__(self, name: str) -> Any:
        new = self.names.get(name)
        if new is None:
            raise AttributeError(f"module {self.old!r} has no attribute {name!r}")
        warnings.warn(
            f"{self.old}.{name} moved to {new}.{name}; import it from there (the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)


def moved(old: str, names: Mapping[str, str]) -> Moved:
    """The ``__getattr__`` of the module ``old`` whose ``names`` (name -> new module) moved out."""
    return Moved(old, names)
