"""Recognising a ``func`` built from the drop-in's metrics, so that it runs vectorised on the engine.

rliable calls ``func(scores)`` once per bootstrap replicate. Most ``func``\\ s are the README's lambdas over
:mod:`.metrics` (``lambda x: np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x)])``, the
sample-efficiency lambda ``[metrics.aggregate_iqm(x[..., f]) for f in range(x.shape[-1])]``,
``metrics.probability_of_improvement``, a performance profile). To recognise them, ``func`` is called once on
:class:`Probe` stand-ins for its arrays. The drop-in's metric functions, given a probe, return a :class:`Term`:
what to compute on a whole batch of replicates of the engine (:class:`..stats.bootstrap.Resample`), instead
of a number. Terms support arithmetic, so composed lambdas (``1 - gap(x)``, ``iqm(x) - iqm(y)`` of one array's
columns) stay symbolic; ``np.array([...])`` of terms is an object array of them.

Anything else a function does with a probe (``np.mean(x)``, ``x.sum()``, ``float(term)``, a comparison, an index
other than whole runs and tasks of one column) raises, and the caller falls back to calling ``func`` once per
replicate, which is always correct. The caller also checks the traced plan on the original data against
``func(scores)`` before trusting it (:meth:`Plan.agrees`), so a misread function can never give wrong numbers.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..stats.bootstrap import Resample


class NotVectorisable(Exception):
    """Raised while tracing when ``func`` does something the plan cannot express."""


class Batch:
    """What a :class:`Term` reads: the Resample of argument ``arg``'s column ``column`` (whole runs x tasks)."""

    def __init__(self, resample: Callable[[int, tuple[int, ...]], Resample], n_reps: int) -> None:
        self.resample = resample
        self.n_reps = n_reps


Evaluate = Callable[[Batch], np.ndarray]


class Term:
    """A scalar statistic of a replicate, known symbolically: ``evaluate(batch)`` gives its (R,) values."""

    __slots__ = ("evaluate",)

    def __init__(self, evaluate: Evaluate) -> None:
        self.evaluate = evaluate

    def _combine(self, other: Any, op: Callable[[np.ndarray, Any], np.ndarray], swap: bool = False) -> Term:
        right = _as_term(other)
        if swap:
            return Term(lambda b: op(right.evaluate(b), self.evaluate(b)))
        return Term(lambda b: op(self.evaluate(b), right.evaluate(b)))

    def __add__(self, other: Any) -> Term:
        return self._combine(other, np.add)

    def __radd__(self, other: Any) -> Term:
        return self._combine(other, np.add, swap=True)

    def __sub__(self, other: Any) -> Term:
        return self._combine(other, np.subtract)

    def __rsub__(self, other: Any) -> Term:
        return self._combine(other, np.subtract, swap=True)

    def __mul__(self, other: Any) -> Term:
        return self._combine(other, np.multiply)

    def __rmul__(self, other: Any) -> Term:
        return self._combine(other, np.multiply, swap=True)

    def __truediv__(self, other: Any) -> Term:
        return self._combine(other, np.divide)

    def __rtruediv__(self, other: Any) -> Term:
        return self._combine(other, np.divide, swap=True)

    def __neg__(self) -> Term:
        return Term(lambda b: -self.evaluate(b))

    def __pos__(self) -> Term:
        return self

    def __float__(self) -> float:
        raise NotVectorisable("a statistic converted to a number")

    def __bool__(self) -> bool:
        raise NotVectorisable("a statistic used as a truth value")


def _as_term(value: Any) -> Term:
    if isinstance(value, Term):
        return value
    if isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        constant = float(value)
        return Term(lambda b: np.full(b.n_reps, constant))
    raise NotVectorisable(f"cannot combine a statistic with {type(value).__name__}")


