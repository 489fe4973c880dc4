"""Computing intervals: :func:`estimate` (a table's statistics, each by the method the request gives it),
:func:`estimate_stacked` (many distributions at a bounded memory) and :func:`interval` (one requested method, for
code outside a table). ``tail=`` bounds both ends (``two-sided``, the default) or one (``less``, ``greater``:
scipy.stats.bootstrap's ``alternative``), at the same level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .bounds import (
    DEGENERATE_SHARE,
    acceleration,
    check_tail,
    degenerate_share,
    expanded_level,
    one_sided,
    sided_level,
    studentized_interval,
    studentized_intervals,
    tie_tolerance,
)
from .methods import IntervalMethod, requested
from .request import ResamplingRequest
from .result import Clip, ConfidenceInterval, Fallback, IntervalResult, Sample

if TYPE_CHECKING:  # numpy loads when an interval is computed
    import numpy as np

    from .methods import Bounds


def fallback_note(what: str, share: float = 1.0) -> str:
    """The sentence that says a bootstrap-t interval fell back to the expanded one, and why: ``share``, the part of
    its replicates whose standard error is near 0 (:func:`.bounds.degenerate_share`), above
    :data:`.bounds.DEGENERATE_SHARE`; else (at most that) its studentized replicates are all equal.

    Example:
        >>> fallback_note("the mean", 0.037)
        "bootstrap-t: the mean's studentized replicates are degenerate (3.7% of the resamples have a standard error near 0: they repeat one score, or tied scores, in every task; at most 1% may be dropped), so its interval is the expanded percentile one"
    """
    if share >= 1.0:
        why = "the runs it uses have no spread"
    elif share > DEGENERATE_SHARE:
        why = (
            f"{percent(share)} of the resamples have a standard error near 0: they repeat one score, or tied scores, "
            f"in every task; at most {percent(DEGENERATE_SHARE)} may be dropped"
        )
    else:
        why = "every studentized replicate is equal"
    return f"bootstrap-t: {what}'s studentized replicates are degenerate ({why}), so its interval is the expanded percentile one"


def clip_note(what: str, moved: int) -> str:
    """The sentence that says ``moved`` bounds of ``what``'s interval fell outside the values its estimand can take
    (:attr:`.result.Sample.hard_range`) and were moved to that range's edge (:attr:`.result.IntervalResult.clipped`).

    Example:
        >>> clip_note("the optimality_gap", 1)
        "the optimality_gap's interval: 1 bound outside the values the statistic can take was moved to the range's edge"
    """
    bounds = "1 bound" if moved == 1 else f"{moved} bounds"
    verb = "was" if moved == 1 else "were"
    return f"{what}'s interval: {bounds} outside the values the statistic can take {verb} moved to the range's edge"


def clip_to_range(low: Any, high: Any, hard_range: tuple[Any, Any] | None) -> tuple[Any, Any, tuple[Clip, ...]]:
    """``(low, high)`` with every bound outside ``hard_range`` (``(low, high)``, scalars or one per statistic of the
    last axis; None: unbounded) moved to the range's edge, and a :class:`.result.Clip` per statistic with a bound
    moved. Elementwise: the same whatever the chunking or the input's row order. NaN stays NaN.

    Example:
        >>> import numpy as np
        >>> low, high, clips = clip_to_range(np.array([-0.2, 0.1]), np.array([0.5, 1.3]), (0.0, 1.0))
        >>> low.tolist(), high.tolist(), clips
        ([0.0, 0.1], [0.5, 1.0], (Clip(statistic=0, moved=1), Clip(statistic=1, moved=1)))
    """
    import numpy as np

    if hard_range is None or np.size(low) == 0:
        return low, high, ()
    low, high = np.array(low, dtype=float), np.array(high, dtype=float)
    edge_low = np.broadcast_to(np.asarray(hard_range[0], dtype=float), np.shape(low))
    edge_high = np.broadcast_to(np.asarray(hard_range[1], dtype=float), np.shape(low))
    moved = np.zeros(np.shape(low), dtype=int)
    for bound in (low, high):
        out = (bound < edge_low) | (bound > edge_high)
        moved += out
        bound[...] = np.where(out, np.clip(bound, edge_low, edge_high), bound)
    per_statistic = moved.reshape(-1, moved.shape[-1]).sum(axis=0) if moved.ndim else moved.reshape(1)
    clips = tuple(Clip(int(j), int(n)) for j, n in enumerate(per_statistic) if n)
    return low, high, clips


def percent(share: float) -> str:
    """A share as a percentage, 2 significant digits (``3.7%``, ``12%``, ``1%``)."""
    return f"{100 * share:.2g}%"


def estimate(
    request: ResamplingRequest,
    table: str,
    dist: np.ndarray,
    point: np.ndarray,
    sample: Sample = Sample(),
    *,
    kinds: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    tail: str = "two-sided",
) -> IntervalResult:
    """The intervals of ``table``'s statistics from their replicates ``dist`` ``(B, n)`` and estimates ``point``
    ``(n,)``, each by the method ``request`` gives it: with ``kinds`` (each statistic's kind, on the aggregate
    tables) every statistic its own (:meth:`ResamplingRequest.statistic_method`; ``labels`` name them in a fallback
    sentence), else the table's method for every one (of any shape). ``tail``: ``two-sided``, or a one-sided bound at
    the request's level (``less``: ``(-inf, high]``; ``greater``: ``[low, inf)``).

    Example:
        >>> import numpy as np
        >>> request = ResamplingRequest("percentile", 0.9)
        >>> result = estimate(request, "aggregates", np.arange(100.0)[:, None], np.array([50.0]))
        >>> [round(float(v[0]), 2) for v in result.confidence_interval], result.methods
        ([4.95, 94.05], ('percentile',))
        >>> upper = estimate(request, "aggregates", np.arange(100.0)[:, None], np.array([50.0]), tail="less")
        >>> [round(float(v[0]), 2) for v in upper.confidence_interval], round(float(upper.standard_error[0]), 2)
        ([-inf, 89.1], 29.01)
    """
    import numpy as np

    ci, spec = sided_level(request.level, tail), request.table_method(table)
    point = np.asarray(point, dtype=float)
    if kinds is None and spec.from_runs is not None:
        low, high, clips = clip_to_range(*spec.from_runs(sample.runs, ci), sample.hard_range)
        return IntervalResult(ConfidenceInterval(*one_sided(low, high, tail)), (spec.name,), clipped=clips)
    methods = [spec] * point.shape[-1] if kinds is None else [request.statistic_method(table, k) for k in kinds]
    level_tail = sample.level(ci) if sample.level is not None and any(m.needs_tail for m in methods) else None
    accel = None
    if spec.needs_jackknife:
        assert sample.jackknife is not None, f"{spec.name} needs the leave-one-run-out values"
        accel = acceleration(*sample.jackknife())
    block = [j for j, m in enumerate(methods) if _in_block(m, spec)]
    if spec.needs_tail and level_tail is None and block:  # (a statistic of its own, e.g. the order-statistic median,
        # needs none: the table's method may need it only for the statistics it computes)
        raise ValueError("the expanded percentile interval needs the level of the sample the replicates are from")
    if len(block) == len(methods):
        low, high = _bounds(spec)(dist, point, ci, level_tail, accel)
    else:
        low, high = np.full(point.shape, np.nan), np.full(point.shape, np.nan)
        if block:
            low[block], high[block] = _bounds(spec)(
                dist[:, block], point[block], ci, _take(level_tail, block), _take(accel, block)
            )
    notes: list[tuple[str, Fallback]] = []
    for j, m in enumerate(methods):
        if j not in block:
            label = labels[j] if labels is not None else f"statistic {j}"
            kind = kinds[j] if kinds is not None else "*"
            extras = (_at(level_tail, j), _at(accel, j))
            low[j], high[j] = _own(m, dist[:, j], point[j], ci, extras, sample, (kind, label, j), notes)
    low, high, clips = clip_to_range(low, high, sample.hard_range)
    bounds = ConfidenceInterval(*one_sided(low, high, tail))
    return _result(bounds, methods, notes, dist, clips)


def estimate_stacked(
    request: ResamplingRequest,
    table: str,
    shape: tuple[int, int, int],
    fill: Callable[[int, np.ndarray], None],
    points: Sequence[np.ndarray],
    samples: Sequence[Sample],
    *,
    kinds: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> list[IntervalResult]:
    """:func:`estimate` of ``count`` distributions of ``rows`` replicates and ``width`` statistics each
    (``shape``), distribution ``i`` written by ``fill(i, out)`` into a ``(rows, width)`` block, with its estimates
    ``points[i]`` and its ``samples[i]``. The blocks are stacked ``request.chunk_bytes`` at a time (at least one),
    as one ``(rows, parts, width)`` view the selection reads without a copy: the same numbers as one call per
    distribution, in one selection pass per chunk. Returns one result per distribution (without its replicates:
    ``bootstrap_distribution`` is None, the stack is reused). Two-sided: a one-sided bound is :func:`estimate`'s
    ``tail=``, one distribution at a time."""
    import numpy as np

    count, rows, width = shape
    ci, spec = request.level, request.table_method(table)
    if kinds is None and spec.from_runs is not None:  # from the runs themselves: no replicates needed
        empty = np.empty((0, width))
        return [estimate(request, table, empty, points[i], samples[i]) for i in range(count)]
    methods = [spec] * width if kinds is None else [request.statistic_method(table, k) for k in kinds]
    needs_tail = any(m.needs_tail for m in methods)
    block = [j for j, m in enumerate(methods) if _in_block(m, spec)]
    studentized = [c for c, m in enumerate(methods) if m.studentized and c not in block and kinds is not None]
    replicated = [c for c, m in enumerate(methods) if c not in block and _from_replicates(m)]
    out: list[IntervalResult] = []
    per_stack = max(1, request.chunk_bytes // max(1, rows * width * 8))
    for i in range(0, count, per_stack):
        j = min(count, i + per_stack)
        stack = np.empty((j - i, rows, width))
        for k in range(i, j):
            fill(k, stack[k - i])
        point = np.concatenate([np.asarray(p, dtype=float) for p in points[i:j]]).reshape(j - i, width)
        level_tail = None
        if needs_tail:
            level_tail = np.stack([np.broadcast_to(samples[k].level(ci), (width,)) for k in range(i, j)])  # type: ignore[misc]
        view = np.moveaxis(stack, 0, 1)
        if len(block) == width:
            low, high = _bounds(spec)(view, point, ci, level_tail, None)
        else:
            low, high = np.full(point.shape, np.nan), np.full(point.shape, np.nan)
            if block:
                low[:, block], high[:, block] = _bounds(spec)(
                    view[..., block], point[:, block], ci, _take(level_tail, block), None
                )
        # a statistic by a method of its own from its replicates (the median's normal interval under bootstrap-t):
        # every distribution of the stack at once, each one's column contiguous, as a call per distribution reads it
        for c in replicated:
            tail_c = None if level_tail is None else level_tail[:, c]
            low[:, c], high[:, c] = _bounds(methods[c])(np.asfortranarray(view[..., c]), point[:, c], ci, tail_c, None)
        # a studentized statistic's intervals: every distribution of the stack at once (NaN: falls back, below)
        student = {c: _studentized_parts(samples[i:j], kinds[c], ci) for c in studentized}  # type: ignore[index]
        for k in range(i, j):
            notes: list[tuple[str, Fallback]] = []
            for c, m in enumerate(methods):
                if c in block or c in replicated:
                    continue
                if c in student and not np.isnan(student[c][0][k - i]):
                    low[k - i, c], high[k - i, c] = student[c][0][k - i], student[c][1][k - i]
                    continue
                label = labels[c] if labels is not None else f"statistic {c}"
                kind = kinds[c] if kinds is not None else "*"
                at = (None if level_tail is None else level_tail[k - i, c], None)
                low[k - i, c], high[k - i, c] = _own(
                    m, stack[k - i][:, c], point[k - i, c], ci, at, samples[k], (kind, label, c), notes
                )
            low_k, high_k, clips = clip_to_range(low[k - i], high[k - i], samples[k].hard_range)
            result = ConfidenceInterval(np.reshape(low_k, -1), np.reshape(high_k, -1))
            out.append(_result(result, methods, notes, clips=clips))
    return out


def _studentized_parts(samples: Sequence[Sample], kind: str, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap-t intervals of one statistic (of ``kind``) of several distributions, from each one's
    ``standard_errors(kind)``: one :func:`.bounds.studentized_intervals` call when they have as many replicates,
    else one per distribution; NaN where it is degenerate."""
    import numpy as np

    found = [sample.standard_errors(kind) for sample in samples]  # type: ignore[misc]
    if len({len(dist) for dist, _ in found}) == 1:
        stats = np.column_stack([dist[:, 0] for dist, _ in found])  # (B, parts), each read contiguous
        errors = np.column_stack([dist[:, 1] for dist, _ in found])
        points = np.stack([point for _, point in found], axis=1)  # (2, parts)
        return studentized_intervals(stats, errors, points[0], points[1], ci)
    ends = [studentized_interval(dist, point, ci) or (np.nan, np.nan) for dist, point in found]
    return np.array([e[0] for e in ends]), np.array([e[1] for e in ends])


