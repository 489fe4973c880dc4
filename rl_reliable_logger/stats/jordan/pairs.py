"""The interval chain without its ``|S| x M`` arrays: the few edges that are not "uncertain", listed once.

Why: at 50 algorithms x 26 tasks the chain has 65,000 states of 1,348 neighbours each; every ``(|S|, M)`` array
(neighbour indices, lower bounds, caps, rows) is 700 MB and every pass over one costs a tenth of a second, which
made PBP grow as ``nA^5``. An edge of the interval chain (spec section 4.6) is *certainly up* (mass ``eta``),
*certainly zero*, an exact *tie* (``eta/m``) or *uncertain* (``eta`` when the optimiser's value beats the
state's own, see :mod:`.policy`). With DKW bands most edges are uncertain, so the chain is stored as "every
neighbour uncertain" plus the list of the other edges (:class:`IntervalStructure`); each edge is classified by the
same expressions as :func:`.bounds.interval_chain`, so both describe the same chain.

The neighbours of state ``(i, j, k)`` form two groups: player *p*'s (same ``(j, k)``, any other ``i``) and player
*q*'s (same ``i``, any other ``(j, k)``). In the ``(nA, nE nA)`` layout of the states a *q*-group is a row and a
*p*-group a column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ecdf import POPULATION_M, approx

#: Edge kinds in :attr:`IntervalStructure.kind`.
ZERO, TIE, UP = 0, 1, 2
#: Pairs classified at once (bounds the temporary ``(groups, n, n)`` arrays to a few tens of MB).
_PAIRS_PER_CHUNK = 2_000_000


@dataclass(frozen=True)
class IntervalStructure:
    """Sizes, constants, the two neighbour groupings and the non-uncertain edges (CSR, sorted by row)."""

    n_alg: int
    n_env: int
    n_states: int
    eta: float
    gamma: float
    m: float
    q_groups: np.ndarray  # (nA, nE nA): flat state ids, one q-group per row
    p_groups: np.ndarray  # (nE nA, nA): flat state ids, one p-group per row
    indptr: np.ndarray  # (|S|+1,) CSR of the listed edges
    cols: np.ndarray  # neighbour of each listed edge
    kind: np.ndarray  # ZERO / TIE / UP of each listed edge
    n_uncertain: int
    point: np.ndarray  # (|S|,) bool: the state's payoff interval is a single point
    point_class: np.ndarray  # (|S|,) int: among its q-group's point states, the rank of its point (0 elsewhere)

    @property
    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_states), np.diff(self.indptr))

    @property
    def weight(self) -> np.ndarray:
        """Fixed mass of every listed edge: 0, ``eta/m`` or ``eta``."""
        return np.array([0.0, self.eta / self.m, self.eta])[self.kind]


def _classify(lo: np.ndarray, hi: np.ndarray, strict: bool) -> np.ndarray:
    """Edge kinds ``(G, n, n)`` between the members of ``G`` groups, ``-1`` = uncertain or the state itself.

    ``lo``/``hi`` ``(G, n)`` are the player's own payoff intervals (larger is better); ``[g, a, b]`` is the edge
    from member ``a`` to member ``b``. The expressions and their order are those of :func:`.bounds.interval_chain`.
    """
    lo_s, hi_s = lo[:, :, None], hi[:, :, None]
    lo_n, hi_n = lo[:, None, :], hi[:, None, :]
    up = lo_n > hi_s
    zero = ~up & (lo_s > hi_n)
    same = approx(lo_n, lo_s) & approx(hi_n, hi_s)
    if strict:
        zero &= ~approx(lo_s, hi_n)
        same &= approx(lo_s, hi_s) & approx(lo_n, hi_n)
    tie = ~up & ~zero & same
    kind = np.full(up.shape, -1, dtype=np.int8)
    kind[zero] = ZERO
    kind[tie] = TIE
    kind[up] = UP
    n = lo.shape[1]
    kind[:, np.arange(n), np.arange(n)] = -1
    return kind


def _listed_edges(groups: np.ndarray, lo: np.ndarray, hi: np.ndarray, strict: bool):
    """``(rows, cols, kind)`` of the non-uncertain edges inside every group (a row of ``groups``).

    Under the strict rule a tie needs two point intervals, so certain edges are found with two comparisons per
    pair and ties only among each group's point members (about ten times faster than :func:`_classify` on every
    pair, with the same result); the authors' rule classifies every pair.
    """
    n_groups, n = groups.shape
    step = max(1, _PAIRS_PER_CHUNK // max(n * n, 1))
    parts = []
    diag = np.arange(n)
    for g0 in range(0, n_groups, step):
        ids = groups[g0 : g0 + step]
        lo_g, hi_g = lo[ids], hi[ids]
        if not strict:
            kind = _classify(lo_g, hi_g, strict)
            g, a, b = np.nonzero(kind >= 0)
            parts.append((ids[g, a], ids[g, b], kind[g, a, b]))
            continue
        up = lo_g[:, None, :] > hi_g[:, :, None]
        zero = lo_g[:, :, None] > hi_g[:, None, :]
        zero &= ~up
        up[:, diag, diag] = False
        zero[:, diag, diag] = False
        g, a, b = np.nonzero(up)
        parts.append((ids[g, a], ids[g, b], np.full(g.size, UP, np.int8)))
        g, a, b = np.nonzero(zero)
        keep = ~approx(lo_g[g, a], hi_g[g, b])
        parts.append((ids[g, a][keep], ids[g, b][keep], np.full(int(keep.sum()), ZERO, np.int8)))
    if strict:
        point_like = approx(lo, hi)
        for ids in groups[point_like[groups].sum(axis=1) >= 2]:
            members = ids[point_like[ids]]
            kind = _classify(lo[members][None], hi[members][None], strict)[0]
            a, b = np.nonzero(kind == TIE)
            parts.append((members[a], members[b], kind[a, b]))
    return tuple(np.concatenate(p) for p in zip(*parts))


def interval_structure(
    mu_lo: np.ndarray, mu_hi: np.ndarray, *, tie_rule: str = "strict", m: float = POPULATION_M
) -> IntervalStructure:
    """The interval chain of payoff intervals ``(nA, nE, nA)`` as :class:`IntervalStructure` (spec section 4.6)."""
    mu_lo = np.asarray(mu_lo, dtype=float)
    mu_hi = np.asarray(mu_hi, dtype=float)
    n_alg, n_env, _ = mu_lo.shape
    n_q = n_alg * n_env
    n_states = n_alg * n_q
    q_groups = np.arange(n_states).reshape(n_alg, n_q)
    p_groups = np.ascontiguousarray(q_groups.T)
    lo_flat, hi_flat = mu_lo.ravel(), mu_hi.ravel()
    strict = tie_rule == "strict"
    # player p wants a larger payoff, player q a smaller one: q's interval is [-hi, -lo]
    p_edges = _listed_edges(p_groups, lo_flat, hi_flat, strict)
    q_edges = _listed_edges(q_groups, -hi_flat, -lo_flat, strict)
    rows, cols, kind = (np.concatenate([a, b]) for a, b in zip(p_edges, q_edges))
    order = np.lexsort((cols, rows))
    rows, cols, kind = rows[order], cols[order], kind[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_states))])
    n_nbr = (n_alg - 1) + (n_q - 1)
    eta = 1.0 / n_nbr if n_nbr > 0 else 0.0
    point = lo_flat == hi_flat
    point_class = np.zeros(n_states, dtype=np.int64)
    for ids in q_groups:  # equal points are exact ties of each other (every rule); see .precondition
        members = ids[point[ids]]
        point_class[members] = np.unique(lo_flat[members], return_inverse=True)[1].ravel()
    return IntervalStructure(
        n_alg=n_alg,
        n_env=n_env,
        n_states=n_states,
        eta=eta,
        gamma=(n_states - 1) / n_states,
        m=m,
        q_groups=q_groups,
        p_groups=p_groups,
        indptr=indptr,
        cols=cols.astype(np.int64),
        kind=kind,
        n_uncertain=n_states * n_nbr - int(rows.size),
        point=point,
        point_class=point_class,
    )