class Probe:
    """Stand-in for argument ``arg`` of ``func``: a ``(runs, tasks, *rest)`` array, or one column of it
    (``column``, an index into ``rest``) once indexed as ``x[..., f]`` / ``x[:, :, f]``."""

    def __init__(self, arg: int, shape: tuple[int, ...], column: tuple[int, ...] | None = None) -> None:
        self.arg = arg
        self.shape = shape
        self.column = column
        self.ndim = len(shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> Probe:
        if self.column is not None or self.ndim < 3:
            raise NotVectorisable("only the extra axes of a (runs, tasks, ...) array can be indexed")
        key = key if isinstance(key, tuple) else (key,)
        rest = self.ndim - 2
        if len(key) >= 1 and key[0] is Ellipsis:
            picks = key[1:]
            if len(picks) != rest:
                raise NotVectorisable("x[..., i] must pick one position on every extra axis")
        elif len(key) == self.ndim and all(_whole(k) for k in key[:2]):
            picks = key[2:]
        else:
            raise NotVectorisable("only x[..., i] or x[:, :, i] is recognised")
        column = []
        for k, size in zip(picks, self.shape[2:]):
            if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not -size <= int(k) < size:
                raise NotVectorisable("an extra axis indexed by something other than an integer in range")
            column.append(int(k) % size)
        return Probe(self.arg, self.shape[:2], tuple(column))

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise NotVectorisable("the scores were used as an array")

    def __iter__(self) -> Any:
        raise NotVectorisable("the scores were iterated over")

    def matrix(self) -> tuple[int, tuple[int, ...]]:
        """(arg, column) of a (runs, tasks) probe; anything else is not a matrix the metrics read."""
        if self.ndim != 2:
            raise NotVectorisable("a metric of a (runs, tasks, ...) array with more than two axes")
        return self.arg, self.column or ()


def _whole(key: Any) -> bool:
    return isinstance(key, slice) and key == slice(None)


def resample_term(probe: Probe, statistic: Callable[[Resample], np.ndarray]) -> Term:
    """The term ``statistic`` of the probe's replicates (a batched function of one Resample)."""
    arg, column = probe.matrix()
    return Term(lambda b: np.asarray(statistic(b.resample(arg, column)), dtype=float).reshape(b.n_reps))


class Plan:
    """A traced ``func``: one term per output value (``scalar``: ``func`` returned one number, not an array)."""

    def __init__(self, terms: Sequence[Term], scalar: bool) -> None:
        self.terms = list(terms)
        self.scalar = scalar

    def evaluate(self, batch: Batch) -> np.ndarray:
        """(R, k) values of every output on the batch's replicates."""
        return np.stack([t.evaluate(batch) for t in self.terms], axis=1)

    def agrees(self, batch: Batch, base: Any, rtol: float = 1e-9) -> bool:
        """Whether the plan on the original data (a one-replicate batch) equals ``func(scores)`` (to rounding:
        ``rtol``, coarser for float32 scores, which ``func`` sums in float32 and the plan in float64)."""
        try:
            got = self.evaluate(batch)[0]
            want = np.asarray(base, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            return False
        if got.shape != want.shape:
            return False
        atol = 1e-12 if rtol <= 1e-9 else rtol * max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
        return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))


def trace(func: Callable[..., Any], shapes: Sequence[tuple[int, ...]]) -> Plan | None:
    """Call ``func`` on probes of arrays with these shapes; the plan when every output is a term, else None."""
    probes = [Probe(i, tuple(int(n) for n in s)) for i, s in enumerate(shapes)]
    if any(p.ndim < 2 for p in probes):
        return None
    try:
        out = func(*probes)
    except Exception:  # any failure on a probe only means "not recognised": func is called per replicate
        return None
    if isinstance(out, Term):
        return Plan([out], scalar=True)
    if not isinstance(out, (np.ndarray, list, tuple)):
        return None
    flat = np.asarray(out, dtype=object)
    if flat.ndim != 1 or flat.size == 0 or not all(isinstance(t, Term) for t in flat):
        return None
    return Plan(list(flat), scalar=False)
