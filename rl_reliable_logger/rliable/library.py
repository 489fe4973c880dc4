"""rliable 1.2's ``library`` module on rl_reliable_logger's bootstrap engine.

Same names, signatures, defaults and return shapes as rliable's: :func:`get_interval_estimates` returns
``(point_estimates, interval_estimates)`` dicts, each interval a ``(2, k)`` array (lower row, upper row);
:class:`StratifiedBootstrap` and :class:`StratifiedIndependentBootstrap` iterate ``bootstrap(n)`` and expose
``index``, ``pos_data``, ``kw_data`` and keyword data as attributes, as rliable's (``arch``-based) classes do.

What differs is where the random numbers come from: the engine's stream (``numpy.random.Generator``, whole
64-bit words per replicate, a draw from n runs ⌊u·n / 2³²⌋; see docs/architecture.md). ``random_state`` may be
a ``RandomState`` (as in rliable), a ``Generator``, an int or None; with None the stream is seeded from numpy's
global state, so ``np.random.seed(...)`` makes a script reproducible, as it does with rliable. Replicates are
rliable's in distribution, not draw for draw: interval endpoints agree within Monte-Carlo error.

Speed: a ``func`` built from :mod:`.metrics` (and the profiles here) is recognised (:mod:`.symbolic`) and
evaluated on whole batches of replicates; any other ``func`` is called once per replicate on the resampled
arrays, exactly as rliable calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..stats import bootstrap as bs
from . import intervals
from .metrics import score_above, task_means_above
from .symbolic import Batch, Plan, Probe, trace

Float = float | np.float32 | np.float64
RandomState = np.random.RandomState | np.random.Generator | int | None
Index = tuple[np.ndarray, ...]

#: Memory for one batch of vectorised replicates (bytes).
CHUNK_BYTES = 64 * 2**20
#: Replicates drawn at once for the per-replicate path (the draws of a batch, not the function calls).
CALL_BATCH = 256


def _generator(random_state: RandomState) -> np.random.Generator:
    """The engine's stream for one bootstrap: a Generator as is; an int seeds it; a RandomState (or, for None,
    numpy's global state) gives it a 63-bit seed."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, np.random.RandomState):
        source = np.random if random_state is None else random_state
        return np.random.default_rng(int(source.randint(0, 2**63 - 1, dtype=np.int64)))
    return np.random.default_rng(random_state)


class _Layout:
    """One array of shape (runs, tasks, *rest): its strata (every position but the run index) and columns."""

    def __init__(self, array: np.ndarray) -> None:
        if array.ndim < 2:
            raise ValueError(f"scores must be arrays of shape (runs, tasks, ...); got shape {array.shape}")
        self.array = array
        self.shape = array.shape
        self.runs = int(array.shape[0])
        self.columns = int(np.prod(array.shape[1:]))
        self.strata: list[np.ndarray] = list(np.ogrid[tuple(slice(n) for n in (0, *array.shape[1:]))])[1:]
        self._cells: dict[tuple[int, ...], bs.Cells] = {}

    def local(self, uniforms: np.ndarray) -> np.ndarray:
        """(runs, tasks, *rest) run indices from one replicate's (columns, runs) raw uniforms."""
        drawn = bs.multiply_shift(uniforms, self.runs).astype(np.int64)
        return drawn.T.reshape((self.runs, *self.shape[1:]))

    def cells(self, column: tuple[int, ...]) -> bs.Cells:
        if column not in self._cells:
            key: tuple[Any, ...] = (slice(None), slice(None), *column)
            self._cells[column] = bs.Cells.from_array(self.array[key])
        return self._cells[column]

    def slots(self, column: tuple[int, ...]) -> np.ndarray:
        """Uniform columns of the task slots at extra-axis position ``column``."""
        tasks = np.arange(self.shape[1])
        return np.ravel_multi_index((tasks, *(np.full_like(tasks, c) for c in column)), self.shape[1:])


