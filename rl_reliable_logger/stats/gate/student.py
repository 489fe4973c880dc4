"""The exact null law of a screened candidate's sequential t statistics, and the boundaries it gives (pure arrays).

At the null's edge (an effect of exactly ``min_effect``) the differences centred at the margin, ``y_s = d_s - m``,
are (for normal differences) independent N(0, σ²), σ unknown. The t statistic at a look of n seeds is a monotone
function of ``ρ = Σ y / √(n Σ y²)`` in [-1, 1] (``t = √(n-1) ρ / √(1 - ρ²)``), which does not depend on σ. The
sequence ``ρ_1, ρ_2, ...`` of the looks is a Markov chain whose steps are known exactly:

* every ρ of the looks so far is a function of the *direction* of ``y_1..n``, which is independent of its length
  ``Q = Σ y²`` ~ σ² χ²_n; so given the past, Q is still χ²_n;
* a look m seeds later adds ``X = Σ y_new`` ~ N(0, m σ²) and ``W`` (their sum of squares about their mean)
  ~ σ² χ²_{m-1}, independent of the past. With ``B = Q / (Q + W)`` ~ Beta(n/2, (m-1)/2) and
  ``U = Z / √(Q + W)`` (``Z = X / √m``; ``U √(n+m-1)`` ~ t_{n+m-1}), independent of each other,

      ρ' = (ρ √(n B) + √m U) / √((n + m)(1 + U²)),

  and with ``U = tan φ`` the numerator over the root is a sine in φ, so ``P(ρ' <= c | ρ, B)`` is a difference of
  t distribution functions at the angles where the sine crosses c (:func:`step_cdf`); B is integrated by
  Gauss-Jacobi quadrature.

So the probability that a candidate passes its screen and then crosses an upper boundary before falling below a
lower one is computed exactly (up to quadrature, ~1e-6 in the level) for every σ, as the group-sequential recursion
of :mod:`..sequential` is for a known variance: the density of ρ over the continuation region as masses on cells,
carried look by look. The usual alternative, mapping each look's t to the normal scale and using the canonical
joint law (Jennison & Turnbull 2000, sec. 11.4), gave a screened candidate with 3-10 seeds 7-19% more than its
level in a simulation while the gate was designed (``docs/gate.md``).

The upper boundaries spend the candidate's level over the information after its screen, ``α(u)`` at
``u = (n - n_1) / (max_seeds - n_1)`` with the spending functions of :mod:`..sequential` (Lan & DeMets 1983), each
solving ``P(a_i < T_i < b_i for 1 < i < k, T_k >= b_k | T_1 >= a_1) = α(u_k) - α(u_{k-1})``. They are
returned on the normal scale (``paired.t_to_z`` of each look's t boundary), where the candidate's ``z`` is
compared with them: the same test, one scale for every look.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import special

from .. import sequential as sq
from .paired import t_to_z, z_to_t

#: Gauss-Jacobi nodes over B. With GRID_CELLS below, the level of the boundaries is within 0.5% of the one asked
#: for (against 960 cells and 32 nodes, ``tests/stats/gate/test_student.py``).
NODES = 10


def rho_of_t(t: float, seeds: int) -> float:
    """ρ of a t statistic at a look of ``seeds`` seeds (±1 for ±inf)."""
    if not np.isfinite(t):
        return math.copysign(1.0, t)
    return float(t / math.sqrt(t * t + seeds - 1))


def t_of_rho(rho: float, seeds: int) -> float:
    """The t statistic of ρ at a look of ``seeds`` seeds."""
    if abs(rho) >= 1.0:
        return math.copysign(math.inf, rho)
    return float(math.sqrt(seeds - 1) * rho / math.sqrt(1.0 - rho * rho))


def _beta_nodes(seeds: int, added: int) -> tuple[np.ndarray, np.ndarray]:
    return _beta_nodes_of(seeds, added, NODES)


@functools.lru_cache(maxsize=1024)
def _beta_nodes_of(seeds: int, added: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of B ~ Beta(n/2, (m-1)/2) (one node B = 1 when one seed is added: W = 0)."""
    if added == 1:
        return np.ones(1), np.ones(1)
    x, w = special.roots_jacobi(nodes, (added - 1) / 2.0 - 1.0, seeds / 2.0 - 1.0)
    return (1.0 + x) / 2.0, w / w.sum()


