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

import copy
import importlib.util
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from .errors import InputError
from .wording import kw, said

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


#: In a Ray worker: the copy of the ``fn`` of the current :meth:`RayExecutor.map`, by object-store id (one at a time).
_worker_copy: dict[str, Any] = {}


def _call(fn_box: list[Any], unit: T) -> Any:
    """A unit as a Ray task. ``fn_box`` holds the object-store reference of ``fn``, which
    :meth:`RayExecutor.map` put there once; each worker copies it once per map, not once per unit.

    The copy matters: Ray hands out read-only views of its shared memory, and on those views the iterative
    solves of Jordan's bounds ended up to 1e-9 from the serial executor's (measured); on copies they give the
    serial executor's bits, given BLAS started with the same thread count (Ray starts its workers with
    ``OMP_NUM_THREADS=1``; a driver started with 2 threads and limited to 1 still differs in the last bits).
    """
    import ray

    ref = fn_box[0]
    key = ref.hex()
    if key not in _worker_copy:
        _worker_copy.clear()
        _worker_copy[key] = copy.deepcopy(ray.get(ref))
    return _worker_copy[key](copy.deepcopy(unit))


class RayExecutor:
    """Every unit a Ray task (``ray.remote``), results gathered with ``ray.get`` in the units' order.

    Ray is started on first use: ``ray.init()`` connects to the cluster named by ``RAY_ADDRESS`` (Ray's usual
    variable) or starts a local one on this machine; a Ray the caller already initialised (``ray.init(...)``,
    e.g. ``num_cpus=2``) is used as it is. ``fn`` (with the arrays it carries) goes to the object store once,
    not once per unit. Ray is an optional dependency: ``pip install rl_reliable_logger[ray]``.
    """

    name = "ray"
    #: the module this executor needs: :func:`check` looks for it without importing it
    requires = "ray"

    def __init__(self) -> None:
        try:
            import ray
        except ImportError:
            raise InputError(
                said(
                    kw("executor='ray'"),
                    " needs Ray, which is not installed: pip install 'rl_reliable_logger[ray]' (or use the default "
                    "serial executor)",
                )
            ) from None
        self._ray = ray
        self._remote: Any = None

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> list[R]:
        if not units:
            return []
        ray = self._ray
        if not ray.is_initialized():
            try:
                ray.init()  # RAY_ADDRESS set: connect to that cluster; else start a local one
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = os.environ.get("RAY_ADDRESS")
                raise InputError(
                    f"could not start Ray{f' at RAY_ADDRESS={where!r}' if where else ''}: {err}; check the "
                    "cluster (`ray status`) or unset RAY_ADDRESS to start a local one"
                ) from None
        if self._remote is None:
            self._remote = ray.remote(_call)
        fn_box = [ray.put(fn)]  # in a list, so that Ray passes the reference instead of the value
        return list(ray.get([self._remote.remote(fn_box, unit) for unit in units]))


#: executor names accepted by ``executor=`` / ``--executor``, each with the factory that builds it
EXECUTORS: dict[str, Callable[[], Executor]] = {"serial": SerialExecutor, "ray": RayExecutor}


def check(spec: str | Executor | None) -> str | Executor | None:
    """``spec`` (a name lower-cased) if :func:`resolve` would accept it, without building the executor (so
    validating ``executor="ray"`` neither imports nor starts Ray, it only checks Ray is installed); an
    :class:`InputError` naming the choices, or what to install, if not."""
    if spec is None or isinstance(spec, Executor):
        return spec
    if isinstance(spec, str) and spec.strip().lower() in EXECUTORS:
        name = spec.strip().lower()
        module = getattr(EXECUTORS[name], "requires", None)
        if module is not None and importlib.util.find_spec(module) is None:
            EXECUTORS[name]()  # raises its own message (what to install)
        return name
    return resolve(spec)  # raises the message


def resolve(spec: str | Executor | None) -> Executor:
    """The executor named by ``spec`` (None: serial), or ``spec`` itself when it already is one."""
    if spec is None:
        return SerialExecutor()
    if isinstance(spec, str):
        factory = EXECUTORS.get(spec.strip().lower())
        if factory is None:
            raise InputError(
                said(kw(f"executor={spec!r}"), f" is not an executor; choose one of {', '.join(EXECUTORS)}")
            )
        return factory()
    if isinstance(spec, Executor):
        return spec
    raise InputError(
        said(
            kw("executor="), f" takes a name ({', '.join(EXECUTORS)}) or an executor object, got {type(spec).__name__}"
        )
    )