class _Stratified:
    """The parts both bootstraps share: iteration, ``apply``, ``conf_int`` (vectorised when ``func`` is
    recognised), the leave-one-run-out jackknife of ``bca``."""

    _args: tuple[np.ndarray, ...]
    _kwargs: dict[str, np.ndarray]

    def __init__(self, args: Sequence[Any], kwargs: Mapping[str, Any], random_state: RandomState) -> None:
        if not args and not kwargs:
            raise ValueError("a bootstrap needs at least one array of scores")
        self._args = tuple(np.asarray(a) for a in args)
        self._kwargs = {k: np.asarray(v) for k, v in kwargs.items()}
        first = self._args[0] if self._args else next(iter(self._kwargs.values()))
        self._num_items = len(first)
        self._generator = _generator(random_state)
        self._index: Any = None
        self._workspaces: dict = {}  # the engine's buffers of each (array, column), reused from chunk to chunk
        self.pos_data: tuple[np.ndarray, ...] = self._args
        self.kw_data: dict[str, np.ndarray] = dict(self._kwargs)
        self.data = (self.pos_data, self.kw_data)
        for key, value in self._kwargs.items():
            setattr(self, key, value)

    # -- what each bootstrap defines
    def _draw(self, reps: int) -> Any:
        raise NotImplementedError

    def _index_of(self, draws: Any, r: int) -> Any:
        raise NotImplementedError

    def _data_at(self, index: Any) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
        raise NotImplementedError

    def _batch(self, draws: Any, n: int) -> Batch:
        raise NotImplementedError

    def _original(self) -> Batch:
        raise NotImplementedError

    def _draws_per_rep(self) -> int:
        raise NotImplementedError

    # -- rliable's (arch's) public surface
    @property
    def index(self) -> Any:
        """The index of the current replicate (see the class docstring for its form)."""
        return self._index

    @property
    def generator(self) -> np.random.Generator:
        """The engine's stream this bootstrap draws from."""
        return self._generator

    random_state = generator

    def update_indices(self) -> Any:
        """Draw the index of the next replicate."""
        return self._index_of(self._draw(1), 0)

    def _resample(self) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
        pos, kw = self._data_at(self._index)
        self.pos_data, self.kw_data = pos, kw
        self.data = (pos, kw)
        for key, value in kw.items():
            setattr(self, key, value)
        return self.data

    def bootstrap(self, reps: int) -> Iterator[tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]]:
        """Yield ``(pos_data, kw_data)`` of ``reps`` replicates, setting :attr:`index` to each one's index."""
        for _ in range(int(reps)):
            self._index = self.update_indices()
            yield self._resample()

    def apply(self, func: Callable[..., Any], reps: int = 1000, extra_kwargs: dict | None = None) -> np.ndarray:
        """(reps, k) values of ``func`` on ``reps`` replicates."""
        kwargs = {**self._kwargs, **(extra_kwargs or {})}
        return self._replicates(func, int(reps), extra_kwargs, func(*self._args, **kwargs))

    def conf_int(
        self,
        func: Callable[..., Any],
        reps: int = 1000,
        method: str = "basic",
        size: float = 0.95,
        tail: str = "two",
        extra_kwargs: dict | None = None,
    ) -> np.ndarray:
        """(2, k) confidence interval of each output of ``func`` (lower row, upper row), rliable's semantics
        (:mod:`.intervals`); ``method`` percentile, basic, bc (debiased), bca or norm."""
        intervals.check(method, size, tail)
        if extra_kwargs and any(k in self._kwargs for k in extra_kwargs):
            raise ValueError("extra_kwargs repeats a keyword the bootstrap was given data for")
        kwargs = {**self._kwargs, **(extra_kwargs or {})}
        base = func(*self._args, **kwargs)
        results = self._replicates(func, int(reps), extra_kwargs, base)
        return intervals.conf_int(
            results,
            base,
            method=method,
            size=size,
            tail=tail,
            jackknife=lambda: self._jackknife(func, extra_kwargs),
        )

    # -- the engine
    def _plan(self, func: Callable[..., Any], extra_kwargs: dict | None, base: Any) -> Plan | None:
        """The vectorised plan of ``func`` when it is recognised and reproduces ``func(scores)`` on the data."""
        if self._kwargs or extra_kwargs:
            return None
        plan = trace(func, [a.shape for a in self._args])
        if plan is None or not plan.agrees(self._original(), base):
            return None
        return plan

    def _replicates(self, func: Callable[..., Any], reps: int, extra_kwargs: dict | None, base: Any) -> np.ndarray:
        if reps < 1:  # every interval and profile comes through here: said before numpy meets an empty array
            raise ValueError(f"reps must be a positive whole number of bootstrap replicates; got {reps}")
        k = 1 if np.isscalar(base) or np.ndim(base) == 0 else int(np.shape(base)[0])
        results = np.zeros((reps, k))
        plan = self._plan(func, extra_kwargs, base)
        done = 0
        if plan is not None:
            self._workspaces = {}
            for n in bs.chunks(reps, 32 * self._draws_per_rep(), bs.cache_chunk_bytes(CHUNK_BYTES)):
                results[done : done + n] = plan.evaluate(self._batch(self._draw(n), n))
                done += n
            return results
        while done < reps:
            n = min(CALL_BATCH, reps - done)
            draws = self._draw(n)
            for r in range(n):
                self._index = self._index_of(draws, r)
                pos, kw = self._resample()
                results[done + r] = func(*pos, **{**kw, **(extra_kwargs or {})})
            done += n
        return results

    def _jackknife(self, func: Callable[..., Any], extra_kwargs: dict | None) -> np.ndarray:
        """``func`` with one run index left out of every array at a time (rliable's ``bca``)."""
        lengths = {len(a) for a in (*self._args, *self._kwargs.values())}
        if len(lengths) > 1:
            raise ValueError("bca needs the same number of runs in every array; use method='bc' or 'percentile'")
        out = []
        for i in range(self._num_items):
            keep = np.r_[0:i, i + 1 : self._num_items]
            kwargs = {k: v[keep] for k, v in self._kwargs.items()}
            out.append(func(*(a[keep] for a in self._args), **{**kwargs, **(extra_kwargs or {})}))
        return np.array(out)


