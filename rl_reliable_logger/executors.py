"""Where independent units of work run: one seam for every layer.

A *unit* is a pure function call on picklable arguments (a replicate range of one stream, a block of algorithm
pairs, one of Jordan's bound optimisations, one ``plan`` unit, one configuration of the tuning view). Because a
unit's result depends on its arguments only, where it runs never changes a number: :meth:`Executor.map` returns
the results in the order of the units, whichever executor ran them. The serial executor is the default and the
reference every other executor is tested against.

Example:
    >>> resolve(None).map(abs, [-2, 3, -5])
    [2, 3, 5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from .errors import InputError

T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` on every unit and returns the results in the units' order."""

    name: str

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> list[R]: ...


class SerialExecutor:
    """Every unit in this process, one after the other: the default and the reference."""

    name = "serial"

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> list[R]:
        return [fn(unit) for unit in units]


#: executor names accepted by ``executor=`` / ``--executor``, each with the factory that builds it
EXECUTORS: dict[str, Callable[[], Executor]] = {"serial": SerialExecutor}


def resolve(spec: str | Executor | None) -> Executor:
    """The executor named by ``spec`` (None: serial), or ``spec`` itself when it already is one."""
    if spec is None:
        return SerialExecutor()
    if isinstance(spec, str):
        factory = EXECUTORS.get(spec.strip().lower())
        if factory is None:
            raise InputError(f"`executor={spec!r}` is not an executor; choose one of {', '.join(EXECUTORS)}")
        return factory()
    if isinstance(spec, Executor):
        return spec
    raise InputError(
        f"`executor=` takes a name ({', '.join(EXECUTORS)}) or an executor object, got {type(spec).__name__}"
    )