def _result(
    bounds: ConfidenceInterval,
    methods: Sequence[IntervalMethod],
    notes: list[tuple[str, Fallback]],
    dist: Any = None,
    clips: tuple[Clip, ...] = (),
) -> IntervalResult:
    """The result with its fallbacks' sentences (``notes``) and records (``fallbacks``), and its bounds moved into
    their hard range (``clipped``)."""
    return IntervalResult(
        bounds,
        tuple(m.name for m in methods),
        tuple(text for text, _ in notes),
        bootstrap_distribution=dist,
        fallbacks=tuple(fallback for _, fallback in notes),
        clipped=clips,
    )


def _in_block(method: IntervalMethod, table: IntervalMethod) -> bool:
    """A statistic whose interval is the table method's bounds: computed with the others, in one pass."""
    return not method.studentized and method.from_runs is None and method.bounds is table.bounds


def _from_replicates(method: IntervalMethod) -> bool:
    """A statistic's own method that is computed from its replicates alone (not studentized, not from the runs, no
    acceleration): its bounds take every distribution of a stack at once."""
    return (
        not method.studentized and method.from_runs is None and method.bounds is not None and not method.needs_jackknife
    )


def _bounds(spec: IntervalMethod) -> Bounds:
    assert spec.bounds is not None, f"{spec.name} is not computed from replicates"
    return spec.bounds