class StratifiedBootstrap(_Stratified):
    """Stratified bootstrap of ``(runs, tasks, ...)`` arrays: runs are resampled with replacement independently
    at every (task, ...) position; with ``task_bootstrap`` the tasks are resampled too.

    ``index`` is rliable's: ``(run_indices, *strata)`` with ``run_indices`` of the first array's shape and the
    open grids of the other axes (``np.ogrid``); with ``task_bootstrap`` the task grid is replaced by the drawn
    tasks. Keyword arrays are resampled with the same index and are attributes of the bootstrap.
    """

    _name = "Stratified Bootstrap"

    def __init__(
        self,
        *args: np.ndarray,
        random_state: RandomState = None,
        task_bootstrap: bool = False,
        **kwargs: np.ndarray,
    ) -> None:
        super().__init__(args, kwargs, random_state)
        first = self._args[0] if self._args else next(iter(self._kwargs.values()))
        self._layout = _Layout(first)
        self._args_shape = first.shape
        self._num_tasks = int(first.shape[1])
        self._task_bootstrap = bool(task_bootstrap)
        self._parameters = [self._num_tasks, self._task_bootstrap]
        self._strata_indices = self._layout.strata
        self._index = np.arange(self._num_items)

    def _draws_per_rep(self) -> int:
        return self._layout.columns * self._layout.runs + (self._num_tasks if self._task_bootstrap else 0)

    def _draw(self, reps: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(uniforms (reps, columns, runs), tasks (reps, tasks) or None): one block of words per replicate,
        its task draws first (the engine's :func:`..stats.bootstrap.draw` layout)."""
        lay, m = self._layout, self._num_tasks
        if not self._task_bootstrap:
            return bs.uniform32(self._generator, (reps, lay.columns, lay.runs)), None
        u = bs.uniform32(self._generator, (reps, m + lay.columns * lay.runs))
        runs = np.ascontiguousarray(u[:, m:]).reshape(reps, lay.columns, lay.runs)
        return runs, bs.multiply_shift(u[:, :m], m).astype(np.int64)

    def _index_of(self, draws: tuple[np.ndarray, np.ndarray | None], r: int) -> Index:
        runs, tasks = draws
        local = self._layout.local(runs[r])
        strata = self._strata_indices
        if tasks is None:
            return (local, *strata)
        return (local, tasks[r].reshape(strata[0].shape), *strata[1:])

    def _data_at(self, index: Any) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
        return tuple(a[index] for a in self._args), {k: v[index] for k, v in self._kwargs.items()}

    def _batch(self, draws: tuple[np.ndarray, np.ndarray | None], n: int) -> Batch:
        runs, tasks = draws
        lay, cache = self._layout, {}

        def resample(arg: int, column: tuple[int, ...]) -> bs.Resample:
            if column not in cache:
                cells = lay.cells(column)
                u = np.ascontiguousarray(runs[:, lay.slots(column), :]) if column else runs
                space = self._workspaces.setdefault((arg, column), {})
                cache[column] = bs.Resample(cells, cells.values, uniforms=u, slot_tasks=tasks, workspace=space)
            return cache[column]

        return Batch(resample, n)

    def _original(self) -> Batch:
        return Batch(lambda arg, column: bs.original(self._layout.cells(column)), 1)


class StratifiedIndependentBootstrap(_Stratified):
    """Stratified bootstrap resampling every array independently (arrays may have different run counts), as
    for probability of improvement. ``index`` is ``(pos_indices, kw_indices)``: a list with one
    ``(run_indices, *strata)`` tuple per positional array and a dict of them per keyword array."""

    def __init__(self, *args: np.ndarray, random_state: RandomState = None, **kwargs: np.ndarray) -> None:
        super().__init__(args, kwargs, random_state)
        self._layouts = [_Layout(a) for a in (*self._args, *self._kwargs.values())]
        self._args_shapes = [a.shape for a in self._args]
        self._kwargs_shapes = {k: v.shape for k, v in self._kwargs.items()}
        self._num_args = len(self._args)
        self._num_arg_items = [len(a) for a in self._args]
        self._num_kw_items = {k: len(v) for k, v in self._kwargs.items()}
        self._index = (
            [(np.arange(n),) for n in self._num_arg_items],
            {k: (np.arange(n),) for k, n in self._num_kw_items.items()},
        )

    def _draws_per_rep(self) -> int:
        return sum(lay.columns * lay.runs for lay in self._layouts)

    def _draw(self, reps: int) -> list[np.ndarray]:
        """One (reps, columns, runs) block of uniforms per array, cut from one block of words per replicate."""
        u = bs.uniform32(self._generator, (reps, self._draws_per_rep()))
        out, start = [], 0
        for lay in self._layouts:
            size = lay.columns * lay.runs
            out.append(np.ascontiguousarray(u[:, start : start + size]).reshape(reps, lay.columns, lay.runs))
            start += size
        return out

    def _index_of(self, draws: list[np.ndarray], r: int) -> tuple[list[Index], dict[str, Index]]:
        each = [(lay.local(u[r]), *lay.strata) for lay, u in zip(self._layouts, draws)]
        return each[: self._num_args], dict(zip(self._kwargs, each[self._num_args :]))

    def _data_at(self, index: Any) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
        pos_index, kw_index = index
        pos = tuple(a[i] for a, i in zip(self._args, pos_index))
        return pos, {k: v[kw_index[k]] for k, v in self._kwargs.items()}

    def _batch(self, draws: list[np.ndarray], n: int) -> Batch:
        cache: dict[tuple[int, tuple[int, ...]], bs.Resample] = {}

        def resample(arg: int, column: tuple[int, ...]) -> bs.Resample:
            if (arg, column) not in cache:
                lay, runs = self._layouts[arg], draws[arg]
                cells = lay.cells(column)
                u = np.ascontiguousarray(runs[:, lay.slots(column), :]) if column else runs
                space = self._workspaces.setdefault((arg, column), {})
                cache[(arg, column)] = bs.Resample(cells, cells.values, uniforms=u, workspace=space)
            return cache[(arg, column)]

        return Batch(resample, n)

    def _original(self) -> Batch:
        return Batch(lambda arg, column: bs.original(self._layouts[arg].cells(column)), 1)


####################### Interval estimates #######################
def get_interval_estimates(
    score_dict: Mapping[str, np.ndarray] | Mapping[str, Sequence[np.ndarray]],
    func: Callable[..., np.ndarray],
    method: str = "percentile",
    task_bootstrap: bool = False,
    reps: int = 50000,
    confidence_interval_size: Float = 0.95,
    random_state: RandomState = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Point estimates ``func(scores)`` and stratified-bootstrap confidence intervals for every key.

    ``score_dict`` maps a name to a ``(runs, tasks, ...)`` array, or to a list of arrays passed to ``func`` as
    separate arguments and resampled independently (``task_bootstrap`` does not apply to them), e.g.
    ``{"x,y": [scores_x, scores_y]}`` with ``func=metrics.probability_of_improvement``. Each interval is a
    ``(2, k)`` array: lower bounds in the first row, upper bounds in the second.
    """
    intervals.check(method, float(confidence_interval_size), "two")
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        random_state = np.random.RandomState(int(random_state))  # one stream of seeds for all keys, as rliable's
    point_estimates: dict[str, np.ndarray] = {}
    interval_estimates: dict[str, np.ndarray] = {}
    for key, scores in score_dict.items():
        boot: _Stratified
        if isinstance(scores, np.ndarray):
            boot = StratifiedBootstrap(scores, task_bootstrap=task_bootstrap, random_state=random_state)
            point_estimates[key] = func(scores)
        else:
            boot = StratifiedIndependentBootstrap(*scores, random_state=random_state)
            point_estimates[key] = func(*scores)
        interval_estimates[key] = boot.conf_int(func, reps=reps, size=float(confidence_interval_size), method=method)
    return point_estimates, interval_estimates


####################### Performance profiles #######################
def run_score_deviation(scores: Any, tau: Float) -> Any:
    """Fraction of all runs (of all tasks) scoring above ``tau``."""
    if isinstance(scores, Probe):
        return score_above(scores, float(tau))
    return np.mean(scores > tau)


def mean_score_deviation(scores: Any, tau: Float) -> Any:
    """Fraction of tasks whose mean score over runs is above ``tau``."""
    if isinstance(scores, Probe):
        return task_means_above(scores, float(tau))
    return np.mean(np.mean(scores, axis=0) > tau)


def _over_taus(point: Callable[[Any, Float], Any], scores: Any, tau_list: Any) -> np.ndarray:
    taus = np.asarray(tau_list)
    values = [point(scores, t) for t in taus.ravel()]
    return np.array(values, dtype=object if isinstance(scores, Probe) else None).reshape(taus.shape)


def score_distributions(scores: Any, tau_list: Sequence[Float] | np.ndarray) -> np.ndarray:
    """The run-score profile: :func:`run_score_deviation` at every threshold of ``tau_list``."""
    return _over_taus(run_score_deviation, scores, tau_list)


def average_score_distributions(scores: Any, tau_list: Sequence[Float] | np.ndarray) -> np.ndarray:
    """The average-score profile: :func:`mean_score_deviation` at every threshold of ``tau_list``."""
    return _over_taus(mean_score_deviation, scores, tau_list)


def create_performance_profile(
    score_dict: Mapping[str, np.ndarray],
    tau_list: Sequence[Float] | np.ndarray,
    use_score_distribution: bool = True,
    custom_profile_func: Callable[..., np.ndarray] | None = None,
    method: str = "percentile",
    task_bootstrap: bool = False,
    reps: int = 2000,
    confidence_interval_size: Float = 0.95,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Performance profiles at ``tau_list`` and their ``(2, len(tau_list))`` confidence bands for every key:
    the run-score distribution (default) or, with ``use_score_distribution=False``, the average-score one;
    ``custom_profile_func(scores, tau_list)`` replaces both."""
    if custom_profile_func is None:
        profile = score_distributions if use_score_distribution else average_score_distributions

        def profile_function(scores: Any) -> np.ndarray:
            return profile(scores, tau_list)

    else:

        def profile_function(scores: Any) -> np.ndarray:
            return custom_profile_func(scores, tau_list)

    return get_interval_estimates(
        score_dict,
        func=profile_function,
        task_bootstrap=task_bootstrap,
        method=method,
        reps=reps,
        confidence_interval_size=confidence_interval_size,
    )