#: Points of the table of an angle's distribution function (linear interpolation: error < 1e-7).
ANGLES = 8193


@functools.lru_cache(maxsize=64)
def _angle_cdf(nu: int) -> tuple[np.ndarray, np.ndarray]:
    """The distribution function of φ = atan(U), ``U √ν`` ~ t_ν, tabulated over (-π/2, π/2)."""
    phi = np.linspace(-math.pi / 2, math.pi / 2, ANGLES)
    inner = phi[1:-1]
    return phi, np.concatenate([[0.0], special.stdtr(nu, np.tan(inner) * math.sqrt(nu)), [1.0]])


def step_cdf(rho: np.ndarray, c: np.ndarray, seeds: int, added: int) -> np.ndarray:
    """``P(ρ' <= c | ρ)`` from a look of ``seeds`` seeds to one ``added`` seeds later: shape (len(rho), len(c)).

    With ``U = tan φ``, ``ρ' = A sin(φ + ψ)`` (``A = √((a² + m) / (n + m))``, ``ψ = atan2(a, √m)``,
    ``a = ρ √(n B)``); φ ranges over (-π/2, π/2), so θ = φ + ψ over an interval of length π inside (-π, π), where
    ``sin θ <= c / A`` on ``[-π - s, s]`` and ``[π - s, 2π + s]``, ``s = asin(c / A)``.
    """
    b, weights = _beta_nodes(seeds, added)
    grid, table = _angle_cdf(seeds + added - 1)
    a = np.asarray(rho, dtype=float)[:, None] * np.sqrt(seeds * b)[None, :]
    size = np.sqrt((a * a + added) / (seeds + added))[:, :, None]
    psi = np.arctan2(a, math.sqrt(added))[:, :, None]
    level = np.arcsin(np.clip(np.asarray(c, dtype=float)[None, None, :] / size, -1.0, 1.0))
    # np.interp is 0 below -π/2 and 1 above π/2, the distribution function of φ
    p = (
        np.interp(level - psi, grid, table)
        - np.interp(-math.pi - level - psi, grid, table)
        + 1.0
        - np.interp(math.pi - level - psi, grid, table)
    )
    return np.einsum("sjc,j->sc", p, weights)


#: Cells of the fixed grid over ρ in [-1, 1] at every look (the continuation region is cut from it).
GRID_CELLS = 200


#: A look's spending below this is not spent (the look cannot keep): the grid does not resolve tails so far out.
TINY = 1e-9


def _edges() -> tuple[np.ndarray, np.ndarray]:
    return _edges_of(GRID_CELLS)