def _take(values: Any, columns: list[int]) -> Any:
    """The ``columns`` of a per-statistic value (last axis); a scalar or None as it is."""
    import numpy as np

    return values if values is None or np.ndim(values) == 0 else np.asarray(values)[..., columns]


def _at(values: Any, j: int) -> Any:
    import numpy as np

    return values if values is None or np.ndim(values) == 0 else np.asarray(values)[..., j]


def _own(
    method: IntervalMethod,
    dist: np.ndarray,
    point: Any,
    ci: float,
    extras: tuple[Any, Any],
    sample: Sample,
    named: tuple[str, str, int],
    notes: list[tuple[str, Fallback]],
) -> tuple[Any, Any]:
    """One statistic's interval by its own method (not the table's): studentized (falling back, with a sentence and
    its :class:`Fallback` in ``notes``, to the method's bounds), from the runs, or from its replicates. ``extras``:
    its tail and acceleration; ``named``: its kind (whose standard errors a studentized interval reads), its label
    (for the sentence) and its index."""
    tail, accel = extras
    kind, label, index = named
    if method.studentized:
        assert sample.standard_errors is not None, "a studentized interval needs the standard errors' replicates"
        replicates = sample.standard_errors(kind)
        found = studentized_interval(*replicates, ci)
        if found is not None:
            return found
        if not _constant(dist, point):  # replicates all equal to the estimate: every method gives that point
            share = degenerate_share(*replicates)
            text = (f"{sample.name}: " if sample.name else "") + fallback_note(label, share)
            notes.append((text, Fallback(index, share)))
    elif method.from_runs is not None:
        return method.from_runs(sample.runs, ci)
    return _bounds(method)(dist, point, ci, tail, accel)


