r"""Exact solve of player *q*'s part of a greedy policy, as GMRES's preconditioner (see :mod:`.policy`).

Why this model: GMRES needs the preconditioner to differ from the policy's matrix in few directions. Player
*p*'s moves are a small part of each row (``nA - 1`` of ``nA nE + nA - 2`` neighbours) and are left out, as
the dense block preconditioner did before; player *q*'s moves must be in. In a *q*-group sorted by decreasing
value, a regular member moves with ``eta`` to every better-valued member; the members whose payoff interval is a
point (``mu[i, j, i] = 1/2``: ``nE`` per group) are exact ties of each other (``eta/m`` between every two of a
class of equal points), and move with ``eta`` to every better-valued regular member. Dropping the ties instead
leaves ``nE`` wrong rows per group and GMRES stalls. The certain edges of narrow intervals are not in the model
(GMRES then needs more iterations; the answer is checked either way).

The solve: with ``Q_t`` the sum of ``u`` over the better value groups (over the regular ones only for a point
member), ``u_t = w_t (r_t + gamma eta Q_t + [point] gamma eta/m S_C)``, ``w_t`` the inverse diagonal and ``S_C``
the sum of ``u`` over the member's class. The running pair (sum over all, sum over regular members) follows an
affine recurrence with 2 x 2 nonnegative matrices, run forward (stable) in chunks: a short loop inside chunks,
one across chunks, then a vectorised fix-up. The class sums enter linearly: solved through one response per
class and a small system per group.
"""

from __future__ import annotations

import math

import numpy as np

from .groups import SortedGroups
from .pairs import IntervalStructure


