"""Two quantiles of every column of a bootstrap distribution: the numbers of ``np.quantile``, found faster.

``np.quantile(dist, [low, high], axis=0)`` (method ``linear``) partitions every column for four ranks and
interpolates. Once the compiled kernels are loaded, :func:`quantile_pair` selects the same four order statistics in a compiled
kernel (in parallel over columns, see :func:`.kernels.select_ranks`) and interpolates them with numpy's own
formula (``numpy/lib/_function_base_impl.py``: ``_get_indexes``, ``_get_gamma``, ``_lerp``), so the result is
bit for bit the one ``np.quantile`` returns (tested on many shapes): intervals do not depend on the engine.
Columns with a NaN or a negative zero (where the order of equal values decides what is returned) are left
to ``np.quantile`` itself.
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .engine_choice import choice


def compiled_selection() -> bool:
    """True when the compiled selection is used: once the statistics' engine has run a kernel (numba is loaded,
    its cost paid: selection alone never pays it), unless ``RL_RELIABLE_NO_NUMBA`` or
    ``RL_RELIABLE_ENGINE=numpy`` forces numpy."""
    return choice() != "numpy" and kernels.loaded()


def quantile_pair(
    dist: np.ndarray, low: float, high: float, *, compiled: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles ``low`` and ``high`` of every column of ``dist`` (B, ...): ``np.quantile(dist, [low, high],
    axis=0)`` split in two, by compiled selection when ``compiled`` (default: :func:`compiled_selection`)."""
    dist = np.asarray(dist)
    if compiled is None:
        compiled = compiled_selection()
    usable = dist.dtype == np.float64 and dist.ndim >= 1 and dist.shape[0] > 0 and dist.size > 0
    if not (compiled and usable and 0.0 <= low <= 1.0 and 0.0 <= high <= 1.0):
        both = np.quantile(dist, [low, high], axis=0)
        return both[0], both[1]
    n = dist.shape[0]
    q = np.array([low, high], dtype=np.float64)
    # numpy's _get_indexes / _get_gamma for method "linear": virtual index (n - 1)·q, its floor and the next
    # rank; at or past the last rank both are -1 (the maximum) and gamma is measured from -1
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    previous_i = previous.astype(np.intp)
    following_i = following.astype(np.intp)
    gamma = virtual - previous_i
    wanted = np.concatenate([previous_i % n, following_i % n])
    ranks, where = np.unique(wanted, return_inverse=True)
    values, unusual = kernels.select_ranks(_parts(dist), ranks)
    a = values[where[:2]]  # (2, C): the order statistic at each quantile's previous rank
    b = values[where[2:]]  # ... and at its next one
    # numpy's _lerp: a + (b - a)·g, but b - (b - a)·(1 - g) where g >= 0.5
    t = gamma[:, None]
    diff = b - a
    out = np.add(a, diff * t)
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    if unusual.any():
        out[:, unusual] = np.quantile(dist.reshape(n, -1)[:, unusual], q, axis=0)
    out = out.reshape((2,) + dist.shape[1:])
    return out[0], out[1]


def _parts(dist: np.ndarray) -> np.ndarray:
    """``dist`` (B, ...) as the kernel reads it without a copy where it can: (B, C) when row-major, or (P, B, M) when
    ``dist`` is a (B, P, M) view of P row-major blocks of replicates (columns part by part either way)."""
    if dist.flags.c_contiguous:
        return dist.reshape(dist.shape[0], -1)
    if dist.ndim == 3:
        blocks = np.moveaxis(dist, 1, 0)
        if blocks.flags.c_contiguous:
            return blocks
    return np.ascontiguousarray(dist).reshape(dist.shape[0], -1)
