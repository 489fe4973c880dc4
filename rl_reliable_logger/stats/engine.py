"""Which engine computes the bootstrap statistics: compiled kernels (numba) when numba imports, numpy otherwise.

Callers (``analysis``) ask for a batched statistic or a replicate computation here and never learn
which engine ran it: both draw exactly the same replicates from the same raw uniforms and agree to
rounding (tested).

Which engine runs a call: ``RL_RELIABLE_ENGINE=auto`` (the default) uses the kernels for every call that
draws at least :data:`SMALL_WORK` values, and for every call once a kernel is loaded in the process
(:func:`.kernels.loaded`); before that it runs small calls in numpy, because loading the compiled kernels
costs about 0.4 s in a new process (and compiling them about 10 s on a fresh install), far more than numpy
needs for a small analysis. The numbers are the same either way. ``RL_RELIABLE_ENGINE=numba`` or
``numpy`` forces one engine (``RL_RELIABLE_NO_NUMBA=1`` is the same as ``numpy``).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from . import bootstrap, kernels, metrics, profiles
from .bootstrap import Cells, Resample
from .engine_choice import choice
from .registry import Statistic

Statistic_ = Callable[[Resample], np.ndarray]

_NUMBA = importlib.util.find_spec("numba") is not None
#: whether ``import numba`` works, tried on the first compiled() that needs it (None: not tried yet)
_importable: list[bool] = []

#: values drawn by one call (replicates × runs) below which ``auto`` runs it in numpy (about 30 ms there)
SMALL_WORK = 1_000_000


def compiled(work: int | None = None) -> bool:
    """True when the compiled kernels run a call that draws ``work`` values (None: a call of unknown size).

    A numba that is installed but does not import (e.g. built for another numpy) falls back to numpy with a
    warning, rather than failing every statistic. The import is tried only here, on the statistics path,
    where the kernels would import numba anyway.
    """
    asked = choice()
    # once a kernel is loaded in this process its cost is paid: ``auto`` then uses the kernels for small calls too
    small = work is not None and work < SMALL_WORK and not kernels.loaded()
    if not _NUMBA or asked == "numpy" or (asked == "auto" and small):
        return False
    if not _importable:
        try:
            import numba  # noqa: F401
        except Exception as exc:  # any failure to import means: no compiled engine
            warnings.warn(f"numba is installed but does not import ({exc!r}); using the numpy engine", stacklevel=2)
            _importable.append(False)
        else:
            _importable.append(True)
    return _importable[0]


def name() -> str:
    """``"numba"`` or ``"numpy"``: the engine :func:`compiled` picks for a call of unknown size."""
    return "numba" if compiled() else "numpy"


def aggregates(metric_objs: Sequence[metrics.Metric], work: int | None = None) -> Statistic_:
    """(R, n_metrics) values of the metrics on a batch of replicates (``work``: see :func:`compiled`)."""
    specs = [m.spec for m in metric_objs]
    if compiled(work) and all(spec is not None for spec in specs):
        return lambda r: kernels.fused_metrics(r, specs)  # type: ignore[arg-type]
    return lambda r: np.stack([m(r) for m in metric_objs], axis=1)


def aggregate_replicates(
    cells: Cells,
    metric_objs: Sequence[metrics.Metric],
    reps: int,
    rng: np.random.Generator,
    *,
    task_bootstrap: bootstrap.TaskBootstrap = False,
    chunk_bytes: int = bootstrap.DEFAULT_CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """(reps, n_metrics) replicates of the metrics: ``bootstrap.replicates(cells, aggregates(...), ...)``.

    When the compiled kernel can generate the generator's words itself (built-in metrics, no task
    resampling, numpy's PCG64) it does, without storing them: the same replicates, and ``rng`` ends where
    ``bootstrap.replicates`` leaves it (tested).
    """
    specs = [m.spec for m in metric_objs]
    work = size(cells, reps)
    if all(s is not None for s in specs) and _streams(rng, task_bootstrap, work):
        return _stream_replicates(cells, specs, reps, rng, progress)
    return bootstrap.replicates(
        cells,
        aggregates(metric_objs, work),
        reps,
        rng,
        task_bootstrap=task_bootstrap,
        chunk_bytes=chunk_bytes,
        progress=progress,
    )


def profile_replicates(
    cells: Cells,
    taus: np.ndarray,
    gammas: np.ndarray,
    reps: int,
    rng: np.random.Generator,
    *,
    task_bootstrap: bootstrap.TaskBootstrap = False,
    chunk_bytes: int = bootstrap.DEFAULT_CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """(reps, 2T + G) replicates of :func:`profile_curves`, by the kernel's own words where it can (as
    :func:`aggregate_replicates`)."""
    work = size(cells, reps)
    if _streams(rng, task_bootstrap, work):
        return _stream_replicates(cells, _profile_specs(taus, gammas), reps, rng, progress)
    return bootstrap.replicates(
        cells,
        profile_curves(taus, gammas, work),
        reps,
        rng,
        task_bootstrap=task_bootstrap,
        chunk_bytes=chunk_bytes,
        progress=progress,
    )


def task_mean_replicates(
    cells: Cells,
    reps: int,
    rng: np.random.Generator,
    *,
    chunk_bytes: int = bootstrap.DEFAULT_CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """(reps, M) replicates of every task's mean, by the kernel's own words where it can (as
    :func:`aggregate_replicates`)."""
    work = size(cells, reps)
    if _streams(rng, False, work):
        return _stream_replicates(cells, [(Statistic.MEAN, 0.0)], reps, rng, progress, task_means=True)
    return bootstrap.replicates(cells, task_means(work), reps, rng, chunk_bytes=chunk_bytes, progress=progress)


def size(cells: Cells, reps: int) -> int:
    """Values a bootstrap of ``reps`` replicates of ``cells`` draws: the size :func:`compiled` decides on."""
    return int(reps) * int(cells.values.size)


def _streams(rng: np.random.Generator, task_bootstrap: bootstrap.TaskBootstrap, work: int | None = None) -> bool:
    """True when the compiled kernel generates the replicates' words itself (no task resampling, PCG64)."""
    return compiled(work) and not task_bootstrap and kernels.is_pcg64(rng)