class QPreconditioner:
    """``u = M^{-1} r`` and ``M u`` for the model above, built once per policy."""

    def __init__(self, st: IntervalStructure, sg: SortedGroups, diag: np.ndarray) -> None:
        """``sg``: the q-groups sorted by the policy's values; ``diag``: the diagonal of the policy's matrix."""
        point, point_class = st.point, st.point_class
        self.sg = sg
        self.c = st.gamma * st.eta
        self.c_tie = st.gamma * st.eta / st.m
        G, n = sg.shape
        self.reg = ~sg.sort(point)
        self.cls = sg.sort(point_class)
        self.k = int(point_class.max()) + 1 if point.any() else 0
        d = sg.sort(1.0 - st.gamma * diag)
        self.w = 1.0 / np.where(self.reg, d, d + self.c_tie)
        h_r = self._group_sum(np.where(self.reg, self.w, 0.0))
        h_d = self._group_sum(np.where(self.reg, 0.0, self.w))
        # chunks of about sqrt(n) positions, padded with identity steps
        L = max(1, math.isqrt(n))
        nc = -(-n // L)
        self.L, self.nc, self.pad = L, nc, nc * L - n
        m11 = self._chunked(1.0 + self.c * h_r, 1.0)
        m12 = self._chunked(self.c * h_d, 0.0)
        m21 = self._chunked(self.c * h_r, 0.0)
        # products inside each chunk: pre[l] = M_l ... M_0 (entries a, b; c, d)
        pre = np.empty((4, G, nc, L))
        a, b, cc, dd = np.ones((G, nc)), np.zeros((G, nc)), np.zeros((G, nc)), np.ones((G, nc))
        for ell in range(L):
            x11, x12, x21 = m11[:, :, ell], m12[:, :, ell], m21[:, :, ell]
            a, b, cc, dd = x11 * a + x12 * cc, x11 * b + x12 * dd, x21 * a + cc, x21 * b + dd
            pre[:, :, :, ell] = a, b, cc, dd
        self.m = (m11, m12, m21)
        self.pre = pre
        self.q_index = (sg.start + (np.arange(G) * (n + 1))[:, None]).ravel()
        if self.k:
            self._class_responses()

    def _group_sum(self, x: np.ndarray) -> np.ndarray:
        """Sum over each member's value group, stored at the group's last member (0 elsewhere)."""
        sg = self.sg
        cs = np.cumsum(x, axis=1)
        before = (cs - x).ravel()[sg.start_flat].reshape(x.shape)
        return np.where(sg.last, cs - before, 0.0)

    def _chunked(self, x: np.ndarray, fill: float) -> np.ndarray:
        """``(G, n)`` values at value groups' last members (``fill`` elsewhere) as ``(G, nc, L)``."""
        x = np.where(self.sg.last, x, fill)
        x = np.pad(x, ((0, 0), (0, self.pad)), constant_values=fill)
        return x.reshape(x.shape[0], self.nc, self.L)

    def _class_sums(self, u: np.ndarray) -> np.ndarray:
        """``(G, k)``: sum of sorted ``u`` over each class of each group."""
        G = u.shape[0]
        idx = (np.arange(G)[:, None] * self.k + self.cls)[~self.reg]
        return np.bincount(idx, weights=u[~self.reg], minlength=G * self.k).reshape(G, self.k)

    def _sorted_solve(self, rs: np.ndarray, S: np.ndarray | None) -> np.ndarray:
        """Sorted ``u`` for sorted ``r`` and given class sums ``S`` ``(G, k)`` (None: zero)."""
        rhs = rs
        if S is not None:
            rhs = rs + np.where(self.reg, 0.0, self.c_tie * np.take_along_axis(S, np.maximum(self.cls, 0), axis=1))
        wr = self.w * rhs
        beta_r = self._chunked(self._group_sum(np.where(self.reg, wr, 0.0)), 0.0)
        beta_d = self._chunked(self._group_sum(np.where(self.reg, 0.0, wr)), 0.0)
        m11, m12, m21 = self.m
        G = rs.shape[0]
        # inside chunks from zero
        ya, yb = np.empty((G, self.nc, self.L)), np.empty((G, self.nc, self.L))
        a, b = np.zeros((G, self.nc)), np.zeros((G, self.nc))
        for ell in range(self.L):
            a, b = (
                m11[:, :, ell] * a + m12[:, :, ell] * b + beta_r[:, :, ell] + beta_d[:, :, ell],
                m21[:, :, ell] * a + b + beta_r[:, :, ell],
            )
            ya[:, :, ell], yb[:, :, ell] = a, b
        # across chunks: the running pair at each chunk's start
        sa, sb = np.zeros((G, self.nc)), np.zeros((G, self.nc))
        xa, xb = np.zeros(G), np.zeros(G)
        p11, p12, p21, p22 = self.pre[:, :, :, -1]
        for ci in range(self.nc):
            sa[:, ci], sb[:, ci] = xa, xb
            xa, xb = (
                p11[:, ci] * xa + p12[:, ci] * xb + ya[:, ci, -1],
                p21[:, ci] * xa + p22[:, ci] * xb + yb[:, ci, -1],
            )
        pa, pb, pc, pd = self.pre
        run_a = (ya + pa * sa[:, :, None] + pb * sb[:, :, None]).reshape(G, -1)[:, : rs.shape[1]]
        run_b = (yb + pc * sa[:, :, None] + pd * sb[:, :, None]).reshape(G, -1)[:, : rs.shape[1]]
        run = np.where(self.reg, self._before(run_a), self._before(run_b))
        return self.w * (rhs + self.c * run)

    def _before(self, run: np.ndarray) -> np.ndarray:
        """The running value just before each member's value group."""
        padded = np.zeros((run.shape[0], run.shape[1] + 1))
        padded[:, 1:] = run
        return padded.ravel()[self.q_index].reshape(run.shape)

    def _class_responses(self) -> None:
        G, n = self.sg.shape
        zero = np.zeros((G, n))
        self.resp = []
        E = np.empty((G, self.k, self.k))
        for kappa in range(self.k):
            S = np.zeros((G, self.k))
            S[:, kappa] = 1.0
            u = self._sorted_solve(zero, S)
            self.resp.append(u)
            E[:, :, kappa] = self._class_sums(u)
        self.inv = np.linalg.inv(np.eye(self.k)[None] - E)

    def solve(self, r: np.ndarray) -> np.ndarray:
        u = self._sorted_solve(self.sg.sort(r), None)
        if self.k:
            S = np.einsum("gab,gb->ga", self.inv, self._class_sums(u))
            for kappa, resp in enumerate(self.resp):
                u = u + S[:, kappa : kappa + 1] * resp
        return self.sg.unsort(u)

    def forward(self, u: np.ndarray) -> np.ndarray:
        """``M u``."""
        sg = self.sg
        us = sg.sort(u)

        def better(x: np.ndarray) -> np.ndarray:
            before = np.cumsum(x, axis=1)
            before -= x
            return before.ravel()[sg.start_flat].reshape(x.shape)

        out = us / self.w - self.c * np.where(self.reg, better(us), better(np.where(self.reg, us, 0.0)))
        if self.k:
            S = self._class_sums(us)
            out -= np.where(self.reg, 0.0, self.c_tie * np.take_along_axis(S, np.maximum(self.cls, 0), axis=1))
        return sg.unsort(out)