def _constant(dist: np.ndarray, point: Any) -> bool:
    """Whether every replicate equals the estimate (within :func:`tie_tolerance`): e.g. the optimality gap when every
    run scores at or above γ. No interval has width there, so a studentized one falling back changes nothing."""
    import numpy as np

    values, est = np.asarray(dist, dtype=float), np.asarray(point, dtype=float)
    tol = tie_tolerance(values.reshape(len(values), -1), est.reshape(-1))
    return bool(np.all(np.abs(values.reshape(len(values), -1) - est.reshape(-1)) <= tol))


def studentized_difference(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The replicates and estimate of (stat(X) - stat(Y), its standard error) from each algorithm's (stat, se)
    replicates ``"dist"`` and estimate ``"point"``, on their common replicates: the studentized difference's
    :attr:`Sample.standard_errors` (``t* = (d* - d) / sqrt(se_x*² + se_y*²)``)."""
    import numpy as np

    n = min(len(x["dist"]), len(y["dist"]))
    dx, dy = x["dist"][:n], y["dist"][:n]
    dist = np.column_stack([dx[:, 0] - dy[:, 0], np.hypot(dx[:, 1], dy[:, 1])])
    point = np.array([x["point"][0] - y["point"][0], np.hypot(x["point"][1], y["point"][1])])
    return dist, point


def interval(
    dist: np.ndarray,
    point: np.ndarray,
    *,
    ci: float = 0.95,
    method: str = "percentile",
    jackknife: np.ndarray | None = None,
    strata: np.ndarray | None = None,
    cells: Any = None,
    tail: str | float | np.ndarray | None = "two-sided",
) -> tuple[np.ndarray, np.ndarray]:
    """Confidence interval (low, high) of each statistic from its bootstrap distribution, by one requested method.

    Args:
        dist: (B, ...) bootstrap replicates.
        point: (...) estimate on the original data.
        ci: confidence level, e.g. 0.95.
        method: a requestable method (``percentile``, the default, ``basic``, ``bc``, ``bca``, ``expanded``,
            ``bootstrap-t``); this function gives it what its declaration needs. ``bca`` needs ``jackknife``, the
            (J, ...) leave-one-run-out values, from which each statistic gets its *own* acceleration; pass
            ``strata`` = :func:`..bootstrap.jackknife_tasks` for the stratified acceleration
            (:func:`.bounds.acceleration`). ``expanded`` (Hesterberg's expanded percentile interval for small
            samples, stratified by cell) needs the ``cells`` the replicates were drawn from
            (:func:`.bounds.expanded_level`) or its tail probability as ``tail``; so does ``bootstrap-t``, here
            without standard errors the expanded interval (:func:`estimate` studentizes the mean). For a statistic
            of several algorithms (a difference, P(X > Y)) pass every algorithm's cells: the level pools them.
        tail: the side(s) bounded: ``two-sided`` (the default), ``less`` (``(-inf, high]``) or ``greater``
            (``[low, inf)``), each at level ``ci``. A number (or one per column, e.g. :func:`.bounds.task_levels`)
            is instead the expanded tail probability of a two-sided interval, in place of the one
            :func:`.bounds.expanded_level` gives.

    The bias correction counts replicates equal to the estimate as half below; "equal" is within
    :func:`.bounds.tie_tolerance` of it, so that the estimate and its replicates, summed in different orders, find
    the same ties whatever the input's row order or scale.

    Example:
        >>> import numpy as np
        >>> dist, point = np.arange(101.0)[:, None], np.array([50.0])
        >>> [round(float(v[0]), 6) for v in interval(dist, point, ci=0.9)]
        [5.0, 95.0]
        >>> [round(float(v[0]), 6) for v in interval(dist, point, ci=0.9, tail="greater")]  # the 10th percentile
        [10.0, inf]
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    spec = requested(method)
    import numpy as np

    sides, level_tail = (check_tail(tail), None) if isinstance(tail, str) else ("two-sided", tail)
    level = sided_level(ci, sides)
    point = np.asarray(point, dtype=float)
    if spec.needs_tail and level_tail is None:
        if cells is None:
            raise ValueError("the expanded percentile interval needs the cells the replicates were drawn from")
        level_tail = expanded_level(cells, level)
    accel = None
    if spec.needs_jackknife:
        if jackknife is None:
            raise ValueError(f"{method} needs the jackknife values of each statistic")
        accel = acceleration(jackknife, strata)
    return one_sided(*_bounds(spec)(dist, point, level, level_tail, accel), sides)