def _stream_replicates(
    cells: Cells,
    specs: list,
    reps: int,
    rng: np.random.Generator,
    progress: Callable[[int], None] | None,
    *,
    task_means: bool = False,
) -> np.ndarray:
    """The kernel's values (or, with ``task_means``, its slot means) of ``reps`` replicates drawn from ``rng``."""
    out = np.empty((reps, cells.n_tasks if task_means else len(specs)))
    done = 0
    while done < reps:  # in parts only to report progress: the words do not depend on the split
        n = min(reps - done, _STREAM_PART)
        out[done : done + n] = kernels.fused_metrics_stream(cells, specs, n, rng, task_means=task_means)
        done += n
        if progress is not None:
            progress(n)
    return out


#: replicates per compiled call when the kernel generates its own words (progress is reported after each)
_STREAM_PART = 10_000


def _profile_specs(taus: np.ndarray, gammas: np.ndarray) -> list:
    return (
        [(Statistic.FRACTION_ABOVE, float(t)) for t in taus]
        + [(Statistic.TASKS_ABOVE, float(t)) for t in taus]
        + [(Statistic.OPTIMALITY_GAP, float(g)) for g in gammas]
    )


def profile_curves(taus: np.ndarray, gammas: np.ndarray, work: int | None = None) -> Statistic_:
    """(R, 2T + G): run-score profile, average-score profile (both at ``taus``) and gap curve (at ``gammas``)."""
    if compiled(work):
        specs = _profile_specs(taus, gammas)
        return lambda r: kernels.fused_metrics(r, specs)
    return lambda r: profiles.profile_curves(r, taus, gammas)


def task_means(work: int | None = None) -> Statistic_:
    """(R, S) mean of every task slot."""
    if compiled(work):
        return lambda r: kernels.fused_metrics(r, [(Statistic.MEAN, 0.0)], task_means=True)[1]
    return lambda r: r.task_means()


def draw_counts(resample: Resample, work: int | None = None) -> np.ndarray:
    """(R, K) unsigned draw counts of every run (uint16 when runs per task < 65,536: bounded memory)."""
    if compiled(work):
        return kernels.draw_counts(resample)
    small = np.uint16 if int(resample.cells.sizes.max()) < 2**16 else np.uint32
    return resample.counts().astype(small)


def draw_count_replicates(cells: Cells, reps: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`draw_counts` of ``bootstrap.draw(cells, reps, rng)``, by the kernel's own words where it can."""
    work = size(cells, reps)
    if _streams(rng, False, work):
        return kernels.draw_counts_stream(cells, reps, rng)
    return draw_counts(bootstrap.draw(cells, reps, rng), work)


def improvement(cells_x: Cells, counts_x: np.ndarray, cells_y: Cells, counts_y: np.ndarray) -> np.ndarray:
    """(R,) P(X > Y) of independent replicates of X and Y given by their draw counts."""
    if compiled(counts_x.size + counts_y.size):
        return kernels.improvement(cells_x, counts_x, cells_y, counts_y)
    return metrics.improvement_replicates(cells_x, counts_x, cells_y, counts_y)