@functools.lru_cache(maxsize=64)
def _edges_of(cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Cell edges and midpoints over ρ = sin ω, equally spaced in ω: fine near ρ = ±1, where large t are."""
    omega = np.linspace(-math.pi / 2, math.pi / 2, cells + 1)
    return np.sin(omega), np.sin((omega[1:] + omega[:-1]) / 2.0)


def _kernel(seeds: int, added: int) -> np.ndarray:
    return _kernel_of(seeds, added, GRID_CELLS, NODES)


@functools.lru_cache(maxsize=256)
def _kernel_of(seeds: int, added: int, cells: int, nodes: int) -> np.ndarray:
    """``P(ρ' <= edge | ρ = midpoint)`` between the fixed grids of two looks (computed once per pair of looks)."""
    edges, mids = _edges_of(cells)
    return step_cdf(mids, edges, seeds, added)


class _Paths:
    """The paths going on past a look: masses on the fixed cells (``full``) and on the cut cells at the region's
    ends (``points``, ``extra``: each at its own midpoint)."""

    def __init__(self, full: np.ndarray, points: np.ndarray, extra: np.ndarray) -> None:
        self.full, self.points, self.extra = full, points, extra

    @property
    def total(self) -> float:
        return float(self.full.sum() + self.extra.sum())

    def cdf(self, at: np.ndarray, seeds: int, added: int) -> np.ndarray:
        """P(going on past this look and ρ' <= each of ``at`` at a look ``added`` seeds later)."""
        _, mids = _edges()
        held = self.full > 0
        points = np.concatenate([mids[held], self.points])
        return np.concatenate([self.full[held], self.extra]) @ step_cdf(points, at, seeds, added)

    def beyond(self, c: float, seeds: int, added: int) -> float:
        """P(going on past this look and ρ' >= c at a look ``added`` seeds later)."""
        return self.total - float(self.cdf(np.array([c]), seeds, added)[0])

    def level(self, target: float, seeds: int, added: int, top: float) -> float:
        """The c in [-top, top] with P(going on and ρ' >= c) = target (first bracketed on a grid of c at once)."""
        grid = np.linspace(-top, top, 17)
        over = self.total - self.cdf(grid, seeds, added)  # decreasing in c
        i = int(np.searchsorted(-over, -target, side="left"))
        lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i, grid.size - 1)])
        if lo == hi:
            return lo
        from scipy import optimize  # imported where a root is searched, not by every import of the gate

        return float(optimize.brentq(lambda v: self.beyond(v, seeds, added) - target, lo, hi, xtol=1e-12))

    def carry(self, seeds: int, added: int, lo: float, hi: float) -> _Paths:
        """The paths going on past the next look, ``added`` seeds later: those with ρ' in [lo, hi]."""
        edges, _ = _edges()
        at_edges = self.full @ _kernel(seeds, added)
        if self.extra.size:
            at_edges = at_edges + self.extra @ step_cdf(self.points, edges, seeds, added)
        inside = (edges[:-1] >= lo) & (edges[1:] <= hi)
        full = np.where(inside, np.diff(at_edges), 0.0)
        return _Paths(full, *self._cut(edges, at_edges, seeds, added, lo, hi))

    def _cut(
        self, edges: np.ndarray, at_edges: np.ndarray, seeds: int, added: int, lo: float, hi: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Masses of the region's end cells cut by ``lo`` and ``hi`` (each at its own midpoint)."""
        if not lo < hi:
            return np.zeros(0), np.zeros(0)
        i, j = int(np.searchsorted(edges, lo, side="left")), int(np.searchsorted(edges, hi, side="right")) - 1
        if i > j:  # both ends inside one cell
            ends = [(lo, hi)]
        else:
            ends = [(lo, float(edges[i]))] if edges[i] > lo else []
            ends += [(float(edges[j]), hi)] if edges[j] < hi else []
        if not ends:
            return np.zeros(0), np.zeros(0)
        cuts = np.array(sorted({v for pair in ends for v in pair}))
        at_cuts = self.cdf(cuts, seeds, added)
        value = dict(zip(cuts.tolist(), at_cuts.tolist()))
        value.update(zip(edges.tolist(), at_edges.tolist()))
        points = np.sin(np.array([(math.asin(a) + math.asin(b)) / 2.0 for a, b in ends]))
        return points, np.array([value[b] - value[a] for a, b in ends])


def _first_look(seeds: int, screen: float) -> _Paths:
    """ρ at the screen look, given that it passed (masses sum to 1)."""
    edges, _ = _edges()
    lo = rho_of_t(z_to_t(screen, seeds - 1), seeds) if np.isfinite(screen) else -1.0

    def cdf(r: np.ndarray) -> np.ndarray:
        return special.stdtr(seeds - 1, np.array([t_of_rho(float(v), seeds) for v in r]))

    at_edges = cdf(edges)
    full = np.where(edges[:-1] >= lo, np.diff(at_edges), 0.0)
    i = int(np.searchsorted(edges, lo, side="left"))
    points, extra = np.zeros(0), np.zeros(0)
    if edges[i] > lo:
        points = np.array([math.sin((math.asin(lo) + math.asin(float(edges[i]))) / 2.0)])
        extra = np.array([at_edges[i] - float(cdf(np.array([lo]))[0])])
    passed = float(full.sum() + extra.sum())
    return _Paths(full / passed, points, extra / passed)


def _bound_rho(z: float, seeds: int) -> float:
    return rho_of_t(z_to_t(z, seeds - 1), seeds)


def upper_boundaries(
    seeds: Sequence[int], lower: Sequence[float], alpha: float, spending: str, max_seeds: int
) -> np.ndarray:
    """Upper boundaries (normal scale) of a screened candidate at level ``alpha``: looks at ``seeds`` paired seeds
    (the first is the screen), lower boundaries ``lower`` (normal scale; the screen first, ``-inf`` for none).

    ``b_1 = inf`` (the screen keeps nothing) unless the first look has ``max_seeds`` seeds: then it is the one
    fixed-sample test, ``b_1 = z_{1-α}``.

    >>> b = upper_boundaries([3, 10], [0.75, -np.inf], 0.05, "obf", 10)
    >>> float(b[0]), round(float(b[1]), 3)  # given a passed screen, above the unscreened 1.645
    (inf, 2.201)
    """
    n = tuple(int(v) for v in seeds)
    a = tuple(float(v) for v in lower)
    if len(n) != len(a) or not n or any(q <= p for p, q in zip(n, n[1:])) or n[0] < 3 or n[-1] > max_seeds:
        raise ValueError(f"looks must have increasing seeds in 3..{max_seeds}, one lower boundary each, got {n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n[0] >= max_seeds:
        return np.array([float(special.ndtri(1.0 - alpha))])
    return _after(n, a, float(alpha), spending, int(max_seeds))[0].copy()


@functools.lru_cache(maxsize=4096)
def _after(
    seeds: tuple[int, ...], lower: tuple[float, ...], alpha: float, spending: str, max_seeds: int
) -> tuple[np.ndarray, _Paths]:
    """The boundaries of the looks at ``seeds`` and the paths going on past the last; built from the same for the
    looks before the last (cached: a candidate's next look costs one step)."""
    if len(seeds) == 1:
        return np.array([np.inf]), _first_look(seeds[0], lower[0])
    bounds, paths = _after(seeds[:-1], lower[:-1], alpha, spending, max_seeds)
    first, before, now = seeds[0], seeds[-2], seeds[-1]
    u = (np.array([before, now], dtype=float) - first) / (max_seeds - first)
    target = float(np.diff(sq.spent(u, alpha, spending))[0])
    added = now - before

    top = _bound_rho(sq.NO_SPEND, now)
    if target <= TINY:
        c = 1.0
    elif paths.beyond(top, before, added) >= target:
        c = top
    else:
        c = paths.level(target, before, added, top)
    bound = t_to_z(t_of_rho(c, now), now - 1)
    floor = _bound_rho(lower[-1], now) if np.isfinite(lower[-1]) else -1.0
    return np.append(bounds, bound), paths.carry(before, added, floor, c)


def crossing_probabilities(
    seeds: Sequence[int], lower: Sequence[float], upper: Sequence[float] | np.ndarray, max_seeds: int
) -> np.ndarray:
    """P(the first upper crossing is at look k | the screen passed), per look, at the null's edge (exact law).

    With the boundaries of :func:`upper_boundaries` they sum to its level, each look's share as spent.
    """
    n = [int(v) for v in seeds]
    out = np.zeros(len(n))
    if n[0] >= max_seeds:
        out[0] = float(special.ndtr(-upper[0]))
        return out
    paths = _first_look(n[0], float(lower[0]))
    for k in range(1, len(n)):
        added = n[k] - n[k - 1]
        c = _bound_rho(float(upper[k]), n[k])
        out[k] = paths.beyond(c, n[k - 1], added)
        floor = _bound_rho(float(lower[k]), n[k]) if np.isfinite(lower[k]) else -1.0
        paths = paths.carry(n[k - 1], added, floor, c)
    return out
