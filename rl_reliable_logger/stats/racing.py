"""Racing configurations: select one within δ of the best with probability ≥ 1 - α, on fewer runs (pure arrays).

A *race* (Maron & Moore 1994; F-race, Birattari et al. 2002) evaluates C configurations of one algorithm on
the same M tasks at K looks while runs accumulate, drops the ones that are clearly worse, gives the
survivors more runs, and stops as soon as the choice is good enough. Here "good enough" is an indifference
zone δ: the selected configuration's metric θ_ℓ must be within δ of the best θ* = max_c θ_c (δ = 0: no zone, the
race stops when one configuration is left, as an F-race does, when no runs could change its selection, or at the
last look).

The statistics are those of ``watch`` (:mod:`.sequential`): at each look, each pair (i, j) of configurations
still racing whose runs grew gets a repeated confidence interval for θ_i - θ_j (the engine's bootstrap
replicates, the normal form on their standard deviation) with the critical value of an error-spending boundary
over that pair's own information fractions (:func:`.sequential.boundaries`; runs in its cells / (max runs x
cells), 1 at the K-th look), widened for small samples on the Welch-Satterthwaite degrees of freedom of the tasks'
spreads pooled over the configurations racing (:mod:`.pooled_level`: from 2 runs per cell, on tasks of unequal
spread). Write ``U(i, j)`` for the interval's upper bound on θ_i - θ_j (the lower bound of the pair read from the
other side), and call the best estimate still racing the *leader*.

* **Elimination**: configuration c is out when ``U(c, j) < 0`` for some j still racing (c is worse than j).
* **Selection** (the stop): ℓ is selected, and the race stops, when ``R_ℓ = max(0, max_c U(c, ℓ)) < δ`` over
  every c still racing (no configuration can be more than δ better than ℓ); the candidates are tried from the
  best estimate down. One configuration left is selected with ``R = 0``. At the K-th look, or earlier when no
  configuration's runs could change the outcome (below), the leader is selected whatever its ``R`` (``reason``
  says which, and ``R`` is its bound).
* **Settling** (the indifference zone, at every look): c with ``U(c, leader) < δ`` cannot be more than δ better
  than the leader; it gets no runs but keeps racing: it is compared again at every look (at no cost in runs) and
  gets runs again if the leader changes to one it is not settled against.
* **Allocation** (:meth:`_Look.wants`, :func:`allocation`): the other configurations still racing are the
  *contenders*. Their runs are predicted under the current estimates (stochastic curtailment: the difference with
  the leader a Brownian motion in information, its drift at its estimate): the probability that c ends ahead of
  the leader, and that its interval with the leader ends below δ at the last look. While the race can still be
  certified (the product over the contenders of the latter is at least :data:`CERTIFY`, one half: more likely than
  not) every contender gets runs; after that only those that might still end ahead of the leader (probability at
  least ε = α / (C - 1): the runs it skips change its selection with predicted probability at most α).
  The leader gets runs with them, each up to the next planned count ``⌈(k+1) N / K⌉`` per task. When no
  contender gets runs the race stops (``reason == "futility"``): no runs can change its selection or certify it.

**The guarantee.** Let c* be a best configuration and E the event that, at every look and for every j, the upper
bound ``U(c*, j)`` is at least θ_{c*} - θ_j. Each ``U`` is a one-sided bound at level α / (C - 1) over the
looks (the two-sided boundary at level 2α / (C - 1) puts α / (C - 1) in each tail: the probability of leaving
through one boundary after passing the other is negligible), so by Bonferroni over the C - 1 pairs of c*,
P(E) ≥ 1 - α. On E:

1. c* is never eliminated (``U(c*, j) >= θ_{c*} - θ_j >= 0``), so it is among those racing at every look;
2. the selected ℓ has θ* - θ_ℓ <= ``U(c*, ℓ)`` <= R_ℓ: the selection is within R_ℓ of the best, and within δ
   whenever the race stopped by its rule (R_ℓ < δ); only the pairs of c* (C - 1 of them, one side each) need to
   cover, which is why the level is α / (C - 1) one-sided rather than α over all C (C - 1) / 2 pairs two-sided;
3. the margin of ℓ over the runner-up, θ_ℓ - max_{c ≠ ℓ} θ_c, lies in ``[-R_ℓ, max(0, min_j U(ℓ, j))]``
   (if ℓ = c*, the margin is at most θ_ℓ - θ_j <= U(ℓ, j) for every j; if not, it is at most 0), j over every
   other configuration with the last bound its pair got (any look's bound holds on E).

All three hold together, whatever look the race stops at and whichever configuration it selects, because E is
about every look and every pair of c* at once. The interval for the selected configuration's own metric is a
separate, simultaneous statement: each configuration's repeated interval at level α / C (two-sided, spending
over its own information fractions) covers, all of them at every look, with probability ≥ 1 - α (Bonferroni),
so the selected one's covers after selection. Which configurations get runs, and when the race stops, never
enters E: settling and futility only decide where the runs go, so all of the above holds whatever they decide
(futility is non-binding: a user who runs more than asked still gets valid bounds). They make the pairs'
information fractions data-dependent; the spending functions take the looks at any information fractions, and
the simulation study (``docs/race.md``) measures the coverage that results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import bootstrap as bs
from . import distributions
from . import pooled_level as pl
from . import sequential as sq
from .intervals.bounds import normal_interval

#: Why a race stopped (``RaceLook.reason``): its rule, one configuration left, no runs left that could change the
#: selection or certify it, or the last look.
REASONS = ("within delta", "one left", "futility", "last look")
#: The version of the race's decisions (its intervals, settling and allocation): a race recorded by another version
#: is not continued with this one. 2: issue 55 (Welch degrees of freedom, runs only where they can change the outcome).
PROCEDURE = 2
#: The race pursues its certificate (every contender settled by the last look) while its predicted probability is
#: at least this (more likely than not); below it, runs go only to contenders that might still overtake the leader.
CERTIFY = 0.5


@dataclass(frozen=True)
class RaceDesign:
    """Everything a race fixes before its first look: C configurations on M tasks, K looks, at most N runs per
    (configuration, task) cell, the error α, the indifference zone δ (in the metric's units), the spending
    function (``pocock``: the race spends early, where eliminations save the most runs), the metric's direction
    and the share ``trim`` it cuts from each end when it is a trimmed mean (the IQM's 0.25; the tasks' spreads that
    set the intervals' degrees of freedom are then those of the winsorized runs, :mod:`.pooled_level`)."""

    configs: int
    tasks: int
    looks: int
    max_runs: int
    delta: float
    alpha: float = 0.05
    spending: str = "pocock"
    lower_is_better: bool = False
    trim: float = 0.0

    def __post_init__(self) -> None:
        if self.configs < 2:
            raise ValueError(f"a race needs at least 2 configurations, got {self.configs}")
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be in (0, 0.5), got {self.alpha}")
        if not self.delta >= 0:
            raise ValueError(f"delta must be 0 (no indifference zone) or positive, got {self.delta}")
        if self.looks < 1 or self.max_runs < 2 or self.tasks < 1:
            raise ValueError("a race needs at least 1 look, 1 task and max_runs of at least 2")
        if not 0 <= self.trim < 0.5:
            raise ValueError(f"trim must be in [0, 0.5), got {self.trim}")
        if self.spending not in sq.SPENDING:
            raise ValueError(f"spending must be one of {', '.join(sq.SPENDING)}, got {self.spending!r}")

    @property
    def pair_level(self) -> float:
        """The two-sided level of a pair's boundaries: α / (C - 1) in each tail."""
        return 2.0 * self.alpha / (self.configs - 1)

    @property
    def overtake(self) -> float:
        """ε: a contender whose predicted probability of ending ahead of the leader is below ε gets no more runs
        (unless the race is pursuing its certificate): α / (C - 1), the error of one pair."""
        return self.alpha / (self.configs - 1)

    @property
    def config_level(self) -> float:
        """The two-sided level of one configuration's own repeated interval (Bonferroni over the C)."""
        return self.alpha / self.configs

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i in range(self.configs) for j in range(i + 1, self.configs)]

    def targets(self) -> np.ndarray:
        """Runs per cell planned at each look (``⌈k N / K⌉``)."""
        return sq.look_targets(self.max_runs, self.looks)


@dataclass(frozen=True)
class RaceLook:
    """One look of a race: what is decided, and what the next look needs (JSON-able through :meth:`to_json`).

    Per configuration c (arrays of length C): ``runs`` (over all tasks) at this look, ``points`` (its metric's
    estimate; NaN once eliminated), ``alive``, ``eliminated_at`` (the look, 0 while racing), ``eliminated_by``
    (the configuration it was worse than, -1), ``wants`` (gets runs for the next look), and its own repeated
    interval ``config_low``/``config_high`` with its fractions ``config_times``. Per pair (i < j, in
    :attr:`RaceDesign.pairs` order): ``pair_low``/``pair_high``, the last repeated interval of θ_i - θ_j, with
    its fractions ``pair_times``, the runs ``pair_runs`` it was computed on and the standard error ``pair_se`` of
    the difference then (NaN before). The selection: ``leader`` (best estimate racing), ``selected`` (-1 until the
    race stops), ``reason`` (one of :data:`REASONS`, or ""), ``regret`` (R: the bound on how far the selected, or
    else the leader, is below the best) and the margin interval over the runner-up ``margin_low``/``margin_high``.
    """

    look: int
    runs: tuple[int, ...]
    points: tuple[float, ...]
    alive: tuple[bool, ...]
    eliminated_at: tuple[int, ...]
    eliminated_by: tuple[int, ...]
    wants: tuple[bool, ...]
    config_times: tuple[tuple[float, ...], ...]
    config_low: tuple[float, ...]
    config_high: tuple[float, ...]
    pair_times: tuple[tuple[float, ...], ...]
    pair_runs: tuple[int, ...]
    pair_low: tuple[float, ...]
    pair_high: tuple[float, ...]
    leader: int
    selected: int = -1
    reason: str = ""
    regret: float = float("inf")
    margin_low: float = float("-inf")
    margin_high: float = float("inf")
    pair_se: tuple[float, ...] = ()

    @property
    def stop(self) -> bool:
        return self.selected >= 0

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        return {k: _jsonable(v) for k, v in out.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RaceLook:
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            if name not in data:
                continue
            v = data[name]
            values[name] = tuple(tuple(map(float, x)) for x in v) if name.endswith("_times") else _tupled(v)
        return cls(**values)

    def upper(self, i: int, j: int) -> float:
        """``U(i, j)``: the last upper bound on θ_i - θ_j (oriented so that larger is better)."""
        p = _pair_index(i, j, len(self.runs))
        return float(self.pair_high[p]) if i < j else -float(self.pair_low[p])


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not np.isfinite(v):
        return None if np.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return v.item()
    return v


def _tupled(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_tupled(x) for x in v)
    if v is None:
        return float("nan")
    if v in ("inf", "-inf"):
        return float(v)
    return v


def _pair_index(i: int, j: int, configs: int) -> int:
    i, j = min(i, j), max(i, j)
    return i * configs - i * (i + 1) // 2 + (j - i - 1)


def race_look(
    previous: RaceLook | None,
    design: RaceDesign,
    dists: Sequence[np.ndarray | None],
    points: Sequence[float],
    cells: Sequence[bs.Cells | None],
) -> RaceLook:
    """The next look of a race after ``previous`` (None: the first), on each configuration's bootstrap replicates
    ``dists[c]`` of the metric (one stream per configuration; None for an eliminated one, which is not needed),
    its estimate ``points[c]`` and its ``cells`` (the runs, task by task: their count gives the information).

    Only the pairs (and configurations) whose runs grew since they were last tested are tested again: a pair
    without new runs keeps its interval and spends nothing.

    >>> import numpy as np
    >>> from rl_reliable_logger.stats import bootstrap as bs, registry
    >>> iqm, rng = registry.get_metric("iqm"), np.random.default_rng(0)
    >>> runs = [rng.normal(mu, 0.1, (4, 5)) for mu in (1.0, 0.98, 0.2)]  # 3 configurations, 4 runs x 5 tasks
    >>> cells = [bs.Cells.from_array(r) for r in runs]
    >>> dists = [iqm(bs.draw(c, 500, rng)) for c in cells]
    >>> points = [float(iqm(bs.original(c))[0]) for c in cells]
    >>> design = RaceDesign(configs=3, tasks=5, looks=3, max_runs=12, delta=0.2)
    >>> look = race_look(None, design, dists, points, cells)
    >>> look.alive, look.eliminated_by, look.selected, look.reason
    ((True, True, False), (-1, -1, 0), 0, 'within delta')
    >>> bool(look.regret < 0.2)
    True
    """
    look = 1 if previous is None else previous.look + 1
    if look > design.looks:
        raise ValueError(f"the race has taken all {design.looks} looks")
    c_n = design.configs
    if len(dists) != c_n or len(points) != c_n or len(cells) != c_n:
        raise ValueError(f"expected one entry per configuration ({c_n})")
    work = _Look(design, previous, look, cells, points)
    work.test_configs(dists, points, cells)
    work.test_pairs(dists, cells)
    work.eliminate()
    return work.result()


class _Look:
    """The working state of one look: the previous look's records, updated by the new runs (score space: larger
    is better)."""

    def __init__(
        self,
        design: RaceDesign,
        previous: RaceLook | None,
        look: int,
        cells: Sequence[bs.Cells | None],
        points: Sequence[float],
    ) -> None:
        self.design, self.previous, self.look = design, previous, look
        c_n, pairs, inf = design.configs, len(design.pairs), float("inf")
        self.last = look == design.looks
        self.sign = -1.0 if design.lower_is_better else 1.0
        self.alive = np.ones(c_n, dtype=bool) if previous is None else np.array(previous.alive)
        runs = np.array([0 if (c is None or not self.alive[k]) else c.n_runs for k, c in enumerate(cells)])
        self.runs = runs if previous is None else np.where(self.alive, runs, np.array(previous.runs))
        self.points = np.where(self.alive, np.asarray(points, dtype=float), np.nan)
        self.scored = self.sign * self.points
        self.c_times = [list(t) for t in previous.config_times] if previous else [[] for _ in range(c_n)]
        self.c_low = list(previous.config_low) if previous else [-inf] * c_n
        self.c_high = list(previous.config_high) if previous else [inf] * c_n
        self.p_times = [list(t) for t in previous.pair_times] if previous else [[] for _ in range(pairs)]
        self.p_runs = list(previous.pair_runs) if previous else [0] * pairs
        self.p_low = list(previous.pair_low) if previous else [-inf] * pairs
        self.p_high = list(previous.pair_high) if previous else [inf] * pairs
        self.p_se = list(previous.pair_se) if previous and previous.pair_se else [float("nan")] * pairs
        self.elim_at = list(previous.eliminated_at) if previous else [0] * c_n
        self.elim_by = list(previous.eliminated_by) if previous else [-1] * c_n
        racing = [c for k, c in enumerate(cells) if c is not None and self.alive[k]]
        # each task's spread, pooled over the configurations racing: the intervals' degrees of freedom
        self.spreads = pl.pooled_variances(racing, design.trim) if racing else np.zeros(design.tasks)

    def fraction(self, runs: float) -> float:
        """Information: runs per cell over the maximum, 1 at the last look (which spends what is left)."""
        return 1.0 if self.last else min(1.0, runs / (self.design.tasks * self.design.max_runs))

    def interval(
        self, dist: np.ndarray, point: float, bound: float, cells: Sequence[bs.Cells]
    ) -> tuple[float, float, float]:
        """The repeated interval ``point ± c t_ν(Φ(bound)) sd*`` (:mod:`.pooled_level`) and the standard error
        ``c sd*`` of the statistic made of ``cells``."""
        if not np.isfinite(bound):
            return -np.inf, np.inf, float("nan")
        c, nu = pl.welch_factors([x.sizes for x in cells], self.spreads)
        crit = pl.multiplier(bound, c, nu)
        lo, hi = normal_interval(np.asarray(dist, dtype=float), np.asarray(point), distributions.norm_cdf(-crit))
        return float(lo), float(hi), float(hi - lo) / (2.0 * pl.t_quantile(bound, nu))

    def test_configs(
        self, dists: Sequence[np.ndarray | None], points: Sequence[float], cells: Sequence[bs.Cells | None]
    ) -> None:
        """Each configuration's own repeated interval (the selected one's is quoted after selection)."""
        for k in self.racing():
            t = self.fraction(self.runs[k])
            grew = self.previous is None or self.runs[k] != self.previous.runs[k]
            if grew and (not self.c_times[k] or t > self.c_times[k][-1]):
                self.c_times[k].append(t)
                bound = float(sq.boundaries(self.c_times[k], self.design.config_level, self.design.spending)[-1])
                self.c_low[k], self.c_high[k], _ = self.interval(_need(dists[k]), points[k], bound, [_need(cells[k])])

    def test_pairs(self, dists: Sequence[np.ndarray | None], cells: Sequence[bs.Cells | None]) -> None:
        """The racing pairs with new runs: the repeated interval of θ_i - θ_j (larger is better)."""
        for p, (i, j) in enumerate(self.design.pairs):
            n = int(self.runs[i] + self.runs[j])
            if not (self.alive[i] and self.alive[j]) or n == self.p_runs[p]:
                continue
            t = self.fraction(n / 2.0)
            if self.p_times[p] and t <= self.p_times[p][-1]:
                continue
            self.p_times[p].append(t)
            bound = float(sq.boundaries(self.p_times[p], self.design.pair_level, self.design.spending)[-1])
            diff = self.sign * (_need(dists[i]) - _need(dists[j]))
            point = float(self.scored[i] - self.scored[j])
            lo, hi, se = self.interval(diff, point, bound, [_need(cells[i]), _need(cells[j])])
            self.p_low[p], self.p_high[p], self.p_se[p], self.p_runs[p] = lo, hi, se, n

    def upper(self, i: int, j: int) -> float:
        p = _pair_index(i, j, self.design.configs)
        return self.p_high[p] if i < j else -self.p_low[p]

    def racing(self) -> list[int]:
        return [int(k) for k in np.flatnonzero(self.alive)]

    def eliminate(self) -> None:
        """Out: worse than some configuration racing at this look (all judged on the look's racing set); the one it
        is said to be worse than is the leader when it is worse than the leader (the best estimate, never out)."""
        racing = self.racing()
        leader = max(racing, key=lambda k: (self.scored[k], -k))
        for c in racing:
            bounds = {j: self.upper(c, j) for j in racing if j != c}
            worst = min(bounds, key=lambda j: bounds[j]) if bounds else -1
            if worst >= 0 and bounds[worst] < 0:
                self.elim_at[c] = self.look
                self.elim_by[c] = leader if bounds.get(leader, 0.0) < 0 else worst
        self.alive &= np.array(self.elim_at) == 0
        self.points = np.where(self.alive, self.points, np.nan)

    def regret(self, ell: int) -> float:
        """R: how far ``ell`` may be below the best (no configuration racing is more than R better)."""
        return max([0.0, *(self.upper(c, ell) for c in self.racing() if c != ell)])

    def outlook(self, c: int, leader: int) -> tuple[float, float]:
        """What more runs could do for contender ``c``, predicted under the current estimates (stochastic
        curtailment: the difference θ̂_c - θ̂_leader goes on as a Brownian motion in information with its drift at
        its estimate, to information 1): the probability that it ends ahead of the leader, and that its interval
        with the leader ends below δ (settled) at the last look."""
        p = _pair_index(c, leader, self.design.configs)
        if not self.p_times[p] or self.p_times[p][-1] >= 1.0 or not np.isfinite(self.p_se[p]):
            return 1.0, 1.0
        t, se = self.p_times[p][-1], self.p_se[p]
        final_se = se * np.sqrt(t)  # the difference's standard error at information 1
        spread = final_se * np.sqrt(1.0 - t)  # of its final estimate, given the current one
        d = float(self.scored[c] - self.scored[leader])
        final = float(sq.boundaries([*self.p_times[p], 1.0], self.design.pair_level, self.design.spending)[-1])
        full = [np.full(self.design.tasks, self.design.max_runs)] * 2
        half = pl.t_quantile(final, pl.welch_factors(full, self.spreads)[1]) * final_se
        with np.errstate(divide="ignore", invalid="ignore"):  # no spread (identical runs): certain, or 0/0: unknown
            ahead, settled = distributions.norm_cdf(np.divide([d, self.design.delta - half - d], spread))
        return float(np.nan_to_num(ahead, nan=1.0)), float(np.nan_to_num(settled, nan=1.0))

    def wants(self, leader: int) -> np.ndarray:
        """Who gets runs for the next look: the contenders (racing, not settled: ``U(c, leader) >= δ``) whose runs
        can still change the outcome, and the leader with them. While the race can still be certified by the last
        look (the product over the contenders of their predicted probabilities of being settled is at least
        :data:`CERTIFY`) every contender can; after that, only those that might still end ahead of the leader
        (predicted probability at least ε = α / (C - 1))."""
        wants = np.zeros(self.design.configs, dtype=bool)
        contenders = [c for c in self.racing() if c != leader and self.upper(c, leader) >= self.design.delta]
        outlooks = {c: self.outlook(c, leader) for c in contenders}
        certify = float(np.prod([s for _, s in outlooks.values()])) >= CERTIFY
        for c, (ahead, _) in outlooks.items():
            wants[c] = certify or ahead >= self.design.overtake
        wants[leader] = bool(wants.any())
        return wants

    def result(self) -> RaceLook:
        racing = self.racing()
        by_estimate = sorted(racing, key=lambda k: (-self.scored[k], k))
        leader = by_estimate[0]
        selected, reason = -1, ""
        if len(racing) == 1:
            selected, reason = leader, "one left"
        else:
            selected = next((ell for ell in by_estimate if self.regret(ell) < self.design.delta), -1)
            reason = "within delta" if selected >= 0 else ""
        wants = np.zeros(self.design.configs, dtype=bool)
        if selected < 0 and self.last:
            selected, reason = leader, "last look"
        elif selected < 0:
            wants = self.wants(leader)
            if not wants.any():  # no contender's runs can change the selection or certify it
                selected, reason = leader, "futility"
        chosen = selected if selected >= 0 else leader
        r = self.regret(chosen)
        others = [self.upper(chosen, j) for j in range(self.design.configs) if j != chosen]
        return RaceLook(
            self.look,
            tuple(int(n) for n in self.runs),
            tuple(float(v) for v in self.points),
            tuple(bool(a) for a in self.alive),
            tuple(self.elim_at),
            tuple(self.elim_by),
            tuple(bool(w) for w in wants),
            tuple(tuple(t) for t in self.c_times),
            tuple(self.c_low),
            tuple(self.c_high),
            tuple(tuple(t) for t in self.p_times),
            tuple(int(n) for n in self.p_runs),
            tuple(self.p_low),
            tuple(self.p_high),
            leader,
            selected,
            reason,
            r,
            -r,
            max(0.0, min(others)),
            tuple(self.p_se),
        )


def _need(value: Any) -> Any:
    if value is None:
        raise ValueError("a configuration still racing needs its replicates and cells")
    return value


def allocation(look: RaceLook, design: RaceDesign, counts: np.ndarray) -> np.ndarray:
    """Runs to add per (configuration, task) cell before the next look: (C, M) integers.

    ``counts`` (C, M) are the runs each cell has now. Every configuration the look ``wants`` gets each of its
    cells up to the next look's planned count (at least one more than its fullest cell, at most ``max_runs``);
    nothing after the race stopped or after the last look.
    """
    counts = np.asarray(counts, dtype=int)
    add = np.zeros_like(counts)
    if look.stop or look.look >= design.looks:
        return add
    planned = int(design.targets()[look.look])
    for c in np.flatnonzero(look.wants):
        target = max(planned, min(design.max_runs, int(counts[c].max()) + 1))
        add[c] = np.maximum(0, target - counts[c])
    return add
