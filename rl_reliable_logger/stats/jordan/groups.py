"""Neighbour groups sorted by value: sums over each member's strictly better-valued members in ``O(n)``.

Why: a greedy row of the interval chain gives ``eta`` to every uncertain neighbour whose value beats the state's
own (spec section 4.7), so products with a policy's matrix and its preconditioner need, for every state, sums over
the better-valued members of its neighbour groups: one sort per policy, then one prefix sum per product.
Ties in value get nothing from each other (strict ``>``, as :func:`.bounds.greedy_rows`).
"""

from __future__ import annotations

import numpy as np


class SortedGroups:
    """Groups (rows of ``groups``) sorted by decreasing ``V``; sums over each member's strictly better members."""

    def __init__(self, groups: np.ndarray, V: np.ndarray) -> None:
        n_groups, n = groups.shape
        order = np.argsort(-V[groups], axis=1, kind="stable")
        perm = np.take_along_axis(groups, order, axis=1)
        vs = V[perm]
        first = np.ones(vs.shape, dtype=bool)
        first[:, 1:] = vs[:, 1:] != vs[:, :-1]
        last = np.ones(vs.shape, dtype=bool)
        last[:, :-1] = first[:, 1:]
        t = np.arange(n)
        start = np.maximum.accumulate(np.where(first, t, 0), axis=1)  # first position of the member's value group
        row = (np.arange(n_groups) * n)[:, None]
        self.shape = (n_groups, n)
        self.perm = perm.ravel()
        self.start = start
        self.start_flat = (start + row).ravel()
        self.last = last
        self.n_better = np.empty(perm.size)  # per state: members with a strictly larger value
        self.n_better[self.perm] = start.ravel()

    def sort(self, x: np.ndarray) -> np.ndarray:
        return x[self.perm].reshape(self.shape)

    def unsort(self, xs: np.ndarray) -> np.ndarray:
        out = np.empty(xs.size)
        out[self.perm] = xs.ravel()
        return out

    def better_sum(self, x: np.ndarray) -> np.ndarray:
        """``sum_{s' in group(s), V[s'] > V[s]} x[s']`` for every state ``s``."""
        xs = self.sort(x)
        before = np.cumsum(xs, axis=1)
        before -= xs
        return self.unsort(before.ravel()[self.start_flat])
